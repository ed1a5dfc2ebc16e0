#include "operator/restart/policy.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/restart/rollout.hpp"

namespace meshop::restart {
namespace {

using namespace std::chrono_literals;

rapidjson::Document parse(const std::string& text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message() << "\n" << text;
  return std::move(*d);
}

// 2026-11-30 is a Monday.
SystemTime utc(int day, int hour, int minute) {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 10;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// 2026-12-02 at hour:minute UTC.
SystemTime at_utc(int hour, int minute) {
  return utc(30, hour, minute) + std::chrono::days(2);
}

TEST(Policy, DefaultsWhenAbsent) {
  auto p = parse_policy(nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->mode, Mode::kDryRun);
  EXPECT_EQ(p->strategy, Strategy::kRollout);
  EXPECT_EQ(p->max_concurrent, 1);
  EXPECT_FALSE(p->max_concurrent_per_namespace);
  EXPECT_EQ(p->rollout_timeout, 10min);
  EXPECT_EQ(p->failure_policy, FailurePolicy::kPause);
  EXPECT_FALSE(p->include_template_changes);
  EXPECT_FALSE(p->maintenance_window);
  EXPECT_EQ(p->min_interval, 10min);
}

TEST(Policy, ParsesEveryField) {
  auto doc =
      parse(R"({"mode":"Auto","strategy":"Evict","maxConcurrent":3,"maxConcurrentPerNamespace":1,
    "rolloutTimeout":"1h30m","failurePolicy":"Continue","includeTemplateChanges":true,
    "minInterval":"90s","maintenanceWindow":{"days":["Sat","Sun"],"start":"22:00","end":"04:30"}})");
  auto p = parse_policy(&doc);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->mode, Mode::kAuto);
  EXPECT_EQ(p->strategy, Strategy::kEvict);
  EXPECT_EQ(p->max_concurrent, 3);
  EXPECT_EQ(*p->max_concurrent_per_namespace, 1);
  EXPECT_EQ(p->rollout_timeout, 90min);
  EXPECT_EQ(p->failure_policy, FailurePolicy::kContinue);
  EXPECT_TRUE(p->include_template_changes);
  EXPECT_EQ(p->min_interval, 90s);
  ASSERT_TRUE(p->maintenance_window);
  EXPECT_EQ(p->maintenance_window->days, (std::vector<int>{6, 0}));
  EXPECT_EQ(p->maintenance_window->start_minute, 22 * 60);
  EXPECT_EQ(p->maintenance_window->end_minute, 4 * 60 + 30);
}

TEST(Policy, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"({"mode":"auto"})", "spec.restarts.mode"},
      {R"({"strategy":"Drain"})", "spec.restarts.strategy"},
      {R"({"strategy":1})", "spec.restarts.strategy"},
      {R"({"maxConcurrent":0})", "spec.restarts.maxConcurrent"},
      {R"({"maxConcurrentPerNamespace":"2"})", "spec.restarts.maxConcurrentPerNamespace"},
      {R"({"rolloutTimeout":"10"})", "spec.restarts.rolloutTimeout"},
      {R"({"rolloutTimeout":"10x"})", "spec.restarts.rolloutTimeout"},
      {R"({"failurePolicy":"Stop"})", "spec.restarts.failurePolicy"},
      {R"({"minInterval":"ten minutes"})", "spec.restarts.minInterval"},
      {R"({"minInterval":600})", "spec.restarts.minInterval"},
      {R"({"maintenanceWindow":{"start":"25:00","end":"01:00"}})",
       "spec.restarts.maintenanceWindow.start"},
      {R"({"maintenanceWindow":{"start":"01:00"}})", "spec.restarts.maintenanceWindow.end"},
      {R"({"maintenanceWindow":{"start":"01:00","end":"02:00","days":["Monday"]}})",
       "spec.restarts.maintenanceWindow.days[0]"},
      {R"({"maxConcurent":2})", "spec.restarts.maxConcurent"},
      {R"({"canary":{"count":0}})", "spec.restarts.canary.count"},
      {R"({"canary":{"count":"1"}})", "spec.restarts.canary.count"},
      {R"({"canary":{"count":1,"selector":{"matchLabels":{"a":"b"}}}})", "spec.restarts.canary"},
      {R"({"canary":{"soak":"5m"}})", "spec.restarts.canary"},
      {R"({"canary":{"count":1,"soak":"5 minutes"}})", "spec.restarts.canary.soak"},
      {R"({"canary":{"count":1,"soak":300}})", "spec.restarts.canary.soak"},
      {R"({"canary":{"selector":"app=a"}})", "spec.restarts.canary.selector"},
      {R"({"canary":{"count":1,"sok":"1m"}})", "spec.restarts.canary.sok"},
      {R"({"canary":[1]})", "spec.restarts.canary"},
      {R"({"maxVersionSkew":"patch"})", "spec.restarts.maxVersionSkew"},
      {R"({"maxVersionSkew":1})", "spec.restarts.maxVersionSkew"},
      {R"({"maxStaleness":"3 days"})", "spec.restarts.maxStaleness"},
      {R"({"maxStaleness":"0s"})", "spec.restarts.maxStaleness"},
      {R"({"restartAfterDeadline":"yes"})", "spec.restarts.restartAfterDeadline"},
  };
  for (const Case& c : cases) {
    auto doc = parse(c.json);
    auto p = parse_policy(&doc);
    ASSERT_FALSE(p.ok()) << c.json;
    EXPECT_EQ(p.message().rfind(std::string(c.field) + ":", 0), 0u) << p.message();
  }
}

TEST(Policy, CanaryByCountOrSelectorWithSoak) {
  auto by_count = parse(R"({"canary":{"count":2}})");
  auto p = parse_policy(&by_count);
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_TRUE(p->canary);
  EXPECT_EQ(p->canary->count, 2);
  EXPECT_FALSE(p->canary->selector);
  EXPECT_EQ(p->canary->soak, 5min) << "the default soak";
  auto by_selector =
      parse(R"({"canary":{"selector":{"matchLabels":{"tier":"canary"}},"soak":"90s"}})");
  p = parse_policy(&by_selector);
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_TRUE(p->canary && p->canary->selector);
  EXPECT_EQ(p->canary->selector->to_string(), "tier=canary");
  EXPECT_EQ(p->canary->soak, 90s);
  auto bad_selector =
      parse(R"({"canary":{"selector":{"matchExpressions":[{"key":"a","operator":"In"}]}}})");
  p = parse_policy(&bad_selector);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.message().rfind("spec.restarts.canary.selector.matchExpressions[0]", 0), 0u)
      << p.message();
  EXPECT_FALSE(parse_policy(nullptr)->canary) << "no canary unless asked";
}

TEST(Policy, MinIntervalZeroTurnsTheFlapLimitOff) {
  auto doc = parse(R"({"minInterval":"0s"})");
  auto p = parse_policy(&doc);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->min_interval, 0s);
  LastRestart last{at_utc(10, 0), "RevisionChanged/canary"};
  EXPECT_FALSE(flap_deferral(last, *p, at_utc(10, 0)));
}

TEST(Policy, FlapDeferralNamesTheLastRestartAndTheNextTime) {
  Policy p;  // minInterval 10m
  LastRestart last{at_utc(10, 0), "TemplateChanged/default/abc"};
  auto why = flap_deferral(last, p, at_utc(10, 4));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "restarted at 2026-12-02T10:00:00Z for TemplateChanged/default/abc; next at "
            "2026-12-02T10:10:00Z (minInterval 10m)");
  EXPECT_FALSE(flap_deferral(last, p, at_utc(10, 10))) << "the interval's end is allowed";
  EXPECT_FALSE(flap_deferral(std::nullopt, p, at_utc(10, 4))) << "never restarted by meshop";
  p.min_interval = 1h + 30min + 5s;
  EXPECT_NE(flap_deferral(last, p, at_utc(11, 0))
                ->find("next at 2026-12-02T11:30:05Z "
                       "(minInterval 1h30m5s)"),
            std::string::npos);
}

TEST(Policy, LastRestartIsReadFromMeshopsRecordOnly) {
  auto ours = parse(R"({"kind":"Deployment","spec":{"template":{"metadata":{"annotations":{
      "kubectl.kubernetes.io/restartedAt":"2026-12-02T10:00:00Z",
      "meshop.io/restart-cause":"RevisionChanged/canary"}}}}})");
  auto last = last_restart_of(ours);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->at, at_utc(10, 0));
  EXPECT_EQ(last->cause, "RevisionChanged/canary");
  auto kubectls = parse(R"({"kind":"Deployment","spec":{"template":{"metadata":{"annotations":{
      "kubectl.kubernetes.io/restartedAt":"2026-12-02T10:00:00Z"}}}}})");
  EXPECT_FALSE(last_restart_of(kubectls)) << "kubectl rollout restart is not a meshop restart";
  auto cron = parse(R"({"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"metadata":{
      "annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-02T10:00:00+01:00",
      "meshop.io/restart-cause":"InjectionEnabled/default"}}}}}}})");
  ASSERT_TRUE(last_restart_of(cron));
  EXPECT_EQ(last_restart_of(cron)->at, at_utc(9, 0));
}

TEST(Policy, VersionGateFields) {
  auto doc =
      parse(R"({"maxVersionSkew":"Minor","maxStaleness":"72h","restartAfterDeadline":true})");
  auto p = parse_policy(&doc);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->max_version_skew, VersionSkew::kMinor);
  EXPECT_EQ(p->max_staleness, std::chrono::hours(72));
  EXPECT_TRUE(p->restart_after_deadline);
  auto defaults = parse_policy(nullptr);
  EXPECT_EQ(defaults->max_version_skew, VersionSkew::kAny);
  EXPECT_FALSE(defaults->max_staleness);
  EXPECT_FALSE(defaults->restart_after_deadline);
}

TEST(Policy, IstioVersionsOfTagsAndSkew) {
  EXPECT_EQ(version_of_image("registry.istio.io/testing/proxyv2:1.31-dev.eed52ebb66ad"), "1.31");
  EXPECT_EQ(version_of_image("docker.io/istio/proxyv2:1.30.2"), "1.30.2");
  EXPECT_EQ(version_of_image("docker.io/istio/proxyv2:1.30.2-distroless"), "1.30.2");
  EXPECT_EQ(version_of_image("localhost:5000/proxyv2"), "") << "a port is no tag";
  EXPECT_EQ(version_of_image("proxyv2:latest"), "");
  EXPECT_EQ(version_of_image("proxyv2@sha256:abc"), "");
  EXPECT_FALSE(parse_istio_version("1"));
  EXPECT_FALSE(parse_istio_version("1.30x"));
  auto v = [](const char* t) { return *parse_istio_version(t); };
  EXPECT_TRUE(within_skew(v("1.30.1"), v("1.30.4"), VersionSkew::kPatch));
  EXPECT_FALSE(within_skew(v("1.30"), v("1.31"), VersionSkew::kPatch));
  EXPECT_TRUE(within_skew(v("1.31"), v("1.30"), VersionSkew::kMinor)) << "downgrades too";
  EXPECT_FALSE(within_skew(v("1.29"), v("1.31"), VersionSkew::kMinor));
  EXPECT_FALSE(within_skew(v("1.30"), v("2.30"), VersionSkew::kMinor));
  EXPECT_TRUE(within_skew(v("1.2"), v("2.30"), VersionSkew::kAny));
  EXPECT_FALSE(version_gate("", "1.31", VersionSkew::kPatch, false)) << "unknown: no gate";
  EXPECT_TRUE(version_gate("1.30", "1.31", VersionSkew::kPatch, false));
  EXPECT_FALSE(version_gate("1.30", "1.31", VersionSkew::kPatch, true));
  EXPECT_TRUE(approval_matches("canary", "canary", "1.31"));
  EXPECT_TRUE(approval_matches("canary@1.31", "canary", "1.31"));
  EXPECT_FALSE(approval_matches("canary@1.32", "canary", "1.31"));
  EXPECT_FALSE(approval_matches("", "canary", "1.31"));
  EXPECT_FALSE(approval_matches("canary-2", "canary", "1.31"));
}

TEST(Policy, StaleSinceRecordIsPerCause) {
  auto w = parse(R"({"metadata":{"annotations":{"meshop.io/stale-since":
      "2026-12-02T10:00:00Z RevisionChanged/canary"}}})");
  auto since = stale_since_of(w, "RevisionChanged/canary");
  ASSERT_TRUE(since);
  EXPECT_EQ(stale_since_value(*since, "RevisionChanged/canary"),
            "2026-12-02T10:00:00Z RevisionChanged/canary");
  EXPECT_FALSE(stale_since_of(w, "RevisionChanged/other"));
  Policy p;
  EXPECT_FALSE(overdue(*since, p, *since + std::chrono::hours(1000))) << "no maxStaleness";
  p.max_staleness = std::chrono::hours(72);
  EXPECT_FALSE(overdue(*since, p, *since + std::chrono::hours(72)));
  EXPECT_TRUE(overdue(*since, p, *since + std::chrono::hours(72) + std::chrono::seconds(1)));
}

TEST(Policy, Rfc3339RoundTrips) {
  EXPECT_EQ(parse_rfc3339(rfc3339(at_utc(23, 59))), at_utc(23, 59));
  EXPECT_EQ(parse_rfc3339("2026-12-02T10:00:00.123456Z"), at_utc(10, 0));
  EXPECT_FALSE(parse_rfc3339("2026-12-02 10:00"));
  EXPECT_FALSE(parse_rfc3339("2026-02-30T10:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2026-12-02T10:00:00"));
  EXPECT_EQ(go_duration(0s), "0s");
  EXPECT_EQ(go_duration(10min), "10m");
  EXPECT_EQ(go_duration(2h + 5s), "2h5s");
}

TEST(Policy, GoDurations) {
  EXPECT_EQ(*parse_go_duration("10m"), 10min);
  EXPECT_EQ(*parse_go_duration("1h30m10s"), 1h + 30min + 10s);
  EXPECT_EQ(*parse_go_duration("1.5h"), 90min);
  EXPECT_EQ(*parse_go_duration("250ms"), 250ms);
  EXPECT_FALSE(parse_go_duration("").ok());
  EXPECT_FALSE(parse_go_duration("m").ok());
  EXPECT_FALSE(parse_go_duration("5 m").ok());
}

TEST(MaintenanceWindowTest, SameDayWindow) {
  MaintenanceWindow w{{1}, 2 * 60, 4 * 60};  // Mondays 02:00-04:00
  EXPECT_FALSE(w.allows(utc(30, 1, 59)));
  EXPECT_TRUE(w.allows(utc(30, 2, 0)));
  EXPECT_TRUE(w.allows(utc(30, 3, 59)));
  EXPECT_FALSE(w.allows(utc(30, 4, 0)));
  EXPECT_FALSE(w.allows(utc(29, 3, 0)));  // Sunday
  EXPECT_EQ(w.next_open(utc(30, 5, 0)), utc(30, 2, 0) + std::chrono::days(7));
  EXPECT_EQ(w.next_open(utc(29, 12, 0)), utc(30, 2, 0));
  EXPECT_EQ(w.next_open(utc(30, 3, 0)), utc(30, 3, 0));
}

TEST(MaintenanceWindowTest, WindowAcrossMidnightBelongsToItsStartDay) {
  MaintenanceWindow w{{0}, 22 * 60, 2 * 60};  // Sunday 22:00 to Monday 02:00
  EXPECT_TRUE(w.allows(utc(29, 23, 0)));      // Sunday night
  EXPECT_TRUE(w.allows(utc(30, 1, 0)));       // Monday early morning
  EXPECT_FALSE(w.allows(utc(30, 23, 0)));     // Monday night
  EXPECT_FALSE(w.allows(utc(29, 1, 0)));      // Sunday early morning (Saturday's window)
  EXPECT_EQ(w.next_open(utc(30, 3, 0)), utc(29, 22, 0) + std::chrono::days(7));
}

TEST(Restart, CauseRecordPreventsASecondRestartForTheSameCause) {
  WorkloadPlan plan;
  plan.reason = StaleReason::kRevisionChanged;
  plan.target_revision = "canary";
  std::string cause = restart_cause(plan);
  EXPECT_EQ(cause, "RevisionChanged/canary");
  plan.target_revision = "";
  plan.reason = StaleReason::kInjectionDisabled;
  EXPECT_EQ(restart_cause(plan), "InjectionDisabled/none");

  auto patch = parse(restart_patch(cause, utc(30, 10, 5)));
  EXPECT_EQ(api::string_at(patch, {"spec", "template", "metadata", "annotations",
                                   "kubectl.kubernetes.io/restartedAt"}),
            "2026-11-30T10:05:00Z");
  auto workload = parse(R"({"kind":"Deployment","spec":)" + api::to_json(patch["spec"]) + "}");
  EXPECT_TRUE(already_restarted_for(workload, cause));
  EXPECT_FALSE(already_restarted_for(workload, "RevisionChanged/other"));
}

TEST(Restart, OptOutOnWorkloadOrNamespace) {
  auto opted = parse(R"({"metadata":{"annotations":{"meshop.io/restart":"false"}}})");
  auto plain = parse(R"({"metadata":{}})");
  EXPECT_TRUE(opted_out(opted, nullptr));
  EXPECT_TRUE(opted_out(plain, &opted));
  EXPECT_FALSE(opted_out(plain, &plain));
  auto yes = parse(R"({"metadata":{"annotations":{"meshop.io/restart":"true"}}})");
  EXPECT_FALSE(opted_out(yes, nullptr));
}

TEST(Restart, PdbThatAllowsNoDisruptionBlocks) {
  auto blocking =
      parse(R"({"metadata":{"name":"strict"},"spec":{"selector":{"matchLabels":{"app":"a"}}},
    "status":{"disruptionsAllowed":0}})");
  auto relaxed =
      parse(R"({"metadata":{"name":"relaxed"},"spec":{"selector":{"matchLabels":{"app":"b"}}},
    "status":{"disruptionsAllowed":1}})");
  auto unknown =
      parse(R"({"metadata":{"name":"new"},"spec":{"selector":{"matchLabels":{"app":"c"}}}})");
  std::vector<const rapidjson::Value*> pdbs{&blocking, &relaxed, &unknown};
  auto a = parse(R"({"app":"a"})"), b = parse(R"({"app":"b"})"), c = parse(R"({"app":"c"})"),
       d = parse(R"({"app":"d"})");
  EXPECT_EQ(blocking_pdb(pdbs, &a), "strict");
  EXPECT_EQ(blocking_pdb(pdbs, &b), "");
  EXPECT_EQ(blocking_pdb(pdbs, &c), "new") << "no status yet: treated as blocking";
  EXPECT_EQ(blocking_pdb(pdbs, &d), "");
}

TEST(Restart, AdmitHonoursGlobalAndPerNamespaceLimits) {
  Policy p;
  p.max_concurrent = 3;
  EXPECT_EQ(admit({"a", "a", "b", "c"}, {}, p), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(admit({"a", "b"}, {"x", "y", "z"}, p), (std::vector<std::size_t>{}));
  p.max_concurrent_per_namespace = 1;
  EXPECT_EQ(admit({"a", "a", "b", "c"}, {}, p), (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_EQ(admit({"a", "b", "b"}, {"a"}, p), (std::vector<std::size_t>{1}));
}

// --- rollout status ---------------------------------------------------------------------

RolloutStatus status(const std::string& json, std::chrono::seconds elapsed = 0s) {
  auto d = parse(json);
  SystemTime t0 = utc(30, 0, 0);
  return rollout_status(d, t0, t0 + elapsed, 600s);
}

TEST(Rollout, Deployment) {
  std::string spec = R"("kind":"Deployment","metadata":{"generation":2},"spec":{"replicas":2})";
  EXPECT_EQ(status("{" + spec + R"(,"status":{"observedGeneration":1}})").state,
            RolloutState::kProgressing);
  EXPECT_EQ(
      status(
          "{" + spec +
          R"(,"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":2,"availableReplicas":2}})")
          .state,
      RolloutState::kProgressing);
  EXPECT_EQ(
      status(
          "{" + spec +
          R"(,"status":{"observedGeneration":2,"replicas":2,"updatedReplicas":2,"availableReplicas":1}})")
          .state,
      RolloutState::kProgressing);
  EXPECT_EQ(
      status(
          "{" + spec +
          R"(,"status":{"observedGeneration":2,"replicas":2,"updatedReplicas":2,"availableReplicas":2}})")
          .state,
      RolloutState::kComplete);
  auto deadline = status("{" + spec + R"(,"status":{"observedGeneration":2,"conditions":[
      {"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}})");
  EXPECT_EQ(deadline.state, RolloutState::kFailed);
  auto timeout =
      status("{" + spec + R"(,"status":{"observedGeneration":2,"updatedReplicas":1}})", 600s);
  EXPECT_EQ(timeout.state, RolloutState::kFailed);
  EXPECT_NE(timeout.message.find("1 of 2 new replicas"), std::string::npos) << timeout.message;
}

TEST(Rollout, StatefulSetAndDaemonSet) {
  std::string sts = R"("kind":"StatefulSet","metadata":{"generation":3},"spec":{"replicas":2})";
  EXPECT_EQ(
      status(
          "{" + sts +
          R"(,"status":{"observedGeneration":3,"readyReplicas":2,"updatedReplicas":1,"currentRevision":"a","updateRevision":"b"}})")
          .state,
      RolloutState::kProgressing);
  EXPECT_EQ(
      status(
          "{" + sts +
          R"(,"status":{"observedGeneration":3,"readyReplicas":2,"updatedReplicas":2,"currentRevision":"b","updateRevision":"b"}})")
          .state,
      RolloutState::kComplete);
  std::string ds = R"("kind":"DaemonSet","metadata":{"generation":1})";
  EXPECT_EQ(
      status(
          "{" + ds +
          R"(,"status":{"observedGeneration":1,"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":2}})")
          .state,
      RolloutState::kProgressing);
  EXPECT_EQ(
      status(
          "{" + ds +
          R"(,"status":{"observedGeneration":1,"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":3}})")
          .state,
      RolloutState::kComplete);
}

TEST(Rollout, PodByPodKinds) {
  EXPECT_TRUE(rolls_pod_by_pod(
      parse(R"({"kind":"StatefulSet","spec":{"updateStrategy":{"type":"OnDelete"}}})")));
  EXPECT_FALSE(rolls_pod_by_pod(parse(R"({"kind":"StatefulSet","spec":{}})")));
  EXPECT_TRUE(rolls_pod_by_pod(parse(R"({"kind":"ReplicaSet"})")));
  EXPECT_FALSE(rolls_pod_by_pod(parse(R"({"kind":"Deployment"})")));
}

}  // namespace
}  // namespace meshop::restart
