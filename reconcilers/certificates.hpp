// The certificates reconciler: keeps the injection webhook's CA and serving certificate in a
// Secret, renews them, and keeps the caBundle of every meshop-managed
// MutatingWebhookConfiguration right.
//
// Observe: the Secret `<namespace>/<secret_name>` and the MutatingWebhookConfigurations
// matching `webhook_selector`.
// Desired:
//   - Secret (type kubernetes.io/tls) with keys
//       ca.crt      the current CA certificate      ca.key   its key
//       tls.crt     the serving certificate        tls.key  its key
//       ca-bundle.crt  what apiservers must trust: the current CA, then any previous CA
//                      still valid (the overlap while a new CA takes over)
//   - the CA is replaced when 2/3 of its lifetime has passed, or when it is missing, invalid
//     or does not match its key; the serving certificate when 2/3 of its lifetime has passed,
//     when its names differ from the configured ones, when it does not verify against the
//     current CA while every managed webhook configuration already trusts that CA, or when it
//     is missing or invalid. Keeping the old serving certificate until the new CA is published
//     is what lets the apiserver accept every admission call during a CA rotation.
//   - every webhook entry whose name ends with `sidecar-injector.istio.io` in a managed
//     configuration has clientConfig.caBundle = base64(ca-bundle.crt).
// Apply: webhook entries first (a JSON patch guarded by a `test` of the resourceVersion), then
// the Secret (created, or updated with its resourceVersion as precondition), so a CA is
// trusted by the apiserver before a serving certificate it signed can be loaded. A conflict
// requeues.
// Report: log lines, Events on the Secret, gauge
//   meshop_webhook_certificate_expiry_timestamp_seconds{certificate="ca"|"serving"}.
// The returned Action requeues at the earliest renewal time (capped at one hour), so renewal
// happens without any event.
//
// Thread affinity: the control-loop thread (the client's executor).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/mesh_conventions.hpp"
#include "operator/certs/certs.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/controller.hpp"

namespace meshop::reconcilers {

struct CertificatesConfig {
  std::string namespace_name = "istio-system";
  std::string secret_name = "meshop-webhook-certs";
  // Names of the webhook Service (service.namespace.svc ...), and 127.0.0.1 in local mode.
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  std::chrono::seconds ca_lifetime = std::chrono::hours(24 * 365);
  std::chrono::seconds serving_lifetime = std::chrono::hours(24 * 90);
  // Label selector of the MutatingWebhookConfigurations whose caBundle meshop keeps.
  std::string webhook_selector = std::string(api::kManagedSelector);
  std::string field_manager = "meshop";
};

// The Secret's content: the CA, the serving certificate and the CA bundle (PEM).
struct CertificateMaterial {
  certs::KeyPair ca;
  certs::KeyPair serving;
  std::string bundle;
};

// What one reconcile did, for logs and tests.
struct CertificatesOutcome {
  bool secret_created = false;
  bool ca_rotated = false;
  bool serving_reissued = false;
  int webhooks_patched = 0;  // configurations whose caBundle changed
  certs::TimePoint next_renewal{};
};

class CertificatesReconciler {
 public:
  // `clock` (null: runtime::steady_clock()) says when certificates expire and are renewed;
  // `meshop run` passes the manager's.
  CertificatesReconciler(std::shared_ptr<kube::Client> client, CertificatesConfig config,
                         metrics::Registry* registry = nullptr,
                         std::shared_ptr<kube::EventRecorder> events = nullptr,
                         runtime::Clock* clock = nullptr);
  // Reads through `reader`, writes and Events through `writer` (tests: test/support/fake_api.hpp).
  CertificatesReconciler(std::shared_ptr<kube::Reader> reader, std::shared_ptr<kube::Writer> writer,
                         CertificatesConfig config, metrics::Registry* registry = nullptr,
                         runtime::Clock* clock = nullptr);

  // One pass; the outcome, or an error message (transient errors included). The steps: observe
  // → renew (CA, bundle, serving certificate) → publish the bundle to the webhook
  // configurations → write the Secret → report.
  kube::Task<api::Result<CertificatesOutcome>> reconcile_once();

  // The controller adapter: any key reconciles everything (there is one Secret).
  kube::Task<runtime::Action> reconcile(const std::string& key);

  const CertificatesConfig& config() const { return config_; }

 private:
  struct Observed;
  // Observe: the Secret (absent: nullopt) and the configurations of webhook_selector.
  kube::Task<api::Result<Observed>> observe();
  // The material to hold at `now`: the Secret's, with the CA rotated, the bundle merged and the
  // serving certificate reissued where due (outcome.ca_rotated / serving_reissued; a rotation
  // of an existing CA is an Event on the Secret).
  api::Result<CertificateMaterial> renew(const Observed& observed, certs::TimePoint now,
                                         CertificatesOutcome& outcome);
  // Patches each configuration whose caBundle differs; how many were.
  kube::Task<api::Result<int>> publish_bundle(const Observed& observed, std::string bundle_b64);
  // Creates the Secret, or updates it guarded by the resourceVersion read.
  kube::Task<api::Result<api::Ok>> write_secret(const Observed& observed,
                                                const CertificateMaterial& m,
                                                CertificatesOutcome& outcome);
  // outcome.next_renewal and the expiry gauge.
  void report(const CertificateMaterial& m, CertificatesOutcome& outcome);

  std::shared_ptr<kube::Reader> reader_;
  std::shared_ptr<kube::Writer> writer_;
  CertificatesConfig config_;
  runtime::Clock* clock_;
  metrics::Family<metrics::Gauge>* expiry_ = nullptr;
};

struct OperatorSetup;

// `meshop run`'s certificates controller: one pass ("all") at start (creating the Secret when
// there is none) and whenever the serving Secret or a MutatingWebhookConfiguration changes.
void setup_certificates(const OperatorSetup& setup, CertificatesConfig config);

}  // namespace meshop::reconcilers
