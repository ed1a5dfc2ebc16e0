// The certificates reconciler against the real local control plane: it creates the Secret,
// publishes the caBundle into managed webhook configurations only, repairs a corrupted
// caBundle, and rotates the CA without ever leaving the apiserver with a bundle that does
// not trust the serving certificate in the Secret.
#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "api/json.hpp"
#include "operator/kube/client.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/clock.hpp"
#include "reconcilers/certificates.hpp"
#include "test/e2e/reconcilers/e2e_support.hpp"

namespace meshop::reconcilers {
namespace {

using namespace std::chrono_literals;
using e2e::parse;

std::string decode(std::string_view in) {
  std::string out(3 * in.size() / 4 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '\0')
    out.pop_back();
  return out;
}

class CertificatesE2e : public e2e::ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(connect());
    suffix_ = unique_suffix();
    ns_ = "certs-e2e-" + suffix_;
    ASSERT_NO_FATAL_FAILURE(create_namespace(ns_));
    config_.namespace_name = ns_;
    config_.dns_names = {"meshop-webhook." + ns_ + ".svc"};
    config_.ip_addresses = {"127.0.0.1"};
    config_.webhook_selector = "meshop-e2e=" + suffix_;
  }
  void TearDown() override {
    for (const std::string& name : webhooks_)
      (void)run(client_->remove(kube::resources::kMutatingWebhookConfigurations, "", name));
    (void)run(client_->remove(kube::resources::kNamespaces, "", ns_));
  }

  // A webhook configuration with two entries: an injector entry (whose caBundle meshop
  // keeps) and a foreign one (left alone). `managed` sets the selector's label.
  void create_webhook(const std::string& name, bool managed) {
    std::string labels = managed ? R"({"meshop-e2e":")" + suffix_ + R"("})" : "{}";
    std::string entry = R"({"name":"%N","admissionReviewVersions":["v1"],"sideEffects":"None",
      "clientConfig":{"url":"https://127.0.0.1:1/inject"},
      "namespaceSelector":{"matchLabels":{"never-match-)" +
                        suffix_ + R"(":"x"}}})";
    auto with_name = [&](const std::string& n) {
      std::string e = entry;
      e.replace(e.find("%N"), 2, n);
      return e;
    };
    std::string body = R"({"apiVersion":"admissionregistration.k8s.io/v1",
      "kind":"MutatingWebhookConfiguration","metadata":{"name":")" +
                       name + R"(","labels":)" + labels + R"(},"webhooks":[)" +
                       with_name("rev.namespace.sidecar-injector.istio.io") + "," +
                       with_name("other.example.com") + "]}";
    auto r = run(client_->create(kube::resources::kMutatingWebhookConfigurations, "", parse(body)));
    ASSERT_TRUE(r) << r.error().message;
    webhooks_.push_back(name);
  }

  rapidjson::Document get_webhook(const std::string& name) {
    auto r = run(client_->get(kube::resources::kMutatingWebhookConfigurations, "", name));
    EXPECT_TRUE(r) << r.error().message;
    return std::move(*r);
  }
  std::string bundle_of(const rapidjson::Value& mwc, int entry) {
    return decode(api::string_at(mwc["webhooks"][entry], {"clientConfig", "caBundle"}));
  }
  std::string secret_key(const std::string& key) {
    auto r = run(client_->get(kube::resources::kSecrets, ns_, config_.secret_name));
    EXPECT_TRUE(r) << r.error().message;
    return decode(api::string_at(*r, {"data", key}));
  }

  std::string suffix_, ns_;
  CertificatesConfig config_;
  std::vector<std::string> webhooks_;
};

TEST_F(CertificatesE2e, CreatesSecretAndPublishesBundleToManagedWebhooksOnly) {
  create_webhook("certs-e2e-managed-" + suffix_, true);
  create_webhook("certs-e2e-foreign-" + suffix_, false);
  metrics::Registry registry;
  const certs::TimePoint t0 = certs::Clock::now();
  runtime::ManualClock clock(t0);
  CertificatesReconciler r(client_, config_, &registry, nullptr, &clock);

  auto first = run(r.reconcile_once());
  ASSERT_TRUE(first) << first.message();
  EXPECT_TRUE(first->secret_created);
  EXPECT_EQ(first->webhooks_patched, 1);

  std::string bundle = secret_key("ca-bundle.crt");
  std::string serving = secret_key("tls.crt");
  EXPECT_TRUE(certs::verify(serving, bundle, t0).ok());
  auto leaf = certs::inspect(serving);
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(leaf->dns_names, config_.dns_names);
  EXPECT_EQ(leaf->ip_addresses, config_.ip_addresses);

  auto managed = get_webhook("certs-e2e-managed-" + suffix_);
  EXPECT_EQ(bundle_of(managed, 0), bundle);
  EXPECT_FALSE(managed["webhooks"][1]["clientConfig"].HasMember("caBundle"));
  auto foreign = get_webhook("certs-e2e-foreign-" + suffix_);
  EXPECT_FALSE(foreign["webhooks"][0]["clientConfig"].HasMember("caBundle"));
  EXPECT_NE(registry.expose().find(
                R"(meshop_webhook_certificate_expiry_timestamp_seconds{certificate="serving"})"),
            std::string::npos);

  // Level-triggered: a second pass changes nothing.
  auto second = run(r.reconcile_once());
  ASSERT_TRUE(second) << second.message();
  EXPECT_FALSE(second->secret_created);
  EXPECT_FALSE(second->ca_rotated);
  EXPECT_FALSE(second->serving_reissued);
  EXPECT_EQ(second->webhooks_patched, 0);
  EXPECT_EQ(secret_key("tls.crt"), serving);
}

TEST_F(CertificatesE2e, CorruptedCaBundleIsRepaired) {
  std::string name = "certs-e2e-corrupt-" + suffix_;
  create_webhook(name, true);
  const certs::TimePoint t0 = certs::Clock::now();
  runtime::ManualClock clock(t0);
  CertificatesReconciler r(client_, config_, nullptr, nullptr, &clock);
  ASSERT_TRUE(run(r.reconcile_once()).ok());
  std::string good = bundle_of(get_webhook(name), 0);

  auto patched = run(client_->patch(
      kube::resources::kMutatingWebhookConfigurations, "", name, kube::PatchType::kJson,
      R"([{"op":"replace","path":"/webhooks/0/clientConfig/caBundle","value":"Z2FyYmFnZQ=="}])"));
  ASSERT_TRUE(patched) << patched.error().message;
  EXPECT_EQ(bundle_of(get_webhook(name), 0), "garbage");

  auto again = run(r.reconcile_once());
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->webhooks_patched, 1);
  EXPECT_FALSE(again->ca_rotated);
  EXPECT_EQ(bundle_of(get_webhook(name), 0), good);
}

TEST_F(CertificatesE2e, CaRotationPublishesNewCaBeforeSwitchingServingCertificate) {
  std::string name = "certs-e2e-rotate-" + suffix_;
  create_webhook(name, true);
  runtime::ManualClock clock(certs::Clock::now());
  auto now = [&clock] { return clock.wall_now(); };
  config_.ca_lifetime = 24h * 30;
  config_.serving_lifetime = 24h * 30;
  CertificatesReconciler r(client_, config_, nullptr, nullptr, &clock);
  ASSERT_TRUE(run(r.reconcile_once()).ok());
  std::string old_ca = secret_key("ca.crt");
  std::string old_serving = secret_key("tls.crt");

  // Past 2/3 of the CA's (and the serving certificate's) lifetime: a new CA, a bundle with
  // both CAs published to the webhook configuration, a serving certificate from the new CA.
  clock.advance(24h * 21);
  auto rotated = run(r.reconcile_once());
  ASSERT_TRUE(rotated) << rotated.message();
  EXPECT_TRUE(rotated->ca_rotated);
  EXPECT_TRUE(rotated->serving_reissued);
  EXPECT_EQ(rotated->webhooks_patched, 1);
  std::string new_ca = secret_key("ca.crt");
  EXPECT_NE(new_ca, old_ca);
  auto bundle = certs::inspect_bundle(secret_key("ca-bundle.crt"));
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ(bundle->size(), 2u);
  std::string published = bundle_of(get_webhook(name), 0);
  std::string serving = secret_key("tls.crt");
  EXPECT_NE(serving, old_serving);
  EXPECT_TRUE(certs::verify(serving, new_ca, now()).ok());
  // The overlap: webhook replicas still serving the old certificate are trusted too.
  EXPECT_TRUE(certs::verify(serving, published, now()).ok());
  EXPECT_TRUE(certs::verify(old_serving, published, now()).ok());

  // Once the old CA has expired it leaves the bundle.
  clock.advance(24h * 10);
  auto later = run(r.reconcile_once());
  ASSERT_TRUE(later) << later.message();
  EXPECT_FALSE(later->ca_rotated);
  EXPECT_EQ(certs::inspect_bundle(bundle_of(get_webhook(name), 0))->size(), 1u);
}

}  // namespace
}  // namespace meshop::reconcilers
