// The revisions reconciler: which control-plane revision serves each namespace, the
// misconfigurations that make the answer surprising, and what each revision is used by.
//
// Observe: Namespaces, MutatingWebhookConfigurations, IstioOperators, Pods (metadata suffices),
// from the operator's informer stores (RevisionsCache: no API read) or by list calls.
// Compute (pure, below): for each namespace, the webhook entries the apiserver would call for a
// new pod with no labels of its own (restart::route over restart::injector_entries, so
// revisions, tags and deactivated configurations count exactly as the apiserver evaluates
// them). The verdict is, in this order of precedence:
//   RevisionConflict            entries of several revisions select the namespace;
//   ConflictingInjectionLabels  the namespace has both `istio-injection` and `istio.io/rev`:
//                               every revision entry (rev.namespace., rev.object.) requires
//                               `istio-injection` to be absent, so `istio.io/rev` is ignored;
//                               `istio-injection=enabled` is served by whoever owns the legacy
//                               `namespace.` entry (the default revision, or the `default`
//                               tag's target), any other value turns injection off;
//   UnknownRevision             `istio.io/rev` names neither a revision nor a tag of any
//                               configuration with injector entries: nothing is injected;
//   Served                      exactly one revision (possibly through a tag);
//   NotInjected                 nothing selects the namespace.
// The first three are Warnings.
// Report:
//   - an Event (Warning) on the Namespace when its verdict becomes one of the warnings or its
//     message changes; not again while it stays the same (memory of this process only: a
//     restarted meshop reports current problems once more, and the Event recorder aggregates
//     repeats);
//   - IstioOperator `status.revisions` (JSON merge patch on the status subresource, sent only
//     when it differs from what the object holds) — see status_revisions();
//   - gauge meshop_namespaces{revision}: namespaces served by each revision (warnings with a
//     single serving revision included; conflicts excluded).
// Writes nothing else.
//
// Thread affinity: the client's executor (the control loop).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/restart/cluster_plan.hpp"
#include "operator/restart/webhook_routes.hpp"
#include "operator/runtime/controller.hpp"
#include "operator/runtime/store.hpp"
#include "reconcilers/ownership.hpp"

namespace meshop::reconcilers {

// The informer stores a pass reads instead of listing (`meshop run`): every Namespace,
// MutatingWebhookConfiguration, IstioOperator and Pod of the cluster (pods at least as
// restart::project_pod keeps them). Used when the config has no label selector (the filters by
// name and namespace are applied to the stores' content). Must outlive the reconciler.
struct RevisionsCache {
  const runtime::Store* namespaces = nullptr;
  const runtime::Store* webhook_configurations = nullptr;
  const runtime::Store* istio_operators = nullptr;
  const runtime::Store* pods = nullptr;
};

struct RevisionsConfig {
  // One namespace only ("" = every namespace), like RestartsConfig::namespace_filter.
  std::string namespace_filter;
  // Label selector over Namespaces ("" = all); combined with namespace_filter.
  std::string namespace_selector;
  // Label selector over MutatingWebhookConfigurations. "" (all) is what the apiserver calls;
  // tests set it so configurations of other tests do not change their verdicts.
  std::string webhook_selector;
  // IstioOperators of this namespace only ("" = every namespace).
  std::string operator_namespace;
  // Set: passes read these stores (see RevisionsCache; not owned).
  const RevisionsCache* cache = nullptr;
};

enum class NamespaceReason {
  kServed,
  kNotInjected,
  kRevisionConflict,
  kConflictingInjectionLabels,
  kUnknownRevision,
};
// "Served", "NotInjected", "RevisionConflict", "ConflictingInjectionLabels", "UnknownRevision"
// (the Event reasons of the warnings).
std::string_view reason_name(NamespaceReason r);
bool is_warning(NamespaceReason r);

struct NamespaceVerdict {
  std::string name;
  NamespaceReason reason = NamespaceReason::kNotInjected;
  // The one revision whose injector the apiserver calls for a new pod (no pod labels), or ""
  // (not injected, or several: see `revisions`). Also set for the warnings other than
  // RevisionConflict when one revision serves.
  std::string revision;
  std::string tag;                     // the tag through which `revision` serves, "" when directly
  std::string configuration;           // the configuration of the first entry called, "" when none
  std::vector<std::string> revisions;  // every revision called, in call order
  // The namespace's labels: `istio.io/rev` (and the revision it resolves to through tags;
  // "" when unknown or absent) and `istio-injection` (has_injection_label tells absence from
  // an empty value).
  std::string requested;
  std::string requested_revision;
  bool has_injection_label = false;
  std::string injection_label;
  std::string message;  // one sentence: what happens to new pods and why
};

// The verdict for one Namespace object (its metadata.labels are read).
NamespaceVerdict evaluate_namespace(const rapidjson::Value& ns,
                                    const std::vector<restart::InjectorEntry>& entries);

struct RevisionConflict {
  std::string ns;
  std::string reason;  // reason_name() of the verdict
  std::string message;
};

// What one revision is used by.
struct RevisionUsage {
  std::vector<std::string> tags;        // tags whose configuration points at it, sorted
  std::vector<std::string> namespaces;  // served by it alone (verdict.revision), sorted
  // Pods in `namespaces`, not terminating, whose sidecar.istio.io/status annotation names
  // this revision (restart::observe_pod: a status without a revision field is `default`).
  // The pod's istio.io/rev label is not consulted: the status is what the injector wrote.
  int pods = 0;
  // Namespaces where it is one of several revisions called (RevisionConflict), or where it
  // serves or is asked for (istio.io/rev, through tags) with both labels set
  // (ConflictingInjectionLabels), sorted by namespace.
  std::vector<RevisionConflict> conflicts;
};

// Everything a pass reads. `webhook_configurations` is a JSON array.
struct RevisionsView {
  restart::ObjectList namespaces;
  rapidjson::Document webhook_configurations{rapidjson::kArrayType};
  restart::ObjectList istio_operators;
  restart::ObjectList pods;  // metadata suffices
};

struct RevisionsReport {
  std::vector<NamespaceVerdict> namespaces;  // sorted by name
  // Every revision known from injector entries or IstioOperators.
  std::map<std::string, RevisionUsage> revisions;
  // "<namespace>/<name>" of every IstioOperator → the revision it owns, "" when an older
  // IstioOperator (creationTimestamp, then namespace/name) has the same revision.
  std::map<std::string, std::string> owners;
};

// revision_of (spec.revision, "default" when empty) is in reconcilers/ownership.hpp.

// The view from the stores (shared objects, no copies; namespace_filter and operator_namespace
// applied, the selectors ignored); an error when a store is missing or not synced.
api::Result<RevisionsView> revisions_view_from(const RevisionsCache& cache,
                                               const RevisionsConfig& config);

// Pure. An error names the configuration whose selector does not parse.
api::Result<RevisionsReport> evaluate(const RevisionsView& view);

// The value of status.revisions for the IstioOperator `key` ("<namespace>/<name>"): an array
// with one element for the revision it owns (none when it owns nothing)
//   {revision, tags: [...], namespaces: [...], pods: N,
//    conflicts: [{namespace, reason, message}]}
rapidjson::Document status_revisions(const RevisionsReport& report, const std::string& key);

class RevisionsReconciler {
 public:
  RevisionsReconciler(std::shared_ptr<kube::Client> client, RevisionsConfig config,
                      metrics::Registry* registry = nullptr,
                      std::shared_ptr<kube::EventRecorder> events = nullptr);

  // One pass: observe, evaluate, report (Events, status.revisions, gauge). Errors are list or
  // patch failures and configurations that do not parse (naming them).
  kube::Task<api::Result<RevisionsReport>> pass();

  // The controller adapter: any key runs a pass; again in 5 minutes (the watches trigger the
  // rest).
  kube::Task<runtime::Action> reconcile(const std::string& key);

  const RevisionsConfig& config() const { return config_; }

 private:
  kube::Task<api::Result<RevisionsView>> observe();
  void record_events(const RevisionsReport& report, const RevisionsView& view);
  kube::Task<api::Status> write_status(const RevisionsReport& report, const RevisionsView& view);

  std::shared_ptr<kube::Client> client_;
  RevisionsConfig config_;
  std::shared_ptr<kube::EventRecorder> events_;
  metrics::Family<metrics::Gauge>* namespaces_gauge_ = nullptr;
  std::set<std::string> gauge_revisions_;          // label values set so far (reset to 0)
  std::map<std::string, std::string> last_state_;  // namespace → reason + message reported
};

struct OperatorSetup;

// `meshop run`'s revisions controller: one pass ("all") at start and whenever an
// IstioOperator, a Namespace or a MutatingWebhookConfiguration changes; it reads those and
// every Pod from the cache (config.cache is filled in).
void setup_revisions(const OperatorSetup& setup, RevisionsConfig config = {});

}  // namespace meshop::reconcilers
