#include "operator/restart/planner.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

class Routes : public ::testing::Test {
 protected:
  void SetUp() override {
    configs_ =
        parse("[" + configuration("istio-sidecar-injector", "default", "default", true) + "," +
              configuration("istio-sidecar-injector-canary", "canary", "canary", false) + "," +
              configuration("istio-revision-tag-prod", "canary", "prod", false, "prod") +
              R"(,{"metadata":{"name":"unrelated"},"webhooks":[{"name":"x.example.com"}]}])");
    auto e = injector_entries(configs_);
    ASSERT_TRUE(e.ok()) << e.message();
    entries_ = std::move(*e);
  }
  std::vector<std::string> revisions(const std::string& ns_labels, const std::string& pod_labels) {
    rapidjson::Document ns = parse(ns_labels), pod = parse(pod_labels);
    return route(entries_, &ns, &pod).revisions;
  }
  using Revs = std::vector<std::string>;

  rapidjson::Document configs_;
  std::vector<InjectorEntry> entries_;
};

TEST_F(Routes, OnlyIstioInjectorEntriesInNameOrder) {
  ASSERT_EQ(entries_.size(), 8u);
  EXPECT_EQ(entries_[0].configuration, "istio-revision-tag-prod");
  EXPECT_EQ(entries_[0].revision, "canary");
  EXPECT_EQ(entries_[0].tag, "prod");
  EXPECT_EQ(entries_[2].configuration, "istio-sidecar-injector");
  EXPECT_EQ(entries_[7].configuration, "istio-sidecar-injector-canary");
}

TEST_F(Routes, IstioSelectorMatrix) {
  EXPECT_EQ(revisions(R"({"istio-injection":"enabled"})", "{}"), Revs{"default"});
  EXPECT_EQ(revisions(R"({"istio.io/rev":"canary"})", "{}"), Revs{"canary"});
  EXPECT_EQ(revisions(R"({"istio.io/rev":"default"})", "{}"), Revs{"default"});
  // istio-injection beats istio.io/rev.
  EXPECT_EQ(revisions(R"({"istio-injection":"enabled","istio.io/rev":"canary"})", "{}"),
            Revs{"default"});
  EXPECT_EQ(revisions(R"({"istio-injection":"disabled","istio.io/rev":"canary"})", "{}"), Revs{});
  // Unlabelled namespace: only pods that ask.
  EXPECT_EQ(revisions("{}", "{}"), Revs{});
  EXPECT_EQ(revisions("{}", R"({"sidecar.istio.io/inject":"true"})"), Revs{"default"});
  EXPECT_EQ(revisions("{}", R"({"istio.io/rev":"canary"})"), Revs{"canary"});
  // Opt-out label wins everywhere.
  EXPECT_EQ(revisions(R"({"istio-injection":"enabled"})", R"({"sidecar.istio.io/inject":"false"})"),
            Revs{});
  EXPECT_EQ(revisions(R"({"istio.io/rev":"canary"})", R"({"sidecar.istio.io/inject":"false"})"),
            Revs{});
}

TEST_F(Routes, TagRoutesToItsRevision) {
  EXPECT_EQ(revisions(R"({"istio.io/rev":"prod"})", "{}"), Revs{"canary"});
  EXPECT_EQ(revisions("{}", R"({"istio.io/rev":"prod"})"), Revs{"canary"});
  EXPECT_EQ(revisions(R"({"istio.io/rev":"unknown"})", "{}"), Revs{});
}

TEST_F(Routes, BadSelectorIsAnErrorNamingConfigurationAndField) {
  rapidjson::Document bad = parse(
      R"([{"metadata":{"name":"broken","labels":{"istio.io/rev":"x"}},"webhooks":[
      {"name":"rev.namespace.sidecar-injector.istio.io",
       "namespaceSelector":{"matchExpressions":[{"key":"a","operator":"Sometimes"}]}}]}])");
  auto e = injector_entries(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("broken"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("namespaceSelector"), std::string::npos) << e.message();
}

// --- planner ---------------------------------------------------------------------------

class Planner : public Routes {
 protected:
  // The engines: every known revision injects unless the pod template opts out by the
  // annotation the engine reads; images per revision.
  DesiredFn engines() {
    return
        [this](const std::string& revision, const rapidjson::Value& p) -> std::optional<Desired> {
          ++engine_calls_;
          EXPECT_FALSE(api::string_at(p, {"metadata", "namespace"}).empty());
          auto it = images_.find(revision);
          if (it == images_.end()) return std::nullopt;
          Desired d;
          d.inject =
              api::string_at(p, {"metadata", "annotations", "sidecar.istio.io/inject"}) != "false";
          d.revision = revision;
          d.proxy_image = it->second;
          d.fingerprint = fingerprint_;
          if (!d.inject) d.why = "annotation_false";
          return d;
        };
  }
  WorkloadPlan plan(const std::string& workload, const std::string& ns_labels,
                    const std::vector<std::string>& pods, PlanOptions options = {}) {
    workload_ = parse(workload);
    ns_labels_ = parse(ns_labels);
    pods_.clear();
    for (const std::string& p : pods)
      pods_.push_back(parse(p));
    std::vector<const rapidjson::Value*> ptrs;
    for (const auto& p : pods_)
      ptrs.push_back(&p);
    return plan_workload(workload_, &ns_labels_, entries_, ptrs, engines(), options);
  }

  std::map<std::string, std::string> images_{{"default", "hub/proxyv2:1.0"},
                                             {"canary", "hub/proxyv2:1.1"}};
  std::string fingerprint_ = "f2";
  int engine_calls_ = 0;
  rapidjson::Document workload_, ns_labels_;
  std::vector<rapidjson::Document> pods_;
};

TEST_F(Planner, RelabelledNamespaceMakesRevisionChanged) {
  auto p = plan(deployment("Deployment", "ns1"), R"({"istio.io/rev":"canary"})",
                {pod("w-1", "default"), pod("w-2", "default")});
  EXPECT_EQ(p.verdict, Verdict::kStale);
  ASSERT_TRUE(p.reason);
  EXPECT_EQ(*p.reason, StaleReason::kRevisionChanged);
  EXPECT_EQ(p.current_revision, "default");
  EXPECT_EQ(p.target_revision, "canary");
  EXPECT_NE(p.detail.find("w-1"), std::string::npos);
}

TEST_F(Planner, MatchingPodsAreUpToDate) {
  auto p = plan(deployment("Deployment", "ns1"), R"({"istio.io/rev":"canary"})",
                {pod("w-1", "canary", "hub/proxyv2:1.1")});
  EXPECT_EQ(p.verdict, Verdict::kUpToDate);
  EXPECT_FALSE(p.reason);
  EXPECT_EQ(p.target_revision, "canary");
}

TEST_F(Planner, OnlyOneStalePodIsEnough) {
  auto p = plan(deployment("StatefulSet", "ns1"), R"({"istio.io/rev":"canary"})",
                {pod("w-0", "canary", "hub/proxyv2:1.1"), pod("w-1", "default")});
  EXPECT_EQ(p.verdict, Verdict::kStale);
  EXPECT_EQ(*p.reason, StaleReason::kRevisionChanged);
  EXPECT_NE(p.detail.find("w-1"), std::string::npos);
}

TEST_F(Planner, EnablingAndDisablingInjection) {
  auto on =
      plan(deployment("Deployment", "ns1"), R"({"istio-injection":"enabled"})", {pod("w-1", "")});
  EXPECT_EQ(*on.reason, StaleReason::kInjectionEnabled);
  EXPECT_EQ(on.current_revision, "");
  EXPECT_EQ(on.target_revision, "default");

  auto off = plan(deployment("Deployment", "ns1"), "{}", {pod("w-1", "default")});
  EXPECT_EQ(*off.reason, StaleReason::kInjectionDisabled);
  EXPECT_EQ(off.target_revision, "");

  // The pod template opts out: the webhook is called but the engine skips.
  auto opt_out =
      plan(R"({"kind":"Deployment","metadata":{"name":"w","namespace":"n"},"spec":{"template":
      {"metadata":{"annotations":{"sidecar.istio.io/inject":"false"}},"spec":{"containers":[]}}}})",
           R"({"istio-injection":"enabled"})", {pod("w-1", "default")});
  EXPECT_EQ(*opt_out.reason, StaleReason::kInjectionDisabled);
  EXPECT_NE(opt_out.detail.find("annotation_false"), std::string::npos);
}

TEST_F(Planner, ProxyImageAndTemplateChanges) {
  images_["default"] = "hub/proxyv2:1.0.1";
  auto img = plan(deployment("DaemonSet", "ns1"), R"({"istio-injection":"enabled"})",
                  {pod("w-1", "default", "hub/proxyv2:1.0")});
  EXPECT_EQ(*img.reason, StaleReason::kProxyImageChanged);

  images_["default"] = "hub/proxyv2:1.0";
  std::vector<std::string> pods = {pod("w-1", "default", "hub/proxyv2:1.0", "f1")};
  auto ignored = plan(deployment("Deployment", "ns1"), R"({"istio-injection":"enabled"})", pods);
  EXPECT_EQ(ignored.verdict, Verdict::kUpToDate) << "template changes are opt-in";
  PlanOptions opt_in;
  opt_in.include_template_changes = true;
  auto tmpl =
      plan(deployment("Deployment", "ns1"), R"({"istio-injection":"enabled"})", pods, opt_in);
  EXPECT_EQ(*tmpl.reason, StaleReason::kTemplateChanged);
  // Unknown fingerprints never count as a change.
  auto unknown = plan(deployment("Deployment", "ns1"), R"({"istio-injection":"enabled"})",
                      {pod("w-1", "default")}, opt_in);
  EXPECT_EQ(unknown.verdict, Verdict::kUpToDate);
}

TEST_F(Planner, JobsCronJobsAndPodsAreManual) {
  for (std::string kind : {"Job", "CronJob"}) {
    auto p = plan(deployment(kind, "ns1"), R"({"istio.io/rev":"canary"})", {pod("w-1", "default")});
    EXPECT_EQ(p.verdict, Verdict::kManual) << kind;
    EXPECT_EQ(*p.reason, StaleReason::kRevisionChanged) << kind;
  }
  std::string bare =
      R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns1"},"spec":{"containers":[]}})";
  auto p = plan(bare, R"({"istio-injection":"enabled"})", {bare});
  EXPECT_EQ(p.verdict, Verdict::kManual);
  EXPECT_EQ(*p.reason, StaleReason::kInjectionEnabled);
}

TEST_F(Planner, UnknownRevisionAndConflictsRestartNothing) {
  images_.erase("canary");
  auto unknown = plan(deployment("Deployment", "ns1"), R"({"istio.io/rev":"canary"})",
                      {pod("w-1", "default")});
  EXPECT_EQ(unknown.verdict, Verdict::kUnknownRevision);
  EXPECT_FALSE(unknown.reason);

  // A second configuration that also claims istio-injection=enabled namespaces.
  std::string second = configuration("zz-other", "other", "other", true);
  configs_ = parse("[" + configuration("istio-sidecar-injector", "default", "default", true) + "," +
                   second + "]");
  entries_ = *injector_entries(configs_);
  int calls = engine_calls_;
  auto conflict =
      plan(deployment("Deployment", "ns1"), R"({"istio-injection":"enabled"})", {pod("w-1", "")});
  EXPECT_EQ(conflict.verdict, Verdict::kConflict);
  EXPECT_NE(conflict.detail.find("other"), std::string::npos);
  EXPECT_EQ(engine_calls_, calls) << "no engine runs for a conflict";
}

TEST_F(Planner, FailingInjectionRestartsNothing) {
  DesiredFn failing = [](const std::string& revision, const rapidjson::Value&) {
    Desired d;
    d.inject = true;
    d.revision = revision;
    d.fails = true;
    d.why = "invalid annotation sidecar.istio.io/interceptionMode";
    return std::optional<Desired>(d);
  };
  rapidjson::Document w = parse(deployment("Deployment", "ns1"));
  rapidjson::Document ns = parse(R"({"istio.io/rev":"canary"})");
  rapidjson::Document p = parse(pod("w-1", "default"));
  auto plan = plan_workload(w, &ns, entries_, {&p}, failing);
  EXPECT_EQ(plan.verdict, Verdict::kInjectionFails);
  EXPECT_NE(plan.detail.find("interceptionMode"), std::string::npos);
}

TEST_F(Planner, NoPodsIsNotStale) {
  auto p = plan(deployment("Deployment", "ns1"), R"({"istio.io/rev":"canary"})", {});
  EXPECT_EQ(p.verdict, Verdict::kUpToDate);
  EXPECT_EQ(p.detail, "no pods");
}

}  // namespace
}  // namespace meshop::restart
