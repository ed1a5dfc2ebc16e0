#include "operator/restart/check.hpp"

#include <map>

#include <gtest/gtest.h>

#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

// A cluster with Istio's webhooks for the default revision and a canary revision, and
// namespaces labelled as each test needs; the engines inject every routed pod with the proxy
// image of `images_` (a revision missing there has no engine).
class Check : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector", "default", "default", true)));
    view_.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false)));
  }
  void add_namespace(const std::string& name, const std::string& labels) {
    view_.namespaces.push_back(
        parse(R"({"metadata":{"name":")" + name + R"(","labels":)" + labels + "}}"));
  }
  // A Deployment with its ReplicaSet and one pod per entry of `pods` (revision, "" = none;
  // image of its proxy).
  void add_deployment(const std::string& ns, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& pods,
                      const std::string& template_labels = "{}") {
    std::string uid = ns + "-" + name;
    std::string d = deployment("Deployment", ns, template_labels);
    d.replace(d.find(R"("name":"w")"), 10, R"("name":")" + name + R"(")");
    view_.workloads.push_back(with_meta(d, ns, uid));
    view_.workloads.push_back(
        with_meta(R"({"kind":"ReplicaSet","metadata":{"name":")" + name + R"(-1"},"spec":{}})", ns,
                  uid + "-rs", "Deployment", uid));
    for (std::size_t i = 0; i < pods.size(); ++i)
      view_.pods.push_back(
          with_meta(pod(name + "-" + std::to_string(i), pods[i].first, pods[i].second), ns,
                    uid + "-p" + std::to_string(i), "ReplicaSet", uid + "-rs"));
  }
  api::Result<CheckReport> run(const std::string& ns, const std::string& pod_name = "") {
    DesiredFn fn = [this](const std::string& revision,
                          const rapidjson::Value&) -> std::optional<Desired> {
      auto it = images_.find(revision);
      if (it == images_.end()) return std::nullopt;
      Desired d;
      d.inject = true;
      d.revision = revision;
      d.proxy_image = it->second;
      return d;
    };
    plan_ = plan_cluster(view_, fn, std::chrono::system_clock::now());
    return check(view_, plan_, fn, CheckTarget{ns, pod_name});
  }
  static const Finding* find(const CheckReport& r, const std::string& name) {
    for (const Finding& f : r.findings)
      if (f.name == name) return &f;
    return nullptr;
  }
  static const WebhookVerdict& row(const CheckReport& r, const std::string& configuration) {
    for (const WebhookVerdict& w : r.webhooks)
      if (w.configuration == configuration) return w;
    ADD_FAILURE() << "no row for " << configuration;
    static WebhookVerdict none;
    return none;
  }

  ClusterView view_;
  std::vector<PlanEntry> plan_;
  std::map<std::string, std::string> images_ = {{"default", "hub/proxyv2:1.0"},
                                                {"canary", "hub/proxyv2:1.1"}};
};

TEST_F(Check, RevisionLabelIsServedByTheRevisionsNamespaceEntry) {
  add_namespace("demo", R"({"istio.io/rev":"canary"})");
  add_deployment("demo", "web", {{"canary", "hub/proxyv2:1.1"}});
  auto r = run("demo");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->injected);
  EXPECT_EQ(r->revision, "canary");
  EXPECT_EQ(r->configuration, "istio-sidecar-injector-canary");
  EXPECT_EQ(r->entry, "rev.namespace.sidecar-injector.istio.io");
  EXPECT_TRUE(row(*r, "istio-sidecar-injector-canary").injects);
  EXPECT_EQ(row(*r, "istio-sidecar-injector-canary").reason,
            "Namespace label istio.io/rev=canary matches");
  EXPECT_FALSE(row(*r, "istio-sidecar-injector").injects);
  ASSERT_EQ(r->workloads.size(), 1u);
  EXPECT_EQ(r->workloads[0].verdict, Verdict::kUpToDate);
  EXPECT_EQ(r->workloads[0].sidecars, std::vector<std::string>{"canary"});
  EXPECT_TRUE(r->findings.empty());
  EXPECT_TRUE(r->ok());
}

TEST_F(Check, UnlabelledNamespaceIsNotInjectedAndOnlyInformational) {
  add_namespace("plain", "{}");
  auto r = run("plain");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->injected);
  const Finding* f = find(*r, "NamespaceNotInjected");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0102");
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("kubectl label namespace plain istio-injection=enabled"),
            std::string::npos);
  EXPECT_NE(r->why.find("no injector webhook selects it"), std::string::npos) << r->why;
  EXPECT_EQ(row(*r, "istio-sidecar-injector").reason,
            "No matching namespace labels (istio.io/rev=default, istio-injection=enabled) or pod "
            "labels (istio.io/rev=default, sidecar.istio.io/inject=true)");
  EXPECT_TRUE(r->ok());
}

TEST_F(Check, DisabledNamespaceSaysWhichLabelPreventsInjection) {
  add_namespace("off", R"({"istio-injection":"disabled"})");
  auto r = run("off");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->injected);
  EXPECT_EQ(r->why, "Namespace has istio-injection=disabled label, preventing injection");
  EXPECT_EQ(find(*r, "NamespaceNotInjected"), nullptr);  // an explicit opt-out
  EXPECT_TRUE(r->ok());
}

TEST_F(Check, LegacyAndRevisionLabelsTogetherAreIST0123) {
  add_namespace("both", R"({"istio-injection":"enabled","istio.io/rev":"canary"})");
  auto r = run("both");
  ASSERT_TRUE(r.ok());
  // istio-injection wins in Istio's selectors.
  EXPECT_TRUE(r->injected);
  EXPECT_EQ(r->revision, "default");
  EXPECT_EQ(r->entry, "namespace.sidecar-injector.istio.io");
  const Finding* f = find(*r, "NamespaceMultipleInjectionLabels");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0123");
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("istio-injection=enabled istio.io/rev=canary"), std::string::npos);
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, DisabledLegacyLabelWithRevisionIsNotAConflict) {
  // Istio's analyzer counts istio.io/rev only while istio-injection is absent or enabled.
  add_namespace("ns", R"({"istio-injection":"disabled","istio.io/rev":"canary"})");
  auto r = run("ns");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(find(*r, "NamespaceMultipleInjectionLabels"), nullptr);
  EXPECT_FALSE(r->injected);
}

TEST_F(Check, TwoConfigurationsInjectingTheSameNamespaceAreIST0139) {
  // A second default-style configuration (a tag "default" next to the default revision's own,
  // neither deactivated): both namespace. entries select istio-injection=enabled.
  view_.webhook_configurations.push_back(
      parse(configuration("istio-revision-tag-default", "canary", "default", true, "default")));
  add_namespace("twice", R"({"istio-injection":"enabled"})");
  auto r = run("twice");
  ASSERT_TRUE(r.ok());
  const Finding* f = find(*r, "InvalidWebhook");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0139");
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("istio-revision-tag-default/namespace.sidecar-injector.istio.io"),
            std::string::npos);
  EXPECT_NE(f->message.find("istio-sidecar-injector/namespace.sidecar-injector.istio.io"),
            std::string::npos);
  EXPECT_EQ(r->findings.front().severity, Severity::kError);  // errors first
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, StaleProxyImageIsIST0158WithTheRestartAction) {
  add_namespace("old", R"({"istio-injection":"enabled"})");
  add_deployment("old", "web", {{"default", "hub/proxyv2:0.9"}, {"default", "hub/proxyv2:1.0"}});
  view_.control_plane_deployments.push_back(parse(
      R"({"metadata":{"name":"istiod","namespace":"istio-system"},"status":{"availableReplicas":1}})"));
  auto r = run("old");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->workloads.size(), 1u);
  const WorkloadVerdict& w = r->workloads[0];
  EXPECT_EQ(w.verdict, Verdict::kStale);
  EXPECT_EQ(w.reason, "ProxyImageChanged");
  EXPECT_EQ(w.pods, 2u);
  EXPECT_EQ(w.action, Action::kWouldRestart);  // no IstioOperator: the default policy, DryRun
  EXPECT_EQ(w.stale_pods, std::vector<std::string>{"web-0"});
  const Finding* f = find(*r, "PodsIstioProxyImageMismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0158");
  EXPECT_EQ(f->object, "Deployment/old/web");
  EXPECT_NE(f->message.find("hub/proxyv2:0.9"), std::string::npos);
  EXPECT_NE(f->message.find("meshop restart: WouldRestart"), std::string::npos);
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, PodWithoutTheSidecarItsRevisionInjectsIsIST0103) {
  add_namespace("new", R"({"istio.io/rev":"canary"})");
  add_deployment("new", "api", {{"", ""}});
  auto r = run("new");
  ASSERT_TRUE(r.ok());
  const Finding* f = find(*r, "PodMissingProxy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0103");
  EXPECT_EQ(r->workloads[0].sidecars, std::vector<std::string>{"none"});
}

TEST_F(Check, RevisionMoveIsAStaleSidecar) {
  add_namespace("moved", R"({"istio.io/rev":"canary"})");
  add_deployment("moved", "web", {{"default", "hub/proxyv2:1.0"}});
  auto r = run("moved");
  ASSERT_TRUE(r.ok());
  const Finding* f = find(*r, "StaleSidecar");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "");
  EXPECT_EQ(r->workloads[0].reason, "RevisionChanged");
  EXPECT_EQ(r->workloads[0].target_revision, "canary");
}

TEST_F(Check, PodCheckLooksAtThatPodAndItsWorkload) {
  add_namespace("old", R"({"istio-injection":"enabled"})");
  add_deployment("old", "web", {{"default", "hub/proxyv2:0.9"}, {"default", "hub/proxyv2:1.0"}});
  add_deployment("old", "other", {{"default", "hub/proxyv2:0.9"}});

  auto stale = run("old", "web-0");
  ASSERT_TRUE(stale.ok()) << stale.message();
  EXPECT_TRUE(stale->pod_injected);
  EXPECT_EQ(stale->pod_revision, "default");
  EXPECT_EQ(stale->pod_proxy_image, "hub/proxyv2:0.9");
  ASSERT_EQ(stale->workloads.size(), 1u);  // its Deployment only, not "other"
  EXPECT_EQ(stale->workloads[0].name, "web");
  const Finding* f = find(*stale, "PodsIstioProxyImageMismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->object, "Pod/old/web-0");
  EXPECT_FALSE(stale->ok());

  auto fresh = run("old", "web-1");
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->findings.empty());
  EXPECT_TRUE(fresh->ok());
}

TEST_F(Check, PodOptOutLabelPreventsInjection) {
  add_namespace("demo", R"({"istio-injection":"enabled"})");
  add_deployment("demo", "batch", {{"", ""}}, R"({"sidecar.istio.io/inject":"false"})");
  auto r = run("demo", "batch-0");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->injected);
  EXPECT_EQ(r->why, "Pod has sidecar.istio.io/inject=false label, preventing injection");
  EXPECT_TRUE(r->ok());
}

TEST_F(Check, PodLabelInjectsInAnUnlabelledNamespace) {
  add_namespace("plain", "{}");
  add_deployment("plain", "one", {{"canary", "hub/proxyv2:1.1"}}, R"({"istio.io/rev":"canary"})");
  auto r = run("plain", "one-0");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->injected);
  EXPECT_EQ(r->entry, "rev.object.sidecar-injector.istio.io");
  EXPECT_EQ(row(*r, "istio-sidecar-injector-canary").reason,
            "Pod label istio.io/rev=canary matches");
  EXPECT_EQ(find(*r, "NamespaceNotInjected"), nullptr);
  EXPECT_TRUE(r->ok());
}

TEST_F(Check, RevisionLabelNamingNothingIsReported) {
  add_namespace("typo", R"({"istio.io/rev":"canry"})");
  auto r = run("typo");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->injected);
  const Finding* f = find(*r, "RevisionNotFound");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("istio.io/rev=canry"), std::string::npos);
  EXPECT_NE(f->message.find("canary, default"), std::string::npos);
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, RevisionWithoutEngineIsAnError) {
  images_.erase("canary");
  add_namespace("demo", R"({"istio.io/rev":"canary"})");
  add_deployment("demo", "web", {{"canary", "hub/proxyv2:1.1"}});
  auto r = run("demo");
  ASSERT_TRUE(r.ok());
  const Finding* f = find(*r, "UnknownRevision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("istio-sidecar-injector-canary"), std::string::npos);
  int unknown = 0;
  for (const Finding& x : r->findings)
    unknown += x.name == "UnknownRevision";
  EXPECT_EQ(unknown, 1);  // the namespace's, not once more for its Deployment
}

TEST_F(Check, NoInjectorWebhooksIsAnError) {
  view_.webhook_configurations.clear();
  add_namespace("demo", "{}");
  auto r = run("demo");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->injected);
  EXPECT_TRUE(r->webhooks.empty());
  const Finding* f = find(*r, "NoInjectionWebhooks");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(r->findings.size(), 1u);
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, AutoEntryIsAutomaticInjectionButANamespaceListIsNot) {
  // enableNamespacesByDefault: Istio's auto. entry.
  rapidjson::Document& mwc = view_.webhook_configurations.edit(0);
  rapidjson::Document hook = parse(
      entry("auto.sidecar-injector.istio.io",
            expr("istio-injection", "DoesNotExist") + "," + expr("istio.io/rev", "DoesNotExist") +
                "," + expr("kubernetes.io/metadata.name", "NotIn", R"("kube-system")"),
            expr("sidecar.istio.io/inject", "DoesNotExist") + "," +
                expr("istio.io/rev", "DoesNotExist")));
  rapidjson::Value copy;
  copy.CopyFrom(hook, mwc.GetAllocator());
  mwc["webhooks"].PushBack(copy, mwc.GetAllocator());
  add_namespace("plain", R"({"kubernetes.io/metadata.name":"plain"})");
  auto r = run("plain");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->injected);
  EXPECT_EQ(r->entry, "auto.sidecar-injector.istio.io");
  EXPECT_EQ(row(*r, "istio-sidecar-injector").reason,
            "Namespace label kubernetes.io/metadata.name=plain matches (automatic injection is "
            "enabled in all namespaces)");
  EXPECT_EQ(find(*r, "NamespaceNotInjected"), nullptr);

  // Entries limited to a list of namespaces name the injection label, not the list.
  view_.webhook_configurations.clear();
  view_.webhook_configurations.push_back(
      parse(R"({"metadata":{"name":"limited","labels":{"istio.io/rev":"default"}},"webhooks":[)" +
            entry("namespace.sidecar-injector.istio.io",
                  expr("kubernetes.io/metadata.name", "In", R"("demo")") + "," +
                      expr("istio-injection", "In", R"("enabled")"),
                  expr("sidecar.istio.io/inject", "NotIn", R"("false")")) +
            "]}"));
  add_namespace("demo", R"({"kubernetes.io/metadata.name":"demo","istio-injection":"enabled"})");
  r = run("demo");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(row(*r, "limited").reason, "Namespace label istio-injection=enabled matches");
}

TEST_F(Check, DeactivatedWebhookSaysSo) {
  view_.webhook_configurations.push_back(parse(R"({"metadata":{"name":"istio-sidecar-injector-old",
    "labels":{"istio.io/rev":"old"}},"webhooks":[{"name":"rev.namespace.sidecar-injector.istio.io",
    "namespaceSelector":{"matchLabels":{"istio.io/deactivated":"never-match"}},
    "objectSelector":{"matchLabels":{"istio.io/deactivated":"never-match"}}}]})"));
  add_namespace("demo", R"({"istio.io/rev":"canary"})");
  auto r = run("demo");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(row(*r, "istio-sidecar-injector-old").reason,
            "The injection webhook is deactivated, and will never match labels");
}

TEST_F(Check, BarePodIsItsOwnWorkloadAndNeedsAManualRestart) {
  add_namespace("old", R"({"istio-injection":"enabled"})");
  // As the CLI lists pods: with their kind set (load_cluster_view).
  rapidjson::Document lonely =
      with_meta(pod("lonely", "default", "hub/proxyv2:0.9"), "old", "u-lonely");
  lonely.AddMember("kind", "Pod", lonely.GetAllocator());
  view_.pods.push_back(std::move(lonely));
  auto r = run("old", "lonely");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->workloads.size(), 1u);
  EXPECT_EQ(r->workloads[0].kind, "Pod");
  EXPECT_EQ(r->workloads[0].action, Action::kManual);
  const Finding* f = find(*r, "PodsIstioProxyImageMismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("meshop restart: ManualRestartNeeded"), std::string::npos)
      << f->message;
}

TEST_F(Check, SelectorThatDoesNotParseIsIST0139) {
  view_.webhook_configurations.push_back(parse(R"({"metadata":{"name":"broken",
    "labels":{"istio.io/rev":"x"}},"webhooks":[{"name":"rev.namespace.sidecar-injector.istio.io",
    "namespaceSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}]})"));
  add_namespace("demo", "{}");
  auto r = run("demo");
  ASSERT_TRUE(r.ok());
  const Finding* f = find(*r, "InvalidWebhook");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->code, "IST0139");
  EXPECT_NE(f->message.find("broken"), std::string::npos) << f->message;
  EXPECT_NE(r->why.find("do not parse"), std::string::npos);
  EXPECT_FALSE(r->ok());
}

TEST_F(Check, UnknownNamespaceOrPodIsAnError) {
  add_namespace("demo", "{}");
  auto ns = run("nope");
  ASSERT_FALSE(ns.ok());
  EXPECT_EQ(ns.message(), "namespace \"nope\" not found");
  auto p = run("demo", "ghost");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.message(), "pod \"ghost\" not found in namespace \"demo\"");
}

}  // namespace
}  // namespace meshop::restart
