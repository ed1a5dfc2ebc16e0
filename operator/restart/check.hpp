// `meshop check` (issue 15, item 7): for a namespace, or one pod of it, which injector webhook
// and revision serve it, whether and why its pods are (or would be) injected, whether their
// running sidecars are stale, and what `meshop restart` would do about it: the explanation
// `istioctl x check-inject` gives, with the findings of Istio's analyzers users know.
//
// Findings, by name (the Istio analyzer code where one says the same thing):
//   IST0102 NamespaceNotInjected              Info     neither istio-injection nor istio.io/rev on
//                                                      the namespace, and no webhook injects its
//                                                      pods (Istio's level: not a problem by
//                                                      itself)
//   IST0123 NamespaceMultipleInjectionLabels  Warning  Istio's rule: istio-injection, plus
//                                                      istio.io/rev or istio.io/dataplane-mode
//                                                      while istio-injection is absent or enabled
//   IST0139 InvalidWebhook                    Error    several injector entries select the same pod
//                                                      (it would be injected twice), or a selector
//                                                      does not parse
//   IST0103 PodMissingProxy                   Warning  a pod without a sidecar its revision would
//                                                      inject now
//   IST0158 PodsIstioProxyImageMismatch       Warning  a sidecar's proxy image is not the one its
//                                                      revision injects now
//           StaleSidecar                      Warning  another stale sidecar: revision changed,
//                                                      injection disabled, template changed
//           RevisionNotFound                  Warning  istio.io/rev names no revision or tag that
//                                                      any injector webhook serves
//           UnknownRevision                   Error    the serving revision has no injector
//                                                      ConfigMap (no engine to inject with)
//           InjectionFails                    Error    the engine rejects the pod: the apiserver
//                                                      would refuse new pods
//           NoInjectionWebhooks               Error    no Istio injector webhook configuration
//
// Which entries count as injectors, and the order the apiserver calls them, are
// webhook_routes.hpp's; the staleness and the restart action are the restart plan's
// (cluster_plan.hpp), so `meshop check` and `meshop restart plan` never disagree.
//
// Pure: no I/O; the view and the plan are computed by the caller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/result.hpp"
#include "operator/restart/cluster_plan.hpp"
#include "operator/restart/planner.hpp"

namespace meshop::restart {

enum class Severity { kInfo, kWarning, kError };
std::string_view severity_name(Severity s);  // "Info", "Warning", "Error"

struct Finding {
  Severity severity = Severity::kInfo;
  std::string code;     // Istio's analyzer code ("IST0123"), or "" for meshop's own
  std::string name;     // "NamespaceMultipleInjectionLabels", ...
  std::string object;   // "Namespace/demo", "Deployment/demo/web", "Pod/demo/web-1"
  std::string message;  // one or two sentences, with what to do
};

// One injector configuration (as check-inject's rows): would it inject the pod, and why.
struct WebhookVerdict {
  std::string configuration;  // MutatingWebhookConfiguration name
  std::string revision;
  std::string tag;    // "" for a revision's own configuration
  std::string entry;  // the first entry that matches, "" when none does
  bool injects = false;
  std::string reason;  // "Namespace label istio.io/rev=canary matches", ...
};

// One workload of the namespace (or the pod's), from the restart plan.
struct WorkloadVerdict {
  std::string kind, name;
  std::size_t pods = 0;
  std::vector<std::string> sidecars;  // revisions its pods run, sorted; "none" for no sidecar
  std::string target_revision;        // what its pods get now; "" = not injected
  Verdict verdict = Verdict::kUpToDate;
  std::string reason;  // StaleReason name, or ""
  std::string detail;  // the planner's sentence
  Action action = Action::kNone;
  std::string action_why;  // the gate or skip reason `meshop restart plan` gives
  std::vector<std::string> stale_pods;
};

struct CheckReport {
  std::string ns;
  std::string pod;  // "" for a namespace check
  // A pod created now (for a namespace: one without injection labels; for a pod: from its
  // workload's template, as the restart planner builds it) is injected by `revision` through
  // `configuration`'s `entry` (`tag` when that configuration is a tag's).
  bool injected = false;
  std::string revision, tag, configuration, entry;
  std::string why;  // one sentence: what makes it injected or not
  std::vector<WebhookVerdict> webhooks;
  std::vector<WorkloadVerdict> workloads;  // for a pod: its workload (or the pod itself)
  // A pod check: the pod's own sidecar.
  bool pod_injected = false;
  std::string pod_revision, pod_proxy_image;
  std::vector<Finding> findings;  // in severity order, errors first

  // No finding of severity Warning or Error.
  bool ok() const;
};

struct CheckTarget {
  std::string ns;
  std::string pod;  // "" = the whole namespace
};

// An error (namespace or pod not in the view) names what is missing. `plan` is plan_cluster
// over the same view; `desired` the engines' decisions (reconcilers::Engines::desired).
api::Result<CheckReport> check(const ClusterView& view, const std::vector<PlanEntry>& plan,
                               const DesiredFn& desired, const CheckTarget& target);

}  // namespace meshop::restart
