// The restart planner: which workloads run pods that no longer match what injection would
// give them if they were created now, and why (issue 7, "What is stale").
//
// For one workload (Deployment, StatefulSet, DaemonSet, an owner-less ReplicaSet or
// ReplicationController; Jobs, CronJobs and bare Pods are planned too but only ever reported
// as needing a manual restart):
//   1. desired: route the pod template through the injector webhooks (webhook_routes.hpp),
//      then ask the injection engine of that revision (a callback, so this file stays free of
//      the engine's dependencies) whether it injects, and with which proxy image and
//      template fingerprint;
//   2. current: every running pod of the workload, observed through its
//      `sidecar.istio.io/status` annotation (injected, and by which revision), the
//      `istio-proxy` container's image, and the `meshop.io/injector-fingerprint` annotation
//      meshop's webhook adds;
//   3. the first pod that differs decides the reason, in this order: InjectionEnabled,
//      InjectionDisabled, RevisionChanged, ProxyImageChanged, TemplateChanged (the last only
//      when the policy includes template changes and both fingerprints are known).
// A workload whose pods all match, or that has no pods, is not stale. A namespace whose
// labels make several revisions match is reported as a conflict and never restarted.
//
// Pure: no I/O, no clock.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/webhook_routes.hpp"

namespace meshop::restart {

enum class StaleReason {
  kInjectionEnabled,
  kInjectionDisabled,
  kRevisionChanged,
  kProxyImageChanged,
  kTemplateChanged,
};
// "InjectionEnabled", ... (Event reasons and metric labels).
std::string_view reason_name(StaleReason r);

// What a pod looks like now.
struct PodState {
  bool injected = false;
  std::string revision;     // from sidecar.istio.io/status ("default" for the default revision)
  std::string proxy_image;  // image of the istio-proxy container (init or regular), or ""
  std::string fingerprint;  // meshop.io/injector-fingerprint, or ""
};
PodState observe_pod(const rapidjson::Value& pod);

// What injection would do now to a pod created from the template.
struct Desired {
  bool inject = false;
  std::string revision;
  std::string proxy_image;  // "" when unknown (then images are not compared)
  std::string fingerprint;  // "" when unknown
  std::string why;          // the engine's reason when it does not inject (for messages)
  // The engine fails on this template (e.g. an invalid annotation): a pod created now would
  // be rejected by the apiserver, so restarting would take the workload down.
  bool fails = false;
};

// The engine of `revision` decides for `pod` (a Pod built from the template, with its
// namespace set). Returns nullopt when that revision has no usable configuration.
using DesiredFn =
    std::function<std::optional<Desired>(const std::string& revision, const rapidjson::Value& pod)>;

struct PlanOptions {
  bool include_template_changes = false;
};

enum class Verdict {
  kUpToDate,         // nothing to do
  kStale,            // restart, for `reason`
  kManual,           // stale, but its kind is never restarted by meshop (Job, CronJob, Pod)
  kConflict,         // several revisions claim the pods; nothing is restarted
  kUnknownRevision,  // the routed revision has no configuration; nothing is restarted
  kInjectionFails,   // the engine would reject a new pod; nothing is restarted
};
std::string_view verdict_name(Verdict v);

struct WorkloadPlan {
  std::string kind, ns, name;
  Verdict verdict = Verdict::kUpToDate;
  std::optional<StaleReason> reason;
  std::string current_revision;  // of the first differing pod ("" = not injected)
  std::string target_revision;   // "" = injection disabled
  std::string detail;            // one human sentence
  // The istio-proxy image of the first differing pod, and the one injection gives now ("" when
  // unknown): the Istio versions of a move (the version gate, policy.hpp).
  std::string current_proxy_image;
  std::string target_proxy_image;
  // The injector fingerprint injection gives now ("" when unknown): what a TemplateChanged
  // restart is for.
  std::string target_fingerprint;
  // Every pod that differs from what injection gives now (any reason), in the order of `pods`:
  // what the Evict strategy replaces (evict.hpp).
  std::vector<std::string> stale_pods;
};

// Kinds whose pod template is at `spec.template` (or `spec.jobTemplate.spec.template`) and
// whether meshop restarts them.
bool restartable_kind(std::string_view kind);

// The pod template of `workload` of `kind` (the object itself for a Pod), or null.
const rapidjson::Value* pod_template(const rapidjson::Value& workload, std::string_view kind);
// A Pod object for the template `tmpl`, as the controller would create it in `ns`.
rapidjson::Document pod_from_template(const rapidjson::Value& tmpl, std::string_view ns);

// `workload` is the object (any kind above, or a Pod); `namespace_labels` the labels of its
// namespace (or null); `pods` its current pods (for a Pod, itself).
WorkloadPlan plan_workload(const rapidjson::Value& workload,
                           const rapidjson::Value* namespace_labels,
                           const std::vector<InjectorEntry>& entries,
                           const std::vector<const rapidjson::Value*>& pods,
                           const DesiredFn& desired, const PlanOptions& options = {});

}  // namespace meshop::restart
