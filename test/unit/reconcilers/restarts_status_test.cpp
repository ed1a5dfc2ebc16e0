// What the restarts reconciler reports on an IstioOperator (reconcilers/restarts_status.hpp),
// computed from a pass's report without a cluster, and the conditions every reconciler merges
// into an object's list (reconcilers/conditions.hpp), the conflict retry included.
#include "reconcilers/restarts_status.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "reconcilers/ownership.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"

namespace meshop::reconcilers {
namespace {

using restart::Action;
using Strings = std::vector<std::string>;

rapidjson::Document json(std::string_view text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message() << "\n" << text;
  return d.ok() ? std::move(*d) : rapidjson::Document();
}

restart::PlanEntry entry(const std::string& name, Action action,
                         const std::string& source = "istio-system/canary") {
  restart::PlanEntry e;
  e.plan.kind = "Deployment";
  e.plan.ns = "apps";
  e.plan.name = name;
  e.plan.verdict = action == Action::kNone ? restart::Verdict::kUpToDate : restart::Verdict::kStale;
  if (action != Action::kNone) e.plan.reason = restart::StaleReason::kRevisionChanged;
  e.plan.detail = "detail of " + name;
  e.action = action;
  e.policy_source = source;
  return e;
}

// "type=status reason: message" of each condition of `object`, in order.
Strings conditions_of(const rapidjson::Value& object) {
  Strings out;
  const rapidjson::Value* conds = api::find(object, "/status/conditions");
  if (conds != nullptr)
    for (const rapidjson::Value& c : conds->GetArray())
      out.push_back(api::string_at(c, {"type"}) + "=" + api::string_at(c, {"status"}) + " " +
                    api::string_at(c, {"reason"}) + ": " + api::string_at(c, {"message"}));
  return out;
}

TEST(RestartsStatus, EachActionHasItsStateAndCounter) {
  PassReport report;
  report.istio_operators = {"istio-system/canary", "istio-system/idle"};
  report.plan.push_back(entry("pending", Action::kRestart));
  report.plan.push_back(entry("started", Action::kRestart));
  report.plan.push_back(entry("rolling", Action::kInProgress));
  report.plan.push_back(entry("timedout", Action::kInProgress));
  report.plan.push_back(entry("deferred", Action::kDeferred));
  report.plan.push_back(entry("approval", Action::kApprovalNeeded));
  report.plan.push_back(entry("skipped", Action::kSkipped));
  report.plan.push_back(entry("blocked", Action::kBlocked));
  report.plan.push_back(entry("manual", Action::kManual));
  report.plan.push_back(entry("halted", Action::kHalted));
  report.plan.push_back(entry("paused", Action::kPaused));
  report.plan.push_back(entry("uptodate", Action::kNone));
  report.plan.push_back(entry("regressed", Action::kNone));
  report.plan.push_back(entry("unpoliced", Action::kRestart, "defaults"));
  report.plan[1].why = "restarted for RevisionChanged/canary";
  report.started = {"Deployment/apps/started"};
  report.failed = {{"Deployment/apps/timedout", "rollout timed out"},
                   {"Deployment/apps/regressed", "new pod not Ready"}};

  auto by_source = summarize_restarts(report);
  ASSERT_EQ(by_source.size(), 2u) << "the defaults are nobody's; an idle one has zeros";
  const RestartsSummary& idle = by_source.at("istio-system/idle");
  EXPECT_EQ(idle.pending + idle.in_progress + idle.failed + idle.deferred, 0);
  EXPECT_TRUE(idle.workloads.empty());
  const RestartsSummary& s = by_source.at("istio-system/canary");
  EXPECT_EQ(s.pending, 3);  // pending, halted, paused
  EXPECT_EQ(s.in_progress, 2);
  EXPECT_EQ(s.failed, 2);    // the timed-out rollout, the regressed pods
  EXPECT_EQ(s.deferred, 2);  // deferred, approval
  EXPECT_EQ(s.skipped, 2);   // skipped, blocked
  EXPECT_EQ(s.manual, 1);
  Strings states;
  for (const RestartsSummary::Workload& w : s.workloads)
    states.push_back(w.workload + " " + w.state);
  EXPECT_EQ(states,
            (Strings{"Deployment/apps/pending Pending", "Deployment/apps/started InProgress",
                     "Deployment/apps/rolling InProgress", "Deployment/apps/timedout Failed",
                     "Deployment/apps/deferred Deferred", "Deployment/apps/approval ApprovalNeeded",
                     "Deployment/apps/skipped Skipped", "Deployment/apps/blocked Skipped",
                     "Deployment/apps/manual ManualRestartNeeded", "Deployment/apps/halted Halted",
                     "Deployment/apps/paused Paused", "Deployment/apps/regressed Failed"}));
  EXPECT_EQ(s.workloads[1].message, "restarted for RevisionChanged/canary") << "why, when set";
  EXPECT_EQ(s.workloads[0].message, "detail of pending") << "else the plan's detail";
  EXPECT_EQ(s.workloads[0].reason, "RevisionChanged");
}

TEST(RestartsStatus, UpToDateEntriesAreNotListedWhileNothingFailed) {
  PassReport report;
  report.plan.push_back(entry("uptodate", Action::kNone));
  auto by_source = summarize_restarts(report);
  EXPECT_TRUE(by_source.empty());
}

TEST(RestartsStatus, OverdueCountsStaleEntriesAndNamesTheFirstFive) {
  PassReport report;
  for (int i = 0; i < 7; ++i) {
    report.plan.push_back(entry("w" + std::to_string(i), Action::kDeferred));
    report.plan.back().overdue = true;
  }
  report.plan.push_back(entry("intime", Action::kDeferred));
  const RestartsSummary s = summarize_restarts(report).at("istio-system/canary");
  EXPECT_EQ(s.overdue, 7);
  ASSERT_EQ(s.overdue_first.size(), 5u);
  auto c = overdue_condition(s, nullptr);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, "RestartsOverdue");
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "StalePastMaxStaleness");
  EXPECT_EQ(c->message,
            "7 workloads stale past maxStaleness: Deployment/apps/w0 Deployment/apps/w1 "
            "Deployment/apps/w2 Deployment/apps/w3 Deployment/apps/w4 ...");
}

TEST(RestartsStatus, OverdueTurnsFalseOnlyAfterATrue) {
  RestartsSummary none;
  EXPECT_FALSE(overdue_condition(none, nullptr));
  rapidjson::Document never = json(R"({"status":{"conditions":[]}})");
  EXPECT_FALSE(overdue_condition(none, &never)) << "nothing overdue, nothing was";
  rapidjson::Document was = json(R"({"status":{"conditions":[{"type":"RestartsOverdue",
      "status":"True","reason":"StalePastMaxStaleness","message":"1 workload ..."}]}})");
  auto c = overdue_condition(none, &was);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "NoneOverdue");
  EXPECT_EQ(c->message, "no workload is stale past maxStaleness");
}

TEST(RestartsStatus, HaltedWhileTheWaveIsHaltedFalseOnceLifted) {
  PassReport report;
  restart::WaveDecision halted;
  halted.next.phase = restart::WavePhase::kHalted;
  halted.next.halt_reason = "CanaryNotReady";
  halted.next.message = "canary Deployment/apps/db regressed";
  halted.hold_all = true;
  halted.why = "restarts halted";
  report.waves["istio-system/canary"] = halted;
  auto c = halted_condition(report, "istio-system/canary", nullptr);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, "RestartsHalted");
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "CanaryNotReady");
  EXPECT_EQ(c->message, "canary Deployment/apps/db regressed");

  restart::WaveDecision resumed;
  resumed.next.phase = restart::WavePhase::kPassed;
  resumed.resumed_now = true;
  resumed.resumed_by = "meshop restart resume";
  report.waves["istio-system/canary"] = resumed;
  c = halted_condition(report, "istio-system/canary", nullptr);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status + " " + c->reason + ": " + c->message,
            "False Resumed: resumed by meshop restart resume");

  // Not halted, not just resumed: False only over a True on the object.
  report.waves.clear();
  EXPECT_FALSE(halted_condition(report, "istio-system/canary", nullptr));
  rapidjson::Document on = json(R"({"status":{"conditions":[{"type":"RestartsHalted",
      "status":"True","reason":"CanaryNotReady","message":"..."}]}})");
  c = halted_condition(report, "istio-system/canary", &on);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status + " " + c->reason + ": " + c->message,
            "False Resumed: the restart wave is no longer halted");
}

TEST(RestartsStatus, StatusRestartsCarriesCountsPauseAndWave) {
  PassReport report;
  report.paused = true;
  report.pause_reason = "a failed rollout pauses the rest";
  restart::WaveDecision held;
  held.hold_all = true;
  held.why = "paused by meshop.io/restarts-paused";
  held.next.phase = restart::WavePhase::kCanary;
  report.waves["istio-system/canary"] = held;
  RestartsSummary s;
  s.pending = 2;
  s.workloads.push_back({"Deployment/apps/web", "Paused", "RevisionChanged", "held", true});
  rapidjson::Document d;
  rapidjson::Value v = restarts_status(s, report, "istio-system/canary", d.GetAllocator());
  EXPECT_EQ(v["pending"].GetInt(), 2);
  EXPECT_EQ(v["inProgress"].GetInt(), 0);
  EXPECT_TRUE(v["paused"].GetBool());
  EXPECT_FALSE(v["halted"].GetBool());
  EXPECT_EQ(api::string_at(v, {"message"}),
            "paused by meshop.io/restarts-paused; a failed rollout pauses the rest");
  ASSERT_EQ(v["workloads"].Size(), 1u);
  EXPECT_TRUE(v["workloads"][0]["canary"].GetBool());
  EXPECT_TRUE(v["wave"].IsObject());
  rapidjson::Value other = restarts_status(s, report, "istio-system/other", d.GetAllocator());
  EXPECT_TRUE(other["wave"].IsNull());
  EXPECT_EQ(api::string_at(other, {"message"}), "a failed rollout pauses the rest");
}

TEST(RestartsStatus, ThePatchCarriesOnlyConditionsTheObjectDoesNotShowGuarded) {
  rapidjson::Document iop = json(R"({"metadata":{"namespace":"istio-system","name":"canary",
      "generation":4,"resourceVersion":"42"},"status":{"conditions":[
      {"type":"Ready","status":"True","reason":"Installed","message":""},
      {"type":"RestartsOverdue","status":"True","reason":"StalePastMaxStaleness",
       "message":"1 workload stale past maxStaleness: Deployment/apps/web",
       "lastTransitionTime":"2026-12-02T09:00:00Z"},
      {"type":"InUse","status":"True","reason":"Used","message":"used"}]}})");
  rapidjson::Document d;
  rapidjson::Value restarts(rapidjson::kObjectType);
  restarts.AddMember("pending", 1, d.GetAllocator());
  const std::string body = api::to_json(restarts);
  Condition shown{"RestartsOverdue", "True", "StalePastMaxStaleness",
                  "1 workload stale past maxStaleness: Deployment/apps/web", ""};

  EXPECT_FALSE(restarts_status_patch(iop, restarts, {shown}, body, "2026-12-02T10:00:00Z"))
      << "status.restarts as last written, the condition shown: nothing to write";
  auto unguarded = restarts_status_patch(iop, restarts, {shown}, "", "2026-12-02T10:00:00Z");
  ASSERT_TRUE(unguarded);
  EXPECT_EQ(*unguarded, R"({"status":{"restarts":{"pending":1}}})")
      << "without conditions the patch erases nothing and needs no guard";

  Condition lifted{"RestartsOverdue", "False", "NoneOverdue",
                   "no workload is stale past maxStaleness", ""};
  auto patch = restarts_status_patch(iop, restarts, {lifted}, body, "2026-12-02T10:00:00Z");
  ASSERT_TRUE(patch);
  rapidjson::Document p = json(*patch);
  EXPECT_EQ(api::string_at(p, {"metadata", "resourceVersion"}), "42");
  EXPECT_EQ(conditions_of(p), (Strings{"Ready=True Installed: ",
                                       "RestartsOverdue=False NoneOverdue: no workload is stale "
                                       "past maxStaleness",
                                       "InUse=True Used: used"}))
      << "in place, the others as they are";
  const rapidjson::Value& mine = p["status"]["conditions"][1];
  EXPECT_EQ(api::string_at(mine, {"lastTransitionTime"}), "2026-12-02T10:00:00Z");
  EXPECT_EQ(mine["observedGeneration"].GetInt64(), 4);
}

TEST(Conditions, MergeKeepsOthersAndTheTransitionWhileTheStatusStays) {
  rapidjson::Document iop = json(R"({"metadata":{"generation":2},"status":{"conditions":[
      {"type":"InUse","status":"True","lastTransitionTime":"t0"},
      {"type":"Ready","status":"True","lastTransitionTime":"t1","reason":"x"},
      {"type":"InUse","status":"True","lastTransitionTime":"t2"}]}})");
  rapidjson::Document d;
  rapidjson::Value merged =
      merge_conditions(iop, {{"InUse", "True", "Used", "m", ""}, {"New", "False", "R", "n", ""}},
                       "now", d.GetAllocator());
  ASSERT_EQ(merged.Size(), 3u) << "one entry per type of mine";
  EXPECT_EQ(api::string_at(merged[0], {"type"}), "InUse");
  EXPECT_EQ(api::string_at(merged[0], {"lastTransitionTime"}), "t2") << "the last one's, kept";
  EXPECT_EQ(api::string_at(merged[1], {"reason"}), "x");
  EXPECT_EQ(api::string_at(merged[2], {"type"}), "New");
  EXPECT_EQ(api::string_at(merged[2], {"lastTransitionTime"}), "now");
  EXPECT_EQ(merged[2]["observedGeneration"].GetInt64(), 2);

  rapidjson::Value changed =
      merge_conditions(iop, {{"InUse", "False", "Unused", "m", ""}}, "now", d.GetAllocator());
  EXPECT_EQ(api::string_at(changed[0], {"lastTransitionTime"}), "now");
  rapidjson::Value told =
      merge_conditions(iop, {{"InUse", "False", "Unused", "m", "given"}}, "now", d.GetAllocator());
  EXPECT_EQ(api::string_at(told[0], {"lastTransitionTime"}), "given");
}

// patch_status against an in-memory apiserver whose object moved on since it was read.
class PatchStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    api_->put(istio_operator_resource(), R"({"apiVersion":"install.istio.io/v1alpha1",
        "kind":"IstioOperator","metadata":{"namespace":"istio-system","name":"canary"},
        "status":{"conditions":[{"type":"Theirs","status":"True"}]}})");
    stale_ = json(R"({"metadata":{"namespace":"istio-system","name":"canary",
        "resourceVersion":"1"},"status":{"conditions":[]}})");
  }

  // Mine=True merged into the object given, guarded by its resourceVersion.
  static std::optional<std::string> mine(const rapidjson::Value& object) {
    if (condition_shows(find_condition(object, "Mine"), {"Mine", "True", "R", "m", ""}))
      return std::nullopt;
    rapidjson::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    rapidjson::Value status(rapidjson::kObjectType);
    status.AddMember("conditions",
                     merge_conditions(object, {{"Mine", "True", "R", "m", ""}}, "now", a), a);
    patch.AddMember("status", status, a);
    guard_with_resource_version(patch, object);
    return api::to_json(patch);
  }

  api::Result<bool> run(kube::Reader* reader, int attempts = 3) {
    return test_support::run_task(
        io_, patch_status(*api_, reader, istio_operator_resource(), stale_, mine, attempts));
  }
  Strings held() const {
    return conditions_of(*api_->object(istio_operator_resource(), "istio-system", "canary"));
  }

  boost::asio::io_context io_;
  std::shared_ptr<test_support::FakeApi> api_ = std::make_shared<test_support::FakeApi>();
  rapidjson::Document stale_;
};

TEST_F(PatchStatus, AConflictGetsTheObjectAndMergesIntoIt) {
  auto r = run(api_.get());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(*r);
  EXPECT_EQ(held(), (Strings{"Theirs=True : ", "Mine=True R: m"}));
  ASSERT_EQ(api_->calls_of("patch").size(), 2u);
  EXPECT_TRUE(api_->calls_of("patch")[0].failed);
  EXPECT_EQ(api_->calls_of("patch")[0].subresource, "status");
}

TEST_F(PatchStatus, NothingToWriteOnTheFreshObjectWritesNothing) {
  api_->put(istio_operator_resource(), R"({"metadata":{"namespace":"istio-system",
      "name":"canary"},"status":{"conditions":[{"type":"Mine","status":"True","reason":"R",
      "message":"m"}]}})");
  auto r = run(api_.get());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(*r);
  EXPECT_EQ(api_->calls_of("patch").size(), 1u) << "the refused one only";
}

TEST_F(PatchStatus, TheLastConflictIsReturnedAsIs) {
  auto without_reader = run(nullptr);
  ASSERT_FALSE(without_reader.ok());
  EXPECT_TRUE(without_reader.error().conflict());
  EXPECT_EQ(held(), (Strings{"Theirs=True : "})) << "nothing erased";

  api_->clear_calls();
  api_->fail("patch", "", test_support::FakeApi::conflict());
  auto always = run(api_.get(), 3);
  ASSERT_FALSE(always.ok());
  EXPECT_TRUE(always.error().conflict());
  EXPECT_EQ(api_->calls_of("patch").size(), 3u);
  EXPECT_EQ(api_->calls_of("get").size(), 2u);
}

}  // namespace
}  // namespace meshop::reconcilers
