#include "operator/restart/cluster_plan.hpp"

#include <map>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

using namespace std::chrono_literals;

class ClusterPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector", "default", "default", true)));
    view_.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false)));
    add_namespace("ns-a", R"({"istio.io/rev":"canary"})");
    add_namespace("ns-b", R"({"istio-injection":"enabled"})");
    add_namespace("ns-c", R"({"istio-injection":"enabled"})", R"({"meshop.io/restart":"false"})");
    view_.istio_operators.push_back(parse(
        R"({"metadata":{"namespace":"istio-system","name":"default-iop"},"spec":{},"status":{"status":"HEALTHY"}})"));
    view_.istio_operators.push_back(parse(
        R"({"metadata":{"namespace":"istio-system","name":"canary-iop"},"spec":{"revision":"canary",
        "restarts":{"mode":"Auto"}},"status":{"status":"HEALTHY"}})"));
  }
  void add_namespace(const std::string& name, const std::string& labels,
                     const std::string& annotations = "{}") {
    view_.namespaces.push_back(parse(R"({"metadata":{"name":")" + name + R"(","labels":)" + labels +
                                     R"(,"annotations":)" + annotations + "}}"));
  }
  // A Deployment with its ReplicaSet and `pods` (revision per pod, "" = not injected).
  void add_deployment(const std::string& ns, const std::string& name,
                      const std::vector<std::string>& pod_revisions,
                      const std::string& template_labels = "{}") {
    std::string uid = ns + "-" + name;
    std::string d = deployment("Deployment", ns, template_labels);
    d.replace(d.find(R"("name":"w")"), 10, R"("name":")" + name + R"(")");
    view_.workloads.push_back(with_meta(d, ns, uid));
    view_.workloads.push_back(
        with_meta(R"({"kind":"ReplicaSet","metadata":{"name":")" + name + R"(-1"},"spec":{}})", ns,
                  uid + "-rs", "Deployment", uid));
    for (std::size_t i = 0; i < pod_revisions.size(); ++i)
      view_.pods.push_back(with_meta(pod(name + "-" + std::to_string(i), pod_revisions[i]), ns,
                                     uid + "-p" + std::to_string(i), "ReplicaSet", uid + "-rs"));
  }
  std::map<std::string, PlanEntry> run(SystemTime now = std::chrono::system_clock::now()) {
    DesiredFn fn = [this](const std::string& revision,
                          const rapidjson::Value&) -> std::optional<Desired> {
      ++desired_calls_;
      if (!known_.count(revision)) return std::nullopt;
      Desired d;
      d.inject = true;
      d.revision = revision;
      if (auto it = proxy_images_.find(revision); it != proxy_images_.end())
        d.proxy_image = it->second;
      if (auto it = fingerprints_.find(revision); it != fingerprints_.end())
        d.fingerprint = it->second;
      return d;
    };
    std::map<std::string, PlanEntry> by_name;
    for (PlanEntry& e : plan_cluster(view_, fn, now, options_))
      by_name[e.plan.ns + "/" + e.plan.name] = std::move(e);
    return by_name;
  }

  ClusterView view_;
  ClusterPlanOptions options_;
  int desired_calls_ = 0;
  std::set<std::string> known_{"default", "canary"};
  // What injection gives now per revision (unset: no image / fingerprint to compare).
  std::map<std::string, std::string> proxy_images_, fingerprints_;
};

TEST_F(ClusterPlan, RelabelledNamespaceRestartsUnderTheCanaryPolicy) {
  add_deployment("ns-a", "web", {"default", "default"});
  add_deployment("ns-b", "api", {"default"});
  auto plan = run();
  ASSERT_EQ(plan.size(), 2u) << "ReplicaSets owned by Deployments are not planned separately";
  const PlanEntry& web = plan.at("ns-a/web");
  EXPECT_EQ(web.action, Action::kRestart) << web.why;
  EXPECT_EQ(web.cause, "RevisionChanged/canary");
  EXPECT_EQ(web.policy_source, "istio-system/canary-iop");
  EXPECT_EQ(web.plan.current_revision, "default");
  EXPECT_EQ(plan.at("ns-b/api").action, Action::kNone);
}

// A workload up to date that still carries a meshop.io/stale-since record is marked for its
// removal; a stale one's record is read, not marked.
TEST_F(ClusterPlan, AStaleSinceRecordLeftOnAnUpToDateWorkloadIsMarked) {
  add_deployment("ns-b", "api", {"default"});
  add_deployment("ns-a", "web", {"default"});
  EXPECT_FALSE(run().at("ns-b/api").stale_since_left);
  for (std::size_t i : {std::size_t{0}, std::size_t{2}}) {
    rapidjson::Document& w = view_.workloads.edit(i);
    rapidjson::Document ann =
        parse(R"({"meshop.io/stale-since":"2026-12-02T10:00:00Z RevisionChanged/canary"})");
    w["metadata"].AddMember("annotations", rapidjson::Value().CopyFrom(ann, w.GetAllocator()),
                            w.GetAllocator());
  }
  auto plan = run();
  EXPECT_EQ(plan.at("ns-b/api").action, Action::kNone);
  EXPECT_TRUE(plan.at("ns-b/api").stale_since_left);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kRestart);
  EXPECT_TRUE(plan.at("ns-a/web").stale_since_recorded);
  EXPECT_FALSE(plan.at("ns-a/web").stale_since_left);
}

// A proxy image or template change recurs for the same revision at every upgrade: the cause
// names the image (fingerprint) the restart is for, so the previous upgrade's record on the
// pod template is not taken for a restart under way.
TEST_F(ClusterPlan, ARecurringProxyOrTemplateChangeIsANewCause) {
  add_deployment("ns-a", "web", {"canary"});
  rapidjson::Document& pod = view_.pods.edit(0);
  pod["metadata"]["annotations"].AddMember("meshop.io/injector-fingerprint", "f1",
                                           pod.GetAllocator());
  auto record = [&](const std::string& cause) {
    rapidjson::Document& w = view_.workloads.edit(0);
    rapidjson::Document ann = parse(R"({"kubectl.kubernetes.io/restartedAt":"2020-01-01T00:00:00Z",
        "meshop.io/restart-cause":")" +
                                    cause + R"("})");
    auto& meta = w["spec"]["template"]["metadata"];
    if (meta.HasMember("annotations")) meta.RemoveMember("annotations");
    meta.AddMember("annotations", rapidjson::Value().CopyFrom(ann, w.GetAllocator()),
                   w.GetAllocator());
  };
  proxy_images_["canary"] = "hub/proxyv2:1.1";  // the pod runs hub/proxyv2:1.0
  PlanEntry e = run().at("ns-a/web");
  EXPECT_EQ(e.cause, "ProxyImageChanged/canary/hub/proxyv2:1.1");
  EXPECT_EQ(e.action, Action::kRestart) << e.why;
  record("ProxyImageChanged/canary/hub/proxyv2:1.0");  // the upgrade before
  EXPECT_EQ(run().at("ns-a/web").action, Action::kRestart) << run().at("ns-a/web").why;
  record("ProxyImageChanged/canary");  // as meshop recorded it before causes named the image
  EXPECT_EQ(run().at("ns-a/web").action, Action::kRestart)
      << "an earlier upgrade's restart is not this one's";
  record("ProxyImageChanged/canary/hub/proxyv2:1.1");
  EXPECT_EQ(run().at("ns-a/web").action, Action::kInProgress) << "restarted for this image";

  proxy_images_.clear();
  fingerprints_["canary"] = "f2";
  rapidjson::Document& canary = view_.istio_operators.edit(1);
  canary["spec"]["restarts"].AddMember("includeTemplateChanges", true, canary.GetAllocator());
  e = run().at("ns-a/web");
  EXPECT_EQ(e.cause, "TemplateChanged/canary/f2");
  EXPECT_EQ(e.action, Action::kRestart) << e.why;
  record("TemplateChanged/canary/f1");
  EXPECT_EQ(run().at("ns-a/web").action, Action::kRestart);
  record("TemplateChanged/canary/f2");
  EXPECT_EQ(run().at("ns-a/web").action, Action::kInProgress);
}

TEST_F(ClusterPlan, DefaultPolicyIsDryRunAndOptOutSkips) {
  add_deployment("ns-b", "fresh", {""});
  add_deployment("ns-c", "quiet", {""});
  auto plan = run();
  EXPECT_EQ(plan.at("ns-b/fresh").action, Action::kWouldRestart);
  EXPECT_EQ(plan.at("ns-b/fresh").cause, "InjectionEnabled/default");
  EXPECT_EQ(plan.at("ns-c/quiet").action, Action::kSkipped);
  EXPECT_NE(plan.at("ns-c/quiet").why.find("namespace ns-c"), std::string::npos);
}

TEST_F(ClusterPlan, GatesDeferRestarts) {
  add_deployment("ns-a", "guarded", {"default"}, R"({"app":"guarded"})");
  view_.pod_disruption_budgets.push_back(parse(
      R"({"metadata":{"name":"guarded-pdb","namespace":"ns-a"},"spec":{"selector":{"matchLabels":{"app":"guarded"}}},
      "status":{"disruptionsAllowed":0}})"));
  auto plan = run();
  EXPECT_EQ(plan.at("ns-a/guarded").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/guarded").why.find("guarded-pdb"), std::string::npos);

  view_.pod_disruption_budgets.clear();
  view_.istio_operators.edit(1)["status"]["status"].SetString("RECONCILING");
  plan = run();
  EXPECT_EQ(plan.at("ns-a/guarded").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/guarded").why.find("RECONCILING"), std::string::npos);

  rapidjson::Document& canary = view_.istio_operators.edit(1);
  canary["status"]["status"].SetString("HEALTHY");
  auto& spec = canary["spec"];
  rapidjson::Document window =
      parse(R"({"mode":"Auto","maintenanceWindow":{"start":"02:00","end":"03:00"}})");
  spec["restarts"].CopyFrom(window, canary.GetAllocator());
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 10;
  tm.tm_mday = 30;
  tm.tm_hour = 12;
  SystemTime noon = std::chrono::system_clock::from_time_t(timegm(&tm));
  plan = run(noon);
  EXPECT_EQ(plan.at("ns-a/guarded").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/guarded").why.find("2026-12-01T02:00:00Z"), std::string::npos)
      << plan.at("ns-a/guarded").why;
  plan = run(noon - 10h + 30min);  // 02:30
  EXPECT_EQ(plan.at("ns-a/guarded").action, Action::kRestart);
}

TEST_F(ClusterPlan, ControlPlaneWithoutStatusIsJudgedByItsDeployment) {
  view_.istio_operators.clear();
  add_deployment("ns-a", "web", {"default"});
  auto plan = run();
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/web").why.find("no control plane"), std::string::npos);
  view_.control_plane_deployments.push_back(parse(
      R"({"metadata":{"name":"istiod-canary","namespace":"istio-system"},"status":{"availableReplicas":1}})"));
  plan = run();
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kWouldRestart) << "no IstioOperator: defaults";
}

TEST_F(ClusterPlan, AlreadyRestartedForTheSameCauseIsInProgress) {
  add_deployment("ns-a", "web", {"default"});
  rapidjson::Document& web = view_.workloads.edit(0);
  auto& tmpl_meta = web["spec"]["template"]["metadata"];
  rapidjson::Document ann = parse(R"({"meshop.io/restart-cause":"RevisionChanged/canary"})");
  tmpl_meta.AddMember("annotations", rapidjson::Value().CopyFrom(ann, web.GetAllocator()),
                      web.GetAllocator());
  auto plan = run();
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kInProgress);
}

TEST_F(ClusterPlan, JobsAndBarePodsAreManualAndInvalidPolicyBlocks) {
  view_.workloads.push_back(with_meta(deployment("Job", "ns-a"), "ns-a", "job-1"));
  view_.pods.push_back(with_meta(pod("job-pod", "default"), "ns-a", "jp", "Job", "job-1"));
  rapidjson::Document bare = with_meta(pod("bare", ""), "ns-b", "bare-uid");
  bare.AddMember("kind", "Pod", bare.GetAllocator());
  view_.pods.push_back(std::move(bare));
  auto plan = run();
  EXPECT_EQ(plan.at("ns-a/w").action, Action::kManual);
  EXPECT_EQ(plan.at("ns-b/bare").action, Action::kManual);
  EXPECT_EQ(plan.at("ns-b/bare").plan.kind, "Pod");

  add_deployment("ns-a", "web", {"default"});
  rapidjson::Document bad = parse(R"({"mode":"Sometimes"})");
  rapidjson::Document& canary = view_.istio_operators.edit(1);
  canary["spec"]["restarts"].CopyFrom(bad, canary.GetAllocator());
  plan = run();
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kBlocked);
  EXPECT_NE(plan.at("ns-a/web").why.find("spec.restarts.mode"), std::string::npos);
  EXPECT_NE(plan.at("ns-a/web").why.find("istio-system/canary-iop"), std::string::npos);
}

// Strategy Evict: a Deployment of 4 replicas (maxUnavailable 25% = 1) whose pods are Ready.
class EvictPlan : public ClusterPlan {
 protected:
  void SetUp() override {
    ClusterPlan::SetUp();
    set_canary_restarts(R"({"mode":"Auto","strategy":"Evict"})");
  }
  // Five minutes after the pods were created.
  static SystemTime at_utc(int hour, int minute) {
    std::tm tm{};
    tm.tm_year = 126;
    tm.tm_mon = 11;
    tm.tm_mday = 2;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    return std::chrono::system_clock::from_time_t(timegm(&tm));
  }
  SystemTime soon_ = at_utc(10, 5);
  void set_canary_restarts(const std::string& json) {
    rapidjson::Document r = parse(json);
    rapidjson::Document& canary = view_.istio_operators.edit(1);
    canary["spec"]["restarts"].CopyFrom(r, canary.GetAllocator());
  }
  void add_ready_deployment(const std::string& ns, const std::string& name,
                            const std::vector<std::string>& pod_revisions) {
    std::size_t first_pod = view_.pods.size();
    add_deployment(ns, name, pod_revisions, R"({"app":")" + name + R"("})");
    rapidjson::Document& d = view_.workloads.edit(view_.workloads.size() - 2);
    d["spec"].AddMember("replicas", static_cast<int>(pod_revisions.size()), d.GetAllocator());
    for (std::size_t i = first_pod; i < view_.pods.size(); ++i)
      set_ready(i, true);
  }
  void set_ready(std::size_t pod, bool ready) {
    rapidjson::Document& p = view_.pods.edit(pod);
    auto& a = p.GetAllocator();
    if (p.HasMember("status")) p.RemoveMember("status");
    rapidjson::Document status = parse(R"({"conditions":[{"type":"Ready","status":")" +
                                       std::string(ready ? "True" : "False") + R"("}]})");
    p.AddMember("status", rapidjson::Value().CopyFrom(status, a), a);
    if (!p["metadata"].HasMember("creationTimestamp"))
      p["metadata"].AddMember("creationTimestamp", "2026-12-02T10:00:00Z", a);
  }
};

TEST_F(EvictPlan, PodDisruptionBudgetIsLeftToTheApiserver) {
  add_ready_deployment("ns-a", "web", {"default", "default", "default", "default"});
  // The informer's view of the budget says no disruption; under Evict the eviction itself
  // asks the apiserver (which answers 429 naming it), so the plan does not guess.
  view_.pod_disruption_budgets.push_back(parse(
      R"({"metadata":{"name":"web-pdb","namespace":"ns-a"},"spec":{"selector":{"matchLabels":{"app":"web"}}},
      "status":{"disruptionsAllowed":0}})"));
  auto plan = run(soon_);
  const PlanEntry& web = plan.at("ns-a/web");
  EXPECT_EQ(web.action, Action::kRestart) << web.why;
  EXPECT_EQ(web.policy.strategy, Strategy::kEvict);
  EXPECT_EQ(web.evict.next, "web-0");
  EXPECT_FALSE(web.evict.started);
  EXPECT_EQ(web.plan.stale_pods.size(), 4u);
  EXPECT_NE(web.why.find("4 of 4 pods to replace by eviction; evicting pod web-0"),
            std::string::npos)
      << web.why;

  set_canary_restarts(R"({"mode":"Auto"})");
  plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred) << "Rollout reads the budget first";
}

TEST_F(EvictPlan, AWaveUnderWayIsInProgressAndWaitsForReadiness) {
  add_ready_deployment("ns-a", "web", {"canary", "default", "default", "default"});
  auto plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kInProgress) << plan.at("ns-a/web").why;
  EXPECT_EQ(plan.at("ns-a/web").evict.next, "web-1");
  EXPECT_EQ(plan.at("ns-a/web").plan.stale_pods,
            (std::vector<std::string>{"web-1", "web-2", "web-3"}));

  set_ready(0, false);  // the replacement is not Ready yet
  plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kInProgress);
  EXPECT_EQ(plan.at("ns-a/web").evict.next, "");
  EXPECT_NE(plan.at("ns-a/web").why.find("waiting for pod web-0 to be Ready"), std::string::npos)
      << plan.at("ns-a/web").why;
  plan = run(at_utc(10, 11));  // rolloutTimeout (10m) after it was created
  EXPECT_NE(plan.at("ns-a/web").evict.failed.find("web-0 was not Ready 600s"), std::string::npos)
      << plan.at("ns-a/web").why;

  // The target control plane turns unhealthy: the wave goes on but evicts nothing.
  set_ready(0, true);
  view_.istio_operators.edit(1)["status"]["status"].SetString("ERROR");
  plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kInProgress);
  EXPECT_EQ(plan.at("ns-a/web").evict.next, "");
  EXPECT_NE(plan.at("ns-a/web").why.find("ERROR"), std::string::npos) << plan.at("ns-a/web").why;
}

TEST_F(EvictPlan, NotReadyDefersDryRunOnlyReportsAndZeroMaxUnavailableBlocks) {
  add_ready_deployment("ns-a", "web", {"default", "default", "default", "default"});
  set_ready(2, false);
  auto plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/web").why.find("web-2 to be Ready"), std::string::npos);

  set_ready(2, true);
  set_canary_restarts(R"({"mode":"DryRun","strategy":"Evict"})");
  plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kWouldRestart);
  EXPECT_NE(plan.at("ns-a/web").why.find("evicting pod web-0"), std::string::npos);

  set_canary_restarts(R"({"mode":"Auto","strategy":"Evict"})");
  add_ready_deployment("ns-a", "small", {"default", "default"});  // 25% of 2 is 0
  plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/small").action, Action::kBlocked);
  EXPECT_NE(plan.at("ns-a/small").why.find("spec.strategy.rollingUpdate.maxUnavailable"),
            std::string::npos)
      << plan.at("ns-a/small").why;
}

// minInterval (flap limit), on the same fixture: a Deployment web (4 Ready pods) all on the
// default revision while its namespace asks for canary (policy Auto).
class FlapPlan : public EvictPlan {
 protected:
  void SetUp() override {
    EvictPlan::SetUp();
    set_canary_restarts(R"({"mode":"Auto"})");
    add_ready_deployment("ns-a", "web", {"default", "default", "default", "default"});
  }
  // meshop's record on web's pod template: restarted at `at` for `cause`.
  void record(const std::string& at, const std::string& cause) {
    rapidjson::Document& web = view_.workloads.edit(web_index_);
    auto& a = web.GetAllocator();
    auto& meta = web["spec"]["template"]["metadata"];
    if (meta.HasMember("annotations")) meta.RemoveMember("annotations");
    rapidjson::Document ann =
        parse(R"({"kubectl.kubernetes.io/restartedAt":")" + at + R"(")" +
              (cause.empty() ? "" : R"(,"meshop.io/restart-cause":")" + cause + R"(")") + "}");
    meta.AddMember("annotations", rapidjson::Value().CopyFrom(ann, a), a);
  }
  std::size_t web_index_ = 0;  // the Deployment is the first workload
};

TEST_F(FlapPlan, RolloutInsideMinIntervalIsDeferredUntilItEnds) {
  // Restarted at 10:00 for a template change; the move to canary arrives at 10:04.
  record("2026-12-02T10:00:00Z", "TemplateChanged/default/abc");
  auto plan = run(at_utc(10, 4));
  const PlanEntry& web = plan.at("ns-a/web");
  EXPECT_EQ(web.action, Action::kDeferred) << web.why;
  EXPECT_EQ(web.cause, "RevisionChanged/canary");
  EXPECT_EQ(web.why,
            "restarted at 2026-12-02T10:00:00Z for TemplateChanged/default/abc; next at "
            "2026-12-02T10:10:00Z (minInterval 10m)");
  EXPECT_EQ(run(at_utc(10, 10)).at("ns-a/web").action, Action::kRestart);

  set_canary_restarts(R"({"mode":"Auto","minInterval":"1h"})");
  plan = run(at_utc(10, 30));
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred);
  EXPECT_NE(plan.at("ns-a/web").why.find("next at 2026-12-02T11:00:00Z"), std::string::npos)
      << plan.at("ns-a/web").why;
  set_canary_restarts(R"({"mode":"DryRun","minInterval":"1h"})");
  EXPECT_EQ(run(at_utc(10, 30)).at("ns-a/web").action, Action::kDeferred)
      << "DryRun shows the same gate";

  set_canary_restarts(R"({"mode":"Auto","minInterval":"0s"})");
  EXPECT_EQ(run(at_utc(10, 1)).at("ns-a/web").action, Action::kRestart) << "0s: no limit";
}

TEST_F(FlapPlan, OnlyMeshopsOwnRestartsCountAndTheSameCauseIsStillInProgress) {
  // `kubectl rollout restart` writes restartedAt without meshop's cause record.
  record("2026-12-02T10:00:00Z", "");
  EXPECT_EQ(run(at_utc(10, 1)).at("ns-a/web").action, Action::kRestart);
  // Restarted for this very cause a minute ago: its rollout is under way, not a flap.
  record("2026-12-02T10:00:00Z", "RevisionChanged/canary");
  EXPECT_EQ(run(at_utc(10, 1)).at("ns-a/web").action, Action::kInProgress);
}

TEST_F(FlapPlan, EvictTakesTheLastRestartFromTheCallersMemory) {
  set_canary_restarts(R"({"mode":"Auto","strategy":"Evict"})");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart) << "no wave remembered";
  options_.last_restarts["Deployment/ns-a/web"] = {at_utc(10, 0), "InjectionEnabled/default"};
  auto plan = run(soon_);  // 10:05
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred) << plan.at("ns-a/web").why;
  EXPECT_EQ(plan.at("ns-a/web").why,
            "restarted at 2026-12-02T10:00:00Z for InjectionEnabled/default; next at "
            "2026-12-02T10:10:00Z (minInterval 10m)");
  EXPECT_EQ(run(at_utc(10, 10)).at("ns-a/web").action, Action::kRestart);
  // The later of the template's record and the memory counts.
  record("2026-12-02T10:08:00Z", "TemplateChanged/default/abc");
  EXPECT_NE(run(at_utc(10, 10)).at("ns-a/web").why.find("next at 2026-12-02T10:18:00Z"),
            std::string::npos);
}

// Version gates and deadlines: web in ns-a runs proxies of 1.30 (default revision) while its
// namespace asks for canary, whose IstioOperator installs 1.31.
class GatePlan : public EvictPlan {
 protected:
  void SetUp() override {
    EvictPlan::SetUp();
    rapidjson::Document& canary = view_.istio_operators.edit(1);
    canary["spec"].AddMember("version", "1.31", canary.GetAllocator());
    std::string uid = "ns-a-web";
    std::string d = deployment("Deployment", "ns-a", R"({"app":"web"})");
    d.replace(d.find(R"("name":"w")"), 10, R"("name":"web")");
    view_.workloads.push_back(with_meta(d, "ns-a", uid));
    view_.workloads.push_back(
        with_meta(R"({"kind":"ReplicaSet","metadata":{"name":"web-1"},"spec":{}})", "ns-a",
                  uid + "-rs", "Deployment", uid));
    view_.pods.push_back(with_meta(pod("web-0", "default", "hub/proxyv2:1.30-dev.9739e10eb9d7"),
                                   "ns-a", uid + "-p0", "ReplicaSet", uid + "-rs"));
  }
  void annotate(rapidjson::Document& object, const std::string& key, const std::string& value) {
    auto& a = object.GetAllocator();
    auto& meta = object["metadata"];
    if (!meta.HasMember("annotations"))
      meta.AddMember("annotations", rapidjson::Value(rapidjson::kObjectType), a);
    auto& ann = meta["annotations"];
    if (ann.HasMember(key.c_str())) ann.RemoveMember(key.c_str());
    ann.AddMember(rapidjson::Value(key.c_str(), a), rapidjson::Value(value.c_str(), a), a);
  }
  rapidjson::Document& web() { return view_.workloads.edit(0); }
};

TEST_F(GatePlan, MinorMoveBeyondPatchSkewNeedsApproval) {
  set_canary_restarts(R"({"mode":"Auto","maxVersionSkew":"Patch"})");
  auto plan = run(soon_);
  const PlanEntry& e = plan.at("ns-a/web");
  EXPECT_EQ(e.action, Action::kApprovalNeeded) << e.why;
  EXPECT_EQ(e.current_version, "1.30") << "from the pod's proxy image tag";
  EXPECT_EQ(e.target_version, "1.31") << "from the canary IstioOperator's spec.version";
  EXPECT_EQ(e.why,
            "Istio 1.30 -> 1.31 exceeds maxVersionSkew Patch; approve with meshop restart approve "
            "Deployment/web -n ns-a");

  set_canary_restarts(R"({"mode":"DryRun","maxVersionSkew":"Patch"})");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kApprovalNeeded) << "DryRun shows the gate";
  set_canary_restarts(R"({"mode":"Auto","maxVersionSkew":"Minor"})");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart) << "1.30 -> 1.31 is one minor";
  set_canary_restarts(R"({"mode":"Auto"})");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart) << "default Any: today's plan";
}

TEST_F(GatePlan, ApprovalIsForTheTargetRevision) {
  set_canary_restarts(R"({"mode":"Auto","maxVersionSkew":"Patch"})");
  annotate(web(), "meshop.io/restart-approved", "other");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kApprovalNeeded)
      << "an approval of another revision does not count";
  annotate(web(), "meshop.io/restart-approved", "canary@1.30");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kApprovalNeeded)
      << "an approval of another version does not count";
  annotate(web(), "meshop.io/restart-approved", "canary@1.31");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart);
  annotate(web(), "meshop.io/restart-approved", "canary");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart);

  annotate(web(), "meshop.io/restart-approved", "");
  annotate(view_.istio_operators.edit(1), "meshop.io/restart-approved", "canary@1.31");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart)
      << "the IstioOperator's approval holds for all its workloads";
}

TEST_F(GatePlan, VersionsFallBackToSpecVersionAndTheBundledDefault) {
  set_canary_restarts(R"({"mode":"Auto","maxVersionSkew":"Patch"})");
  // A pod without a versioned image: the default revision's IstioOperator has no spec.version.
  rapidjson::Document& p = view_.pods.edit(0);
  p["spec"]["containers"][1]["image"].SetString("hub/proxyv2@sha256:abc");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart) << "unknown version: no gate";
  options_.default_istio_version = "1.31";
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kRestart) << "1.31 -> 1.31";
  options_.default_istio_version = "1.30";
  EXPECT_EQ(run(soon_).at("ns-a/web").current_version, "1.30");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kApprovalNeeded);
}

// A revision's version is what its IstioOperator installs: spec.installPackagePath renders a
// release's manifests/ of a version the plan cannot know (no gate), unless it names a bundled
// chart set; the bundled default only stands in when neither field is set.
TEST_F(GatePlan, InstallPackagePathIsNotTheBundledDefault) {
  set_canary_restarts(R"({"mode":"Auto","maxVersionSkew":"Patch"})");
  rapidjson::Document& p = view_.pods.edit(0);
  p["spec"]["containers"][1]["image"].SetString("hub/proxyv2@sha256:abc");
  options_.default_istio_version = "1.30";
  rapidjson::Document& def = view_.istio_operators.edit(0);
  ASSERT_EQ(api::string_at(def, {"spec", "revision"}), "") << "the default revision's";
  def["spec"].AddMember("installPackagePath", "/releases/istio-1.29/manifests", def.GetAllocator());
  PlanEntry e = run(soon_).at("ns-a/web");
  EXPECT_EQ(e.current_version, "") << "a release's manifests/ of an unknown version";
  EXPECT_EQ(e.action, Action::kRestart) << e.why;
  def["spec"]["installPackagePath"].SetString("bundled:1.30");
  e = run(soon_).at("ns-a/web");
  EXPECT_EQ(e.current_version, "1.30");
  EXPECT_EQ(e.action, Action::kApprovalNeeded);
}

TEST_F(GatePlan, OverdueRestartsOutsideTheWindowOnlyWhenAsked) {
  // Window 02:00-03:00; now 10:05. Stale since 10:00 recorded on the workload.
  annotate(web(), "meshop.io/stale-since", "2026-12-02T10:00:00Z RevisionChanged/canary");
  set_canary_restarts(
      R"({"mode":"Auto","maintenanceWindow":{"start":"02:00","end":"03:00"},"maxStaleness":"1h"})");
  auto plan = run(soon_);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred);
  EXPECT_FALSE(plan.at("ns-a/web").overdue);
  EXPECT_TRUE(plan.at("ns-a/web").stale_since_recorded);
  plan = run(at_utc(11, 1));
  EXPECT_TRUE(plan.at("ns-a/web").overdue);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred) << "overdue, but not asked to restart";

  set_canary_restarts(
      R"({"mode":"Auto","maintenanceWindow":{"start":"02:00","end":"03:00"},"maxStaleness":"1h",
      "restartAfterDeadline":true})");
  EXPECT_EQ(run(at_utc(10, 59)).at("ns-a/web").action, Action::kDeferred) << "before the deadline";
  plan = run(at_utc(11, 1));
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kRestart);
  EXPECT_EQ(plan.at("ns-a/web").why,
            "stale since 2026-12-02T10:00:00Z, past maxStaleness 1h: restarted outside the "
            "maintenance window");

  // A record of another cause: stale since now (the executor records the new cause).
  annotate(web(), "meshop.io/stale-since", "2026-12-01T10:00:00Z RevisionChanged/other");
  plan = run(at_utc(11, 1));
  EXPECT_FALSE(plan.at("ns-a/web").stale_since_recorded);
  EXPECT_FALSE(plan.at("ns-a/web").overdue);
  EXPECT_EQ(plan.at("ns-a/web").action, Action::kDeferred);
}

TEST_F(GatePlan, TheDeadlineDoesNotOpenOtherGates) {
  annotate(web(), "meshop.io/stale-since", "2026-12-01T10:00:00Z RevisionChanged/canary");
  set_canary_restarts(
      R"({"mode":"Auto","maintenanceWindow":{"start":"02:00","end":"03:00"},"maxStaleness":"1h",
      "restartAfterDeadline":true,"maxVersionSkew":"Patch"})");
  EXPECT_EQ(run(soon_).at("ns-a/web").action, Action::kApprovalNeeded);
  EXPECT_TRUE(run(soon_).at("ns-a/web").overdue);
}

// Everything a plan entry says, for comparing plans.
std::string describe(const PlanEntry& e) {
  // kind, namespace and name too: the memo keeps one verdict for every workload with the same.
  std::string out = e.plan.kind + "/" + e.plan.ns + "/" + e.plan.name + "|" +
                    std::string(action_name(e.action)) + "|" + e.why + "|" + e.cause + "|" +
                    e.policy_source + "|" + std::string(verdict_name(e.plan.verdict)) + "|" +
                    (e.plan.reason ? std::string(reason_name(*e.plan.reason)) : "-") + "|" +
                    e.plan.detail + "|" + e.plan.current_revision + "|" + e.plan.target_revision +
                    "|" + e.plan.current_proxy_image + "|" + e.plan.target_proxy_image + "|" +
                    e.plan.target_fingerprint + "|" + e.current_version + "|" + e.target_version +
                    "|" + (e.evict.next) + "|" + (e.stale_since_left ? "left" : "");
  for (const std::string& p : e.plan.stale_pods)
    out += "|" + p;
  return out;
}
std::map<std::string, std::string> describe(const std::map<std::string, PlanEntry>& plan) {
  std::map<std::string, std::string> out;
  for (const auto& [name, e] : plan)
    out[name] = describe(e);
  return out;
}

// The memo: a pass over unchanged objects plans as a pass without it, asking the engine nothing;
// a changed pod, namespace or engine key replans what it touches, and only that.
TEST_F(ClusterPlan, AMemoReusesUnchangedWorkloadsAndPlansAsWithout) {
  add_deployment("ns-a", "web", {"default", "default"});  // stale: RevisionChanged
  add_deployment("ns-b", "api", {"default", "default"});  // up to date
  add_deployment("ns-b", "db", {"default"});
  add_deployment("ns-c", "opt", {""});                // stale, opted out by its namespace
  add_deployment("ns-b", "empty", {});                // no pods
  rapidjson::Document bare = parse(pod("bare", ""));  // a bare pod: planned as itself
  bare["metadata"].AddMember("namespace", "ns-b", bare.GetAllocator());
  view_.pods.push_back(std::move(bare));
  const SystemTime now = std::chrono::system_clock::now();
  auto cold = describe(run(now));
  ASSERT_EQ(cold.size(), 6u);
  EXPECT_NE(cold.at("ns-a/web").find("Restart|"), std::string::npos) << cold.at("ns-a/web");

  PlanMemo memo;
  options_.memo = &memo;
  options_.desired_key = "engines-1";
  desired_calls_ = 0;
  EXPECT_EQ(describe(run(now)), cold);
  EXPECT_EQ(memo.misses(), 6u);
  EXPECT_EQ(memo.hits(), 0u);
  EXPECT_GT(desired_calls_, 0);
  EXPECT_EQ(memo.size(), 6u);

  desired_calls_ = 0;
  EXPECT_EQ(describe(run(now)), cold) << "warm";
  EXPECT_EQ(memo.hits(), 6u);
  EXPECT_EQ(memo.misses(), 0u);
  EXPECT_EQ(desired_calls_, 0) << "a warm pass over an unchanged view asks the engine nothing";

  // A pod of api now runs the canary revision: api is replanned (stale), nothing else.
  for (std::size_t i = 0; i < view_.pods.size(); ++i)
    if (api::string_at(view_.pods[i], {"metadata", "name"}) == "api-1") {
      rapidjson::Document replaced = parse(pod("api-1", "canary"));
      rapidjson::Document& p = view_.pods.edit(i);
      p["metadata"]["annotations"].CopyFrom(replaced["metadata"]["annotations"], p.GetAllocator());
    }
  auto changed = describe(run(now));
  EXPECT_EQ(memo.misses(), 1u);
  EXPECT_EQ(memo.hits(), 5u);
  EXPECT_NE(changed.at("ns-b/api"), cold.at("ns-b/api"));
  EXPECT_NE(changed.at("ns-b/api").find("RevisionChanged"), std::string::npos)
      << changed.at("ns-b/api");
  options_.memo = nullptr;
  EXPECT_EQ(describe(run(now)), changed) << "the memo's answer is the fresh one";
  options_.memo = &memo;

  // Namespace ns-c no longer opts out: its workload is replanned.
  view_.namespaces.edit(2)["metadata"]["annotations"].RemoveMember("meshop.io/restart");
  auto relabelled = describe(run(now));
  EXPECT_EQ(memo.misses(), 1u);
  EXPECT_EQ(relabelled.at("ns-c/opt").find("Skipped"), std::string::npos)
      << relabelled.at("ns-c/opt");

  // Another engine configuration: everything is replanned.
  options_.desired_key = "engines-2";
  desired_calls_ = 0;
  EXPECT_EQ(describe(run(now)), relabelled);
  EXPECT_EQ(memo.misses(), 6u);
  EXPECT_GT(desired_calls_, 0);

  // A workload gone is forgotten by the next plan.
  view_.workloads = ObjectList();
  (void)run(now);
  EXPECT_EQ(memo.size(), 1u) << "only the bare pod is left to plan";
}

}  // namespace
}  // namespace meshop::restart
