#include "operator/restart/evict.hpp"

#include <gtest/gtest.h>

#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

using namespace std::chrono_literals;
using SystemTime = std::chrono::system_clock::time_point;

SystemTime at(int hour, int minute) {
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 11;
  tm.tm_mday = 2;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// A pod of the workload: Ready or not, created at `created` ("HH:MM" on 2026-12-02),
// terminating when asked.
rapidjson::Document member(const std::string& name, bool is_ready, const std::string& created,
                           bool is_terminating = false) {
  return parse(R"({"metadata":{"name":")" + name + R"(","creationTimestamp":"2026-12-02T)" +
               created + R"(:00Z")" +
               (is_terminating ? R"(,"deletionTimestamp":"2026-12-02T12:00:00Z")" : "") +
               R"(},"status":{"conditions":[{"type":"Ready","status":")" +
               (is_ready ? "True" : "False") + R"("}]}})");
}

rapidjson::Document deployment_with(int replicas, const std::string& strategy = "") {
  return parse(
      R"({"kind":"Deployment","metadata":{"namespace":"ns","name":"web"},"spec":{"replicas":)" +
      std::to_string(replicas) + (strategy.empty() ? "" : R"(,"strategy":)" + strategy) + "}}");
}

struct Pods {
  std::vector<rapidjson::Document> docs;
  std::vector<const rapidjson::Value*> ptrs() const {
    std::vector<const rapidjson::Value*> out;
    for (const auto& d : docs)
      out.push_back(&d);
    return out;
  }
};

TEST(EvictStep, EveryPodReadyEvictsTheFirstStalePodByName) {
  Pods pods;
  for (const char* n : {"web-d", "web-b", "web-c", "web-a"})
    pods.docs.push_back(member(n, true, "10:00"));
  auto w = deployment_with(4);
  EvictStep s = evict_step(w, pods.ptrs(), {"web-d", "web-b", "web-c", "web-a"}, at(12, 0), 10min);
  EXPECT_FALSE(s.started) << "nothing replaced yet: the wave needs admission";
  EXPECT_TRUE(s.settled);
  EXPECT_EQ(s.next, "web-a");
  EXPECT_EQ(s.stale_left, 4);
  EXPECT_EQ(s.max_unavailable, 1) << "25% of 4";
  EXPECT_TRUE(s.blocked.empty());
}

TEST(EvictStep, TheReplacementMustBeReadyBeforeTheNextEviction) {
  Pods pods;
  pods.docs.push_back(member("web-a", true, "10:00"));
  pods.docs.push_back(member("web-b", true, "10:00"));
  pods.docs.push_back(member("web-c", true, "10:00"));
  pods.docs.push_back(member("web-new", false, "11:58"));
  auto w = deployment_with(4);
  EvictStep s = evict_step(w, pods.ptrs(), {"web-a", "web-b", "web-c"}, at(12, 0), 10min);
  EXPECT_TRUE(s.started) << "a pod already matches";
  EXPECT_FALSE(s.settled);
  EXPECT_EQ(s.next, "");
  EXPECT_NE(s.waiting.find("web-new to be Ready"), std::string::npos) << s.waiting;
  EXPECT_EQ(s.failed, "");

  // Still not Ready a rollout timeout after it was created: the wave failed.
  s = evict_step(w, pods.ptrs(), {"web-a", "web-b", "web-c"}, at(12, 8), 10min);
  EXPECT_NE(s.failed.find("web-new was not Ready 600s"), std::string::npos) << s.failed;

  // Ready: the next stale pod goes.
  pods.docs[3] = member("web-new", true, "11:58");
  s = evict_step(w, pods.ptrs(), {"web-a", "web-b", "web-c"}, at(12, 8), 10min);
  EXPECT_EQ(s.next, "web-a");
  EXPECT_TRUE(s.started);
}

TEST(EvictStep, TerminatingOrMissingPodsWait) {
  Pods pods;
  pods.docs.push_back(member("web-a", true, "10:00", true));
  pods.docs.push_back(member("web-b", true, "10:00"));
  auto w = deployment_with(2, R"({"rollingUpdate":{"maxUnavailable":1}})");
  EvictStep s = evict_step(w, pods.ptrs(), {"web-a", "web-b"}, at(12, 0), 10min);
  EXPECT_TRUE(s.started) << "a pod is going";
  EXPECT_EQ(s.next, "");
  EXPECT_NE(s.waiting.find("web-a to terminate"), std::string::npos) << s.waiting;

  pods.docs.erase(pods.docs.begin());  // gone, the replacement not created yet
  s = evict_step(w, pods.ptrs(), {"web-b"}, at(12, 0), 10min);
  EXPECT_EQ(s.next, "");
  EXPECT_NE(s.waiting.find("1 of 2 Ready"), std::string::npos) << s.waiting;
  EXPECT_FALSE(s.started) << "the cluster alone cannot tell (the reconciler remembers)";
}

TEST(EvictStep, UnreadyPodOfAWaveNotStartedNeverFails) {
  // A stale workload that is simply unhealthy is not meshop's failed wave.
  Pods pods;
  pods.docs.push_back(member("web-a", false, "01:00"));
  pods.docs.push_back(member("web-b", true, "01:00"));
  auto w = deployment_with(2, R"({"rollingUpdate":{"maxUnavailable":1}})");
  EvictStep s = evict_step(w, pods.ptrs(), {"web-a", "web-b"}, at(12, 0), 10min);
  EXPECT_FALSE(s.started);
  EXPECT_EQ(s.failed, "");
  EXPECT_EQ(s.next, "");
}

TEST(EvictStep, MaxUnavailableOfTheWorkloadResolvesAsItsController) {
  std::string field;
  auto three = deployment_with(3);  // 25% of 3 rounds down to 0, maxSurge 25% rounds up to 1
  EXPECT_EQ(resolve_max_unavailable(three, 3, &field), 0);
  EXPECT_EQ(field, "spec.strategy.rollingUpdate.maxUnavailable");
  Pods pods;
  pods.docs.push_back(member("web-a", true, "10:00"));
  EvictStep s = evict_step(three, pods.ptrs(), {"web-a"}, at(12, 0), 10min);
  EXPECT_EQ(s.next, "");
  EXPECT_NE(s.blocked.find("Deployment ns/web: spec.strategy.rollingUpdate.maxUnavailable "
                           "resolves to 0 for 3 pods"),
            std::string::npos)
      << s.blocked;

  EXPECT_EQ(resolve_max_unavailable(
                deployment_with(4, R"({"rollingUpdate":{"maxUnavailable":"50%"}})"), 4, nullptr),
            2);
  EXPECT_EQ(
      resolve_max_unavailable(
          deployment_with(3, R"({"rollingUpdate":{"maxUnavailable":0,"maxSurge":0}})"), 3, nullptr),
      1)
      << "the Deployment controller's fencepost";
  EXPECT_EQ(resolve_max_unavailable(deployment_with(3, R"({"type":"Recreate"})"), 3, nullptr), 1);

  auto sts = parse(
      R"({"kind":"StatefulSet","spec":{"replicas":3,"updateStrategy":{"rollingUpdate":{"maxUnavailable":"10%"}}}})");
  EXPECT_EQ(resolve_max_unavailable(sts, 3, &field), 1) << "a StatefulSet's is at least 1";
  EXPECT_EQ(field, "spec.updateStrategy.rollingUpdate.maxUnavailable");

  auto ds = parse(
      R"({"kind":"DaemonSet","spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":"10%"}}}})");
  EXPECT_EQ(resolve_max_unavailable(ds, 5, nullptr), 1) << "a DaemonSet rounds up";
  auto surge_only = parse(
      R"({"kind":"DaemonSet","spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0,"maxSurge":1}}}})");
  EXPECT_EQ(resolve_max_unavailable(surge_only, 5, nullptr), 0);
  auto rs = parse(R"({"kind":"ReplicaSet","spec":{"replicas":1}})");
  EXPECT_EQ(resolve_max_unavailable(rs, 1, nullptr), 1);
}

TEST(EvictStep, DaemonSetWantsItsScheduledCount) {
  auto ds = parse(R"({"kind":"DaemonSet","metadata":{"namespace":"ns","name":"agent"},
    "spec":{},"status":{"desiredNumberScheduled":2}})");
  Pods pods;
  pods.docs.push_back(member("agent-x", true, "10:00"));
  pods.docs.push_back(member("agent-y", true, "10:00"));
  EvictStep s = evict_step(ds, pods.ptrs(), {"agent-y"}, at(12, 0), 10min);
  EXPECT_EQ(s.desired, 2);
  EXPECT_TRUE(s.started) << "agent-x already matches";
  EXPECT_EQ(s.next, "agent-y");
}

TEST(EvictStep, TheRefusalNamesTheBudget) {
  // As the client reports a 429 of pods/eviction (message, then the causes).
  EXPECT_EQ(budget_of_refusal("evict pods ns/web-a: Cannot evict pod as it would violate the "
                              "pod's disruption budget.: The disruption budget web-pdb needs 3 "
                              "healthy pods and has 3 currently (TooManyRequests, 429)"),
            "web-pdb");
  EXPECT_EQ(budget_of_refusal("The disruption budget zero is still being processed by the server."),
            "zero");
  EXPECT_EQ(budget_of_refusal("evict pods ns/x: too many requests (TooManyRequests, 429)"), "");
}

}  // namespace
}  // namespace meshop::restart
