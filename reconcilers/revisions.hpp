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
//   - the IstioOperator's InUse condition (decide_in_use; in the same patch, merged into the
//     list of the other reconcilers' conditions and guarded by the object's resourceVersion,
//     since a merge patch replaces the list: reconcilers/conditions.hpp), and a Normal Event
//     RevisionUnused / RevisionInUse when it changes between True and False;
//   - gauge meshop_namespaces{revision}: namespaces served by each revision (warnings with a
//     single serving revision included; conflicts excluded).
// Acts: an IstioOperator annotated meshop.io/uninstall-when-unused-after whose revision has
// been unused that long (decide_in_use) is deleted (its finalizer uninstalls), after a Normal
// Event UninstallUnused saying why. Writes nothing else.
//
// Thread affinity: the client's executor (the control loop).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/restart/cluster_plan.hpp"
#include "operator/restart/policy.hpp"
#include "operator/restart/webhook_routes.hpp"
#include "operator/runtime/clock.hpp"
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
  // Pods in `namespaces`, live (not terminating, status.phase neither Succeeded nor Failed),
  // whose sidecar.istio.io/status annotation names this revision (restart::observe_pod: a
  // status without a revision field is `default`). The pod's istio.io/rev label is not
  // consulted: the status is what the injector wrote.
  int pods = 0;
  // Namespaces whose istio.io/rev label names it (directly or through a tag) without being
  // served by it (deactivated entries, both injection labels), sorted.
  std::vector<std::string> requested_by;
  // Live pods of any namespace that carry it: the sidecar.istio.io/status revision, else the
  // pod's istio.io/rev label (through tags). A pod whose namespace moved to another revision
  // still talks to this one until it is restarted. Pods labelled operator.istio.io/component
  // (the revision's own istiod and gateways) are not counted.
  int running_pods = 0;
  // Namespaces where it is one of several revisions called (RevisionConflict), or where it
  // serves or is asked for (istio.io/rev, through tags) with both labels set
  // (ConflictingInjectionLabels), sorted by namespace.
  std::vector<RevisionConflict> conflicts;
};

// A pod that neither runs nor will: being deleted (metadata.deletionTimestamp) or finished
// (status.phase Succeeded or Failed: Completed Job pods, evicted pods).
bool pod_gone(const rapidjson::Value& pod);

// ---- InUse: is a revision used, since when not, and is it to be uninstalled ----
inline constexpr std::string_view kInUseCondition = "InUse";
inline constexpr std::string_view kUninstallWhenUnusedAnnotation =
    "meshop.io/uninstall-when-unused-after";

struct InUseInput {
  std::string revision;
  RevisionUsage usage;
  // The IstioOperator's annotation kUninstallWhenUnusedAnnotation, when it has one.
  std::optional<std::string> uninstall_after;
  // Its InUse condition as the object holds it ("" when absent).
  std::string current_status;
  std::string current_transition;  // lastTransitionTime (RFC 3339)
  restart::SystemTime now;
};

struct InUseDecision {
  bool in_use = false;
  // The InUse condition: status True/False, reason Used/Unused, message (the counts, and what
  // the annotation does), lastTransitionTime (kept while the status holds).
  std::string status, reason, message, last_transition;
  // Unused: since when (lastTransitionTime of InUse=False).
  std::optional<restart::SystemTime> unused_since;
  // The annotation's value parsed; annotation_error says why it was refused (nothing is
  // uninstalled then).
  std::optional<std::chrono::nanoseconds> uninstall_after;
  std::string annotation_error;
  // When the revision will be uninstalled if it stays unused (set only when it may be).
  std::optional<restart::SystemTime> uninstall_at;
  // Delete the IstioOperator now: not the default revision, no tag points at it, unused
  // continuously (per the condition already on the object) for at least uninstall_after.
  bool uninstall = false;
};

// Pure. Unused = no namespace routes to the revision (served or asked for by istio.io/rev;
// for the default revision istio-injection=enabled is served by it), no live pod carries it,
// no tag points at it.
InUseDecision decide_in_use(const InUseInput& in);

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
//    conflicts: [{namespace, reason, message}], requestedBy: [...], runningPods: N,
//    inUse: bool}
rapidjson::Document status_revisions(const RevisionsReport& report, const std::string& key);

// The InUse decision for the IstioOperator `iop` (nullopt when it owns no revision). `written`
// (status, lastTransitionTime), when given, stands for the condition instead of the object's.
std::optional<InUseDecision> in_use_of(
    const RevisionsReport& report, const rapidjson::Value& iop, restart::SystemTime now,
    const std::pair<std::string, std::string>* written = nullptr);

class RevisionsReconciler {
 public:
  // `clock` (null: runtime::steady_clock()) dates the InUse condition and the uninstall
  // deadlines; `meshop run` passes the manager's.
  RevisionsReconciler(std::shared_ptr<kube::Client> client, RevisionsConfig config,
                      metrics::Registry* registry = nullptr,
                      std::shared_ptr<kube::EventRecorder> events = nullptr,
                      runtime::Clock* clock = nullptr);
  // Reads through `reader`, writes and Events through `writer` (tests: test/support/fake_api.hpp).
  RevisionsReconciler(std::shared_ptr<kube::Reader> reader, std::shared_ptr<kube::Writer> writer,
                      RevisionsConfig config, metrics::Registry* registry = nullptr,
                      runtime::Clock* clock = nullptr);

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
  // One IstioOperator's status.revisions and InUse condition, written when they differ (an
  // InUse change between True and False is an Event); `use` is what decide_in_use said.
  kube::Task<api::Status> write_one_status(const RevisionsReport& report,
                                           const rapidjson::Value& iop, restart::SystemTime now,
                                           std::optional<InUseDecision>& use);
  // Deletes an IstioOperator whose revision has been unused long enough (an Event says why).
  kube::Task<api::Status> uninstall_unused(const RevisionsReport& report,
                                           const rapidjson::Value& iop, const InUseDecision& use);

  std::shared_ptr<kube::Reader> reader_;
  std::shared_ptr<kube::Writer> writer_;
  RevisionsConfig config_;
  metrics::Family<metrics::Gauge>* namespaces_gauge_ = nullptr;
  std::set<std::string> gauge_revisions_;          // label values set so far (reset to 0)
  std::map<std::string, std::string> last_state_;  // namespace → reason + message reported
  runtime::Clock* clock_;
  // IstioOperator key → the InUse condition this process last wrote (status|transition): the
  // transition time survives another writer's list that lacks it, or a lagging cache.
  std::map<std::string, std::pair<std::string, std::string>> last_in_use_;
  // Earliest uninstall deadline of the last pass (the next pass is due then).
  std::optional<restart::SystemTime> next_deadline_;
  bool watching_unused_ = false;  // an annotated IstioOperator exists: poll the pods
};

struct OperatorSetup;

// `meshop run`'s revisions controller: one pass ("all") at start and whenever an
// IstioOperator, a Namespace or a MutatingWebhookConfiguration changes; it reads those and
// every Pod from the cache (config.cache is filled in).
void setup_revisions(const OperatorSetup& setup, RevisionsConfig config = {});

}  // namespace meshop::reconcilers
