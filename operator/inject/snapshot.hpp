// One revision's injector configuration, decoded and parsed once (build_snapshot in
// injector.hpp), then shared read-only by every request of that revision.
//
// What is decoded (upstream UnmarshalConfig / NewValuesConfig / ApplyMeshConfig):
//   - `config`: policy, defaultTemplates (empty → ["sidecar"]), templates (each parsed once
//     with sprig + Istio + proto functions, named "inject" as upstream's parseDryTemplate
//     names them, so execution errors read like upstream's), aliases, neverInjectSelector,
//     alwaysInjectSelector (selectors that do not parse are kept as skipped entries, as
//     upstream logs and skips them at decision time), injectedAnnotations.
//   - `values`: the JSON/YAML map as template data (numbers float64) plus the few fields Go
//     code reads (hub, tag, variant, proxy images, cluster, network, holdApplication...,
//     rewriteAppHTTPProbe).
//   - `mesh`: MeshConfig via parse_mesh_config.
//   - native sidecar mode resolved from ENABLE_NATIVE_SIDECARS and the nodes' kubelet versions.
//
// Immutable after build_snapshot(); safe to read from any number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "api/label_selector.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/inject/render_cache.hpp"
#include "operator/template/constant_memo.hpp"
#include "operator/template/template.hpp"

namespace meshop::inject {

class Snapshot {
 public:
  std::string revision;     // as configured ("" for kube-inject's default)
  std::string fingerprint;  // injector_fingerprint() of the sources; stamped when asked
  bool stamp_fingerprint = false;
  std::string policy;  // "enabled" | "disabled" | anything (→ no injection)
  std::vector<std::string> default_templates;
  std::map<std::string, std::shared_ptr<const template_engine::Template>, std::less<>> templates;
  // Per template: what its expressions over snapshot_data_fields() evaluate to, remembered
  // across the requests of this snapshot (template_engine::ConstantMemo); the second memo also
  // covers default_proxy_data_fields() and serves only pods without a proxy.istio.io/config or
  // sidecar.istio.io/proxyImageType annotation (their proxy config and images are the default).
  struct TemplateMemos {
    std::shared_ptr<const template_engine::ConstantMemo> any_pod;
    std::shared_ptr<const template_engine::ConstantMemo> default_proxy;
  };
  std::map<std::string, TemplateMemos, std::less<>> template_memos;
  std::map<std::string, std::vector<std::string>, std::less<>> aliases;
  // nullopt: a selector that did not parse (skipped, as upstream does).
  std::vector<std::optional<api::LabelSelector>> never_inject_selector;
  std::vector<std::optional<api::LabelSelector>> always_inject_selector;
  std::vector<std::pair<std::string, std::string>> injected_annotations;  // sorted by key

  rapidjson::Document values;            // the `values` object
  template_engine::Value values_data;    // the same as template data (map[string]interface {})
  std::string hub, tag, variant;         // global.hub, global.tag (%v), global.variant
  std::string proxy_image_name;          // global.proxy.image or "proxyv2"
  std::string proxy_init_image_name;     // global.proxy_init.image or "proxyv2"
  std::string cluster_name;              // global.multiCluster.clusterName
  std::string network;                   // global.network
  bool values_hold_application = false;  // global.proxy.holdApplicationUntilProxyStarts

  std::shared_ptr<const MeshConfig> mesh;
  template_engine::Value mesh_data;  // *v1alpha1.MeshConfig for templates
  int mesh_status_port = 15020;      // mesh defaultConfig.statusPort

  bool native_sidecars = false;
  std::string compliance_policy;
  bool openshift = false;

  // No template calls a function whose result is not a function of its arguments (clock,
  // random, DNS: nondeterministic_functions()): inject() is then a pure function of the
  // request and the webhook may memoize its answers.
  bool deterministic = true;

  template_engine::ExecOptions template_limits;  // SnapshotSources::template_limits
  std::size_t max_pod_containers = 0;            // SnapshotSources::max_pod_containers

  // The one mutable part: a memo of yaml_to_json over rendered template text (a pure function,
  // so it does not change what inject() answers), dropped with the snapshot.
  mutable RenderCache render_cache;
};

// ENABLE_NATIVE_SIDECARS=auto: native only if every node's kubelet has minor version ≥ 33, as
// upstream's DetectNativeSidecar (so an empty list means native, as upstream with a node client
// that lists no nodes). Versions look like "v1.33.0" or "v1.33.1-gke.100"; one that does not
// parse disables native sidecars.
bool kubelet_versions_support_native(const std::vector<std::string>& versions);

// The fields of the template data (SidecarTemplateData) that inject() fills from the snapshot
// alone (.Values, .MeshConfig, .Revision ...): the same for every pod of a snapshot, so the
// template_memos may remember what expressions over them evaluate to.
const std::vector<std::string>& snapshot_data_fields();

// snapshot_data_fields() plus the fields that are the snapshot's own for a pod that uses the
// default proxy: .ProxyConfig (the mesh's effective proxy config), .ProxyImage and
// .ProxyInitImage (its image type and the values' images).
const std::vector<std::string>& default_proxy_data_fields();

// The calls of the templates that read one annotation or label of the pod at a literal key
// (`annotation .ObjectMeta "k" d`, `isset .ObjectMeta.Annotations "k"`,
// `index .ObjectMeta.Labels "k"`): the template_memos also remember expressions built from them
// for the pods that lack their keys (template_engine::KeyedRead). For each, a pod without the
// key gives the value of a nil map: .ObjectMeta.Annotations and .Labels are map[string]string
// views (struct_view), `annotation` then answers its default as a string, `isset` false and
// `index` "" (then indexes that further, if asked).
const std::vector<template_engine::KeyedRead>& pod_keyed_reads();

// The proxy's UID and GID that inject() puts in .ProxyUID and .ProxyGID (int64) unless the
// pod's namespace asks for others (OpenShift's uid range).
inline constexpr std::int64_t kDefaultProxyId = 1337;

// .ProxyUID and .ProxyGID at kDefaultProxyId: the template_memos also remember expressions
// built from them for the pods that have those (template_engine::ExpectedValue).
const std::vector<template_engine::ExpectedValue>& pod_expected_values();

// The template functions (sprig's, as meshop defines them) whose results depend on more than
// their arguments: the clock (now, ago, date... without a time argument format now), random
// values, DNS. Sorted.
const std::vector<std::string_view>& nondeterministic_functions();

// True when the template text may call one of nondeterministic_functions(): an identifier of
// that name inside an action ({{ }}), outside string literals and comments, and not a field or
// variable name (.now, $now). Errs on the side of true; pure.
bool template_may_call_nondeterministic(std::string_view text);

}  // namespace meshop::inject
