// The webhooks reconciler's shell against an in-memory apiserver (test/support/fake_api.hpp):
// what it writes for an IstioOperator, what it prunes, and what a lost race does.
#include <string>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/runtime/cached_reader.hpp"
#include "reconcilers/ownership.hpp"
#include "reconcilers/watches.hpp"
#include "reconcilers/webhooks.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"
#include "test/unit/runtime/fake_source.hpp"

namespace meshop::reconcilers {
namespace {

using test_support::FakeApi;

// A configuration meshop wrote for an IstioOperator that is gone.
constexpr const char* kOrphan = R"({"apiVersion":"admissionregistration.k8s.io/v1",
  "kind":"MutatingWebhookConfiguration","metadata":{"name":"istio-sidecar-injector-old",
  "labels":{"app.kubernetes.io/managed-by":"meshop","istio.io/rev":"old",
    "install.operator.istio.io/owning-resource":"gone",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}},
  "webhooks":[{"name":"rev.namespace.sidecar-injector.istio.io","clientConfig":{}}]})";

class WebhooksDecisions : public ::testing::Test {
 protected:
  api::Result<WebhooksOutcome> once() { return test_support::run_task(io_, r_.reconcile_once()); }
  bool has_webhook(const std::string& name) const {
    return api_->object(kube::resources::kMutatingWebhookConfigurations, "", name) != nullptr;
  }

  boost::asio::io_context io_;
  std::shared_ptr<FakeApi> api_ = std::make_shared<FakeApi>();
  WebhooksReconciler r_{api_, api_, WebhooksConfig{}};
};

TEST_F(WebhooksDecisions, AnOwnersConfigurationIsAppliedAndAnOrphanPruned) {
  api_->put(istio_operator_resource(), R"({"apiVersion":"install.istio.io/v1alpha1",
    "kind":"IstioOperator","metadata":{"name":"a","namespace":"istio-system",
    "creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"profile":"minimal"}})");
  api_->put(kube::resources::kMutatingWebhookConfigurations, kOrphan);
  auto outcome = once();
  ASSERT_TRUE(outcome) << outcome.message();
  ASSERT_EQ(outcome->applied.size(), 1u);
  EXPECT_TRUE(has_webhook(outcome->applied[0]));
  EXPECT_EQ(outcome->pruned, std::vector<std::string>{"istio-sidecar-injector-old"});
  EXPECT_FALSE(has_webhook("istio-sidecar-injector-old"));
  // The delete names the resourceVersion listed: a configuration changed since is not deleted.
  ASSERT_EQ(api_->calls_of("delete").size(), 1u);

  // Up to date: the next pass writes nothing.
  api_->clear_calls();
  auto again = once();
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(api_->writes().empty());
  EXPECT_EQ(again->unchanged.size(), 1u);
}

TEST_F(WebhooksDecisions, APausedOwnersConfigurationIsNeitherWrittenNorPruned) {
  api_->put(istio_operator_resource(), R"({"apiVersion":"install.istio.io/v1alpha1",
    "kind":"IstioOperator","metadata":{"name":"gone","namespace":"istio-system",
    "creationTimestamp":"2026-01-01T00:00:00Z",
    "annotations":{"install.istio.io/ignoreReconcile":"true"}},
    "spec":{"profile":"minimal","revision":"old"}})");
  api_->put(kube::resources::kMutatingWebhookConfigurations, kOrphan);
  auto outcome = once();
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_TRUE(api_->writes().empty());
  EXPECT_TRUE(has_webhook("istio-sidecar-injector-old"));
}

TEST_F(WebhooksDecisions, APruneThatLosesARaceIsLeftForTheNextPass) {
  api_->put(kube::resources::kMutatingWebhookConfigurations, kOrphan);
  api_->fail("delete", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
             FakeApi::conflict(), "", 1);
  auto outcome = once();
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_TRUE(outcome->pruned.empty());
  EXPECT_TRUE(has_webhook("istio-sidecar-injector-old"));
  auto again = once();
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->pruned, std::vector<std::string>{"istio-sidecar-injector-old"});
}

TEST_F(WebhooksDecisions, AForbiddenApplyEndsThePassAsForbidden) {
  api_->put(istio_operator_resource(), R"({"apiVersion":"install.istio.io/v1alpha1",
    "kind":"IstioOperator","metadata":{"name":"a","namespace":"istio-system",
    "creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"profile":"minimal"}})");
  api_->fail("apply", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
             FakeApi::forbidden());
  auto action = test_support::run_task(io_, r_.reconcile("all"));
  EXPECT_EQ(action.kind, runtime::Action::Kind::kForbidden) << action.message;
  EXPECT_NE(action.message.find("cannot apply resource"), std::string::npos) << action.message;
}

// `meshop run`'s reads: through runtime::CachedReader over the watches the webhooks controller
// sets up, here filled from the fake apiserver's content as a watch would (sync()).
class WebhooksOverTheCache : public WebhooksDecisions {
 protected:
  void sync() {
    for (const runtime::WatchSpec& spec :
         {watches::istio_operators(), watches::mutating_webhook_configurations()}) {
      auto listed = test_support::run_task(io_, api_->list_all(spec.type, "", kube::ListOptions()));
      ASSERT_TRUE(listed) << listed.message();
      cache_.store(spec).replace(listed->list["items"]);
    }
    cache_.store(watches::webhook_secret("istio-system"))
        .replace(std::vector<rapidjson::Document>{});
  }
  api::Result<WebhooksOutcome> cached_once() {
    return test_support::run_task(io_, cached_.reconcile_once());
  }
  std::size_t reads() const { return api_->calls_of("get").size() + api_->calls_of("list").size(); }

  runtime::ManualClock clock_;
  runtime::Cache cache_{[this](const runtime::WatchSpec&) -> std::unique_ptr<runtime::ListWatch> {
                          return std::make_unique<runtime::testing::FakeSource>(clock_,
                                                                                io_.get_executor());
                        },
                        io_.get_executor(), clock_};
  std::shared_ptr<runtime::CachedReader> reader_ =
      std::make_shared<runtime::CachedReader>(cache_, api_, nullptr, &clock_);
  WebhooksReconciler cached_{reader_, reader_->tracking(api_), WebhooksConfig{}};
};

TEST_F(WebhooksOverTheCache, AQuietPassMakesNoApiReadAndOwnWritesAreReadBack) {
  api_->put(istio_operator_resource(), R"({"apiVersion":"install.istio.io/v1alpha1",
    "kind":"IstioOperator","metadata":{"name":"a","namespace":"istio-system",
    "creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"profile":"minimal"}})");
  api_->put(kube::resources::kMutatingWebhookConfigurations, kOrphan);
  sync();
  api_->clear_calls();  // sync()'s own lists
  auto first = cached_once();
  ASSERT_TRUE(first) << first.message();
  ASSERT_EQ(first->applied.size(), 1u);
  EXPECT_EQ(first->pruned, std::vector<std::string>{"istio-sidecar-injector-old"});
  EXPECT_EQ(reads(), 0u);  // everything it read was in the stores

  // Before the watch shows its writes, a pass reads the configurations from the apiserver:
  // it sees its own apply and delete, and writes nothing again.
  api_->clear_calls();
  auto before_sync = cached_once();
  ASSERT_TRUE(before_sync) << before_sync.message();
  EXPECT_EQ(api_->calls_of("list").size(), 1u);
  EXPECT_TRUE(api_->writes().empty());

  // Once it does, a pass is quiet: no read, no write.
  sync();
  EXPECT_EQ(reader_->pending_writes(), 0u);
  api_->clear_calls();
  auto quiet = cached_once();
  ASSERT_TRUE(quiet) << quiet.message();
  EXPECT_EQ(reads(), 0u);
  EXPECT_TRUE(api_->writes().empty());
  EXPECT_EQ(quiet->unchanged.size(), 1u);
}

}  // namespace
}  // namespace meshop::reconcilers
