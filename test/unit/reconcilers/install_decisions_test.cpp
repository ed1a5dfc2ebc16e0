// The install reconciler's decision tree, pass by pass, against an in-memory apiserver
// (test/support/fake_api.hpp): what each branch writes, and what it must not write.
#include <algorithm>
#include <string>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "reconcilers/install.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"

namespace meshop::reconcilers {
namespace {

using test_support::FakeApi;
using Kind = runtime::Action::Kind;

constexpr const char* kNs = "istio-system";

// An IstioOperator of profile minimal in istio-system. `metadata_extra` and `spec_extra` are
// more members (JSON, each starting with a comma).
std::string iop_json(const std::string& name, const std::string& created,
                     const std::string& metadata_extra = "", const std::string& spec_extra = "") {
  return R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
    "metadata":{"name":")" +
         name + R"(","namespace":"istio-system","uid":"uid-)" + name +
         R"(","generation":1,"creationTimestamp":")" + created + "\"" + metadata_extra +
         R"(},"spec":{"profile":"minimal")" + spec_extra + "}}";
}

// An object the IstioOperator istio-system/<owner> installed (its owner labels).
std::string owned_configmap(const std::string& name, const std::string& owner) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"istio-system","labels":{"app.kubernetes.io/managed-by":"meshop",
    "install.operator.istio.io/owning-resource":")" +
         owner + R"(","install.operator.istio.io/owning-resource-namespace":"istio-system",
    "operator.istio.io/component":"Pilot"}}})";
}

class InstallDecisions : public ::testing::Test {
 protected:
  InstallDecisions() { api_->add_type(istio_operator_resource()); }

  void put_iop(const std::string& json) { api_->put(istio_operator_resource(), json); }
  const api::Document& iop(const std::string& name) {
    const api::Document* d = api_->object(istio_operator_resource(), kNs, name);
    if (d == nullptr) throw std::runtime_error("no IstioOperator " + name);
    return *d;
  }
  api::Result<InstallOutcome> once(const std::string& name) {
    return test_support::run_task(io_, reconciler_.reconcile_once(std::string(kNs) + "/" + name));
  }
  runtime::Action reconcile(const std::string& name) {
    return test_support::run_task(io_, reconciler_.reconcile(std::string(kNs) + "/" + name));
  }
  std::size_t count(const std::string& verb) const { return api_->calls_of(verb).size(); }
  // The status subresource patches made, in order.
  std::vector<FakeApi::Call> status_writes() const {
    std::vector<FakeApi::Call> out;
    for (const FakeApi::Call& c : api_->calls_of("patch"))
      if (c.subresource == "status") out.push_back(c);
    return out;
  }
  std::vector<FakeApi::Call> events(const std::string& reason) const {
    std::vector<FakeApi::Call> out;
    for (const FakeApi::Call& c : api_->calls_of("event"))
      if (c.reason == reason) out.push_back(c);
    return out;
  }

  boost::asio::io_context io_;
  std::shared_ptr<FakeApi> api_ = std::make_shared<FakeApi>();
  InstallReconciler reconciler_{api_, api_};
};

TEST_F(InstallDecisions, FirstPassAddsTheFinalizerBeforeAnythingIsApplied) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z"));
  auto outcome = once("a");
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kApplied);
  EXPECT_GT(outcome->applied, 0);

  // The first write that is not a status write adds the finalizer, guarded by resourceVersion.
  const auto writes = api_->writes();
  auto first = std::find_if(writes.begin(), writes.end(), [](const FakeApi::Call& c) {
    return c.verb != "event" && c.subresource != "status";
  });
  ASSERT_NE(first, writes.end());
  EXPECT_EQ(first->verb, "patch");
  EXPECT_EQ(first->resource, "istiooperators.install.istio.io");
  EXPECT_EQ(first->patch_type, kube::PatchType::kJson);
  EXPECT_NE(first->body.find(R"("op":"test","path":"/metadata/resourceVersion")"),
            std::string::npos);
  EXPECT_NE(first->body.find("meshop.io/uninstall"), std::string::npos);
  const api::Value* finalizers = api::find(iop("a"), "/metadata/finalizers");
  ASSERT_NE(finalizers, nullptr);
  ASSERT_EQ(finalizers->Size(), 1u);
  EXPECT_EQ(api::string_view_of((*finalizers)[0]), "meshop.io/uninstall");

  // The next pass finds it there and does not add it again.
  api_->clear_calls();
  auto again = once("a");
  ASSERT_TRUE(again) << again.message();
  for (const FakeApi::Call& c : api_->calls_of("patch"))
    EXPECT_EQ(c.body.find("finalizers"), std::string::npos) << c.body;
  EXPECT_EQ(api::find(iop("a"), "/metadata/finalizers")->Size(), 1u);
}

TEST_F(InstallDecisions, DeletionUninstallsWhatItOwnsThenRemovesTheFinalizer) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z",
                   R"(,"deletionTimestamp":"2026-01-02T00:00:00Z",
                       "finalizers":["other.io/keep","meshop.io/uninstall"])"));
  api_->put(kube::resources::kConfigMaps, owned_configmap("mine", "a"));
  api_->put(kube::resources::kConfigMaps, owned_configmap("theirs", "b"));

  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kDone) << action.message;
  EXPECT_EQ(api_->object(kube::resources::kConfigMaps, kNs, "mine"), nullptr);
  EXPECT_NE(api_->object(kube::resources::kConfigMaps, kNs, "theirs"), nullptr);
  EXPECT_EQ(count("apply"), 0u);
  EXPECT_EQ(count("create"), 0u);
  // The finalizer goes last (after every delete), and only meshop's.
  const auto writes = api_->writes();
  auto last_write = std::find_if(writes.rbegin(), writes.rend(),
                                 [](const FakeApi::Call& c) { return c.verb != "event"; });
  ASSERT_NE(last_write, writes.rend());
  EXPECT_EQ(last_write->verb, "patch");
  EXPECT_NE(last_write->body.find(R"({"op":"remove","path":"/metadata/finalizers/1"})"),
            std::string::npos)
      << last_write->body;
  const api::Value* finalizers = api::find(iop("a"), "/metadata/finalizers");
  ASSERT_NE(finalizers, nullptr);
  ASSERT_EQ(finalizers->Size(), 1u);
  EXPECT_EQ(api::string_view_of((*finalizers)[0]), "other.io/keep");
  EXPECT_EQ(events("Uninstalled").size(), 1u);
}

TEST_F(InstallDecisions, AnUninstallThatCannotDeleteKeepsTheFinalizer) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z",
                   R"(,"deletionTimestamp":"2026-01-02T00:00:00Z",
                       "finalizers":["meshop.io/uninstall"])"));
  api_->put(kube::resources::kConfigMaps, owned_configmap("mine", "a"));
  api_->fail("delete", "configmaps", FakeApi::forbidden());

  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kForbidden) << action.message;
  EXPECT_NE(api::find(iop("a"), "/metadata/finalizers"), nullptr);
  EXPECT_NE(api::string_at(iop("a"), {"status", "message"}).find("uninstall blocked"),
            std::string::npos);
  EXPECT_EQ(events("UninstallBlocked").size(), 1u);
}

TEST_F(InstallDecisions, APausedOperatorWritesNothing) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z",
                   R"(,"annotations":{"install.istio.io/ignoreReconcile":"true"})"));
  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kDone);
  EXPECT_TRUE(api_->writes().empty()) << api_->writes().front().verb;

  // Being deleted while paused changes nothing either: it stays until un-paused.
  put_iop(iop_json("b", "2026-01-01T00:00:00Z",
                   R"(,"annotations":{"install.istio.io/ignoreReconcile":"true"},
                       "deletionTimestamp":"2026-01-02T00:00:00Z",
                       "finalizers":["meshop.io/uninstall"])"));
  api_->put(kube::resources::kConfigMaps, owned_configmap("mine", "b"));
  EXPECT_EQ(reconcile("b").kind, Kind::kDone);
  EXPECT_TRUE(api_->writes().empty());
  EXPECT_NE(api_->object(kube::resources::kConfigMaps, kNs, "mine"), nullptr);
}

TEST_F(InstallDecisions, ASecondOperatorOfTheRevisionOnlySaysWhoOwnsIt) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z"));
  put_iop(iop_json("b", "2026-01-02T00:00:00Z"));
  auto action = reconcile("b");
  EXPECT_EQ(action.kind, Kind::kRequeueAfter);

  // One status write and Events (RevisionConflict; RenderWarning ones if the spec has
  // ignored parts): no finalizer, nothing applied, created or deleted.
  std::vector<FakeApi::Call> not_events;
  for (const FakeApi::Call& c : api_->writes()) {
    if (c.verb == "event")
      EXPECT_TRUE(c.reason == "RevisionConflict" || c.reason == "RenderWarning") << c.reason;
    else
      not_events.push_back(c);
  }
  std::string seen;
  for (const FakeApi::Call& c : not_events)
    seen += c.verb + " " + c.resource + "/" + c.name + "; ";
  ASSERT_EQ(not_events.size(), 1u) << seen;
  EXPECT_EQ(not_events[0].verb, "patch");
  EXPECT_EQ(not_events[0].subresource, "status");
  EXPECT_EQ(not_events[0].name, "b");
  EXPECT_EQ(api::string_at(iop("b"), {"status", "status"}), "ERROR");
  EXPECT_NE(api::string_at(iop("b"), {"status", "message"}).find("IstioOperator istio-system/a"),
            std::string::npos)
      << api::string_at(iop("b"), {"status", "message"});
  const auto conflict = events("RevisionConflict");
  ASSERT_EQ(conflict.size(), 1u);
  EXPECT_EQ(conflict[0].name, "b");
  EXPECT_EQ(conflict[0].event_type, kube::EventType::kWarning);
  EXPECT_EQ(api::find(iop("b"), "/metadata/finalizers"), nullptr);

  // The owner installs.
  auto owner = once("a");
  ASSERT_TRUE(owner) << owner.message();
  EXPECT_EQ(owner->kind, InstallOutcome::Kind::kApplied);
}

TEST_F(InstallDecisions, AnApplyConflictIsRetriedAtOnceWithoutAnErrorStatus) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z"));
  api_->fail("apply", "deployments.apps", FakeApi::conflict());
  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kConflict) << action.message;
  EXPECT_NE(api::string_at(iop("a"), {"status", "status"}), "ERROR");
  EXPECT_TRUE(events("ApplyFailed").empty());
  EXPECT_TRUE(events("ReconcileFailed").empty());
}

TEST_F(InstallDecisions, TooManyRequestsWaitsForRetryAfter) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z"));
  api_->fail("apply", "deployments.apps", FakeApi::too_many_requests(7));
  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kRetryAfter) << action.message;
  EXPECT_EQ(action.after, std::chrono::seconds(7));
}

TEST_F(InstallDecisions, ForbiddenOnPruneRetriesSlowlyNamingVerbAndResource) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z"));
  api_->put(kube::resources::kConfigMaps, owned_configmap("no-longer-rendered", "a"));
  api_->fail("delete", "configmaps", FakeApi::forbidden());
  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kForbidden) << action.message;
  EXPECT_GT(count("apply"), 0u);  // the apply was complete: pruning is what failed
  const std::string message = api::string_at(iop("a"), {"status", "message"});
  EXPECT_EQ(api::string_at(iop("a"), {"status", "status"}), "ERROR");
  EXPECT_NE(message.find("pruning for IstioOperator istio-system/a"), std::string::npos) << message;
  EXPECT_NE(message.find(R"(cannot delete resource "configmaps")"), std::string::npos) << message;
  const auto failed = events("ReconcileFailed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].body.find(R"(cannot delete resource "configmaps")"), std::string::npos);
  EXPECT_NE(api_->object(kube::resources::kConfigMaps, kNs, "no-longer-rendered"), nullptr);
}

TEST_F(InstallDecisions, AnInvalidSpecIsReportedAndNothingIsApplied) {
  put_iop(iop_json("a", "2026-01-01T00:00:00Z", "",
                   R"(,"values":{"pilot":{"tolerations":"not a list"}})"));
  auto action = reconcile("a");
  EXPECT_EQ(action.kind, Kind::kTerminalError);
  EXPECT_EQ(count("apply"), 0u);
  EXPECT_EQ(count("create"), 0u);
  EXPECT_EQ(count("delete"), 0u);
  EXPECT_EQ(api::find(iop("a"), "/metadata/finalizers"), nullptr);
  EXPECT_EQ(api::string_at(iop("a"), {"status", "status"}), "ERROR");
  EXPECT_NE(api::string_at(iop("a"), {"status", "message"}).find("spec.values.pilot.tolerations"),
            std::string::npos);
  const api::Value* conditions = api::find(iop("a"), "/status/conditions");
  ASSERT_NE(conditions, nullptr);
  for (const api::Value& c : conditions->GetArray())
    EXPECT_EQ(api::string_at(c, {"reason"}), "InvalidSpec");
  EXPECT_EQ(events("InvalidSpec").size(), 1u);
}

TEST_F(InstallDecisions, AnAbsentOperatorWritesNothing) {
  auto action = reconcile("gone");
  EXPECT_EQ(action.kind, Kind::kDone);
  EXPECT_TRUE(api_->writes().empty());
}

// A reader whose next get of the copy's object answers with the copy, taken earlier (an
// informer store behind the apiserver); everything else reads through.
class LaggingReader : public kube::Reader {
 public:
  explicit LaggingReader(std::shared_ptr<FakeApi> api) : api_(std::move(api)) {}
  void serve_next_get(const api::Document& copy) { stale_ = api::to_json(copy); }

  kube::Task<kube::Result<rapidjson::Document>> get(const kube::ResourceType& type, std::string ns,
                                                    std::string name) override {
    if (!stale_.empty() && type.resource == istio_operator_resource().resource) {
      auto doc = api::parse_json(stale_);
      if (api::string_at(*doc, {"metadata", "name"}) == name) {
        stale_.clear();
        co_return std::move(*doc);
      }
    }
    co_return co_await api_->get(type, std::move(ns), std::move(name));
  }
  kube::Task<kube::Result<kube::ListPage>> list_all(const kube::ResourceType& type, std::string ns,
                                                    kube::ListOptions options) override {
    co_return co_await api_->list_all(type, std::move(ns), std::move(options));
  }
  kube::Task<kube::Result<kube::ResourceType>> discover(std::string api_version,
                                                        std::string kind) override {
    co_return co_await api_->discover(std::move(api_version), std::move(kind));
  }

 private:
  std::shared_ptr<FakeApi> api_;
  std::string stale_;
};

// status.conditions is shared with the revisions and restarts reconcilers (conditions.hpp):
// install's status write, from a copy read before another reconciler wrote its condition, must
// not erase that condition (it did: the list went out unguarded, as read).
TEST(InstallStatus, AConditionWrittenAfterTheReadIsNotErased) {
  boost::asio::io_context io;
  auto api = std::make_shared<FakeApi>();
  api->add_type(istio_operator_resource());
  auto reader = std::make_shared<LaggingReader>(api);
  InstallReconciler reconciler(reader, api);
  api->put(istio_operator_resource(), iop_json("a", "2026-01-01T00:00:00Z"));
  auto first = test_support::run_task(io, reconciler.reconcile_once("istio-system/a"));
  ASSERT_TRUE(first) << first.message();

  // What install reads next: the object before its status was written.
  api::Document stale;
  stale.CopyFrom(*api->object(istio_operator_resource(), kNs, "a"), stale.GetAllocator());
  stale.RemoveMember("status");
  reader->serve_next_get(stale);
  // Meanwhile the revisions reconciler writes InUse (a new resourceVersion).
  api::Document later;
  later.CopyFrom(*api->object(istio_operator_resource(), kNs, "a"), later.GetAllocator());
  rapidjson::Value in_use(rapidjson::kObjectType);
  auto& a = later.GetAllocator();
  in_use.AddMember("type", "InUse", a);
  in_use.AddMember("status", "True", a);
  in_use.AddMember("reason", "WorkloadsUseRevision", a);
  later["status"]["conditions"].PushBack(in_use, a);
  api->put(istio_operator_resource(), api::to_json(later));
  api->clear_calls();

  auto second = test_support::run_task(io, reconciler.reconcile_once("istio-system/a"));
  ASSERT_TRUE(second) << second.message();
  std::vector<std::string> types;
  for (const api::Value& c :
       api::find(*api->object(istio_operator_resource(), kNs, "a"), "/status/conditions")
           ->GetArray())
    types.push_back(api::string_at(c, {"type"}));
  EXPECT_NE(std::find(types.begin(), types.end(), "InUse"), types.end())
      << "install erased the revisions reconciler's condition";
  // The conditions' write from the stale copy was refused (409) and made again from the object
  // as it is. (The RECONCILING write before the apply carries no conditions, so no guard.)
  std::vector<FakeApi::Call> status;
  for (const FakeApi::Call& c : api->calls_of("patch"))
    if (c.subresource == "status" && c.body.find("\"conditions\"") != std::string::npos)
      status.push_back(c);
  ASSERT_FALSE(status.empty());
  EXPECT_TRUE(status.front().failed);
  for (std::size_t i = 1; i < status.size(); ++i)
    EXPECT_FALSE(status[i].failed);
}

}  // namespace
}  // namespace meshop::reconcilers
