// The revisions reconciler's pure part: namespace verdicts over webhook configurations as
// meshop renders them (manifest::render_istio_operator, tags from generate_tag_webhook,
// deactivation as `tag set default` does it), and the status.revisions it builds.
#include "reconcilers/revisions.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/record.hpp"
#include "operator/manifest/render.hpp"
#include "operator/manifest/tag.hpp"
#include "reconcilers/watches.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/run_task.hpp"

namespace meshop::reconcilers {
namespace {

using Strings = std::vector<std::string>;

rapidjson::Document parse(const std::string& text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message() << "\n" << text;
  return std::move(*d);
}

std::string iop_json(const std::string& ns, const std::string& name, const std::string& revision,
                     const std::string& created = "2026-01-01T00:00:00Z") {
  return R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{"name":")" +
         name + R"(","namespace":")" + ns + R"(","creationTimestamp":")" + created +
         R"("},"spec":{"revision":")" + revision + R"("}})";
}

// The MutatingWebhookConfiguration meshop renders for an IstioOperator of `revision`.
rapidjson::Document rendered_webhook(const std::string& revision) {
  rapidjson::Document iop = parse(iop_json("istio-system", "iop", revision));
  auto rendered = manifest::render_istio_operator(iop);
  EXPECT_TRUE(rendered.ok()) << rendered.message();
  rapidjson::Document out;
  if (!rendered.ok()) return out;
  for (const manifest::RenderedObject& o : rendered->objects)
    if (api::string_at(o.object, {"kind"}) == "MutatingWebhookConfiguration")
      out.CopyFrom(o.object, out.GetAllocator());
  EXPECT_TRUE(out.IsObject()) << "no webhook configuration rendered for " << revision;
  return out;
}

rapidjson::Document tag_webhook(const rapidjson::Value& revision_webhook, const std::string& tag,
                                const std::string& revision) {
  auto t = manifest::generate_tag_webhook(revision_webhook, tag, revision);
  EXPECT_TRUE(t.ok()) << t.message();
  return t.ok() ? std::move(*t) : rapidjson::Document();
}

std::string ns_json(const std::string& name, const std::string& labels) {
  return R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"(","labels":)" +
         labels + "}}";
}

class Revisions : public ::testing::Test {
 protected:
  void SetUp() override {
    default_ = rendered_webhook("");
    canary_ = rendered_webhook("canary");
  }

  // Verdict for a namespace with `labels` over `configs`.
  NamespaceVerdict verdict(const std::vector<const rapidjson::Value*>& configs,
                           const std::string& labels) {
    rapidjson::Document list(rapidjson::kArrayType);
    for (const rapidjson::Value* c : configs)
      list.PushBack(rapidjson::Value(*c, list.GetAllocator()), list.GetAllocator());
    auto entries = restart::injector_entries(list);
    EXPECT_TRUE(entries.ok()) << entries.message();
    return evaluate_namespace(parse(ns_json("team", labels)), *entries);
  }

  void add_configs(RevisionsView& view, const std::vector<const rapidjson::Value*>& configs) {
    auto& a = view.webhook_configurations.GetAllocator();
    for (const rapidjson::Value* c : configs)
      view.webhook_configurations.PushBack(rapidjson::Value(*c, a), a);
  }

  rapidjson::Document default_, canary_;
};

TEST_F(Revisions, DefaultRevisionServesIstioInjectionEnabled) {
  NamespaceVerdict v = verdict({&default_, &canary_}, R"({"istio-injection":"enabled"})");
  EXPECT_EQ(v.reason, NamespaceReason::kServed);
  EXPECT_EQ(v.revision, "default");
  EXPECT_EQ(v.tag, "");
  EXPECT_EQ(v.configuration, "istio-sidecar-injector");
  EXPECT_FALSE(is_warning(v.reason));
}

TEST_F(Revisions, UnlabelledNamespaceIsNotInjected) {
  NamespaceVerdict v = verdict({&default_, &canary_}, "{}");
  EXPECT_EQ(v.reason, NamespaceReason::kNotInjected);
  EXPECT_EQ(v.revision, "");
  EXPECT_TRUE(v.revisions.empty());
}

TEST_F(Revisions, IstioInjectionDisabledIsNotInjectedWithoutWarning) {
  NamespaceVerdict v = verdict({&default_, &canary_}, R"({"istio-injection":"disabled"})");
  EXPECT_EQ(v.reason, NamespaceReason::kNotInjected);
  EXPECT_NE(v.message.find("istio-injection=disabled"), std::string::npos) << v.message;
}

TEST_F(Revisions, CanaryServesItsRevisionLabel) {
  NamespaceVerdict v = verdict({&default_, &canary_}, R"({"istio.io/rev":"canary"})");
  EXPECT_EQ(v.reason, NamespaceReason::kServed);
  EXPECT_EQ(v.revision, "canary");
  EXPECT_EQ(v.configuration, "istio-sidecar-injector-canary");
  EXPECT_EQ(v.requested_revision, "canary");
}

TEST_F(Revisions, RevLabelDefaultIsServedByTheDefaultRevision) {
  NamespaceVerdict v = verdict({&default_, &canary_}, R"({"istio.io/rev":"default"})");
  EXPECT_EQ(v.reason, NamespaceReason::kServed);
  EXPECT_EQ(v.revision, "default");
}

TEST_F(Revisions, TagServesThroughTheRevisionItPointsAt) {
  rapidjson::Document prod = tag_webhook(canary_, "prod", "canary");
  NamespaceVerdict v = verdict({&default_, &canary_, &prod}, R"({"istio.io/rev":"prod"})");
  EXPECT_EQ(v.reason, NamespaceReason::kServed);
  EXPECT_EQ(v.revision, "canary");
  EXPECT_EQ(v.tag, "prod");
  EXPECT_EQ(v.configuration, "istio-revision-tag-prod");
  EXPECT_EQ(v.requested_revision, "canary");
  EXPECT_NE(v.message.find("through tag prod"), std::string::npos) << v.message;
}

TEST_F(Revisions, DefaultTagWithoutDeactivationIsARevisionConflict) {
  rapidjson::Document tag = tag_webhook(canary_, "default", "canary");
  NamespaceVerdict v = verdict({&default_, &canary_, &tag}, R"({"istio-injection":"enabled"})");
  EXPECT_EQ(v.reason, NamespaceReason::kRevisionConflict);
  EXPECT_TRUE(is_warning(v.reason));
  Strings revs = v.revisions;
  std::sort(revs.begin(), revs.end());
  EXPECT_EQ(revs, (Strings{"canary", "default"}));
  EXPECT_EQ(v.revision, "") << "no single revision serves a conflicted namespace";
  EXPECT_NE(v.message.find("istio-revision-tag-default"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("istio-sidecar-injector)"), std::string::npos) << v.message;
}

TEST_F(Revisions, DeactivatedDefaultLeavesTheDefaultTagServing) {
  rapidjson::Document tag = tag_webhook(canary_, "default", "canary");
  rapidjson::Document deactivated = manifest::deactivate_webhook(default_);
  NamespaceVerdict legacy =
      verdict({&deactivated, &canary_, &tag}, R"({"istio-injection":"enabled"})");
  EXPECT_EQ(legacy.reason, NamespaceReason::kServed);
  EXPECT_EQ(legacy.revision, "canary");
  EXPECT_EQ(legacy.tag, "default");
  NamespaceVerdict by_rev =
      verdict({&deactivated, &canary_, &tag}, R"({"istio.io/rev":"default"})");
  EXPECT_EQ(by_rev.reason, NamespaceReason::kServed);
  EXPECT_EQ(by_rev.revision, "canary");
  EXPECT_EQ(by_rev.requested_revision, "canary") << "the default tag resolves to its target";
}

TEST_F(Revisions, BothLabelsEnabledAreServedByTheLegacyWebhookNotTheRevisionAskedFor) {
  NamespaceVerdict v =
      verdict({&default_, &canary_}, R"({"istio-injection":"enabled","istio.io/rev":"canary"})");
  EXPECT_EQ(v.reason, NamespaceReason::kConflictingInjectionLabels);
  EXPECT_TRUE(is_warning(v.reason));
  EXPECT_EQ(v.revision, "default");
  EXPECT_EQ(v.requested_revision, "canary");
  EXPECT_NE(v.message.find("injected by revision default"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("not by revision canary"), std::string::npos) << v.message;
}

TEST_F(Revisions, BothLabelsWithInjectionDisabledTurnInjectionOff) {
  NamespaceVerdict v =
      verdict({&default_, &canary_}, R"({"istio-injection":"disabled","istio.io/rev":"canary"})");
  EXPECT_EQ(v.reason, NamespaceReason::kConflictingInjectionLabels);
  EXPECT_EQ(v.revision, "");
  EXPECT_NE(v.message.find("not injected"), std::string::npos) << v.message;
}

TEST_F(Revisions, BothLabelsNamingTheServingRevisionSaySoInTheMessage) {
  rapidjson::Document tag = tag_webhook(canary_, "default", "canary");
  rapidjson::Document deactivated = manifest::deactivate_webhook(default_);
  NamespaceVerdict v = verdict({&deactivated, &canary_, &tag},
                               R"({"istio-injection":"enabled","istio.io/rev":"canary"})");
  EXPECT_EQ(v.reason, NamespaceReason::kConflictingInjectionLabels);
  EXPECT_EQ(v.revision, "canary");
  EXPECT_NE(v.message.find("remove one of the labels"), std::string::npos) << v.message;
}

TEST_F(Revisions, UnknownRevisionOrTagIsNotInjected) {
  NamespaceVerdict v = verdict({&default_, &canary_}, R"({"istio.io/rev":"stable"})");
  EXPECT_EQ(v.reason, NamespaceReason::kUnknownRevision);
  EXPECT_TRUE(is_warning(v.reason));
  EXPECT_EQ(v.revision, "");
  EXPECT_EQ(v.requested, "stable");
  EXPECT_NE(v.message.find("istio.io/rev=stable"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("not injected"), std::string::npos) << v.message;
}

TEST_F(Revisions, ATagNameIsNotUnknown) {
  rapidjson::Document prod = tag_webhook(canary_, "prod", "canary");
  EXPECT_EQ(verdict({&default_, &canary_}, R"({"istio.io/rev":"prod"})").reason,
            NamespaceReason::kUnknownRevision);
  EXPECT_EQ(verdict({&default_, &canary_, &prod}, R"({"istio.io/rev":"prod"})").reason,
            NamespaceReason::kServed);
}

std::string pod_json(const std::string& ns, const std::string& name,
                     const std::string& status_revision, bool terminating = false,
                     const std::string& phase = "") {
  std::string annotations = "{}";
  if (!status_revision.empty()) {
    rapidjson::Document status = parse(R"({"initContainers":["istio-init"],)"
                                       R"("containers":["istio-proxy"],"revision":")" +
                                       status_revision + R"("})");
    rapidjson::Document a(rapidjson::kObjectType);
    a.AddMember("sidecar.istio.io/status", api::make_string(api::to_json(status), a.GetAllocator()),
                a.GetAllocator());
    annotations = api::to_json(a);
  }
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns + R"(","annotations":)" +
         annotations + (terminating ? R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")" : "") + "}" +
         (phase.empty() ? "" : R"(,"status":{"phase":")" + phase + R"("})") + "}";
}

TEST_F(Revisions, StatusListsNamespacesPodsTagsAndConflictsOfTheOwnedRevision) {
  rapidjson::Document prod = tag_webhook(canary_, "prod", "canary");
  RevisionsView view;
  add_configs(view, {&default_, &canary_, &prod});
  for (auto [name, labels] : std::vector<std::pair<std::string, std::string>>{
           {"zeta", R"({"istio.io/rev":"canary"})"},
           {"alpha", R"({"istio.io/rev":"prod"})"},
           {"legacy", R"({"istio-injection":"enabled"})"},
           {"both", R"({"istio-injection":"enabled","istio.io/rev":"prod"})"},
           {"lost", R"({"istio.io/rev":"nope"})"},
           {"plain", "{}"}})
    view.namespaces.push_back(parse(ns_json(name, labels)));
  view.istio_operators.push_back(parse(iop_json("istio-system", "main", "")));
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  view.pods.push_back(parse(pod_json("zeta", "a", "canary")));
  view.pods.push_back(parse(pod_json("alpha", "b", "canary")));
  view.pods.push_back(parse(pod_json("alpha", "old", "default")));  // not restarted yet
  view.pods.push_back(parse(pod_json("alpha", "gone", "canary", true)));
  view.pods.push_back(parse(pod_json("legacy", "c", "canary")));  // wrong revision for legacy
  view.pods.push_back(parse(pod_json("legacy", "d", "default")));
  view.pods.push_back(parse(pod_json("plain", "e", "")));

  auto report = evaluate(view);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->owners.at("istio-system/main"), "default");
  EXPECT_EQ(report->owners.at("istio-system/canary"), "canary");

  rapidjson::Document canary = status_revisions(*report, "istio-system/canary");
  ASSERT_EQ(canary.Size(), 1u) << api::to_json(canary);
  const rapidjson::Value& c = canary[0];
  EXPECT_EQ(api::string_at(c, {"revision"}), "canary");
  EXPECT_EQ(api::to_json(c["tags"]), R"(["prod"])");
  EXPECT_EQ(api::to_json(c["namespaces"]), R"(["alpha","zeta"])");
  EXPECT_EQ(c["pods"].GetInt(), 2);
  ASSERT_EQ(c["conflicts"].Size(), 1u) << api::to_json(c);
  EXPECT_EQ(api::string_at(c["conflicts"][0], {"namespace"}), "both");
  EXPECT_EQ(api::string_at(c["conflicts"][0], {"reason"}), "ConflictingInjectionLabels");

  rapidjson::Document main = status_revisions(*report, "istio-system/main");
  ASSERT_EQ(main.Size(), 1u);
  EXPECT_EQ(api::string_at(main[0], {"revision"}), "default");
  EXPECT_EQ(api::to_json(main[0]["tags"]), "[]");
  EXPECT_EQ(api::to_json(main[0]["namespaces"]), R"(["both","legacy"])");
  EXPECT_EQ(main[0]["pods"].GetInt(), 1);
  ASSERT_EQ(main[0]["conflicts"].Size(), 1u);
  EXPECT_EQ(api::string_at(main[0]["conflicts"][0], {"namespace"}), "both");

  // The unknown revision is nobody's conflict, but it is a verdict.
  auto lost = std::find_if(report->namespaces.begin(), report->namespaces.end(),
                           [](const auto& v) { return v.name == "lost"; });
  ASSERT_NE(lost, report->namespaces.end());
  EXPECT_EQ(lost->reason, NamespaceReason::kUnknownRevision);
  EXPECT_TRUE(std::is_sorted(report->namespaces.begin(), report->namespaces.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST_F(Revisions, RevisionConflictIsListedOnEveryRevisionInvolved) {
  rapidjson::Document tag = tag_webhook(canary_, "default", "canary");
  RevisionsView view;
  add_configs(view, {&default_, &canary_, &tag});
  view.namespaces.push_back(parse(ns_json("legacy", R"({"istio-injection":"enabled"})")));
  view.istio_operators.push_back(parse(iop_json("istio-system", "main", "")));
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok()) << report.message();
  for (const char* key : {"istio-system/main", "istio-system/canary"}) {
    rapidjson::Document s = status_revisions(*report, key);
    ASSERT_EQ(s.Size(), 1u) << key;
    EXPECT_EQ(api::to_json(s[0]["namespaces"]), "[]") << key;
    ASSERT_EQ(s[0]["conflicts"].Size(), 1u) << key;
    EXPECT_EQ(api::string_at(s[0]["conflicts"][0], {"reason"}), "RevisionConflict") << key;
  }
  EXPECT_EQ(api::to_json(status_revisions(*report, "istio-system/canary")[0]["tags"]),
            R"(["default"])");
}

TEST_F(Revisions, OlderIstioOperatorOwnsARevisionTheYoungerReportsNothing) {
  RevisionsView view;
  add_configs(view, {&canary_});
  view.namespaces.push_back(parse(ns_json("team", R"({"istio.io/rev":"canary"})")));
  view.istio_operators.push_back(parse(iop_json("b", "young", "canary", "2026-02-01T00:00:00Z")));
  view.istio_operators.push_back(parse(iop_json("a", "old", "canary", "2026-01-01T00:00:00Z")));
  view.istio_operators.push_back(parse(iop_json("a", "twin", "canary", "2026-01-01T00:00:00Z")));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->owners.at("a/old"), "canary");
  EXPECT_EQ(report->owners.at("a/twin"), "") << "same age: namespace/name decides";
  EXPECT_EQ(report->owners.at("b/young"), "");
  EXPECT_EQ(status_revisions(*report, "b/young").Size(), 0u);
  EXPECT_EQ(status_revisions(*report, "a/twin").Size(), 0u);
  ASSERT_EQ(status_revisions(*report, "a/old").Size(), 1u);
  EXPECT_EQ(api::to_json(status_revisions(*report, "a/old")[0]["namespaces"]), R"(["team"])");
}

TEST_F(Revisions, RevisionWithoutWebhookStillReportsItsEntry) {
  RevisionsView view;
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok()) << report.message();
  rapidjson::Document s = status_revisions(*report, "istio-system/canary");
  ASSERT_EQ(s.Size(), 1u);
  EXPECT_EQ(api::to_json(s[0]),
            R"({"revision":"canary","tags":[],"namespaces":[],"pods":0,"conflicts":[],)"
            R"("requestedBy":[],"runningPods":0,"inUse":false})");
}

TEST_F(Revisions, SelectorThatDoesNotParseIsAnErrorNamingTheConfiguration) {
  RevisionsView view;
  rapidjson::Document bad =
      parse(R"({"metadata":{"name":"broken","labels":{"istio.io/rev":"x"}},"webhooks":[{"name":)"
            R"("rev.namespace.sidecar-injector.istio.io","namespaceSelector":{"matchExpressions":)"
            R"([{"key":"istio.io/rev","operator":"In"}]}}]})");
  add_configs(view, {&bad});
  auto report = evaluate(view);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.message().find("broken"), std::string::npos) << report.message();
}

// The view a pass takes from the informer stores (meshop run) evaluates as the listed one, with
// the filters by name and namespace applied to the stores' content.
TEST_F(Revisions, ViewFromStoresIsTheListedView) {
  runtime::Store namespaces, webhooks, iops;
  // As `meshop run` keeps pods (controlled ones as records: api/record.hpp).
  runtime::Store pods(watches::pods().projection, watches::pods().shared_paths);
  RevisionsCache cache{&namespaces, &webhooks, &iops, &pods};
  RevisionsConfig config;
  auto unsynced = revisions_view_from(cache, config);
  ASSERT_FALSE(unsynced.ok());
  EXPECT_NE(unsynced.message().find("has not synced"), std::string::npos);

  std::vector<rapidjson::Document> ns_docs, iop_docs, pod_docs, mwc_docs;
  ns_docs.push_back(parse(ns_json("zeta", R"({"istio.io/rev":"canary"})")));
  ns_docs.push_back(parse(ns_json("legacy", R"({"istio-injection":"enabled"})")));
  iop_docs.push_back(parse(iop_json("istio-system", "main", "")));
  iop_docs.push_back(parse(iop_json("other", "canary", "canary")));
  pod_docs.push_back(parse(pod_json("zeta", "a", "canary")));
  pod_docs.push_back(parse(pod_json("legacy", "b", "default")));
  pod_docs.push_back(parse(pod_json("legacy", "c", "default")));
  // Gone: neither runs a proxy of its revision.
  pod_docs.push_back(parse(pod_json("legacy", "d", "default", true)));
  pod_docs.push_back(parse(pod_json("legacy", "e", "default", false, "Succeeded")));
  for (rapidjson::Document& pod : pod_docs)  // a ReplicaSet's: the store keeps records
    pod["metadata"].AddMember(
        "ownerReferences",
        rapidjson::Value(parse(R"([{"kind":"ReplicaSet","uid":"rs","controller":true}])"),
                         pod.GetAllocator()),
        pod.GetAllocator());
  for (const rapidjson::Value* c : {&canary_, &default_})
    mwc_docs.emplace_back().CopyFrom(*c, mwc_docs.back().GetAllocator());
  namespaces.replace(std::move(ns_docs));
  iops.replace(std::move(iop_docs));
  pods.replace(std::move(pod_docs));
  webhooks.replace(std::move(mwc_docs));

  auto view = revisions_view_from(cache, config);
  ASSERT_TRUE(view.ok()) << view.message();
  ASSERT_EQ(view->pods.size(), 5u);
  ASSERT_EQ(view->webhook_configurations.Size(), 2u);
  EXPECT_EQ(api::string_at(view->webhook_configurations[0], {"metadata", "name"}),
            "istio-sidecar-injector")
      << "by name, as a LIST answers";
  auto report = evaluate(*view);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->revisions.at("canary").pods, 1);
  EXPECT_EQ(report->revisions.at("default").pods, 2);
  EXPECT_EQ(report->revisions.at("default").namespaces, Strings{"legacy"});
  EXPECT_EQ(report->owners.size(), 2u);

  config.namespace_filter = "legacy";
  config.operator_namespace = "istio-system";
  view = revisions_view_from(cache, config);
  ASSERT_TRUE(view.ok()) << view.message();
  EXPECT_EQ(view->namespaces.size(), 1u);
  EXPECT_EQ(view->pods.size(), 4u);
  EXPECT_TRUE(api::is_record(view->pods[0]));
  ASSERT_EQ(view->istio_operators.size(), 1u);
  EXPECT_EQ(runtime::name_of(view->istio_operators[0]), "main");
}

// ---- InUse ----

rapidjson::Document iop_with(const std::string& ns, const std::string& name,
                             const std::string& revision, const std::string& annotation,
                             const std::string& in_use_status = "",
                             const std::string& transition = "") {
  rapidjson::Document iop = parse(iop_json(ns, name, revision));
  auto& a = iop.GetAllocator();
  if (!annotation.empty()) {
    rapidjson::Value ann(rapidjson::kObjectType);
    ann.AddMember(api::make_string(kUninstallWhenUnusedAnnotation, a),
                  api::make_string(annotation, a), a);
    iop["metadata"].AddMember("annotations", ann, a);
  }
  if (!in_use_status.empty()) {
    rapidjson::Document status =
        parse(R"({"conditions":[{"type":"Ready","status":"True"},{"type":"InUse","status":")" +
              in_use_status + R"(","lastTransitionTime":")" + transition + R"("}]})");
    iop.AddMember("status", rapidjson::Value(status, a), a);
  }
  return iop;
}

restart::SystemTime at(const std::string& t) {
  return *restart::parse_rfc3339(t);
}

TEST_F(Revisions, CompletedFailedAndTerminatingPodsDoNotKeepARevisionInUse) {
  RevisionsView view;
  add_configs(view, {&default_, &canary_});
  view.namespaces.push_back(parse(ns_json("jobs", R"({"istio-injection":"enabled"})")));
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  // Left behind in a namespace that moved back to the default revision.
  view.pods.push_back(parse(pod_json("jobs", "done", "canary", false, "Succeeded")));
  view.pods.push_back(parse(pod_json("jobs", "broke", "canary", false, "Failed")));
  view.pods.push_back(parse(pod_json("jobs", "leaving", "canary", true, "Running")));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->revisions.at("canary").running_pods, 0);
  auto d = in_use_of(*report, view.istio_operators[0], at("2026-01-01T00:00:00Z"));
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->in_use);
  EXPECT_EQ(d->status, "False");
  EXPECT_EQ(d->reason, "Unused");

  // One running pod anywhere does.
  view.pods.push_back(parse(pod_json("jobs", "alive", "canary", false, "Running")));
  report = evaluate(view);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->revisions.at("canary").running_pods, 1);
  EXPECT_EQ(report->revisions.at("canary").pods, 0) << "not in a namespace canary serves";
  d = in_use_of(*report, view.istio_operators[0], at("2026-01-01T00:00:00Z"));
  EXPECT_TRUE(d->in_use);
  EXPECT_NE(d->message.find("1 running pod"), std::string::npos) << d->message;
}

TEST_F(Revisions, InUseCountsNamespacesByLabelTagsAndPodLabels) {
  rapidjson::Document prod = tag_webhook(canary_, "prod", "canary");
  RevisionsView view;
  add_configs(view, {&default_, &canary_});
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  // Both labels: served by default, but istio.io/rev asks for canary.
  view.namespaces.push_back(
      parse(ns_json("both", R"({"istio-injection":"enabled","istio.io/rev":"canary"})")));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->revisions.at("canary").requested_by, Strings{"both"});
  EXPECT_TRUE(in_use_of(*report, view.istio_operators[0], at("2026-01-01T00:00:00Z"))->in_use);

  // A pod labelled istio.io/rev=prod (no sidecar status) carries canary through the tag.
  RevisionsView tagged;
  add_configs(tagged, {&default_, &canary_, &prod});
  tagged.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  tagged.pods.push_back(
      parse(R"({"metadata":{"name":"p","namespace":"x","labels":{"istio.io/rev":"prod"}}})"));
  report = evaluate(tagged);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->revisions.at("canary").running_pods, 1);
  auto d = in_use_of(*report, tagged.istio_operators[0], at("2026-01-01T00:00:00Z"));
  EXPECT_TRUE(d->in_use);
  EXPECT_NE(d->message.find("1 tag (prod)"), std::string::npos) << d->message;
}

TEST_F(Revisions, TheRevisionsOwnComponentsDoNotKeepItInUse) {
  RevisionsView view;
  add_configs(view, {&default_, &canary_});
  view.istio_operators.push_back(parse(iop_json("istio-system", "canary", "canary")));
  view.pods.push_back(
      parse(R"({"metadata":{"name":"istiod-canary-1","namespace":"istio-system","labels":)"
            R"({"app":"istiod","istio.io/rev":"canary","operator.istio.io/component":"Pilot"}}})"));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->revisions.at("canary").running_pods, 0);
  EXPECT_FALSE(in_use_of(*report, view.istio_operators[0], at("2026-01-01T00:00:00Z"))->in_use);
}

TEST_F(Revisions, WhatThisProcessWroteWinsOverAStaleConditionOnTheObject) {
  // Another writer put back InUse=False of an hour ago after this process wrote True: once the
  // revision is unused again, the time is now, not the stale one.
  RevisionsView view;
  add_configs(view, {&default_, &canary_});
  view.istio_operators.push_back(
      iop_with("istio-system", "canary", "canary", "20s", "False", "2026-01-01T00:00:00Z"));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok());
  std::pair<std::string, std::string> written{"True", "2026-01-01T00:59:00Z"};
  auto d = in_use_of(*report, view.istio_operators[0], at("2026-01-01T01:00:00Z"), &written);
  EXPECT_FALSE(d->uninstall);
  EXPECT_EQ(d->last_transition, "2026-01-01T01:00:00Z");
  auto stale = in_use_of(*report, view.istio_operators[0], at("2026-01-01T01:00:00Z"));
  EXPECT_TRUE(stale->uninstall) << "without the memory, the object's time counts";
}

// The restarts reconciler wrote RestartsOverdue after the store's copy of the IstioOperator was
// read. A merge patch replaces the whole list of conditions, so InUse must go into the list the
// apiserver holds: sent with the store's (older) list, it would erase RestartsOverdue (a lost
// update; the flaky e2e restart_gates, "RestartsOverdue=True ... never seen").
TEST_F(Revisions, InUseGoesIntoTheListTheApiserverHoldsNotTheStoresOlderOne) {
  runtime::Store namespaces, webhooks, iops, pods;
  RevisionsCache cache{&namespaces, &webhooks, &iops, &pods};
  RevisionsConfig config;
  config.cache = &cache;
  std::vector<rapidjson::Document> ns_docs, iop_docs, mwc_docs;
  ns_docs.push_back(parse(ns_json("apps", R"({"istio.io/rev":"canary"})")));
  for (const rapidjson::Value* c : {&canary_, &default_})
    mwc_docs.emplace_back().CopyFrom(*c, mwc_docs.back().GetAllocator());
  rapidjson::Document stored = parse(iop_json("istio-system", "canary", "canary"));
  stored["metadata"].AddMember("resourceVersion", "7", stored.GetAllocator());
  iop_docs.push_back(std::move(stored));
  namespaces.replace(std::move(ns_docs));
  webhooks.replace(std::move(mwc_docs));
  iops.replace(std::move(iop_docs));
  pods.replace(std::vector<rapidjson::Document>{});

  auto api = std::make_shared<test_support::FakeApi>();
  rapidjson::Document newer = parse(iop_json("istio-system", "canary", "canary"));
  newer.AddMember(
      "status",
      rapidjson::Value().CopyFrom(parse(R"({"conditions":[{"type":"RestartsOverdue","status":"True",
                          "reason":"StalePastMaxStaleness","lastTransitionTime":"2026-12-02T09:00:00Z",
                          "message":"1 workload stale past maxStaleness: Deployment/apps/web"}]})"),
                                  newer.GetAllocator()),
      newer.GetAllocator());
  api->put(istio_operator_resource(), api::to_json(newer));

  RevisionsReconciler r(api, api, config);
  boost::asio::io_context io;
  auto report = test_support::run_task(io, r.pass());
  ASSERT_TRUE(report.ok()) << report.message();
  const api::Document* held = api->object(istio_operator_resource(), "istio-system", "canary");
  ASSERT_NE(held, nullptr);
  Strings types;
  for (const rapidjson::Value& c : (*held)["status"]["conditions"].GetArray())
    types.push_back(api::string_at(c, {"type"}) + "=" + api::string_at(c, {"status"}));
  EXPECT_EQ(types, (Strings{"RestartsOverdue=True", "InUse=True"}))
      << "RestartsOverdue is the restarts reconciler's";
  EXPECT_EQ(api::string_at((*held)["status"]["revisions"][0], {"revision"}), "canary");
  // Refused at the store's version (409), got again, written once at the apiserver's.
  auto patches = api->calls_of("patch");
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_TRUE(patches[0].failed);
  EXPECT_FALSE(patches[1].failed);
  EXPECT_EQ(api->calls_of("get").size(), 1u);
}

InUseInput unused_input(const std::string& revision, const std::string& annotation,
                        const std::string& status, const std::string& since,
                        const std::string& now) {
  InUseInput in;
  in.revision = revision;
  if (!annotation.empty()) in.uninstall_after = annotation;
  in.current_status = status;
  in.current_transition = since;
  in.now = at(now);
  return in;
}

TEST(InUseDecision, UnusedSinceIsTheConditionsTransitionAndUninstallWaitsForTheGrace) {
  // First seen unused: the time is now, nothing is uninstalled (not on the object yet).
  auto first = decide_in_use(
      unused_input("canary", "20s", "True", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"));
  EXPECT_EQ(first.status, "False");
  EXPECT_EQ(first.last_transition, "2026-01-01T01:00:00Z");
  EXPECT_FALSE(first.uninstall);
  ASSERT_TRUE(first.uninstall_at.has_value());
  EXPECT_EQ(restart::rfc3339(*first.uninstall_at), "2026-01-01T01:00:20Z");

  // Half the grace later (a restarted meshop reads the time from the condition): not yet.
  auto half = decide_in_use(
      unused_input("canary", "20s", "False", "2026-01-01T01:00:00Z", "2026-01-01T01:00:10Z"));
  EXPECT_EQ(half.last_transition, "2026-01-01T01:00:00Z");
  EXPECT_FALSE(half.uninstall);
  EXPECT_NE(half.message.find("uninstalled at 2026-01-01T01:00:20Z"), std::string::npos)
      << half.message;

  auto due = decide_in_use(
      unused_input("canary", "20s", "False", "2026-01-01T01:00:00Z", "2026-01-01T01:00:20Z"));
  EXPECT_TRUE(due.uninstall);

  // Used again: True, a new transition, nothing to uninstall.
  InUseInput used =
      unused_input("canary", "20s", "False", "2026-01-01T01:00:00Z", "2026-01-01T01:00:30Z");
  used.usage.namespaces = {"shop"};
  auto again = decide_in_use(used);
  EXPECT_TRUE(again.in_use);
  EXPECT_EQ(again.last_transition, "2026-01-01T01:00:30Z");
  EXPECT_FALSE(again.uninstall);
  EXPECT_FALSE(again.unused_since.has_value());
}

TEST(InUseDecision, WithoutTheAnnotationNothingIsUninstalled) {
  auto d = decide_in_use(
      unused_input("canary", "", "False", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"));
  EXPECT_FALSE(d.in_use);
  EXPECT_FALSE(d.uninstall);
  EXPECT_FALSE(d.uninstall_at.has_value());
  ASSERT_TRUE(d.unused_since.has_value());
  EXPECT_EQ(restart::rfc3339(*d.unused_since), "2026-01-01T00:00:00Z");
}

TEST(InUseDecision, TheDefaultRevisionIsNeverUninstalled) {
  auto d = decide_in_use(
      unused_input("default", "1s", "False", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"));
  EXPECT_FALSE(d.in_use);
  EXPECT_FALSE(d.uninstall);
  EXPECT_NE(d.message.find("default revision is never uninstalled"), std::string::npos)
      << d.message;
}

TEST(InUseDecision, ATagKeepsARevisionInUse) {
  InUseInput in =
      unused_input("canary", "1s", "False", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z");
  in.usage.tags = {"prod"};
  auto d = decide_in_use(in);
  EXPECT_TRUE(d.in_use);
  EXPECT_FALSE(d.uninstall);
}

TEST(InUseDecision, ABadAnnotationIsReportedNamingItAndNeverActedUpon) {
  for (const char* bad : {"soon", "", "-5m", "0s", "1 h"}) {
    InUseInput in =
        unused_input("canary", "", "False", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z");
    in.uninstall_after = bad;
    auto d = decide_in_use(in);
    EXPECT_FALSE(d.uninstall) << bad;
    EXPECT_FALSE(d.uninstall_at.has_value()) << bad;
    EXPECT_NE(d.annotation_error.find("meshop.io/uninstall-when-unused-after"), std::string::npos)
        << bad;
    EXPECT_NE(d.message.find(d.annotation_error), std::string::npos) << bad;
  }
}

TEST_F(Revisions, InUseOfReadsTheAnnotationAndTheConditionFromTheObject) {
  RevisionsView view;
  add_configs(view, {&default_, &canary_});
  view.istio_operators.push_back(
      iop_with("istio-system", "canary", "canary", "1h", "False", "2026-01-01T00:00:00Z"));
  view.istio_operators.push_back(
      iop_with("istio-system", "main", "", "1h", "False", "2026-01-01T00:00:00Z"));
  auto report = evaluate(view);
  ASSERT_TRUE(report.ok());
  auto canary = in_use_of(*report, view.istio_operators[0], at("2026-01-01T00:59:59Z"));
  ASSERT_TRUE(canary.has_value());
  EXPECT_FALSE(canary->uninstall);
  canary = in_use_of(*report, view.istio_operators[0], at("2026-01-01T01:00:00Z"));
  EXPECT_TRUE(canary->uninstall);
  auto main = in_use_of(*report, view.istio_operators[1], at("2027-01-01T00:00:00Z"));
  ASSERT_TRUE(main.has_value());
  EXPECT_FALSE(main->uninstall) << "default";

  // A younger IstioOperator of the same revision owns nothing: no decision.
  view.istio_operators.push_back(
      parse(iop_json("istio-system", "canary2", "canary", "2026-06-01T00:00:00Z")));
  report = evaluate(view);
  EXPECT_FALSE(in_use_of(*report, view.istio_operators[2], at("2027-01-01T00:00:00Z")));
}

}  // namespace
}  // namespace meshop::reconcilers
