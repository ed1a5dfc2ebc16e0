// The webhooks reconciler: every injection MutatingWebhookConfiguration meshop installs, in
// one pass (any key reconciles all of them, like the certificates reconciler).
//
// Observe: every IstioOperator (or those matching config.iop_selector), every
// MutatingWebhookConfiguration, and the Secret `<secret_namespace>/<secret_name>` whose key
// `ca-bundle.crt` the certificates reconciler writes.
// Desired (compute_desired_webhooks, pure):
//   - IstioOperators sorted oldest first (creationTimestamp, then namespace/name). Each claims
//     its revision (spec.revision, "" = "default"); a younger one with a claimed revision is
//     ignored (Warning RevisionConflict on it). Being deleted: ignored, its configurations
//     are pruned. Paused (annotation install.istio.io/ignoreReconcile: "true"), invalid or
//     unrenderable: it still claims its revision and tags, but nothing is computed for it and
//     its live configurations (by owner labels) are kept as they are: not updated, not pruned.
//   - per revision, the MutatingWebhookConfiguration manifest::render_istio_operator renders
//     for it (`istio-sidecar-injector[-<rev>][-<ns> outside istio-system]`), checked to hold
//     exactly upstream's entries (check_revision_webhook), with every entry's clientConfig
//     pointing at meshop's webhook (service <service_namespace>/<service_name> port 443, or
//     url <url_base><path>; path "/inject" for the default revision, "/inject/rev/<rev>"
//     otherwise), caBundle = base64(ca-bundle.crt) when the Secret exists (else the live
//     caBundle is kept, or none on creation), and the owner labels (managed-by meshop,
//     owning-resource, owning-resource-namespace, component) plus istio.io/rev and
//     config.extra_labels. values.global.operatorManageWebhooks cannot turn them off: meshop
//     is the operator that manages them.
//   - per tag in spec.values.revisionTags: `istio-revision-tag-<tag>`, or
//     `istio-revision-tag-<tag>-<ns>` when the revision's Istio namespace <ns> is not
//     istio-system, as the chart's revision-tags-mwc.yaml names it
//     (manifest::generate_tag_webhook over the revision's desired configuration, plus the
//     auto. entry for the `default` tag when the declaring IstioOperator sets
//     values.sidecarInjectorWebhook.enableNamespacesByDefault). A tag equal to a revision
//     name (of an IstioOperator, or of a revision configuration meshop does not manage), or
//     already claimed by an older IstioOperator's revision: Warning TagConflict on the
//     IstioOperator, tag skipped. `default` may name the default revision (istioctl allows it).
//     A tag that is not a DNS-1123 label: Warning InvalidTag. A tag of a revision that renders
//     no injector (pilot disabled): Warning TagSkipped.
//   - while a `default` tag exists (written in this pass, or a live istio.io/tag=default
//     configuration this pass does not prune, e.g. from `meshop tag set default`), the
//     default revision's own configuration is desired deactivated
//     (manifest::deactivate_webhook), as `istioctl tag set default` leaves it.
// Apply: server-side apply (field manager config.field_manager, force) of every desired
// configuration that differs from the live one in a field meshop sets (webhook_up_to_date),
// activations first and deactivations after, so legacy selectors never go unserved; then
// delete the live configurations labelled app.kubernetes.io/managed-by=meshop (and
// extra_labels) with an owning-resource label that are neither desired nor kept.
// Configurations without owner labels (made by `meshop tag set`) are the user's: not pruned.
// Report: Warning Events on IstioOperators for problems, log lines, counters
// meshop_webhook_configurations_applied_total / _pruned_total.
// reconcile(): requeue after config.secret_missing_requeue while the Secret is absent, else
// after config.resync; error (backoff) on an apiserver error.
//
// Rendering costs ~3 ms per IstioOperator (RelWithDebInfo); the reconciler keeps the rendered
// configuration per IstioOperator until its spec changes (WebhookRenderCache), so a pass
// that changes nothing costs ~0.015 ms per IstioOperator plus the three API reads.
//
// Thread affinity: the control-loop thread (the client's executor). The pure functions are
// safe from any thread (a WebhookRenderCache must not be shared between threads).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/json.hpp"
#include "api/result.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/controller.hpp"

namespace meshop::reconcilers {

struct WebhooksConfig {
  // Where the apiserver calls meshop's injector.
  std::string service_name = "meshop-webhook";
  std::string service_namespace = "istio-system";
  std::string url_base;  // "" = service mode; else e.g. "https://127.0.0.1:9443" (local mode)
  // The certificates reconciler's Secret (key ca-bundle.crt).
  std::string secret_namespace = "istio-system";
  std::string secret_name = "meshop-webhook-certs";
  // Only IstioOperators matching this label selector are reconciled ("" = all).
  std::string iop_selector;
  // Set on every configuration written, and required (with managed-by=meshop) of every
  // configuration pruned: lets tests sharing a cluster stay apart.
  std::map<std::string, std::string> extra_labels;
  std::string field_manager = "meshop-webhooks";
  std::chrono::seconds secret_missing_requeue{2};
  std::chrono::seconds resync{300};
};

// Something wrong with one IstioOperator, reported as a Warning Event on it.
struct WebhookProblem {
  std::string iop;  // "<namespace>/<name>"
  // RevisionConflict, TagConflict, InvalidTag, TagSkipped, InvalidSpec, RenderFailed
  std::string reason;
  std::string message;
};

struct DesiredWebhook {
  std::string name;
  std::string owner;     // "<namespace>/<name>" of the IstioOperator
  std::string revision;  // "default" for the default revision
  std::string tag;       // "" for a revision's own configuration
  bool deactivated = false;
  api::Document object;  // the whole server-side apply body
};

struct WebhookObservation {
  std::vector<const rapidjson::Value*> istio_operators;
  std::vector<const rapidjson::Value*> configurations;  // every live configuration
  std::optional<std::string> ca_bundle;                 // PEM; nullopt: no Secret (yet)
};

struct DesiredWebhooks {
  std::vector<DesiredWebhook> webhooks;  // activations first, then deactivations; by name
  std::set<std::string> kept;            // live names left untouched (paused/invalid owners)
  std::vector<std::string> prune;        // live names to delete, sorted
  std::vector<WebhookProblem> problems;
};

// Rendered revision configurations by IstioOperator ("<namespace>/<name>"), reused while its
// spec is unchanged: rendering costs a few milliseconds per IstioOperator and a pass runs on
// every watched change. Not thread-safe; one per reconciler.
struct WebhookRenderCache {
  struct Entry {
    std::string input;      // the spec as JSON
    api::Document webhook;  // the rendered configuration (null: none), when there is no error
    std::optional<api::Error> error;
  };
  std::map<std::string, Entry> entries;
};

// `cache` may be null (render every IstioOperator); entries of IstioOperators not rendered in
// this call are dropped from it.
DesiredWebhooks compute_desired_webhooks(const WebhooksConfig& config,
                                         const WebhookObservation& observed,
                                         WebhookRenderCache* cache = nullptr);

// Checks that a rendered revision configuration holds exactly upstream's injector entries
// (reference/istio-injection.md §2.1): rev.namespace. and rev.object. for `revision`, and
// for the default revision ("default") also namespace., object. and, when `auto_inject`,
// auto.; each with failurePolicy Fail, sideEffects None, CREATE of v1 pods only,
// admissionReviewVersions [v1] and a timeoutSeconds. The error names the entry and field.
api::Result<api::Ok> check_revision_webhook(const rapidjson::Value& mwc, std::string_view revision,
                                            bool auto_inject);

// Whether `live` already holds every field of `desired` meshop sets: labels, and per desired
// entry (found by name) every field, selectors compared whole (they are atomic for
// server-side apply). Fields the apiserver defaults and entries others added are ignored.
bool webhook_up_to_date(const rapidjson::Value& desired, const rapidjson::Value& live);

// What one pass did, for logs and tests.
struct WebhooksOutcome {
  std::vector<std::string> applied;    // configurations written
  std::vector<std::string> unchanged;  // desired and already up to date
  std::vector<std::string> pruned;     // deleted
  std::vector<WebhookProblem> problems;
  bool secret_missing = false;
};

class WebhooksReconciler {
 public:
  WebhooksReconciler(std::shared_ptr<kube::Client> client, WebhooksConfig config,
                     metrics::Registry* registry = nullptr,
                     std::shared_ptr<kube::EventRecorder> events = nullptr);
  // Reads through `reader`, writes and Events through `writer` (tests: test/support/fake_api.hpp).
  WebhooksReconciler(std::shared_ptr<kube::Reader> reader, std::shared_ptr<kube::Writer> writer,
                     WebhooksConfig config, metrics::Registry* registry = nullptr);

  // One pass over every configuration; the outcome, or an error (transient ones included).
  kube::Task<api::Result<WebhooksOutcome>> reconcile_once();

  // The controller adapter: any key reconciles everything.
  kube::Task<runtime::Action> reconcile(const std::string& key);

  const WebhooksConfig& config() const { return config_; }

 private:
  std::shared_ptr<kube::Reader> reader_;
  std::shared_ptr<kube::Writer> writer_;
  WebhooksConfig config_;
  metrics::Family<metrics::Counter>* applied_ = nullptr;
  metrics::Family<metrics::Counter>* pruned_ = nullptr;
  WebhookRenderCache cache_;
};

struct OperatorSetup;

// `meshop run`'s webhooks controller: one pass over every configuration ("all"), at start and
// whenever an IstioOperator, a MutatingWebhookConfiguration or the serving Secret changes.
void setup_webhooks(const OperatorSetup& setup, WebhooksConfig config);

}  // namespace meshop::reconcilers
