// The injection engine: a pure function (pod, namespace, revision snapshot) → (decision,
// patched pod, JSON patch). No I/O: the webhook, `meshop kube-inject`, the restart planner
// and the tests all call this same code.
//
// Contract (owned by the engine area; webhook, kube-inject, golden tests code against it):
//   - A Snapshot is everything one revision's injector needs, built once from the ConfigMap
//     texts (templates parsed once, values and mesh config decoded once) and then immutable:
//     share it between threads as std::shared_ptr<const Snapshot> and swap it atomically.
//   - build_snapshot() never keeps a half-built result: it returns a complete Snapshot or an
//     error naming the source and the field ("config: templates.sidecar: template: sidecar:3:
//     unexpected EOF", "values: global.proxy: expected object").
//   - decide() is Istio's injectRequired with a machine-readable reason for every outcome.
//   - inject() runs decide() and, when injection is required, the full pipeline: template
//     selection, render, strategic merge, overrides, annotation validation, probe rewriting,
//     Prometheus merge, sidecar.istio.io/status, container ordering, and a JSON patch against
//     the pod as given. Errors are values (outcome kFailed), never exceptions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/template/template.hpp"

namespace meshop::inject {

// ENABLE_NATIVE_SIDECARS: auto decides from node kubelet versions (≥ 1.33 → native).
enum class NativeSidecars { kAuto, kEnabled, kDisabled };

// SnapshotSources::max_pod_containers' default.
inline constexpr std::size_t kMaxPodContainers = 1000;

// The inputs of one revision's injector, as they appear in the cluster.
struct SnapshotSources {
  std::string revision;  // "" and "default" both mean the default revision
  std::string config;    // ConfigMap istio-sidecar-injector[-<rev>] key `config` (YAML)
  std::string values;    // same ConfigMap, key `values` (JSON or YAML)
  std::string mesh;      // ConfigMap istio[-<rev>] key `mesh` (YAML); "" = defaults
  NativeSidecars native_sidecars = NativeSidecars::kAuto;
  // Kubelet versions of the cluster's nodes ("v1.33.0"), used when native_sidecars is kAuto.
  std::vector<std::string> node_kubelet_versions;
  // COMPLIANCE_POLICY of upstream (e.g. "fips-140-2"); "" when unset.
  std::string compliance_policy;
  // The cluster is OpenShift (upstream's PLATFORM=openshift): the proxy UID/GID come from the
  // namespace's openshift.io/sa.scc.* annotations (PodRequest::namespace_object), and a user
  // istio-proxy runAsUser equal to the app's is dropped.
  bool openshift = false;
  // meshop extension, off by default (upstream's output has no such annotation): injected pods
  // get `meshop.io/injector-fingerprint: <injector_fingerprint(sources)>`, so the restart
  // planner can tell pods injected from an older configuration of their revision
  // (TemplateChanged). `meshop run`'s webhook turns it on.
  bool stamp_fingerprint = false;
  // Bounds of every template execution for this revision (template.hpp ExecOptions): a
  // ConfigMap's template that loops, or writes, without end fails the pod with
  // failure_type "template_render" and a message naming the template and the bound.
  template_engine::ExecOptions template_limits = template_engine::ExecOptions::untrusted();
  // Pods with more containers plus init containers than this are refused (failure_type
  // "pod_too_large") before any template runs: templates are free to loop over the containers
  // (Istio's own sidecar template builds a list with `append` in a range, quadratic in their
  // number), so without a bound one pod could hold a webhook thread for minutes. Kubernetes sets
  // no limit; real pods have a handful. 0 = no limit.
  std::size_t max_pod_containers = kMaxPodContainers;
};

inline constexpr std::string_view kFingerprintAnnotation = "meshop.io/injector-fingerprint";

// A stable digest (16 hex digits, FNV-1a 64) of what a revision's injection output depends on
// in its ConfigMaps: revision, config, values and mesh. Pure.
std::string injector_fingerprint(const SnapshotSources& sources);

class Snapshot;  // immutable, defined in snapshot.hpp (engine internals)

api::Result<std::shared_ptr<const Snapshot>> build_snapshot(const SnapshotSources& sources);

// True when no template of the snapshot may call a clock, random or DNS function, i.e. inject()
// gives the same answer for the same request every time (the webhook memoizes answers then).
bool snapshot_is_deterministic(const Snapshot& snapshot);

// Why a pod is or is not injected. Stable strings for metrics labels and Events.
enum class Reason {
  kInjected,              // "injected"
  kHostNetwork,           // "host_network"
  kIgnoredNamespace,      // "ignored_namespace"
  kLabelFalse,            // "label_false"       sidecar.istio.io/inject label "false"
  kLabelTrue,             // "label_true"
  kAnnotationFalse,       // "annotation_false"
  kAnnotationTrue,        // "annotation_true"
  kNeverInjectSelector,   // "never_inject_selector"
  kAlwaysInjectSelector,  // "always_inject_selector"
  kPolicyEnabled,         // "policy_enabled"
  kPolicyDisabled,        // "policy_disabled"
  kPolicyInvalid,         // "policy_invalid"    policy neither enabled nor disabled
};
std::string_view reason_name(Reason r);

// `reason` says why: the deciding step of injectRequired (kInjected is not produced by decide();
// it is there for callers that count outcomes).
struct Decision {
  bool inject = false;
  Reason reason = Reason::kPolicyDisabled;
};

// `pod` is a Pod object (JSON). `ns` is the namespace to use when the pod has none.
// kube_inject mode ignores the configured policy and selectors as upstream's kube-inject does.
Decision decide(const Snapshot& snapshot, const rapidjson::Value& pod, std::string_view ns,
                bool kube_inject = false);

struct PodRequest {
  const rapidjson::Value* pod = nullptr;  // the Pod object (required)
  std::string ns;                         // AdmissionRequest.namespace, used if pod has none
  bool kube_inject = false;
  // kube-inject passes the workload's own TypeMeta and name; the webhook leaves these empty
  // and they are derived from owner references (GetDeployMetaFromPod heuristics).
  std::string workload_api_version, workload_kind, workload_name;
  // Environment for the proxy from the webhook path (/inject/cluster/c1/net/n1):
  // env name → value, e.g. ISTIO_META_CLUSTER_ID.
  std::vector<std::pair<std::string, std::string>> proxy_envs;
  // The pod's Namespace object; only read when the snapshot is for OpenShift (UID/GID ranges).
  const rapidjson::Value* namespace_object = nullptr;
};

enum class Outcome { kInjected, kSkipped, kFailed };

struct InjectResult {
  Outcome outcome = Outcome::kFailed;
  Decision decision;
  // Failures: a stable machine-readable type for metrics ("template_not_found",
  // "invalid_annotation", "template_render", "merge", "invalid_pod", ...) and a message for
  // users naming the annotation/field/template.
  std::string failure_type;
  std::string message;
  // RFC 6902 JSON Patch text; set for kInjected. As upstream's, it is computed against the pod
  // after the namespace fill-in and with managedFields dropped, so neither produces an op.
  std::string patch;
  // The injected pod; set for kInjected. It includes the filled-in namespace (the patch applied
  // to a pod without metadata.namespace does not).
  rapidjson::Document pod;
};

InjectResult inject(const Snapshot& snapshot, const PodRequest& request);

}  // namespace meshop::inject
