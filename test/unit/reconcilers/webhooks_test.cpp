// The pure part of the webhooks reconciler: which MutatingWebhookConfigurations meshop wants
// for a set of IstioOperators and live configurations, checked entry by entry and through
// the apiserver's selector evaluation (restart::route), and the up-to-date comparison.
#include "reconcilers/webhooks.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "operator/restart/webhook_routes.hpp"

namespace meshop::reconcilers {
namespace {

api::Document parse(const std::string& s) {
  auto d = api::parse_json(s);
  EXPECT_TRUE(d) << d.message() << "\n" << s;
  return std::move(*d);
}

// An IstioOperator named `name` in istio-system, created at second `age` of the day.
std::string iop(const std::string& name, const std::string& revision, int age,
                const std::string& values = "{}", const std::string& extra_meta = "") {
  std::string spec = R"({"values":)" + values;
  if (!revision.empty()) spec += R"(,"revision":")" + revision + "\"";
  spec += "}";
  char created[32];
  std::snprintf(created, sizeof created, "2026-01-01T00:00:%02dZ", age);
  return R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{"name":")" +
         name + R"(","namespace":"istio-system","creationTimestamp":")" + created + "\"" +
         extra_meta + R"(},"spec":)" + spec + "}";
}

class WebhooksDesired : public ::testing::Test {
 protected:
  void add_iop(const std::string& json) { iops_.push_back(parse(json)); }
  void add_live(const std::string& json) { live_.push_back(parse(json)); }
  DesiredWebhooks compute(std::optional<std::string> bundle = std::string("Q0FCVU5ETEU="),
                          WebhookRenderCache* cache = nullptr) {
    WebhookObservation o;
    for (const auto& d : iops_)
      o.istio_operators.push_back(&d);
    for (const auto& d : live_)
      o.configurations.push_back(&d);
    o.ca_bundle = std::move(bundle);
    return compute_desired_webhooks(config_, o, cache);
  }
  static const DesiredWebhook* find(const DesiredWebhooks& d, const std::string& name) {
    for (const auto& w : d.webhooks)
      if (w.name == name) return &w;
    return nullptr;
  }
  static std::vector<std::string> entry_names(const rapidjson::Value& mwc) {
    std::vector<std::string> out;
    for (const auto& h : mwc["webhooks"].GetArray())
      out.push_back(api::string_at(h, {"name"}));
    return out;
  }
  static std::vector<std::string> names(const DesiredWebhooks& d) {
    std::vector<std::string> out;
    for (const auto& w : d.webhooks)
      out.push_back(w.name);
    return out;
  }
  // Which revision the apiserver would call for a pod, given these configurations.
  static std::vector<std::string> route(const DesiredWebhooks& d, const std::string& ns_labels,
                                        const std::string& pod_labels) {
    api::Document list(rapidjson::kArrayType);
    for (const auto& w : d.webhooks) {
      rapidjson::Value copy;
      copy.CopyFrom(w.object, list.GetAllocator());
      list.PushBack(copy, list.GetAllocator());
    }
    auto entries = restart::injector_entries(list);
    EXPECT_TRUE(entries) << entries.message();
    auto ns = parse(ns_labels);
    auto pod = parse(pod_labels);
    return restart::route(*entries, &ns, &pod).revisions;
  }
  static std::vector<std::string> reasons(const DesiredWebhooks& d) {
    std::vector<std::string> out;
    for (const auto& p : d.problems)
      out.push_back(p.iop + " " + p.reason);
    return out;
  }

  WebhooksConfig config_;
  std::vector<api::Document> iops_;
  std::vector<api::Document> live_;
};

using Names = std::vector<std::string>;

TEST_F(WebhooksDesired, DefaultRevisionHasUpstreamEntriesAndPointsAtMeshopService) {
  add_iop(iop("main", "", 1));
  auto d = compute();
  ASSERT_EQ(names(d), Names{"istio-sidecar-injector"})
      << ::testing::PrintToString(d.problems.empty() ? std::string() : d.problems[0].message);
  const auto& mwc = d.webhooks[0].object;
  EXPECT_EQ(
      entry_names(mwc),
      (Names{"rev.namespace.sidecar-injector.istio.io", "rev.object.sidecar-injector.istio.io",
             "namespace.sidecar-injector.istio.io", "object.sidecar-injector.istio.io"}));
  EXPECT_TRUE(check_revision_webhook(mwc, "default", false).ok());
  for (const auto& h : mwc["webhooks"].GetArray()) {
    EXPECT_EQ(api::to_json(h["clientConfig"]),
              R"({"service":{"name":"meshop-webhook","namespace":"istio-system","path":"/inject",)"
              R"("port":443},"caBundle":"Q0FCVU5ETEU="})");
  }
  const auto& labels = mwc["metadata"]["labels"];
  EXPECT_EQ(api::string_at(labels, {"app.kubernetes.io/managed-by"}), "meshop");
  EXPECT_EQ(api::string_at(labels, {"install.operator.istio.io/owning-resource"}), "main");
  EXPECT_EQ(api::string_at(labels, {"install.operator.istio.io/owning-resource-namespace"}),
            "istio-system");
  EXPECT_EQ(api::string_at(labels, {"operator.istio.io/component"}), "Pilot");
  EXPECT_EQ(api::string_at(labels, {"istio.io/rev"}), "default");
  EXPECT_TRUE(d.problems.empty()) << reasons(d)[0];
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{"default"});
  EXPECT_EQ(route(d, "{}", R"({"sidecar.istio.io/inject":"true"})"), Names{"default"});
  EXPECT_EQ(route(d, "{}", "{}"), Names{});
}

TEST_F(WebhooksDesired, EnableNamespacesByDefaultAddsTheAutoEntry) {
  add_iop(iop("main", "", 1, R"({"sidecarInjectorWebhook":{"enableNamespacesByDefault":true}})"));
  auto d = compute();
  ASSERT_EQ(d.webhooks.size(), 1u);
  EXPECT_EQ(entry_names(d.webhooks[0].object).back(), "auto.sidecar-injector.istio.io");
  EXPECT_TRUE(check_revision_webhook(d.webhooks[0].object, "default", true).ok());
  EXPECT_EQ(route(d, "{}", "{}"), Names{"default"});
  EXPECT_EQ(route(d, R"({"kubernetes.io/metadata.name":"kube-system"})", "{}"), Names{});
}

TEST_F(WebhooksDesired, CanaryHasOnlyRevisionEntriesAndUrlClientConfigInLocalMode) {
  config_.url_base = "https://127.0.0.1:9443";
  add_iop(iop("canary", "canary", 1));
  auto d = compute();
  ASSERT_EQ(names(d), Names{"istio-sidecar-injector-canary"});
  const auto& mwc = d.webhooks[0].object;
  EXPECT_EQ(entry_names(mwc), (Names{"rev.namespace.sidecar-injector.istio.io",
                                     "rev.object.sidecar-injector.istio.io"}));
  EXPECT_TRUE(check_revision_webhook(mwc, "canary", false).ok());
  for (const auto& h : mwc["webhooks"].GetArray())
    EXPECT_EQ(api::to_json(h["clientConfig"]),
              R"({"url":"https://127.0.0.1:9443/inject/rev/canary","caBundle":"Q0FCVU5ETEU="})");
  EXPECT_EQ(route(d, R"({"istio.io/rev":"canary"})", "{}"), Names{"canary"});
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{});
}

TEST_F(WebhooksDesired, OperatorManageWebhooksDoesNotRemoveTheConfiguration) {
  add_iop(iop("canary", "canary", 1, R"({"global":{"operatorManageWebhooks":true}})"));
  EXPECT_EQ(names(compute()), Names{"istio-sidecar-injector-canary"});
}

TEST_F(WebhooksDesired, WithoutSecretTheLiveCaBundleIsKeptAndNoneIsInvented) {
  add_iop(iop("canary", "canary", 1));
  add_iop(iop("stable", "stable", 2));
  add_live(R"({"metadata":{"name":"istio-sidecar-injector-canary"},"webhooks":[
    {"name":"rev.namespace.sidecar-injector.istio.io","clientConfig":{"caBundle":"T0xE"}}]})");
  auto d = compute(std::nullopt);
  const auto* canary = find(d, "istio-sidecar-injector-canary");
  const auto* stable = find(d, "istio-sidecar-injector-stable");
  ASSERT_TRUE(canary && stable);
  EXPECT_EQ(api::string_at(canary->object["webhooks"][0], {"clientConfig", "caBundle"}), "T0xE");
  EXPECT_FALSE(canary->object["webhooks"][1]["clientConfig"].HasMember("caBundle"));
  EXPECT_FALSE(stable->object["webhooks"][0]["clientConfig"].HasMember("caBundle"));
}

TEST_F(WebhooksDesired, TagCallsItsRevisionAndCarriesOwnerAndTagLabels) {
  add_iop(iop("canary", "canary", 1, R"({"revisionTags":["prod"]})"));
  auto d = compute();
  ASSERT_EQ(names(d), (Names{"istio-revision-tag-prod", "istio-sidecar-injector-canary"}))
      << ::testing::PrintToString(d.problems.empty() ? std::string() : d.problems[0].message);
  const auto* tag = find(d, "istio-revision-tag-prod");
  EXPECT_EQ(tag->tag, "prod");
  EXPECT_EQ(tag->revision, "canary");
  const auto& labels = tag->object["metadata"]["labels"];
  EXPECT_EQ(api::string_at(labels, {"istio.io/tag"}), "prod");
  EXPECT_EQ(api::string_at(labels, {"istio.io/rev"}), "canary");
  EXPECT_EQ(api::string_at(labels, {"install.operator.istio.io/owning-resource"}), "canary");
  EXPECT_EQ(api::string_at(tag->object["webhooks"][0], {"clientConfig", "service", "path"}),
            "/inject/rev/canary");
  EXPECT_EQ(route(d, R"({"istio.io/rev":"prod"})", "{}"), Names{"canary"});
  EXPECT_EQ(route(d, "{}", R"({"istio.io/rev":"prod"})"), Names{"canary"});
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{});
}

// Outside istio-system the chart suffixes both names with the namespace (revision-tags-mwc.yaml:
// istio-revision-tag-<tag>-<ns>), and so does meshop.
TEST_F(WebhooksDesired, TagOutsideIstioSystemIsSuffixedWithTheNamespace) {
  add_iop(R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{
      "name":"canary","namespace":"istio-other","creationTimestamp":"2026-01-01T00:00:01Z"},
      "spec":{"revision":"canary","namespace":"istio-other",
              "values":{"global":{"istioNamespace":"istio-other"},"revisionTags":["prod"]}}})");
  auto d = compute();
  ASSERT_EQ(names(d), (Names{"istio-revision-tag-prod-istio-other",
                             "istio-sidecar-injector-canary-istio-other"}))
      << ::testing::PrintToString(d.problems.empty() ? std::string() : d.problems[0].message);
  const auto* tag = find(d, "istio-revision-tag-prod-istio-other");
  EXPECT_EQ(tag->tag, "prod");
  EXPECT_EQ(route(d, R"({"istio.io/rev":"prod"})", "{}"), Names{"canary"});
}

TEST_F(WebhooksDesired, DefaultTagTakesLegacySelectorsAndDeactivatesDefaultRevisionLast) {
  add_iop(iop("main", "", 1));
  add_iop(iop("canary", "canary", 2, R"({"revisionTags":["default"]})"));
  auto d = compute();
  ASSERT_EQ(names(d), (Names{"istio-revision-tag-default", "istio-sidecar-injector-canary",
                             "istio-sidecar-injector"}));
  EXPECT_TRUE(d.webhooks.back().deactivated);
  EXPECT_EQ(d.webhooks.back().object["webhooks"].Size(), 4u);
  for (const auto& h : d.webhooks.back().object["webhooks"].GetArray())
    EXPECT_EQ(api::to_json(h["namespaceSelector"]),
              R"({"matchLabels":{"istio.io/deactivated":"never-match"}})");
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{"canary"});
  EXPECT_EQ(route(d, R"({"istio.io/rev":"default"})", "{}"), Names{"canary"});
  EXPECT_EQ(route(d, "{}", R"({"sidecar.istio.io/inject":"true"})"), Names{"canary"});
  EXPECT_EQ(route(d, R"({"istio.io/rev":"canary"})", "{}"), Names{"canary"});
  EXPECT_TRUE(d.problems.empty());
}

TEST_F(WebhooksDesired, DefaultTagWithAutoInjectServesUnlabelledNamespaces) {
  add_iop(iop("canary", "canary", 2,
              R"({"revisionTags":["default"],
                  "sidecarInjectorWebhook":{"enableNamespacesByDefault":true}})"));
  auto d = compute();
  const auto* tag = find(d, "istio-revision-tag-default");
  ASSERT_NE(tag, nullptr);
  EXPECT_EQ(entry_names(tag->object).back(), "auto.sidecar-injector.istio.io");
  EXPECT_EQ(route(d, "{}", "{}"), Names{"canary"});
  EXPECT_EQ(route(d, "{}", R"({"sidecar.istio.io/inject":"false"})"), Names{});
}

TEST_F(WebhooksDesired, DefaultRevisionMayCarryTheDefaultTagItself) {
  add_iop(iop("main", "", 1, R"({"revisionTags":["default"]})"));
  auto d = compute();
  EXPECT_TRUE(d.problems.empty());
  ASSERT_NE(find(d, "istio-revision-tag-default"), nullptr);
  EXPECT_TRUE(find(d, "istio-sidecar-injector")->deactivated);
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{"default"});
}

TEST_F(WebhooksDesired, DefaultTagMadeOutsideKeepsTheDefaultRevisionDeactivated) {
  add_iop(iop("main", "", 1));
  // What `meshop tag set default --revision x` leaves: managed-by meshop but no owner labels.
  add_live(R"({"metadata":{"name":"istio-revision-tag-default","labels":{
    "istio.io/tag":"default","istio.io/rev":"x","app.kubernetes.io/managed-by":"meshop"}}})");
  auto d = compute();
  EXPECT_TRUE(find(d, "istio-sidecar-injector")->deactivated);
  EXPECT_TRUE(d.prune.empty());
}

TEST_F(WebhooksDesired, RemovedDefaultTagIsPrunedAndTheDefaultRevisionReactivated) {
  add_iop(iop("main", "", 1));
  add_iop(iop("canary", "canary", 2));
  add_live(R"({"metadata":{"name":"istio-revision-tag-default","labels":{
    "istio.io/tag":"default","istio.io/rev":"canary","app.kubernetes.io/managed-by":"meshop",
    "install.operator.istio.io/owning-resource":"canary",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}}})");
  auto d = compute();
  EXPECT_EQ(d.prune, Names{"istio-revision-tag-default"});
  EXPECT_FALSE(find(d, "istio-sidecar-injector")->deactivated);
  EXPECT_EQ(route(d, R"({"istio-injection":"enabled"})", "{}"), Names{"default"});
}

TEST_F(WebhooksDesired, TagNamedLikeARevisionIsRefused) {
  add_iop(iop("canary", "canary", 1));
  add_iop(iop("stable", "stable", 2, R"({"revisionTags":["canary","prod"]})"));
  auto d = compute();
  EXPECT_EQ(reasons(d), Names{"istio-system/stable TagConflict"});
  EXPECT_EQ(find(d, "istio-revision-tag-canary"), nullptr);
  EXPECT_NE(find(d, "istio-revision-tag-prod"), nullptr);
  EXPECT_EQ(route(d, R"({"istio.io/rev":"canary"})", "{}"), Names{"canary"});
}

TEST_F(WebhooksDesired, TagClaimedByTwoRevisionsGoesToTheOlderIstioOperator) {
  add_iop(iop("younger", "b", 5, R"({"revisionTags":["prod"]})"));
  add_iop(iop("older", "a", 3, R"({"revisionTags":["prod"]})"));
  auto d = compute();
  EXPECT_EQ(reasons(d), Names{"istio-system/younger TagConflict"});
  EXPECT_EQ(find(d, "istio-revision-tag-prod")->revision, "a");
  EXPECT_EQ(route(d, R"({"istio.io/rev":"prod"})", "{}"), Names{"a"});
}

TEST_F(WebhooksDesired, InvalidTagNamesAreReportedNotWritten) {
  add_iop(iop("a", "a", 1, R"({"revisionTags":["Not_A_Label","ok"]})"));
  auto d = compute();
  EXPECT_EQ(reasons(d), Names{"istio-system/a InvalidTag"});
  EXPECT_EQ(names(d), (Names{"istio-revision-tag-ok", "istio-sidecar-injector-a"}));
}

TEST_F(WebhooksDesired, RevisionWithoutPilotHasNoConfigurationAndItsTagsAreSkipped) {
  add_iop(iop("nopilot", "np", 1, R"({"revisionTags":["prod"]})"));
  auto& doc = iops_.back();
  rapidjson::Value components;
  components.CopyFrom(parse(R"({"pilot":{"enabled":false}})"), doc.GetAllocator());
  doc["spec"].AddMember("components", components, doc.GetAllocator());
  auto d = compute();
  EXPECT_TRUE(d.webhooks.empty());
  EXPECT_EQ(reasons(d), Names{"istio-system/nopilot TagSkipped"})
      << (d.problems.empty() ? "" : d.problems[0].message);
}

TEST_F(WebhooksDesired, SameRevisionTwiceTheOlderOwnsIt) {
  add_iop(iop("second", "canary", 9, R"({"revisionTags":["t2"]})"));
  add_iop(iop("first", "canary", 4));
  auto d = compute();
  EXPECT_EQ(reasons(d), Names{"istio-system/second RevisionConflict"});
  ASSERT_EQ(names(d), Names{"istio-sidecar-injector-canary"});
  EXPECT_EQ(d.webhooks[0].owner, "istio-system/first");
}

TEST_F(WebhooksDesired, PausedIstioOperatorKeepsItsConfigurationsAndItsTagClaims) {
  add_iop(iop("paused", "canary", 1, R"({"revisionTags":["prod"]})",
              R"(,"annotations":{"install.istio.io/ignoreReconcile":"true"})"));
  add_iop(iop("other", "stable", 2, R"({"revisionTags":["prod"]})"));
  add_live(R"({"metadata":{"name":"istio-sidecar-injector-canary","labels":{
    "app.kubernetes.io/managed-by":"meshop","install.operator.istio.io/owning-resource":"paused",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}}})");
  auto d = compute();
  EXPECT_EQ(names(d), Names{"istio-sidecar-injector-stable"});
  EXPECT_EQ(d.kept, std::set<std::string>{"istio-sidecar-injector-canary"});
  EXPECT_TRUE(d.prune.empty());
  EXPECT_EQ(reasons(d), Names{"istio-system/other TagConflict"});
}

TEST_F(WebhooksDesired, PausedClaimOnTheDefaultTagDeactivatesOnlyOnceTheTagExists) {
  add_iop(iop("main", "", 1));
  add_iop(iop("paused", "canary", 2, R"({"revisionTags":["default"]})",
              R"(,"annotations":{"install.istio.io/ignoreReconcile":"true"})"));
  auto before = compute();
  EXPECT_FALSE(find(before, "istio-sidecar-injector")->deactivated);
  EXPECT_EQ(route(before, R"({"istio-injection":"enabled"})", "{}"), Names{"default"});

  add_live(R"({"metadata":{"name":"istio-revision-tag-default","labels":{
    "istio.io/tag":"default","istio.io/rev":"canary","app.kubernetes.io/managed-by":"meshop",
    "install.operator.istio.io/owning-resource":"paused",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}}})");
  auto after = compute();
  EXPECT_TRUE(after.kept.count("istio-revision-tag-default"));
  EXPECT_TRUE(find(after, "istio-sidecar-injector")->deactivated);
}

TEST_F(WebhooksDesired, ConfigurationsOfAnIstioOperatorBeingDeletedArePruned) {
  add_iop(iop("gone", "canary", 1, "{}", R"(,"deletionTimestamp":"2026-01-01T01:00:00Z")"));
  add_live(R"({"metadata":{"name":"istio-sidecar-injector-canary","labels":{
    "app.kubernetes.io/managed-by":"meshop","install.operator.istio.io/owning-resource":"gone",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}}})");
  auto d = compute();
  EXPECT_TRUE(d.webhooks.empty());
  EXPECT_EQ(d.prune, Names{"istio-sidecar-injector-canary"});
}

TEST_F(WebhooksDesired, InvalidIstioOperatorIsReportedAndItsConfigurationsKept) {
  add_iop(iop("bad", "canary", 1));
  // An unknown spec field makes the IstioOperator invalid.
  iops_.back()["spec"].AddMember("notAField", 1, iops_.back().GetAllocator());
  add_live(R"({"metadata":{"name":"istio-sidecar-injector-canary","labels":{
    "app.kubernetes.io/managed-by":"meshop","install.operator.istio.io/owning-resource":"bad",
    "install.operator.istio.io/owning-resource-namespace":"istio-system"}}})");
  auto d = compute();
  EXPECT_EQ(reasons(d), Names{"istio-system/bad InvalidSpec"});
  EXPECT_NE(d.problems[0].message.find("spec.notAField"), std::string::npos)
      << d.problems[0].message;
  EXPECT_TRUE(d.webhooks.empty());
  EXPECT_TRUE(d.prune.empty());
  EXPECT_EQ(d.kept.size(), 1u);
}

TEST_F(WebhooksDesired, PruneOnlyOwnedConfigurationsInScope) {
  config_.extra_labels = {{"meshop-test", "t1"}};
  add_live(R"({"metadata":{"name":"owned-in-scope","labels":{"meshop-test":"t1",
    "app.kubernetes.io/managed-by":"meshop","install.operator.istio.io/owning-resource":"x",
    "install.operator.istio.io/owning-resource-namespace":"ns"}}})");
  add_live(R"({"metadata":{"name":"owned-other-scope","labels":{"meshop-test":"t2",
    "app.kubernetes.io/managed-by":"meshop","install.operator.istio.io/owning-resource":"x",
    "install.operator.istio.io/owning-resource-namespace":"ns"}}})");
  add_live(R"({"metadata":{"name":"user-tag","labels":{"meshop-test":"t1",
    "app.kubernetes.io/managed-by":"meshop","istio.io/tag":"prod"}}})");
  add_live(R"({"metadata":{"name":"foreign","labels":{"meshop-test":"t1"}}})");
  auto d = compute();
  EXPECT_EQ(d.prune, Names{"owned-in-scope"});
}

TEST_F(WebhooksDesired, ExtraLabelsAreSetOnEveryConfiguration) {
  config_.extra_labels = {{"meshop-test", "t1"}};
  add_iop(iop("c", "canary", 1, R"({"revisionTags":["prod"]})"));
  auto d = compute();
  ASSERT_EQ(d.webhooks.size(), 2u);
  for (const auto& w : d.webhooks)
    EXPECT_EQ(api::string_at(w.object, {"metadata", "labels", "meshop-test"}), "t1") << w.name;
}

TEST_F(WebhooksDesired, RenderCacheFollowsSpecChangesAndForgetsGoneIstioOperators) {
  WebhookRenderCache cache;
  add_iop(iop("main", "", 1));
  auto first = compute("QQ==", &cache);
  EXPECT_EQ(entry_names(first.webhooks[0].object).size(), 4u);
  EXPECT_EQ(cache.entries.size(), 1u);
  auto again = compute("QQ==", &cache);
  EXPECT_TRUE(api::json_equal(first.webhooks[0].object, again.webhooks[0].object));

  iops_.back() =
      parse(iop("main", "", 1, R"({"sidecarInjectorWebhook":{"enableNamespacesByDefault":true}})"));
  auto changed = compute("QQ==", &cache);
  EXPECT_EQ(entry_names(changed.webhooks[0].object).back(), "auto.sidecar-injector.istio.io");

  iops_.clear();
  EXPECT_TRUE(compute("QQ==", &cache).webhooks.empty());
  EXPECT_TRUE(cache.entries.empty());
}

// A live object as the apiserver returns it: desired plus defaults and server fields.
std::string as_served(const DesiredWebhook& w) {
  auto d = parse(api::to_json(w.object));
  auto& a = d.GetAllocator();
  d["metadata"].AddMember("resourceVersion", "12", a);
  d["metadata"]["labels"].AddMember("extra", "x", a);
  for (auto& h : d["webhooks"].GetArray()) {
    h.AddMember("matchPolicy", "Equivalent", a);
    h["rules"][0].AddMember("scope", "*", a);
  }
  return api::to_json(d);
}

TEST_F(WebhooksDesired, UpToDateIgnoresServerDefaultsAndSeesEditedFields) {
  add_iop(iop("main", "", 1));
  auto d = compute();
  const auto& desired = d.webhooks[0].object;
  auto live = parse(as_served(d.webhooks[0]));
  EXPECT_TRUE(webhook_up_to_date(desired, live));

  auto edited = parse(as_served(d.webhooks[0]));
  edited["webhooks"][2]["namespaceSelector"]["matchExpressions"][0]["operator"] = "NotIn";
  EXPECT_FALSE(webhook_up_to_date(desired, edited));

  auto widened = parse(as_served(d.webhooks[0]));
  rapidjson::Value extra;
  extra.CopyFrom(parse(R"({"a":"b"})"), widened.GetAllocator());
  widened["webhooks"][0]["namespaceSelector"].AddMember("matchLabels", extra,
                                                        widened.GetAllocator());
  EXPECT_FALSE(webhook_up_to_date(desired, widened));

  auto missing = parse(as_served(d.webhooks[0]));
  missing["webhooks"].Erase(missing["webhooks"].Begin());
  EXPECT_FALSE(webhook_up_to_date(desired, missing));

  auto relabelled = parse(as_served(d.webhooks[0]));
  relabelled["metadata"]["labels"]["istio.io/rev"] = "other";
  EXPECT_FALSE(webhook_up_to_date(desired, relabelled));

  auto bundle = parse(as_served(d.webhooks[0]));
  bundle["webhooks"][1]["clientConfig"]["caBundle"] = "b3RoZXI=";
  EXPECT_FALSE(webhook_up_to_date(desired, bundle));
}

TEST(WebhooksCheck, RejectsAnEntryThatDiffersFromUpstream) {
  auto base = [] {
    return std::string(R"({"metadata":{"name":"m"},"webhooks":[)") +
           R"({"name":"rev.namespace.sidecar-injector.istio.io","failurePolicy":"Fail",)"
           R"("sideEffects":"None","admissionReviewVersions":["v1"],"timeoutSeconds":10,)"
           R"("rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],)"
           R"("resources":["pods"]}],"namespaceSelector":{"matchExpressions":[)"
           R"({"key":"istio.io/rev","operator":"In","values":["c"]},)"
           R"({"key":"istio-injection","operator":"DoesNotExist"}]},)"
           R"("objectSelector":{"matchExpressions":[{"key":"sidecar.istio.io/inject",)"
           R"("operator":"NotIn","values":["false"]}]}},)"
           R"({"name":"rev.object.sidecar-injector.istio.io","failurePolicy":"Fail",)"
           R"("sideEffects":"None","admissionReviewVersions":["v1"],"timeoutSeconds":10,)"
           R"("rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],)"
           R"("resources":["pods"]}],"namespaceSelector":{"matchExpressions":[)"
           R"({"key":"istio.io/rev","operator":"DoesNotExist"},)"
           R"({"key":"istio-injection","operator":"DoesNotExist"}]},)"
           R"("objectSelector":{"matchExpressions":[{"key":"sidecar.istio.io/inject",)"
           R"("operator":"NotIn","values":["false"]},)"
           R"({"key":"istio.io/rev","operator":"In","values":["c"]}]}}]})";
  };
  EXPECT_TRUE(check_revision_webhook(parse(base()), "c", false).ok());
  auto r = check_revision_webhook(parse(base()), "other", false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("webhooks[0] (rev.namespace.sidecar-injector.istio.io)"
                             ".namespaceSelector"),
            std::string::npos)
      << r.message();
  std::string ignore = base();
  ignore.replace(ignore.find("\"Fail\""), 6, "\"Ignore\"");
  EXPECT_NE(check_revision_webhook(parse(ignore), "c", false).message().find("failurePolicy"),
            std::string::npos);
  std::string update = base();
  update.replace(update.find("[\"CREATE\"]"), 10, "[\"CREATE\",\"UPDATE\"]");
  EXPECT_NE(check_revision_webhook(parse(update), "c", false).message().find("rules"),
            std::string::npos);
  std::string scoped = base();  // as served: the apiserver defaults scope
  scoped.replace(scoped.find("\"resources\":[\"pods\"]"), 20,
                 R"("resources":["pods"],"scope":"*")");
  EXPECT_TRUE(check_revision_webhook(parse(scoped), "c", false).ok());
  auto as_default = check_revision_webhook(parse(base()), "default", false);
  EXPECT_NE(as_default.message().find("expected the entries of revision default"),
            std::string::npos)
      << as_default.message();
}

}  // namespace
}  // namespace meshop::reconcilers
