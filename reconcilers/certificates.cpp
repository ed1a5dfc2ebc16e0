#include "reconcilers/certificates.hpp"

#include <algorithm>

#include <rapidjson/document.h>

#include "api/base64.hpp"
#include "api/json.hpp"
#include "operator/log/log.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"

namespace meshop::reconcilers {
namespace {

constexpr std::string_view kCaCert = "ca.crt";
constexpr std::string_view kCaKey = "ca.key";
constexpr std::string_view kServingCert = "tls.crt";
constexpr std::string_view kServingKey = "tls.key";
constexpr std::string_view kBundle = "ca-bundle.crt";
constexpr std::string_view kWebhookSuffix = "sidecar-injector.istio.io";

using api::base64_encode;

// Secret data is base64; anything that does not decode reads as absent.
std::string base64_decode(std::string_view in) {
  return api::base64_decode(in).value_or(std::string());
}

// The decoded `data[key]` of a Secret, "" when absent.
std::string secret_value(const rapidjson::Value& secret, std::string_view key) {
  const rapidjson::Value* data = api::find_member(secret, "data");
  if (data == nullptr || !data->IsObject()) return {};
  const rapidjson::Value* v = api::find_member(*data, key);
  if (v == nullptr || !v->IsString()) return {};
  return base64_decode(api::string_view_of(*v));
}

using Material = CertificateMaterial;

bool same_names(const certs::CertInfo& info, const CertificatesConfig& config) {
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  return sorted(info.dns_names) == sorted(config.dns_names) &&
         sorted(info.ip_addresses) == sorted(config.ip_addresses);
}

// Why the CA must be replaced, or "" when it is fine.
std::string ca_problem(const certs::KeyPair& ca, certs::TimePoint now) {
  if (ca.cert_pem.empty() || ca.key_pem.empty()) return "missing";
  auto info = certs::inspect(ca.cert_pem);
  if (!info) return "unreadable: " + info.message();
  if (!info->is_ca) return "not a CA certificate";
  if (auto ok = certs::check_key_pair(ca); !ok) return ok.message();
  if (now >= info->renew_at()) return "2/3 of its lifetime has passed";
  return {};
}

// Why the serving certificate must be reissued, or "" when it is fine. `ca_published` says
// every managed webhook configuration already trusts the current CA.
std::string serving_problem(const Material& m, const CertificatesConfig& config,
                            certs::TimePoint now, bool ca_published) {
  if (m.serving.cert_pem.empty() || m.serving.key_pem.empty()) return "missing";
  auto info = certs::inspect(m.serving.cert_pem);
  if (!info) return "unreadable: " + info.message();
  if (auto ok = certs::check_key_pair(m.serving); !ok) return ok.message();
  if (!same_names(*info, config)) return "its names differ from the configured ones";
  if (now >= info->renew_at()) return "2/3 of its lifetime has passed";
  if (!certs::verify(m.serving.cert_pem, m.bundle, now)) return "not trusted by the CA bundle";
  if (ca_published && !certs::verify(m.serving.cert_pem, m.ca.cert_pem, now))
    return "signed by the previous CA, and the new CA is published";
  return {};
}

rapidjson::Document secret_object(const CertificatesConfig& config, const Material& m,
                                  std::string_view resource_version) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  auto str = [&](std::string_view s) { return api::make_string(s, a); };
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("kind", "Secret", a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("name", str(config.secret_name), a);
  meta.AddMember("namespace", str(config.namespace_name), a);
  if (!resource_version.empty()) meta.AddMember("resourceVersion", str(resource_version), a);
  rapidjson::Value labels(rapidjson::kObjectType);
  labels.AddMember(str(api::kManagedByLabel), str(api::kManagedByValue), a);
  labels.AddMember("app.kubernetes.io/component", "webhook-certificates", a);
  meta.AddMember("labels", labels, a);
  d.AddMember("metadata", meta, a);
  d.AddMember("type", "kubernetes.io/tls", a);
  rapidjson::Value data(rapidjson::kObjectType);
  auto put = [&](std::string_view k, std::string_view v) {
    data.AddMember(str(k), str(base64_encode(v)), a);
  };
  put(kCaCert, m.ca.cert_pem);
  put(kCaKey, m.ca.key_pem);
  put(kServingCert, m.serving.cert_pem);
  put(kServingKey, m.serving.key_pem);
  put(kBundle, m.bundle);
  d.AddMember("data", data, a);
  return d;
}

// The JSON patch that sets the caBundle of every injector entry that differs, guarded by the
// configuration's resourceVersion; "" when nothing differs.
std::string ca_bundle_patch(const rapidjson::Value& mwc, const std::string& bundle_b64) {
  const rapidjson::Value* hooks = api::find_member(mwc, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return {};
  std::string ops;
  for (rapidjson::SizeType i = 0; i < hooks->Size(); ++i) {
    const rapidjson::Value& h = (*hooks)[i];
    std::string name = api::string_at(h, {"name"});
    if (name.size() < kWebhookSuffix.size() ||
        name.compare(name.size() - kWebhookSuffix.size(), kWebhookSuffix.size(), kWebhookSuffix) !=
            0)
      continue;
    const rapidjson::Value* cc = api::find_member(h, "clientConfig");
    if (cc == nullptr || !cc->IsObject()) continue;
    if (api::string_at(*cc, {"caBundle"}) == bundle_b64) continue;
    const char* op = api::find_member(*cc, "caBundle") != nullptr ? "replace" : "add";
    ops += std::string(ops.empty() ? "" : ",") + R"({"op":")" + op + R"(","path":"/webhooks/)" +
           std::to_string(i) + R"(/clientConfig/caBundle","value":")" + bundle_b64 + R"("})";
  }
  if (ops.empty()) return {};
  std::string rv = api::string_at(mwc, {"metadata", "resourceVersion"});
  return R"([{"op":"test","path":"/metadata/resourceVersion","value":")" + rv + R"("},)" + ops +
         "]";
}

bool trusts(const rapidjson::Value& mwc, const std::string& ca_pem) {
  auto ca = certs::inspect(ca_pem);
  if (!ca) return false;
  const rapidjson::Value* hooks = api::find_member(mwc, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return true;
  for (const rapidjson::Value& h : hooks->GetArray()) {
    std::string name = api::string_at(h, {"name"});
    if (!name.ends_with(kWebhookSuffix)) continue;
    std::string bundle = base64_decode(api::string_at(h, {"clientConfig", "caBundle"}));
    auto certs_in = certs::inspect_bundle(bundle);
    if (!certs_in) return false;
    bool found = std::any_of(certs_in->begin(), certs_in->end(), [&](const certs::CertInfo& c) {
      return c.sha256_fingerprint_hex == ca->sha256_fingerprint_hex;
    });
    if (!found) return false;
  }
  return true;
}

}  // namespace

CertificatesReconciler::CertificatesReconciler(std::shared_ptr<kube::Client> client,
                                               CertificatesConfig config,
                                               metrics::Registry* registry,
                                               std::shared_ptr<kube::EventRecorder> events,
                                               runtime::Clock* clock)
    : CertificatesReconciler(kube::client_reader(client),
                             kube::client_writer(client, std::move(events)), std::move(config),
                             registry, clock) {}

CertificatesReconciler::CertificatesReconciler(std::shared_ptr<kube::Reader> reader,
                                               std::shared_ptr<kube::Writer> writer,
                                               CertificatesConfig config,
                                               metrics::Registry* registry, runtime::Clock* clock)
    : reader_(std::move(reader)),
      writer_(std::move(writer)),
      config_(std::move(config)),
      clock_(clock != nullptr ? clock : &runtime::steady_clock()) {
  if (registry != nullptr)
    expiry_ = &registry->gauge("meshop_webhook_certificate_expiry_timestamp_seconds",
                               "When the webhook CA and serving certificate expire (Unix time).",
                               {"certificate"});
}

// What a pass read: the Secret (if any) and the configurations whose caBundle meshop keeps.
struct CertificatesReconciler::Observed {
  std::optional<api::Document> secret;
  kube::ListPage webhooks;
};

kube::Task<api::Result<CertificatesReconciler::Observed>> CertificatesReconciler::observe() {
  Observed out;
  auto secret =
      co_await reader_->get(kube::resources::kSecrets, config_.namespace_name, config_.secret_name);
  if (secret) {
    out.secret = std::move(*secret);
  } else if (!secret.error().is(kube::ErrorKind::kNotFound)) {
    co_return secret.error();
  }
  kube::ListOptions list_options;
  list_options.label_selector = config_.webhook_selector;
  auto webhooks =
      co_await reader_->list_all(kube::resources::kMutatingWebhookConfigurations, "", list_options);
  if (!webhooks) co_return webhooks.error();
  out.webhooks = std::move(*webhooks);
  co_return out;
}

api::Result<CertificateMaterial> CertificatesReconciler::renew(const Observed& observed,
                                                               certs::TimePoint now,
                                                               CertificatesOutcome& outcome) {
  const std::string object = config_.namespace_name + "/" + config_.secret_name;
  const bool exists = observed.secret.has_value();
  Material m;
  if (exists) {
    const api::Document& secret = *observed.secret;
    m.ca = {secret_value(secret, kCaCert), secret_value(secret, kCaKey)};
    m.serving = {secret_value(secret, kServingCert), secret_value(secret, kServingKey)};
    m.bundle = secret_value(secret, kBundle);
  }
  // The CA first, then the bundle, then the serving certificate.
  if (std::string why = ca_problem(m.ca, now); !why.empty()) {
    certs::CaOptions ca_options;
    ca_options.lifetime = config_.ca_lifetime;
    auto ca = certs::create_ca(ca_options, now);
    if (!ca) return api::Error{"creating webhook CA for " + object + ": " + ca.message()};
    log::info("rotating webhook CA", {{"secret", object}, {"reason", why}});
    if (exists)
      writer_->event(kube::reference_to(*observed.secret), kube::EventType::kNormal, "CARotated",
                     "Rotate", "webhook CA replaced: " + why);
    m.ca = std::move(*ca);
    outcome.ca_rotated = exists;
  }
  m.bundle = certs::merge_bundle(m.ca.cert_pem, m.bundle, now);

  bool ca_published = true;
  for (const rapidjson::Value& mwc : observed.webhooks.list["items"].GetArray())
    ca_published = ca_published && trusts(mwc, m.ca.cert_pem);
  if (std::string why = serving_problem(m, config_, now, ca_published); !why.empty()) {
    certs::ServingOptions serving_options;
    serving_options.dns_names = config_.dns_names;
    serving_options.ip_addresses = config_.ip_addresses;
    serving_options.lifetime = config_.serving_lifetime;
    auto serving = certs::issue_serving(m.ca, serving_options, now);
    if (!serving)
      return api::Error{"issuing webhook serving certificate for " + object + ": " +
                        serving.message()};
    log::info("issuing webhook serving certificate", {{"secret", object}, {"reason", why}});
    m.serving = std::move(*serving);
    outcome.serving_reissued = exists;
  }
  return m;
}

kube::Task<api::Result<int>> CertificatesReconciler::publish_bundle(const Observed& observed,
                                                                    std::string bundle_b64) {
  int patched_count = 0;
  for (const rapidjson::Value& mwc : observed.webhooks.list["items"].GetArray()) {
    std::string patch = ca_bundle_patch(mwc, bundle_b64);
    if (patch.empty()) continue;
    std::string name = api::string_at(mwc, {"metadata", "name"});
    auto patched =
        co_await writer_->patch(kube::resources::kMutatingWebhookConfigurations, "", name,
                                kube::PatchType::kJson, std::move(patch), kube::PatchOptions());
    if (!patched) co_return patched.error();
    ++patched_count;
    log::info("set caBundle of webhook configuration", {{"webhook", name}});
  }
  co_return patched_count;
}

kube::Task<api::Result<api::Ok>> CertificatesReconciler::write_secret(
    const Observed& observed, const CertificateMaterial& m, CertificatesOutcome& outcome) {
  const std::string resource_version =
      observed.secret ? api::string_at(*observed.secret, {"metadata", "resourceVersion"}) : "";
  rapidjson::Document desired = secret_object(config_, m, resource_version);
  if (!observed.secret) {
    auto created =
        co_await writer_->create(kube::resources::kSecrets, config_.namespace_name, desired);
    if (!created) co_return created.error();
    outcome.secret_created = true;
    log::info("created webhook certificate secret",
              {{"secret", config_.namespace_name + "/" + config_.secret_name}});
  } else {
    // Guarded by the resourceVersion read: a concurrent writer's change is a 409.
    auto updated = co_await writer_->update(kube::resources::kSecrets, desired);
    if (!updated) co_return updated.error();
  }
  co_return api::Ok{};
}

void CertificatesReconciler::report(const CertificateMaterial& m, CertificatesOutcome& outcome) {
  auto ca_info = certs::inspect(m.ca.cert_pem);
  auto serving_info = certs::inspect(m.serving.cert_pem);
  if (!ca_info || !serving_info) return;
  outcome.next_renewal = std::min(ca_info->renew_at(), serving_info->renew_at());
  if (expiry_ != nullptr) {
    auto unix_seconds = [](certs::TimePoint t) {
      return static_cast<double>(certs::Clock::to_time_t(t));
    };
    expiry_->with({"ca"}).Set(unix_seconds(ca_info->not_after));
    expiry_->with({"serving"}).Set(unix_seconds(serving_info->not_after));
  }
}

kube::Task<api::Result<CertificatesOutcome>> CertificatesReconciler::reconcile_once() {
  CertificatesOutcome outcome;
  const certs::TimePoint now = clock_->wall_now();

  auto observed = co_await observe();
  if (!observed) co_return observed.error();
  const std::string original_bundle =
      observed->secret ? secret_value(*observed->secret, kBundle) : std::string();
  auto material = renew(*observed, now, outcome);
  if (!material) co_return material.error();

  // Apply, webhook configurations first: the apiserver must trust a CA before any serving
  // certificate it signed is stored where webhook servers load it from. If the Secret write
  // then fails, the configurations trust one CA too many until the next pass; never too few.
  auto published = co_await publish_bundle(*observed, base64_encode(material->bundle));
  if (!published) co_return published.error();
  outcome.webhooks_patched = *published;
  const bool changed = !observed->secret || outcome.ca_rotated || outcome.serving_reissued ||
                       material->bundle != original_bundle;
  if (changed)
    if (auto written = co_await write_secret(*observed, *material, outcome); !written)
      co_return written.error();

  report(*material, outcome);
  co_return outcome;
}

kube::Task<runtime::Action> CertificatesReconciler::reconcile(const std::string& /*key*/) {
  auto outcome = co_await reconcile_once();
  if (!outcome) co_return error_action(outcome.error());
  auto until = outcome->next_renewal - clock_->wall_now();
  auto wait = std::clamp<runtime::Duration>(std::chrono::duration_cast<runtime::Duration>(until),
                                            std::chrono::seconds(1), std::chrono::hours(1));
  co_return runtime::Action::requeue_after(wait);
}

void setup_certificates(const OperatorSetup& setup, CertificatesConfig config) {
  auto reconciler = std::make_shared<CertificatesReconciler>(
      setup.reader(), setup.writer(), std::move(config), setup.registry, &setup.manager.clock());
  setup.controller("certificates")
      .singleton(kAllKey)
      .watches(watches::webhook_secret(setup.ns))
      .watches(watches::mutating_webhook_configurations())
      .complete([reconciler](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
