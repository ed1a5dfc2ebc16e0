#include "operator/restart/halt.hpp"

#include <gtest/gtest.h>

#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

using namespace std::chrono_literals;

const SystemTime kT0 = *parse_rfc3339("2026-12-03T10:00:00Z");

CanaryPolicy count_canary(int n, std::chrono::seconds soak = 5min) {
  CanaryPolicy c;
  c.count = n;
  c.soak = soak;
  return c;
}

Member member(MemberState s) {
  Member m;
  m.state = s;
  return m;
}

// A wave of three Deployments, alpha beta gamma, still to restart.
WaveInput wave_of_three() {
  WaveInput in;
  in.generation = 1;
  in.affected = {"Deployment/ns/alpha", "Deployment/ns/beta", "Deployment/ns/gamma"};
  in.affected_labels = {nullptr, nullptr, nullptr};
  for (const std::string& key : in.affected)
    in.members[key] = member(MemberState::kWaiting);
  return in;
}

TEST(Wave, ANewWaveRestartsTheCanaryGroupFirst) {
  CanaryPolicy c = count_canary(1);
  WaveDecision d = decide_wave(&c, wave_of_three(), kT0);
  EXPECT_EQ(d.next.phase, WavePhase::kCanary);
  EXPECT_EQ(d.next.canary, std::vector<std::string>{"Deployment/ns/alpha"});
  EXPECT_EQ(d.next.generation, 1);
  EXPECT_TRUE(d.hold_others);
  EXPECT_FALSE(d.hold_all);
  EXPECT_NE(d.why.find("waiting for the canary group to roll out: Deployment/ns/alpha"),
            std::string::npos)
      << d.why;
}

TEST(Wave, SelectorChoosesByLabels) {
  auto canary_labels = parse(R"({"tier":"canary"})");
  auto other = parse(R"({"tier":"main"})");
  WaveInput in = wave_of_three();
  in.affected_labels = {&other, &canary_labels, nullptr};
  CanaryPolicy c;
  auto sel = api::LabelSelector::parse("tier=canary");
  ASSERT_TRUE(sel.ok());
  c.selector = *sel;
  WaveDecision d = decide_wave(&c, in, kT0);
  EXPECT_EQ(d.next.canary, std::vector<std::string>{"Deployment/ns/beta"});
  // No workload matches: the wave goes without a canary, and says so.
  in.affected_labels = {&other, &other, nullptr};
  d = decide_wave(&c, in, kT0);
  EXPECT_EQ(d.next.phase, WavePhase::kPassed);
  EXPECT_FALSE(d.hold_others);
  EXPECT_NE(d.next.message.find("matches the canary selector tier=canary"), std::string::npos);
}

TEST(Wave, SoakNotYetElapsedHoldsTheOthers) {
  CanaryPolicy c = count_canary(1, 5min);
  WaveInput in = wave_of_three();
  in.previous = decide_wave(&c, in, kT0).next;
  // The canary rolled out (it is no longer affected) and is healthy.
  in.affected.erase(in.affected.begin());
  in.affected_labels.pop_back();
  in.members["Deployment/ns/alpha"] = member(MemberState::kDone);
  WaveDecision d = decide_wave(&c, in, kT0 + 1min);
  EXPECT_EQ(d.next.phase, WavePhase::kSoaking);
  ASSERT_TRUE(d.next.soak_started);
  EXPECT_EQ(*d.next.soak_started, kT0 + 1min);
  EXPECT_TRUE(d.hold_others);
  EXPECT_EQ(d.why,
            "the canary group (Deployment/ns/alpha) soaks until 2026-12-03T10:06:00Z (soak 5m)");
  in.previous = d.next;
  d = decide_wave(&c, in, kT0 + 5min + 59s);
  EXPECT_EQ(d.next.phase, WavePhase::kSoaking) << "one second before the soak ends";
  EXPECT_TRUE(d.hold_others);
}

TEST(Wave, HealthySoakLetsTheOthersGo) {
  CanaryPolicy c = count_canary(1, 5min);
  WaveInput in = wave_of_three();
  in.previous = decide_wave(&c, in, kT0).next;
  in.affected.erase(in.affected.begin());
  in.members["Deployment/ns/alpha"] = member(MemberState::kDone);
  in.previous = decide_wave(&c, in, kT0 + 1min).next;
  WaveDecision d = decide_wave(&c, in, kT0 + 6min);
  EXPECT_EQ(d.next.phase, WavePhase::kPassed);
  EXPECT_FALSE(d.hold_others);
  EXPECT_FALSE(d.hold_all);
  EXPECT_NE(d.next.message.find("stayed healthy for 5m"), std::string::npos);
  // Once every workload of the wave went, the wave is over.
  in.previous = d.next;
  in.affected.clear();
  EXPECT_EQ(decide_wave(&c, in, kT0 + 10min).next.phase, WavePhase::kNone);
}

TEST(Wave, ARegressionDuringTheSoakHalts) {
  CanaryPolicy c = count_canary(1, 5min);
  WaveInput in = wave_of_three();
  in.previous = decide_wave(&c, in, kT0).next;
  in.affected.erase(in.affected.begin());
  in.members["Deployment/ns/alpha"] = member(MemberState::kDone);
  in.previous = decide_wave(&c, in, kT0 + 1min).next;
  Member sick = member(MemberState::kDone);
  sick.health = {true, "NotReady", "pod alpha-1 is not Ready"};
  sick.failure = "its new pods regressed: pod alpha-1 is not Ready";  // the health watch's too
  in.members["Deployment/ns/alpha"] = sick;
  WaveDecision d = decide_wave(&c, in, kT0 + 2min);
  EXPECT_EQ(d.next.phase, WavePhase::kHalted);
  EXPECT_TRUE(d.halted_now);
  EXPECT_TRUE(d.hold_all);
  EXPECT_EQ(d.next.halted_workload, "Deployment/ns/alpha");
  EXPECT_EQ(d.next.halt_reason, "CanaryNotReady");
  EXPECT_EQ(d.next.message, "canary Deployment/ns/alpha regressed: pod alpha-1 is not Ready");
  EXPECT_NE(d.why.find("meshop restart resume"), std::string::npos);
}

TEST(Wave, AFailedCanaryRolloutHalts) {
  CanaryPolicy c = count_canary(2);
  WaveInput in = wave_of_three();
  in.previous = decide_wave(&c, in, kT0).next;
  Member failed = member(MemberState::kRolling);
  failed.failure = "deployment exceeded its progress deadline";
  in.members["Deployment/ns/alpha"] = member(MemberState::kDone);
  in.members["Deployment/ns/beta"] = failed;
  WaveDecision d = decide_wave(&c, in, kT0 + 1min);
  EXPECT_EQ(d.next.phase, WavePhase::kHalted);
  EXPECT_EQ(d.next.halted_workload, "Deployment/ns/beta");
  EXPECT_EQ(d.next.halt_reason, "CanaryRolloutFailed");
}

TEST(Wave, HaltedNothingStartsUntilResumed) {
  CanaryPolicy c = count_canary(1);
  WaveInput in = wave_of_three();
  in.previous.phase = WavePhase::kHalted;
  in.previous.generation = 1;
  in.previous.canary = {"Deployment/ns/alpha"};
  in.previous.halted_workload = "Deployment/ns/alpha";
  in.previous.message = "canary Deployment/ns/alpha regressed: pod alpha-1 is not Ready";
  // The pods recovered: still halted (a person decides), and no second halt.
  in.members["Deployment/ns/alpha"] = member(MemberState::kDone);
  WaveDecision d = decide_wave(&c, in, kT0 + 1h);
  EXPECT_EQ(d.next.phase, WavePhase::kHalted);
  EXPECT_TRUE(d.hold_all);
  EXPECT_FALSE(d.halted_now);
  EXPECT_FALSE(d.resumed_now);
  EXPECT_EQ(d.next, in.previous);
  // Resume: the canary counts as accepted, the others go.
  in.resume = true;
  d = decide_wave(&c, in, kT0 + 1h);
  EXPECT_TRUE(d.resumed_now);
  EXPECT_EQ(d.resumed_by, "meshop restart resume");
  EXPECT_EQ(d.next.phase, WavePhase::kPassed);
  EXPECT_FALSE(d.hold_all);
  EXPECT_FALSE(d.hold_others);
  EXPECT_TRUE(d.next.halted_workload.empty());
}

TEST(Wave, ASpecChangeLiftsTheHaltAndBeginsANewWave) {
  CanaryPolicy c = count_canary(1);
  WaveInput in = wave_of_three();
  in.previous.phase = WavePhase::kHalted;
  in.previous.generation = 1;
  in.previous.canary = {"Deployment/ns/alpha"};
  in.generation = 2;
  in.affected.erase(in.affected.begin());  // alpha went in the old wave
  WaveDecision d = decide_wave(&c, in, kT0);
  EXPECT_TRUE(d.resumed_now);
  EXPECT_EQ(d.resumed_by, "a spec change (generation 2)");
  EXPECT_EQ(d.next.phase, WavePhase::kCanary);
  EXPECT_EQ(d.next.canary, std::vector<std::string>{"Deployment/ns/beta"});
  EXPECT_EQ(d.next.generation, 2);
}

TEST(Wave, PauseHoldsEverythingAndResumeContinues) {
  WaveInput in = wave_of_three();
  in.pause = "maintenance by alice";
  WaveDecision d = decide_wave(nullptr, in, kT0);
  EXPECT_TRUE(d.hold_all);
  EXPECT_EQ(d.why,
            "restarts paused by hand (meshop.io/restarts-paused: maintenance by alice); `meshop "
            "restart resume` continues");
  in.resume = true;
  d = decide_wave(nullptr, in, kT0);
  EXPECT_FALSE(d.hold_all);
  EXPECT_FALSE(d.resumed_now) << "nothing was halted";
  // A pause during the canary soak does not skip the soak.
  CanaryPolicy c = count_canary(1);
  in = wave_of_three();
  in.previous = decide_wave(&c, in, kT0).next;
  in.resume = true;
  d = decide_wave(&c, in, kT0);
  EXPECT_EQ(d.next.phase, WavePhase::kCanary);
  EXPECT_TRUE(d.hold_others);
}

TEST(Wave, StateRoundTripsThroughTheStatus) {
  WaveState w;
  w.phase = WavePhase::kHalted;
  w.canary = {"Deployment/ns/alpha", "StatefulSet/ns/db"};
  w.soak_started = kT0;
  w.generation = 7;
  w.halted_workload = "Deployment/ns/alpha";
  w.halt_reason = "CanaryCrashLoopBackOff";
  w.message = "canary Deployment/ns/alpha regressed";
  rapidjson::Document iop(rapidjson::kObjectType);
  auto& a = iop.GetAllocator();
  rapidjson::Value restarts(rapidjson::kObjectType);
  restarts.AddMember("wave", wave_to_json(w, a), a);
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("restarts", restarts, a);
  iop.AddMember("status", status, a);
  EXPECT_EQ(wave_from_status(iop), w);
  EXPECT_EQ(wave_from_status(parse("{}")), WaveState{});
}

// ---- Health ----

std::string pod_json(const std::string& name, const std::string& created, bool ready,
                     const std::string& container_status = "") {
  return R"({"metadata":{"name":")" + name + R"(","creationTimestamp":")" + created +
         R"("},"status":{"conditions":[{"type":"Ready","status":")" + (ready ? "True" : "False") +
         R"(","reason":"Broken"}])" +
         (container_status.empty() ? "" : R"(,"containerStatuses":[)" + container_status + "]") +
         "}}";
}

TEST(Health, NewPodsNotReadyRegressOnlyOnceRolledOut) {
  auto d = parse(R"({"kind":"Deployment"})");
  auto old_pod = parse(pod_json("a-old", "2026-12-03T09:00:00Z", false));
  auto new_pod = parse(pod_json("a-new", "2026-12-03T10:00:00Z", false));
  std::vector<const rapidjson::Value*> pods = {&old_pod, &new_pod};
  EXPECT_FALSE(workload_health(d, pods, {}, kT0, false).regressed) << "still rolling";
  Health h = workload_health(d, pods, {}, kT0, true);
  EXPECT_TRUE(h.regressed);
  EXPECT_EQ(h.reason, "NotReady");
  EXPECT_EQ(h.what, "pod a-new is not Ready (Broken)");
  // The pod created before the restart, or a stale one, is not the restart's doing.
  EXPECT_FALSE(workload_health(d, {&old_pod}, {}, kT0, true).regressed);
  EXPECT_FALSE(workload_health(d, pods, {"a-new"}, kT0, true).regressed);
  auto ready = parse(pod_json("a-new", "2026-12-03T10:00:01Z", true));
  EXPECT_FALSE(workload_health(d, {&ready}, {}, kT0, true).regressed);
}

TEST(Health, CrashLoopAndContainerRestartsRegressWhileRolling) {
  auto d = parse(R"({"kind":"Deployment"})");
  auto crash = parse(pod_json("a-1", "2026-12-03T10:00:05Z", false,
                              R"({"name":"app","restartCount":3,
                                  "state":{"waiting":{"reason":"CrashLoopBackOff"}}})"));
  Health h = workload_health(d, {&crash}, {}, kT0, false);
  EXPECT_TRUE(h.regressed);
  EXPECT_EQ(h.reason, "CrashLoopBackOff");
  EXPECT_EQ(h.what, "pod a-1: container app is in CrashLoopBackOff");
  auto restarted =
      parse(pod_json("a-1", "2026-12-03T10:00:05Z", true, R"({"name":"app","restartCount":1})"));
  h = workload_health(d, {&restarted}, {}, kT0, false);
  EXPECT_EQ(h.reason, "ContainerRestarts");
  EXPECT_EQ(h.what, "pod a-1: container app restarted 1 times");
  auto fine =
      parse(pod_json("a-1", "2026-12-03T10:00:05Z", true, R"({"name":"app","restartCount":0})"));
  EXPECT_FALSE(workload_health(d, {&fine}, {}, kT0, true).regressed);
}

TEST(Health, AStalledDeploymentRegresses) {
  auto d = parse(R"({"kind":"Deployment","status":{"conditions":[{"type":"Progressing",
      "status":"False","reason":"ProgressDeadlineExceeded","message":"took too long"}]}})");
  Health h = workload_health(d, {}, {}, kT0, false);
  EXPECT_TRUE(h.regressed);
  EXPECT_EQ(h.reason, "RolloutStalled");
  EXPECT_EQ(h.what,
            "the rollout stalled: Progressing=False (ProgressDeadlineExceeded: took too long)");
}

}  // namespace
}  // namespace meshop::restart
