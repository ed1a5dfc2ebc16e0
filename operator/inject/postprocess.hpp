// Post-processing steps of injection that work on a pod after the templates were merged
// into it (upstream's validate.go, app_probe.go and the Prometheus parts of postProcessPod).
// Each is a pure function over a Pod JSON document; the pipeline (injector.cpp) calls them
// in upstream's order: validate_annotations() before rendering, then on the merged pod
// apply_prometheus_merge() and rewrite_app_probes().
//
// Contract (owned by the post-processing area; the pipeline codes against it):
//   - validate_annotations(): the annotation checks upstream runs at the start of RunTemplate
//     (validate.go), with upstream's messages. Every invalid annotation is reported, as
//     go-multierror formats a list ("1 error occurred:\n\t* invalid value '1.1.1.1/99' for
//     annotation 'traffic.sidecar.istio.io/includeOutboundIPRanges': includeIPRanges invalid:
//     failed parsing cidr '1.1.1.1/99': netip.ParsePrefix(\"1.1.1.1/99\"): prefix length out of
//     range\n\n"), in annotation-name order (Go's order is random). `proxy.istio.io/config` is
//     checked by validate_proxy_config_annotation() (mesh_config.hpp) and reported in the
//     same list, as upstream does; the reason text is that function's.
//   - apply_prometheus_merge(): applyPrometheusMerge then applySecurePrometheusAnnotation.
//     Errors (a scrape port that is invalid, the agent's port or reserved by Istio) are the
//     values upstream returns; the pod is then left as it was.
//   - rewrite_app_probes(): when ShouldRewriteAppHTTPProbers says so, DumpAppProbers (env
//     ISTIO_KUBE_APP_PROBERS on istio-proxy, merged with an existing value when `was_injected`)
//     and patchRewriteProbe. Fails only for a pod whose probes do not have Kubernetes' types
//     (upstream could not have decoded such a pod).
//   - `status_port` is the mesh's defaultConfig.statusPort (MeshConfig::default_proxy_config()),
//     which is what upstream uses here; NOT the pod's proxy.istio.io/config, and not the
//     status.sidecar.istio.io/port annotation (patchRewriteProbe reads that one itself).
//   - Where upstream only logs (a malformed prometheus.istio.io/scrape-targets, an existing
//     ISTIO_KUBE_APP_PROBERS that does not decode, a status port annotation strconv.Atoi
//     rejects), the step goes on as upstream does and appends a message to `warnings` if given.
//   - Where upstream's result depends on Go's random map order (several annotations that
//     Prometheus sanitizes to one name, e.g. prometheus.io/port and prometheus.io.port), the
//     annotations are taken in sorted key order.
// All JSON strings written into the pod follow Go encoding/json (sorted map keys, struct
// fields in Go order, HTML escaping of <, >, &) so results compare equal to upstream's.
// Thread-safe: no shared state.
#pragma once

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/inject/mesh/mesh_config.hpp"

namespace meshop::inject {

// `pod` is the pod as given (annotations are read from metadata.annotations).
api::Status validate_annotations(const rapidjson::Value& pod);

// `pod` is the merged pod (modified in place).
api::Status apply_prometheus_merge(rapidjson::Document& pod, const MeshConfig& mesh,
                                   int status_port, std::vector<std::string>* warnings = nullptr);

// `values` is the injector values (for sidecarInjectorWebhook.rewriteAppHTTPProbe);
// `was_injected` says the merged pod carries a sidecar.istio.io/status annotation (it keeps the
// original pod's, so: the pod was injected before).
api::Status rewrite_app_probes(rapidjson::Document& pod, const rapidjson::Value& values,
                               bool was_injected, int status_port,
                               std::vector<std::string>* warnings = nullptr);

// stripPod's Prometheus part, for the pod the templates see on re-injection: when the pod's
// prometheus.io/port (any spelling Prometheus sanitizes to prometheus_io_port) already equals
// `status_port`, every prometheus.io/{port,path,scrape} and prometheus.istio.io/scrape-targets
// annotation is removed.
void strip_merged_prometheus_annotations(rapidjson::Value& pod, int status_port);

}  // namespace meshop::inject
