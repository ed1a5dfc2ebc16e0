// The install reconciler: makes the cluster hold what one IstioOperator renders.
//
// Key: "<namespace>/<name>" of an IstioOperator (install.istio.io/v1alpha1).
//
// Observe: the IstioOperator; every IstioOperator (for revision ownership); the objects that
// carry this resource's owner labels.
// Decide, in this order:
//   - absent                                → done.
//   - annotation install.istio.io/ignoreReconcile: "true"
//                                           → nothing is written (paused); done. A paused
//                                             resource being deleted stays until un-paused.
//   - metadata.deletionTimestamp set        → uninstall: delete every object with the owner
//                                             labels (each renderable kind except
//                                             MutatingWebhookConfigurations, which belong to
//                                             the webhooks reconciler, and Namespaces, which
//                                             are never deleted), workloads first, RBAC last;
//                                             then remove the finalizer meshop.io/uninstall.
//     Uninstall needs no valid spec, so an invalid resource can always be deleted.
//   - spec invalid (api/istio_operator.hpp, or refused by the render's validation: values,
//     meshConfig, spec.version) or unrenderable
//                                           → status ERROR listing every field path, a
//                                             Warning Event, both with reason InvalidSpec
//                                             (RenderFailed when a valid spec fails to
//                                             render); nothing applied; terminal (no retry
//                                             until the resource changes). Other resources
//                                             unaffected.
//   - another IstioOperator with the same revision is older (creationTimestamp, then
//     namespace/name)                       → status ERROR naming the owner; retried slowly.
//   - the shared (Base) objects belong to another IstioOperator (reconcilers/ownership.hpp:
//     the default revision's owner, else the oldest revision owner)
//                                           → they are left out of this one's apply and
//                                             prune; the rest is installed as below.
//     An uninstall likewise leaves the shared objects while another IstioOperator remains
//     to own them (run re-queues every IstioOperator when one is added or deleted).
//   - otherwise, before anything is written for the install, the finalizer is ensured (a JSON
//     patch guarded by resourceVersion). A refused or not-owning IstioOperator installs
//     nothing, so it gets no finalizer: its deletion does not wait for meshop.
// Apply: render (manifest::render_istio_operator), add the owner labels, create the
// Namespaces the objects need (labelled as meshop's; never deleted), then server-side apply
// every object except MutatingWebhookConfigurations in render order, field manager
// "meshop", force. Force is what repairs drift: an edited managed field is taken back and a
// deleted object re-created on the next pass. With InstallConfig::live (meshop run), an
// object whose rendered form and live resourceVersion are those of this reconciler's last
// apply is passed over (counted in meshop_install_unchanged_objects_total).
// Prune: for each renderable kind, list by the owner labels; delete what is not rendered now.
// Skipped when any apply failed (a partial render must not delete the rest).
// Report: a JSON merge patch of the status subresource with only this reconciler's keys
// (status, message, componentStatus, conditions Reconciled/Ready, observedGeneration),
// written only when it differs from what is there (a status write is itself a watch event).
// A generation not yet observed is first marked RECONCILING ("applying generation N") before
// the apply, so a pass over an unchanged resource writes no status at all.
// HEALTHY when every rendered Deployment has availableReplicas >= replicas and every
// DaemonSet numberAvailable == desiredNumberScheduled, each with observedGeneration current.
//
// An API error that ends a pass (Forbidden, unreachable, ...) is reported by reconcile(): status
// ERROR with the apiserver's message (naming verb and resource, e.g. "cannot list resource
// \"resourcequotas\" ... at the cluster scope") prefixed "install failed" or, for a resource
// being deleted, "uninstall blocked (finalizer meshop.io/uninstall kept ...)", and a Warning
// Event (ReconcileFailed / UninstallBlocked); the key is retried as reconcilers/errors.hpp's
// policy says (Forbidden: slowly; 429/503: after Retry-After; else per-key backoff). A lost
// resourceVersion race (409 Conflict, an apply's included) is retried at once and reported to
// nobody: no ERROR status, no Event.
// reconcile(): done for absent / paused / uninstalled; terminal_error for an invalid spec;
// requeue_after(config.conflict_requeue) for a revision conflict; error (backoff) for an
// object that failed to apply; error_action() of an apiserver error;
// requeue_after(config.not_ready_requeue) while not HEALTHY, else
// requeue_after(config.healthy_requeue).
//
// Thread affinity: the control-loop thread (the client's executor).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <rapidjson/document.h>

#include "api/istio_operator.hpp"
#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/result.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/manifest/render.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/controller.hpp"
#include "reconcilers/ownership.hpp"

namespace meshop::reconcilers {

// The labels every object installed for an IstioOperator carries (operator contract) and the
// pause annotation: api/mesh_conventions.hpp.
using api::kComponentLabel;
using api::kIgnoreReconcileAnnotation;
using api::kManagedByLabel;
using api::kManagedByValue;
using api::kOwningResourceLabel;
using api::kOwningResourceNamespaceLabel;
inline constexpr std::string_view kUninstallFinalizer = "meshop.io/uninstall";

// ---- Pure parts (no I/O; safe from any thread) ----

// Sets the four owner labels on `object` (a Kubernetes object), keeping its other labels.
void add_owner_labels(api::Value& object, api::Allocator& allocator, std::string_view iop_name,
                      std::string_view iop_namespace, std::string_view component);

// Whether the IstioOperator is paused: annotation install.istio.io/ignoreReconcile "true".
bool install_paused(const rapidjson::Value& iop);

// Whether an update of an IstioOperator from `old_iop` to `new_iop` asks install to look
// again: its generation (spec), labels, annotations, finalizers or deletion changed. A
// status-only update is not (install writes status itself: re-running on it would retry an
// ERROR at once instead of with backoff).
bool install_relevant_change(const rapidjson::Value& old_iop, const rapidjson::Value& new_iop);

// "<namespace>/<name>" of the IstioOperator owning `object`, from its owner labels; nullopt
// when either label is missing or empty. For the lead's watches: enqueue the owner when an
// owned object changes.
std::optional<std::string> owner_key(const rapidjson::Value& object);

// The label selector of the objects owned by one IstioOperator.
std::string owner_selector(std::string_view iop_name, std::string_view iop_namespace);

// Identity of an object for pruning: the API group (not the version: a kind listed at
// another version is the same object), kind, namespace and name.
struct ObjectId {
  std::string group;
  std::string kind;
  std::string ns;
  std::string name;
  auto operator<=>(const ObjectId&) const = default;
  std::string to_string() const;  // "Deployment.apps ns/name"
};
ObjectId object_id(const rapidjson::Value& object);

// The kinds install applies and prunes, as (apiVersion, kind), in apply order; uninstall walks
// them in reverse. From manifest::installed_kinds() (Owner::kInstall): neither
// MutatingWebhookConfigurations (the webhooks reconciler's) nor Namespaces (never deleted).
const std::vector<std::pair<std::string, std::string>>& prunable_kinds();

// Whether `object` has an ownerReference with controller: true (made by another controller).
bool has_controller_owner(const rapidjson::Value& object);

// Whether a CustomResourceDefinition's status says Established=True.
bool crd_established(const rapidjson::Value& crd);

// Whether the install reconciler applies objects of this kind (CRDs included).
bool managed_kind(std::string_view kind);
// Whether it prunes and uninstalls them (not CRDs: Owner::kKeep).
bool prunable_kind(std::string_view kind);

// The live objects not in `desired`, in their input order.
std::vector<ObjectId> select_prune(const std::set<ObjectId>& desired,
                                   const std::vector<ObjectId>& live);

enum class InstallState { kNone, kReconciling, kHealthy, kError };
std::string_view to_string(InstallState state);

// Why a Deployment or DaemonSet (its live state, e.g. the apply response) is not ready yet,
// "" when it is ready, nullopt when `object` is neither kind.
std::optional<std::string> workload_not_ready(const rapidjson::Value& object);

struct ComponentReport {
  InstallState state = InstallState::kNone;
  std::string error;  // apply failures and readiness reasons, "; "-separated
};

struct StatusReport {
  InstallState state = InstallState::kNone;
  std::string message;
  std::map<std::string, ComponentReport> components;
  // With state kError: the conditions' reason ("" = "Error"), e.g. InvalidSpec.
  std::string reason;
};

// Why an IstioOperator is not installed before anything is applied: its spec is invalid
// (api::validate_istio_operator, or what the render's own validation refuses: spec.values,
// meshConfig, spec.version; Error::invalid) → reason "InvalidSpec", message "invalid spec:
// ..."; it could not be rendered otherwise (a chart set that cannot be read, a template that
// fails) → "RenderFailed", "cannot render: ...". Reason and message go into the status
// conditions and the Warning Event.
struct InstallRefusal {
  std::string reason;
  std::string message;
};
InstallRefusal install_refusal(const api::IstioOperatorValidation& validation,
                               const api::Error& render_error);

// What one pass saw for one rendered object: its component and either the apply error or
// the live state the apiserver returned.
struct AppliedObject {
  std::string component;
  const rapidjson::Value* live = nullptr;  // null when the apply failed
  std::string error;
};

// The status of an install from what applying it gave: ERROR when any apply failed,
// RECONCILING while a workload is not ready, else HEALTHY; per component likewise.
StatusReport compute_status(const std::vector<AppliedObject>& objects);

// The merge-patch body {"status": {...}} that sets this reconciler's status keys, keeping the
// lastTransitionTime of a condition whose status did not change and nulling components of
// `current_status` that are no longer reported. `now` is RFC 3339 ("2026-01-02T03:04:05Z").
// "" when the live status already says all of it.
std::string status_patch(const StatusReport& report, std::int64_t generation,
                         const rapidjson::Value* current_status, std::string_view now);

// ---- The reconciler ----

// The live object of an ObjectId as a watch cache holds it (full, or metadata only: only
// metadata.resourceVersion is read), nullptr when the cache does not have it or does not
// cover its kind. See InstallConfig::live.
using LiveLookup = std::function<std::shared_ptr<const rapidjson::Value>(const ObjectId&)>;

struct InstallConfig {
  std::string field_manager = "meshop";
  // Optional. With it, an object whose rendered form is what this reconciler last applied and
  // whose live resourceVersion is still the one that apply returned is not applied again:
  // nobody changed it since (a changed, re-created or deleted object has another
  // resourceVersion or none). The status is then computed from that apply's response. Without
  // it (tests, CLI) every pass applies everything. `meshop run` passes its informers' stores.
  LiveLookup live;
  std::chrono::seconds not_ready_requeue{5};
  std::chrono::seconds healthy_requeue{300};
  std::chrono::seconds conflict_requeue{30};
  // The time written into status conditions (wall_now); null: runtime::steady_clock().
  // `meshop run` passes the manager's.
  runtime::Clock* clock = nullptr;
  // What uninstall lists the owned objects through; null: the reconciler's reader. `meshop
  // run` reads the apiserver here while its passes read the cache: the finalizer goes only
  // after a list of what is really left (no lagging store), and a refused list (Forbidden) is
  // an uninstall blocked that users see.
  std::shared_ptr<kube::Reader> uninstall_reader = nullptr;
};

struct InstallOutcome {
  enum class Kind {
    kAbsent,       // no such IstioOperator
    kIgnored,      // paused by the ignoreReconcile annotation
    kUninstalled,  // deleted: owned objects removed, finalizer removed
    kInvalid,      // spec invalid or not renderable: status ERROR
    kConflict,     // another IstioOperator owns the revision: status ERROR
    kApplied,      // every object applied (state RECONCILING or HEALTHY)
    kApplyFailed,  // some object failed to apply: status ERROR
  };
  Kind kind = Kind::kAbsent;
  InstallState state = InstallState::kNone;
  std::string message;
  int applied = 0;
  int unchanged = 0;  // not applied: unchanged since this reconciler's last apply (config.live)
  int pruned = 0;     // deleted as no longer rendered, or by uninstall
  std::vector<std::string> created_namespaces;
  // kApplyFailed: the error of a failed apply, which chooses the requeue. Of several, the
  // first that a retry can fix (an invalid object waits for the user's edit, others do not).
  std::optional<api::Error> apply_error;

  void keep_apply_error(const api::Error& e) {
    if (!apply_error || (apply_error->invalid() && !e.invalid())) apply_error = e;
  }
};

class InstallReconciler {
 public:
  // Reads and writes through `client`, Events through `events` (none when null).
  InstallReconciler(std::shared_ptr<kube::Client> client, InstallConfig config = {},
                    metrics::Registry* registry = nullptr,
                    std::shared_ptr<kube::EventRecorder> events = nullptr);
  // Reads through `reader`, writes and Events through `writer` (the seam unit tests use:
  // test/support/fake_api.hpp).
  InstallReconciler(std::shared_ptr<kube::Reader> reader, std::shared_ptr<kube::Writer> writer,
                    InstallConfig config = {}, metrics::Registry* registry = nullptr);

  // One pass over the IstioOperator `key` ("<namespace>/<name>"). An Error is a transient
  // failure (apiserver unreachable, conflict on a guarded write); every other outcome,
  // including an invalid spec, is a value.
  //
  // The steps, in order (each a member below): observe → (paused: stop) → finalize (uninstall
  // a deleted resource) → validate and render (refuse an invalid spec) → check the owner of the
  // revision (report another owner) → apply (ensure the finalizer, mark a new generation
  // RECONCILING, desired objects, namespaces, server-side apply) → prune → report.
  kube::Task<api::Result<InstallOutcome>> reconcile_once(const std::string& key);

  // The controller adapter (see the top of this file for the mapping).
  kube::Task<runtime::Action> reconcile(const std::string& key);

 private:
  struct Pass;
  struct Desired;
  struct Applied;

  // Observe: the IstioOperator `key`; nullopt when it does not exist.
  kube::Task<api::Result<std::optional<Pass>>> observe(std::string key);
  // Every IstioOperator's ownership facts into pass.refs (this one's added if not yet listed).
  kube::Task<api::Result<api::Ok>> list_operators(Pass& pass);
  // Finalize: delete what this IstioOperator installed (the shared objects stay while another
  // IstioOperator remains to own them), then remove the finalizer. Nothing when the finalizer
  // is not there. Outcome kUninstalled.
  kube::Task<api::Result<InstallOutcome>> uninstall(Pass& pass);
  // Adds the finalizer if missing (a JSON patch guarded by resourceVersion: 409 when stale);
  // pass.iop becomes the patched object.
  kube::Task<api::Result<api::Ok>> ensure_finalizer(Pass& pass);
  // Validate and render: the rendered objects, or why not (no I/O but the chart files). The
  // validation and render warnings are Warning Events once per generation.
  std::variant<manifest::RenderResult, InstallRefusal> validate_and_render(const Pass& pass);
  // Status ERROR and a Warning Event with the refusal's reason; outcome kInvalid.
  kube::Task<api::Result<InstallOutcome>> refuse(Pass& pass, InstallRefusal refusal);
  // Check the owner: the older IstioOperator that owns this one's revision, if another does.
  static std::optional<OperatorRef> other_owner(const Pass& pass);
  // Status ERROR naming `owner` and a Warning Event RevisionConflict; outcome kConflict.
  kube::Task<api::Result<InstallOutcome>> report_not_owner(Pass& pass, const OperatorRef& owner);
  // A generation not yet observed is marked RECONCILING before the (possibly long) apply.
  kube::Task<api::Result<api::Ok>> mark_reconciling(Pass& pass);
  // What this pass installs: managed kinds, owner-labelled, the shared ones only by their owner.
  static Desired desired_objects(const Pass& pass, manifest::RenderResult rendered);
  // Creates the namespaces the desired objects need (labelled as meshop's, never deleted).
  kube::Task<api::Result<api::Ok>> create_namespaces(Pass& pass, const Desired& desired);
  // The response of this reconciler's last apply of `id` when nobody changed it since
  // (InstallConfig::live), else null.
  std::shared_ptr<const api::Document> unchanged_since_last_apply(
      const Pass& pass, const ObjectId& id, std::uint64_t rendered_hash) const;
  // Server-side applies the desired objects in order, stopping after the CRDs until they are
  // Established. An apply failure is recorded per object (status ERROR), except one the error
  // policy retries on its own terms (Conflict, Retry-After, Forbidden): that ends the pass.
  kube::Task<api::Result<Applied>> apply_objects(Pass& pass, const Desired& desired);
  // Deletes the owned objects no longer desired.
  kube::Task<api::Result<api::Ok>> prune(Pass& pass, const Desired& desired);
  // Report: outcome kApplied / kApplyFailed (with a Warning Event), and the status.
  kube::Task<api::Result<InstallOutcome>> report(Pass& pass, const StatusReport& report);

  kube::Task<api::Result<kube::ResourceType>> resource_for(const std::string& api_version,
                                                           const std::string& kind);
  kube::Task<api::Result<int>> delete_owned(
      const std::string& name, const std::string& ns, const std::set<ObjectId>& keep,
      const std::vector<std::pair<std::string, std::string>>& kinds, bool keep_shared,
      bool uninstalling = false);
  kube::Task<api::Result<api::Ok>> write_status(const rapidjson::Value& iop,
                                                const StatusReport& report);
  void warn(const rapidjson::Value& iop, std::string reason, std::string note);
  // After a pass ended in an API error: status ERROR naming it and a Warning Event.
  kube::Task<void> report_failure(std::string key, std::string message);

  std::shared_ptr<kube::Reader> reader_;
  std::shared_ptr<kube::Writer> writer_;
  InstallConfig config_;
  runtime::Clock* clock_;
  std::map<std::string, kube::ResourceType> types_;  // "apiVersion/kind" → resource
  // IstioOperator key → the generation whose validation/render warnings were reported.
  std::map<std::string, std::int64_t> warned_generation_;
  // What the last apply of an object sent and got: the hash of the rendered object, the
  // response (its resourceVersion and, for workloads, the state the status is computed from).
  struct LastApply {
    std::uint64_t rendered_hash = 0;
    std::string resource_version;
    std::shared_ptr<const api::Document> response;
  };
  std::map<ObjectId, LastApply> last_apply_;
  metrics::Family<metrics::Counter>* applied_total_ = nullptr;
  metrics::Family<metrics::Counter>* unchanged_total_ = nullptr;
  metrics::Family<metrics::Counter>* pruned_total_ = nullptr;
};

struct OperatorSetup;

// `meshop run`'s install controller (two workers: IstioOperators are independent, and one slow
// apply must not hold up another revision). Enqueues an IstioOperator's key when any
// IstioOperator comes, goes or changes what ownership reads (install_relevant_change: status
// writes are install's own and wake nothing), and when an object it installed changes
// (owner_key; the watches of manifest::installed_kinds()). Unless `config.live` is set, it
// reads live resourceVersions from those watches.
void setup_install(const OperatorSetup& setup, InstallConfig config = {});

}  // namespace meshop::reconcilers
