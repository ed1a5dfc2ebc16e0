// The webhooks reconciler against the real local control plane: IstioOperators created in the
// apiserver become MutatingWebhookConfigurations with upstream's entries, meshop's
// clientConfig and the certificates reconciler's caBundle; tags are added, moved and removed;
// the default tag deactivates the default revision; drift is repaired; configurations are
// pruned when their IstioOperator goes; ignoreReconcile pauses all of it. Routing is checked
// with the apiserver's selector evaluation over the live objects (restart::route).
//
// The IstioOperator CRD is applied by the test when it is missing. Every IstioOperator and
// configuration of a test carries the label meshop-e2e=<suffix>, and the reconciler is
// configured to see only those, so leftovers of other tests do not interfere.
#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/kube/client.hpp"
#include "operator/manifest/tag.hpp"
#include "operator/restart/webhook_routes.hpp"
#include "reconcilers/certificates.hpp"
#include "reconcilers/webhooks.hpp"
#include "test/e2e/reconcilers/e2e_support.hpp"

namespace meshop::reconcilers {
namespace {

using namespace std::chrono_literals;
using e2e::parse;
using Names = std::vector<std::string>;

const kube::ResourceType kIops{"install.istio.io", "v1alpha1", "istiooperators", "IstioOperator",
                               true};

bool contains(const Names& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class WebhooksE2e : public e2e::ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(connect());
    ASSERT_NO_FATAL_FAILURE(ensure_istio_operator_crd());
    suffix_ = unique_suffix("x");
    ns_ = "wh-e2e-" + suffix_;
    ASSERT_NO_FATAL_FAILURE(create_namespace(ns_));
    config_.service_namespace = ns_;
    config_.secret_namespace = ns_;
    config_.url_base = "https://127.0.0.1:1";
    config_.iop_selector = "meshop-e2e=" + suffix_;
    config_.extra_labels = {{"meshop-e2e", suffix_}};
  }
  void TearDown() override {
    // Finalizers first, or the IstioOperators (and the namespace) would never go.
    auto iops = run(client_->list(kIops, ns_));
    if (iops)
      for (const auto& i : iops->list["items"].GetArray())
        (void)run(client_->patch(kIops, ns_, api::string_at(i, {"metadata", "name"}),
                                 kube::PatchType::kMerge, R"({"metadata":{"finalizers":null}})"));
    kube::ListOptions o;
    o.label_selector = "meshop-e2e=" + suffix_;
    auto mwcs = run(client_->list(kube::resources::kMutatingWebhookConfigurations, "", o));
    if (mwcs)
      for (const auto& m : mwcs->list["items"].GetArray())
        (void)run(client_->remove(kube::resources::kMutatingWebhookConfigurations, "",
                                  api::string_at(m, {"metadata", "name"})));
    (void)run(client_->remove(kube::resources::kNamespaces, "", ns_));
  }

  // An IstioOperator in the test namespace installing into it (values.global.istioNamespace is
  // the charts' .Release.Namespace, so its configurations are named ...-<ns>), labelled for this
  // test. `values` is a JSON object of more values.
  void create_iop(const std::string& name, const std::string& revision,
                  const std::string& values = "{}", const std::string& annotations = "{}") {
    std::string all_values = values;
    all_values.insert(
        1, R"("global":{"istioNamespace":")" + ns_ + R"("})" + (values == "{}" ? "" : ","));
    std::string spec = R"({"namespace":")" + ns_ + R"(","values":)" + all_values;
    if (!revision.empty()) spec += R"(,"revision":")" + revision + "\"";
    spec += "}";
    auto r = run(client_->create(
        kIops, ns_,
        parse(
            R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{"name":")" +
            name + R"(","labels":{"meshop-e2e":")" + suffix_ + R"("},"annotations":)" +
            annotations + R"(},"spec":)" + spec + "}")));
    ASSERT_TRUE(r) << r.error().message;
  }
  void patch_iop(const std::string& name, const std::string& merge_patch) {
    auto r = run(client_->patch(kIops, ns_, name, kube::PatchType::kMerge, merge_patch));
    ASSERT_TRUE(r) << r.error().message;
  }

  WebhooksOutcome pass(WebhooksReconciler& r) {
    auto out = run(r.reconcile_once());
    EXPECT_TRUE(out) << out.message();
    return out ? std::move(*out) : WebhooksOutcome{};
  }

  std::optional<rapidjson::Document> get_webhook(const std::string& name) {
    auto r = run(client_->get(kube::resources::kMutatingWebhookConfigurations, "", name));
    if (!r) {
      EXPECT_TRUE(r.error().is(kube::ErrorKind::kNotFound)) << r.error().message;
      return std::nullopt;
    }
    return std::move(*r);
  }

  // The certificates reconciler writes the Secret (and keeps caBundle of this test's
  // configurations), as in `meshop run`.
  CertificatesReconciler certificates() {
    CertificatesConfig c;
    c.namespace_name = ns_;
    c.dns_names = {"meshop-webhook." + ns_ + ".svc"};
    c.ip_addresses = {"127.0.0.1"};
    c.webhook_selector = "meshop-e2e=" + suffix_;
    return CertificatesReconciler(client_, c);
  }
  std::string secret_bundle() {
    auto r = run(client_->get(kube::resources::kSecrets, ns_, "meshop-webhook-certs"));
    EXPECT_TRUE(r) << r.error().message;
    return r ? api::string_at(*r, {"data", "ca-bundle.crt"}) : std::string();
  }

  // Which revisions the apiserver would call for a pod, over this test's live configurations.
  Names route(const std::string& ns_labels, const std::string& pod_labels) {
    kube::ListOptions o;
    o.label_selector = "meshop-e2e=" + suffix_;
    auto mwcs = run(client_->list(kube::resources::kMutatingWebhookConfigurations, "", o));
    EXPECT_TRUE(mwcs) << mwcs.error().message;
    auto entries = restart::injector_entries(mwcs->list["items"]);
    EXPECT_TRUE(entries) << entries.message();
    auto ns = parse(ns_labels);
    auto pod = parse(pod_labels);
    return restart::route(*entries, &ns, &pod).revisions;
  }

  std::string rev(char which) { return "wh" + suffix_ + which; }
  std::string revision_webhook(const std::string& revision) {
    return "istio-sidecar-injector" + (revision.empty() ? "" : "-" + revision) + "-" + ns_;
  }

  std::string suffix_, ns_;
  WebhooksConfig config_;
};

TEST_F(WebhooksE2e, RevisionConfigurationsGetUpstreamEntriesMeshopUrlAndTheSecretsBundle) {
  auto certs = certificates();
  ASSERT_TRUE(run(certs.reconcile_once()));
  create_iop("main", "");
  create_iop("canary", rev('a'));
  WebhooksReconciler r(client_, config_);

  auto first = pass(r);
  EXPECT_EQ(first.applied, (Names{revision_webhook(""), revision_webhook(rev('a'))}));
  EXPECT_TRUE(first.problems.empty());
  EXPECT_FALSE(first.secret_missing);

  const std::string bundle = secret_bundle();
  ASSERT_FALSE(bundle.empty());
  auto canary = get_webhook(revision_webhook(rev('a')));
  ASSERT_TRUE(canary);
  auto checked = check_revision_webhook(*canary, rev('a'), false);
  EXPECT_TRUE(checked.ok()) << checked.message();
  for (const auto& h : (*canary)["webhooks"].GetArray()) {
    EXPECT_EQ(api::string_at(h, {"clientConfig", "url"}),
              "https://127.0.0.1:1/inject/rev/" + rev('a'));
    EXPECT_EQ(api::string_at(h, {"clientConfig", "caBundle"}), bundle);
  }
  EXPECT_EQ(
      api::string_at(*canary, {"metadata", "labels", "install.operator.istio.io/owning-resource"}),
      "canary");
  auto main = get_webhook(revision_webhook(""));
  ASSERT_TRUE(main);
  checked = check_revision_webhook(*main, "default", false);
  EXPECT_TRUE(checked.ok()) << checked.message();
  EXPECT_EQ(api::string_at((*main)["webhooks"][0], {"clientConfig", "url"}),
            "https://127.0.0.1:1/inject");

  EXPECT_EQ(route(R"({"istio.io/rev":")" + rev('a') + R"("})", "{}"), Names{rev('a')});
  EXPECT_EQ(route(R"({"istio-injection":"enabled","istio.io/rev":")" + rev('a') + R"("})", "{}"),
            Names{"default"});
  EXPECT_EQ(route("{}", R"({"sidecar.istio.io/inject":"true"})"), Names{"default"});

  // Nothing changed: nothing is written, and the certificates reconciler agrees on caBundle.
  auto second = pass(r);
  EXPECT_TRUE(second.applied.empty());
  EXPECT_EQ(second.unchanged.size(), 2u);
  auto again = run(certs.reconcile_once());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->webhooks_patched, 0);
}

TEST_F(WebhooksE2e, WithoutTheSecretItRequeuesSoonAndFillsCaBundleOnceItExists) {
  create_iop("canary", rev('a'));
  WebhooksReconciler r(client_, config_);
  auto first = pass(r);
  EXPECT_TRUE(first.secret_missing);
  auto live = get_webhook(revision_webhook(rev('a')));
  ASSERT_TRUE(live);
  EXPECT_FALSE((*live)["webhooks"][0]["clientConfig"].HasMember("caBundle"));
  auto action = run(r.reconcile("any"));
  EXPECT_EQ(action.kind, runtime::Action::Kind::kRequeueAfter);
  EXPECT_EQ(action.after, std::chrono::seconds(2));

  auto certs = certificates();
  ASSERT_TRUE(run(certs.reconcile_once()));
  auto second = pass(r);
  EXPECT_FALSE(second.secret_missing);
  live = get_webhook(revision_webhook(rev('a')));
  EXPECT_EQ(api::string_at((*live)["webhooks"][1], {"clientConfig", "caBundle"}), secret_bundle());
  action = run(r.reconcile("any"));
  EXPECT_EQ(action.after, std::chrono::seconds(300));
}

TEST_F(WebhooksE2e, TagIsAddedMovedAndRemoved) {
  const std::string tag = "t" + suffix_;
  const std::string tag_webhook = manifest::tag_webhook_name(tag, ns_);
  create_iop("a", rev('a'), R"({"revisionTags":[")" + tag + R"("]})");
  create_iop("b", rev('b'));
  WebhooksReconciler r(client_, config_);

  auto first = pass(r);
  EXPECT_TRUE(contains(first.applied, tag_webhook));
  auto live = get_webhook(tag_webhook);
  ASSERT_TRUE(live);
  EXPECT_EQ(api::string_at(*live, {"metadata", "labels", "istio.io/rev"}), rev('a'));
  EXPECT_EQ(api::string_at((*live)["webhooks"][0], {"clientConfig", "url"}),
            "https://127.0.0.1:1/inject/rev/" + rev('a'));
  EXPECT_EQ(route(R"({"istio.io/rev":")" + tag + R"("})", "{}"), Names{rev('a')});

  patch_iop("a", R"({"spec":{"values":{"revisionTags":[]}}})");
  patch_iop("b", R"({"spec":{"values":{"revisionTags":[")" + tag + R"("]}}})");
  auto moved = pass(r);
  EXPECT_TRUE(contains(moved.applied, tag_webhook));
  live = get_webhook(tag_webhook);
  ASSERT_TRUE(live);
  EXPECT_EQ(api::string_at(*live, {"metadata", "labels", "istio.io/rev"}), rev('b'));
  EXPECT_EQ(
      api::string_at(*live, {"metadata", "labels", "install.operator.istio.io/owning-resource"}),
      "b");
  EXPECT_EQ(route(R"({"istio.io/rev":")" + tag + R"("})", "{}"), Names{rev('b')});

  patch_iop("b", R"({"spec":{"values":{"revisionTags":null}}})");
  auto removed = pass(r);
  EXPECT_EQ(removed.pruned, Names{tag_webhook});
  EXPECT_FALSE(get_webhook(tag_webhook));
  EXPECT_EQ(route(R"({"istio.io/rev":")" + tag + R"("})", "{}"), Names{});
}

TEST_F(WebhooksE2e, DefaultTagDeactivatesTheDefaultRevisionUntilItIsRemoved) {
  create_iop("main", "");
  create_iop("canary", rev('a'), R"({"revisionTags":["default"]})");
  WebhooksReconciler r(client_, config_);

  auto first = pass(r);
  EXPECT_TRUE(first.problems.empty());
  // The tag is written before the default revision is deactivated.
  ASSERT_EQ(first.applied.back(), revision_webhook(""));
  auto main = get_webhook(revision_webhook(""));
  ASSERT_TRUE(main);
  EXPECT_TRUE(manifest::is_deactivated(*main));
  EXPECT_EQ(route(R"({"istio-injection":"enabled"})", "{}"), Names{rev('a')});
  EXPECT_EQ(route(R"({"istio.io/rev":"default"})", "{}"), Names{rev('a')});
  // A deactivated configuration and a tag are up to date on the next pass.
  auto steady = pass(r);
  EXPECT_TRUE(steady.applied.empty());
  EXPECT_EQ(steady.unchanged.size(), 3u);

  patch_iop("canary", R"({"spec":{"values":{"revisionTags":null}}})");
  auto second = pass(r);
  EXPECT_EQ(second.pruned, Names{manifest::tag_webhook_name("default", ns_)});
  main = get_webhook(revision_webhook(""));
  EXPECT_FALSE(manifest::is_deactivated(*main));
  EXPECT_EQ(route(R"({"istio-injection":"enabled"})", "{}"), Names{"default"});
}

TEST_F(WebhooksE2e, DriftIsRepaired) {
  create_iop("canary", rev('a'));
  WebhooksReconciler r(client_, config_);
  ASSERT_EQ(pass(r).applied.size(), 1u);
  const std::string name = revision_webhook(rev('a'));

  // An edited namespaceSelector is restored.
  auto patched = run(client_->patch(
      kube::resources::kMutatingWebhookConfigurations, "", name, kube::PatchType::kJson,
      R"([{"op":"replace","path":"/webhooks/0/namespaceSelector","value":{"matchLabels":{"x":"y"}}}])"));
  ASSERT_TRUE(patched) << patched.error().message;
  EXPECT_EQ(route(R"({"istio.io/rev":")" + rev('a') + R"("})", "{}"), Names{});
  EXPECT_EQ(pass(r).applied, Names{name});
  EXPECT_EQ(route(R"({"istio.io/rev":")" + rev('a') + R"("})", "{}"), Names{rev('a')});

  // A deleted entry comes back.
  patched =
      run(client_->patch(kube::resources::kMutatingWebhookConfigurations, "", name,
                         kube::PatchType::kJson, R"([{"op":"remove","path":"/webhooks/1"}])"));
  ASSERT_TRUE(patched) << patched.error().message;
  EXPECT_EQ(pass(r).applied, Names{name});
  EXPECT_EQ((*get_webhook(name))["webhooks"].Size(), 2u);

  // A deleted configuration is re-created.
  ASSERT_TRUE(run(client_->remove(kube::resources::kMutatingWebhookConfigurations, "", name)));
  EXPECT_EQ(pass(r).applied, Names{name});
  auto live = get_webhook(name);
  ASSERT_TRUE(live);
  auto checked = check_revision_webhook(*live, rev('a'), false);
  EXPECT_TRUE(checked.ok()) << checked.message();
  EXPECT_TRUE(pass(r).applied.empty());
}

TEST_F(WebhooksE2e, ConfigurationsArePrunedWhenTheirIstioOperatorIsDeleted) {
  const std::string tag = "t" + suffix_;
  create_iop("a", rev('a'), R"({"revisionTags":[")" + tag + R"("]})");
  create_iop("b", rev('b'));
  WebhooksReconciler r(client_, config_);
  ASSERT_EQ(pass(r).applied.size(), 3u);

  // Being deleted (held by a finalizer, as the install reconciler's) is enough.
  patch_iop("a", R"({"metadata":{"finalizers":["meshop.io/uninstall"]}})");
  ASSERT_TRUE(run(client_->remove(kIops, ns_, "a")));
  auto first = pass(r);
  EXPECT_EQ(first.pruned,
            (Names{manifest::tag_webhook_name(tag, ns_), revision_webhook(rev('a'))}));
  EXPECT_FALSE(get_webhook(revision_webhook(rev('a'))));

  ASSERT_TRUE(run(client_->remove(kIops, ns_, "b")));
  EXPECT_EQ(pass(r).pruned, Names{revision_webhook(rev('b'))});
  EXPECT_FALSE(get_webhook(revision_webhook(rev('b'))));
}

TEST_F(WebhooksE2e, IgnoreReconcileLeavesTheConfigurationsAlone) {
  const std::string tag = "t" + suffix_;
  create_iop("a", rev('a'));
  WebhooksReconciler r(client_, config_);
  ASSERT_EQ(pass(r).applied.size(), 1u);
  const std::string name = revision_webhook(rev('a'));

  patch_iop("a", R"({"metadata":{"annotations":{"install.istio.io/ignoreReconcile":"true"}},
                     "spec":{"values":{"revisionTags":[")" +
                     tag + R"("]}}})");
  auto patched = run(client_->patch(
      kube::resources::kMutatingWebhookConfigurations, "", name, kube::PatchType::kJson,
      R"([{"op":"replace","path":"/webhooks/0/namespaceSelector","value":{"matchLabels":{"x":"y"}}}])"));
  ASSERT_TRUE(patched);
  auto paused = pass(r);
  EXPECT_TRUE(paused.applied.empty());
  EXPECT_TRUE(paused.pruned.empty());
  EXPECT_FALSE(get_webhook(manifest::tag_webhook_name(tag, ns_)));
  EXPECT_EQ(api::string_at((*get_webhook(name))["webhooks"][0],
                           {"namespaceSelector", "matchLabels", "x"}),
            "y");
  // Paused and deleted: still left alone.
  patch_iop("a", R"({"metadata":{"finalizers":["meshop.io/uninstall"]}})");
  ASSERT_TRUE(run(client_->remove(kIops, ns_, "a")));
  EXPECT_TRUE(pass(r).pruned.empty());
  EXPECT_TRUE(get_webhook(name));

  patch_iop("a", R"({"metadata":{"annotations":{"install.istio.io/ignoreReconcile":null}}})");
  EXPECT_EQ(pass(r).pruned, Names{name});
}

TEST_F(WebhooksE2e, ConflictsAreWarningEventsOnTheIstioOperator) {
  const std::string tag = "t" + suffix_;
  create_iop("a-older", rev('a'), R"({"revisionTags":[")" + tag + R"("]})");
  create_iop("b-younger", rev('b'), R"({"revisionTags":[")" + tag + R"(",")" + rev('a') + R"("]})");
  auto events = kube::EventRecorder::create(client_);
  WebhooksReconciler r(client_, config_, nullptr, events);
  auto out = pass(r);
  ASSERT_EQ(out.problems.size(), 2u);
  run(events->flush());
  auto listed = run(client_->list(kube::resources::kEvents, ns_));
  ASSERT_TRUE(listed) << listed.error().message;
  int conflicts = 0;
  for (const auto& e : listed->list["items"].GetArray())
    if (api::string_at(e, {"reason"}) == "TagConflict" &&
        api::string_at(e, {"regarding", "name"}) == "b-younger" &&
        api::string_at(e, {"type"}) == "Warning")
      ++conflicts;
  EXPECT_EQ(conflicts, 2);
  EXPECT_EQ(route(R"({"istio.io/rev":")" + tag + R"("})", "{}"), Names{rev('a')});
}

}  // namespace
}  // namespace meshop::reconcilers
