// The certificates reconciler's decisions against an in-memory apiserver
// (test/support/fake_api.hpp): the order of its writes, what a quiet pass writes (nothing), and
// how its API errors become retries.
#include <algorithm>
#include <string>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/runtime/clock.hpp"
#include "reconcilers/certificates.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"

namespace meshop::reconcilers {
namespace {

using test_support::FakeApi;
using Kind = runtime::Action::Kind;

constexpr const char* kWebhook = R"({"apiVersion":"admissionregistration.k8s.io/v1",
  "kind":"MutatingWebhookConfiguration","metadata":{"name":"istio-sidecar-injector",
  "labels":{"app.kubernetes.io/managed-by":"meshop"}},
  "webhooks":[{"name":"rev.namespace.sidecar-injector.istio.io","clientConfig":{}},
              {"name":"other.example.com","clientConfig":{}}]})";

class CertificatesDecisions : public ::testing::Test {
 protected:
  CertificatesDecisions() { api_->put(kube::resources::kMutatingWebhookConfigurations, kWebhook); }
  static CertificatesConfig config() {
    CertificatesConfig c;
    c.dns_names = {"meshop.istio-system.svc"};
    return c;
  }
  api::Result<CertificatesOutcome> once() {
    return test_support::run_task(io_, r_.reconcile_once());
  }
  runtime::Action reconcile() { return test_support::run_task(io_, r_.reconcile("all")); }
  const api::Document& webhook() {
    return *api_->object(kube::resources::kMutatingWebhookConfigurations, "",
                         "istio-sidecar-injector");
  }

  boost::asio::io_context io_;
  std::shared_ptr<FakeApi> api_ = std::make_shared<FakeApi>();
  runtime::ManualClock clock_;
  CertificatesReconciler r_{api_, api_, config(), nullptr, &clock_};
};

TEST_F(CertificatesDecisions, TheBundleIsPublishedBeforeTheSecretIsCreated) {
  auto first = once();
  ASSERT_TRUE(first) << first.message();
  EXPECT_TRUE(first->secret_created);
  EXPECT_EQ(first->webhooks_patched, 1);
  const auto writes = api_->writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].verb, "patch");
  EXPECT_EQ(writes[0].resource, "mutatingwebhookconfigurations.admissionregistration.k8s.io");
  EXPECT_EQ(writes[1].verb, "create");
  EXPECT_EQ(writes[1].resource, "secrets");
  // Only the injector entry trusts the bundle; the other entry is not meshop's.
  EXPECT_FALSE(api::string_at(webhook()["webhooks"][0], {"clientConfig", "caBundle"}).empty());
  EXPECT_TRUE(api::string_at(webhook()["webhooks"][1], {"clientConfig", "caBundle"}).empty());

  // Nothing is due: a second pass writes nothing.
  api_->clear_calls();
  auto second = once();
  ASSERT_TRUE(second) << second.message();
  EXPECT_TRUE(api_->writes().empty());
}

TEST_F(CertificatesDecisions, ARotationThatLosesTheSecretRaceIsAConflict) {
  ASSERT_TRUE(once());
  // Past 2/3 of the CA's lifetime the CA is rotated and the Secret updated; someone else
  // updated it first.
  clock_.advance(std::chrono::hours(24 * 300));
  api_->fail("update", "secrets", FakeApi::conflict());
  api_->clear_calls();
  auto action = reconcile();
  EXPECT_EQ(action.kind, Kind::kConflict) << action.message;
  EXPECT_EQ(api_->calls_of("update").size(), 1u);
  // The new CA was published first: the webhook trusts both until the next pass.
  EXPECT_EQ(api_->calls_of("patch").size(), 1u);
}

TEST_F(CertificatesDecisions, AForbiddenCaBundlePatchRetriesSlowlyAndWritesNoSecret) {
  api_->fail("patch", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
             FakeApi::forbidden());
  auto action = reconcile();
  EXPECT_EQ(action.kind, Kind::kForbidden) << action.message;
  EXPECT_NE(action.message.find(R"(cannot patch resource "mutatingwebhookconfigurations)"),
            std::string::npos)
      << action.message;
  EXPECT_TRUE(api_->calls_of("create").empty());
  EXPECT_EQ(api_->object(kube::resources::kSecrets, "istio-system", "meshop-webhook-certs"),
            nullptr);
}

}  // namespace
}  // namespace meshop::reconcilers
