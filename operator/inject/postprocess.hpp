// Post-processing steps of injection that work on a pod after the templates were merged
// into it (upstream's validate.go, app_probe.go and the Prometheus parts of postProcessPod).
// Each is a pure function over a Pod JSON document; the pipeline (injector.cpp) calls them
// in upstream's order.
//
// Contract (owned by the post-processing area; the pipeline codes against it):
//   - validate_annotations(): the annotation checks upstream runs before rendering. The first
//     invalid annotation fails with a message naming it and its value, e.g.
//     `invalid annotation traffic.sidecar.istio.io/includeOutboundIPRanges="1.1.1.1/99": ...`.
//     (`proxy.istio.io/config` is validated by proxy_config_for() in mesh_config.hpp.)
//   - apply_prometheus_merge(): applyPrometheusMerge + applySecurePrometheusAnnotation.
//   - rewrite_app_probes(): DumpAppProbers (env ISTIO_KUBE_APP_PROBERS on istio-proxy, merged
//     with an existing value when `was_injected`) and patchRewriteProbe, when
//     ShouldRewriteAppHTTPProbers says so.
// All JSON strings written into the pod follow Go encoding/json (sorted map keys, HTML
// escaping of <, >, &) so results compare equal to upstream's.
#pragma once

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/inject/mesh/mesh_config.hpp"

namespace meshop::inject {

// `pod` is the pod as given (annotations are read from metadata.annotations).
api::Status validate_annotations(const rapidjson::Value& pod);

// `pod` is the merged pod (modified in place). `status_port` is the proxy's status port
// (ProxyConfig statusPort, or the annotation status.sidecar.istio.io/port).
api::Status apply_prometheus_merge(rapidjson::Document& pod, const MeshConfig& mesh,
                                   int status_port);

// `values` is the injector values (for sidecarInjectorWebhook.rewriteAppHTTPProbe);
// `was_injected` says the original pod carried a sidecar.istio.io/status annotation.
api::Status rewrite_app_probes(rapidjson::Document& pod, const rapidjson::Value& values,
                               bool was_injected, int status_port);

}  // namespace meshop::inject
