// The revisions reconciler against the real local control plane: webhook configurations as
// meshop renders them (default and canary revisions, a `prod` tag, later a `default` tag and
// the deactivated default), namespaces labelled every way that matters, two IstioOperators.
// A pass puts Warning Events on the problem namespaces only, once, and status.revisions on
// each IstioOperator. Every cluster-scoped object carries the test's suffix: the webhook
// entries only select this test's namespaces and never this test's pods, and the reconciler
// reads only this test's configurations, namespaces and IstioOperators. The IstioOperator CRD
// is applied from crd/ if missing.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/manifest/render.hpp"
#include "operator/manifest/tag.hpp"
#include "operator/metrics/registry.hpp"
#include "reconcilers/revisions.hpp"
#include "test/e2e/reconcilers/e2e_support.hpp"

namespace meshop::reconcilers {
namespace {

using namespace std::chrono_literals;
using e2e::parse;

const kube::ResourceType kIstioOperators{"install.istio.io", "v1alpha1", "istiooperators",
                                         "IstioOperator", true};
constexpr const char* kTestLabel = "meshop-revisions-e2e";
constexpr const char* kPodOptOut = "meshop-revisions-e2e-pod";

class RevisionsE2e : public e2e::ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(connect());
    suffix_ = unique_suffix();
    ASSERT_NO_FATAL_FAILURE(ensure_istio_operator_crd());
    cp_ = "rev-e2e-" + suffix_ + "-cp";
    create_labelled_namespace(cp_, "{}", false);
    config_.namespace_selector = std::string(kTestLabel) + "=" + suffix_;
    config_.webhook_selector = std::string(kTestLabel) + "=" + suffix_;
    config_.operator_namespace = cp_;
  }
  void TearDown() override {
    for (const std::string& name : webhooks_)
      (void)run(client_->remove(kube::resources::kMutatingWebhookConfigurations, "", name));
    for (const std::string& ns : namespaces_)
      (void)run(client_->remove(kube::resources::kNamespaces, "", ns));
  }

  // "rev-e2e-<suffix>-<short>", labelled for this test (unless `mine` is false) plus `labels`.
  std::string create_labelled_namespace(const std::string& name, const std::string& labels,
                                        bool mine = true) {
    rapidjson::Document ns = parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                                   name + R"(","labels":)" + labels + "}}");
    if (mine)
      ns["metadata"]["labels"].AddMember(rapidjson::StringRef(kTestLabel),
                                         api::make_string(suffix_, ns.GetAllocator()),
                                         ns.GetAllocator());
    auto r = run(client_->create(kube::resources::kNamespaces, "", ns));
    EXPECT_TRUE(r) << r.error().message;
    namespaces_.push_back(name);
    return name;
  }
  std::string test_namespace(const std::string& short_name, const std::string& labels) {
    return create_labelled_namespace("rev-e2e-" + suffix_ + "-" + short_name, labels);
  }

  void create_istio_operator(const std::string& name, const std::string& revision) {
    rapidjson::Document iop = parse(
        R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{"name":")" +
        name + R"(","namespace":")" + cp_ + R"("},"spec":{"profile":"minimal","revision":")" +
        revision + R"("}})");
    auto r = run(client_->create(kIstioOperators, cp_, iop));
    ASSERT_TRUE(r) << r.error().message;
  }
  rapidjson::Document get_istio_operator(const std::string& name) {
    auto r = run(client_->get(kIstioOperators, cp_, name));
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : rapidjson::Document();
  }

  // The webhook configuration meshop renders for an IstioOperator of `revision`.
  rapidjson::Document rendered_webhook(const std::string& revision) {
    rapidjson::Document iop = parse(
        R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{"name":"x","namespace":")" +
        cp_ + R"("},"spec":{"revision":")" + revision + R"("}})");
    auto rendered = manifest::render_istio_operator(iop);
    EXPECT_TRUE(rendered.ok()) << rendered.message();
    rapidjson::Document out;
    if (rendered.ok())
      for (const manifest::RenderedObject& o : rendered->objects)
        if (api::string_at(o.object, {"kind"}) == "MutatingWebhookConfiguration")
          out.CopyFrom(o.object, out.GetAllocator());
    return out;
  }

  // Renames `mwc` with the test's suffix, labels it for the test, restricts every entry to the
  // test's namespaces and to pods without the opt-out label, and lets failures through, so the
  // configuration changes nothing for anyone else and never blocks this test's own pods.
  void confine(rapidjson::Document& mwc) {
    auto& a = mwc.GetAllocator();
    std::string name = api::string_at(mwc, {"metadata", "name"}) + "-" + suffix_;
    mwc["metadata"]["name"] = api::make_string(name, a);
    mwc["metadata"].RemoveMember("namespace");
    rapidjson::Value& labels = mwc["metadata"]["labels"];
    labels.RemoveMember(kTestLabel);
    labels.AddMember(rapidjson::StringRef(kTestLabel), api::make_string(suffix_, a), a);
    for (rapidjson::Value& hook : mwc["webhooks"].GetArray()) {
      hook.RemoveMember("failurePolicy");
      hook.AddMember("failurePolicy", "Ignore", a);
      auto add = [&](const char* selector, rapidjson::Value expr) {
        if (!hook.HasMember(selector))
          hook.AddMember(rapidjson::StringRef(selector), rapidjson::Value(rapidjson::kObjectType),
                         a);
        rapidjson::Value& s = hook[selector];
        if (!s.HasMember("matchExpressions"))
          s.AddMember("matchExpressions", rapidjson::Value(rapidjson::kArrayType), a);
        s["matchExpressions"].PushBack(expr, a);
      };
      rapidjson::Value in_test(rapidjson::kObjectType);
      in_test.AddMember("key", rapidjson::StringRef(kTestLabel), a);
      in_test.AddMember("operator", "In", a);
      rapidjson::Value values(rapidjson::kArrayType);
      values.PushBack(api::make_string(suffix_, a), a);
      in_test.AddMember("values", values, a);
      add("namespaceSelector", std::move(in_test));
      rapidjson::Value opt_out(rapidjson::kObjectType);
      opt_out.AddMember("key", rapidjson::StringRef(kPodOptOut), a);
      opt_out.AddMember("operator", "DoesNotExist", a);
      add("objectSelector", std::move(opt_out));
    }
  }
  void create_webhook(const rapidjson::Value& mwc) {
    auto r = run(client_->create(kube::resources::kMutatingWebhookConfigurations, "", mwc));
    ASSERT_TRUE(r) << r.error().message;
    webhooks_.push_back(api::string_at(mwc, {"metadata", "name"}));
  }

  // A pod that says it runs `revision` (the status annotation the injector writes); the
  // webhooks skip it (opt-out label). Retried while the namespace's ServiceAccount appears.
  void create_pod(const std::string& ns, const std::string& revision) {
    rapidjson::Document pod = parse(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","labels":{")" +
        std::string(kPodOptOut) +
        R"(":"1"},"annotations":{}},"spec":{"containers":[{"name":"app","image":"app:1"}]}})");
    std::string status =
        R"({"initContainers":["istio-init"],"containers":["istio-proxy"],"revision":")" + revision +
        R"("})";
    pod["metadata"]["annotations"].AddMember("sidecar.istio.io/status",
                                             api::make_string(status, pod.GetAllocator()),
                                             pod.GetAllocator());
    std::string last;
    for (int i = 0; i < 100; ++i) {
      auto r = run(client_->create(kube::resources::kPods, ns, pod));
      if (r) return;
      last = r.error().message;
      std::this_thread::sleep_for(100ms);
    }
    FAIL() << "creating pod in " << ns << ": " << last;
  }

  // Reasons of the Events about Namespace `ns` (Events of cluster-scoped objects live in
  // `default`).
  std::vector<std::string> event_reasons(const std::string& ns) {
    auto r = run(client_->list_all(kube::resources::kEvents, "default"));
    EXPECT_TRUE(r) << r.error().message;
    std::vector<std::string> out;
    if (!r) return out;
    for (const rapidjson::Value& e : r->list["items"].GetArray())
      if (api::string_at(e, {"regarding", "kind"}) == "Namespace" &&
          api::string_at(e, {"regarding", "name"}) == ns) {
        EXPECT_EQ(api::string_at(e, {"type"}), "Warning");
        out.push_back(api::string_at(e, {"reason"}));
      }
    return out;
  }

  api::Result<RevisionsReport> pass(RevisionsReconciler& r) {
    auto report = run(r.pass());
    run(events_->flush());
    return report;
  }

  std::shared_ptr<kube::EventRecorder> events_;
  std::string suffix_, cp_;
  RevisionsConfig config_;
  std::vector<std::string> webhooks_, namespaces_;
};

using Strings = std::vector<std::string>;

Strings strings_at(const rapidjson::Value& v, const char* field) {
  Strings out;
  const rapidjson::Value* a = api::find_member(v, field);
  if (a != nullptr && a->IsArray())
    for (const rapidjson::Value& s : a->GetArray())
      out.push_back(s.IsString() ? std::string(api::string_view_of(s)) : "?");
  return out;
}

TEST_F(RevisionsE2e, WarnsOnProblemNamespacesOnceAndReportsRevisionsOnIstioOperators) {
  rapidjson::Document default_mwc = rendered_webhook("");
  rapidjson::Document canary_mwc = rendered_webhook("canary");
  auto prod = manifest::generate_tag_webhook(canary_mwc, "prod", "canary");
  ASSERT_TRUE(prod.ok()) << prod.message();
  confine(default_mwc);
  confine(canary_mwc);
  confine(*prod);
  create_webhook(default_mwc);
  create_webhook(canary_mwc);
  create_webhook(*prod);
  create_istio_operator("main", "");
  create_istio_operator("canary", "canary");

  std::string legacy = test_namespace("legacy", R"({"istio-injection":"enabled"})");
  std::string canary = test_namespace("canary", R"({"istio.io/rev":"canary"})");
  std::string tagged = test_namespace("prod", R"({"istio.io/rev":"prod"})");
  std::string both =
      test_namespace("both", R"({"istio-injection":"enabled","istio.io/rev":"canary"})");
  std::string unknown = test_namespace("unknown", R"({"istio.io/rev":"nope"})");
  create_pod(canary, "canary");
  create_pod(tagged, "default");  // started before the namespace moved to prod: not counted

  events_ = kube::EventRecorder::create(client_);
  metrics::Registry registry;
  RevisionsReconciler reconciler(client_, config_, &registry, events_);

  // First pass: Events on the two problem namespaces only.
  auto first = pass(reconciler);
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(event_reasons(both), Strings{"ConflictingInjectionLabels"});
  EXPECT_EQ(event_reasons(unknown), Strings{"UnknownRevision"});
  EXPECT_EQ(event_reasons(legacy), Strings{});
  EXPECT_EQ(event_reasons(canary), Strings{});
  EXPECT_EQ(event_reasons(tagged), Strings{});

  rapidjson::Document main_iop = get_istio_operator("main");
  const rapidjson::Value* main_status = api::find(main_iop, "/status/revisions");
  ASSERT_NE(main_status, nullptr) << api::to_json(main_iop);
  ASSERT_EQ(main_status->Size(), 1u) << api::to_json(*main_status);
  const rapidjson::Value& d = (*main_status)[0];
  EXPECT_EQ(api::string_at(d, {"revision"}), "default");
  EXPECT_EQ(strings_at(d, "namespaces"), (Strings{both, legacy}));
  EXPECT_EQ(d["pods"].GetInt(), 0);
  ASSERT_EQ(d["conflicts"].Size(), 1u) << api::to_json(d);
  EXPECT_EQ(api::string_at(d["conflicts"][0], {"namespace"}), both);

  rapidjson::Document canary_iop = get_istio_operator("canary");
  const rapidjson::Value* canary_status = api::find(canary_iop, "/status/revisions");
  ASSERT_NE(canary_status, nullptr) << api::to_json(canary_iop);
  ASSERT_EQ(canary_status->Size(), 1u);
  const rapidjson::Value& c = (*canary_status)[0];
  EXPECT_EQ(api::string_at(c, {"revision"}), "canary");
  EXPECT_EQ(strings_at(c, "tags"), Strings{"prod"});
  EXPECT_EQ(strings_at(c, "namespaces"), (Strings{canary, tagged}));
  EXPECT_EQ(c["pods"].GetInt(), 1);
  ASSERT_EQ(c["conflicts"].Size(), 1u) << "both asks for canary";

  std::string metrics = registry.expose();
  EXPECT_NE(metrics.find("meshop_namespaces{revision=\"canary\"} 2"), std::string::npos) << metrics;

  // Second pass, nothing changed: no Event queued, no status written.
  auto events_before = events_->created() + events_->aggregated();
  std::string main_rv = api::string_at(main_iop, {"metadata", "resourceVersion"});
  auto second = pass(reconciler);
  ASSERT_TRUE(second) << second.message();
  EXPECT_EQ(events_->created() + events_->aggregated(), events_before);
  EXPECT_EQ(api::string_at(get_istio_operator("main"), {"metadata", "resourceVersion"}), main_rv);

  // A `default` tag pointing at canary while the default revision still claims
  // istio-injection=enabled: both revisions are called for the legacy namespace.
  rapidjson::Document canary_unconfined = rendered_webhook("canary");
  auto default_tag = manifest::generate_tag_webhook(canary_unconfined, "default", "canary");
  ASSERT_TRUE(default_tag.ok()) << default_tag.message();
  confine(*default_tag);
  create_webhook(*default_tag);
  auto third = pass(reconciler);
  ASSERT_TRUE(third) << third.message();
  EXPECT_EQ(event_reasons(legacy), Strings{"RevisionConflict"});
  const rapidjson::Document main_now = get_istio_operator("main");
  Strings conflicted;
  for (const rapidjson::Value& x : main_now["status"]["revisions"][0]["conflicts"].GetArray())
    conflicted.push_back(api::string_at(x, {"namespace"}));
  EXPECT_EQ(conflicted, (Strings{both, legacy}));

  // `tag set default` deactivates the old default: the tag now serves the legacy namespace.
  auto current = run(client_->get(kube::resources::kMutatingWebhookConfigurations, "",
                                  api::string_at(default_mwc, {"metadata", "name"})));
  ASSERT_TRUE(current) << current.error().message;
  rapidjson::Document deactivated = manifest::deactivate_webhook(*current);
  auto updated = run(client_->update(kube::resources::kMutatingWebhookConfigurations, deactivated));
  ASSERT_TRUE(updated) << updated.error().message;
  auto fourth = pass(reconciler);
  ASSERT_TRUE(fourth) << fourth.message();
  EXPECT_EQ(event_reasons(legacy), Strings{"RevisionConflict"}) << "resolving raises no Event";
  const rapidjson::Document canary_now = get_istio_operator("canary");
  const rapidjson::Value& cn = canary_now["status"]["revisions"][0];
  EXPECT_EQ(strings_at(cn, "tags"), (Strings{"default", "prod"}));
  EXPECT_EQ(strings_at(cn, "namespaces"), (Strings{both, canary, legacy, tagged}));
  const rapidjson::Document main_after = get_istio_operator("main");
  EXPECT_EQ(strings_at(main_after["status"]["revisions"][0], "namespaces"), Strings{});
}

TEST_F(RevisionsE2e, NamespaceFilterLimitsThePassAndTheAdapterRequeues) {
  rapidjson::Document canary_mwc = rendered_webhook("canary");
  confine(canary_mwc);
  create_webhook(canary_mwc);
  std::string picked = test_namespace("picked", R"({"istio.io/rev":"nope"})");
  std::string other = test_namespace("other", R"({"istio.io/rev":"nope"})");

  events_ = kube::EventRecorder::create(client_);
  config_.namespace_filter = picked;
  RevisionsReconciler reconciler(client_, config_, nullptr, events_);
  runtime::Action action = run(reconciler.reconcile("any key"));
  run(events_->flush());
  EXPECT_EQ(action.kind, runtime::Action::Kind::kRequeueAfter) << action.message;
  EXPECT_EQ(event_reasons(picked), Strings{"UnknownRevision"});
  EXPECT_EQ(event_reasons(other), Strings{}) << "outside the filter";
}

}  // namespace
}  // namespace meshop::reconcilers
