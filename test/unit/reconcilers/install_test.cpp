// The pure parts of the install reconciler: owner labels, owner keys, prune selection, the
// status computed from object states and why a spec is refused before anything is applied.
#include "reconcilers/install.hpp"

#include <gtest/gtest.h>

#include "operator/manifest/render.hpp"

namespace meshop::reconcilers {
namespace {

api::Document parse(const std::string& s) {
  auto d = api::parse_json(s);
  EXPECT_TRUE(d) << d.message();
  return std::move(*d);
}

TEST(InstallOwnerLabels, AddsAllFourAndKeepsExistingLabels) {
  auto obj = parse(R"({"kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"istiod",
    "install.operator.istio.io/owning-resource":"stale"}}})");
  add_owner_labels(obj, obj.GetAllocator(), "iop", "ns1", "Pilot");
  const auto& labels = obj["metadata"]["labels"];
  EXPECT_EQ(api::string_at(labels, {"app"}), "istiod");
  EXPECT_EQ(api::string_at(labels, {"app.kubernetes.io/managed-by"}), "meshop");
  EXPECT_EQ(api::string_at(labels, {"install.operator.istio.io/owning-resource"}), "iop");
  EXPECT_EQ(api::string_at(labels, {"install.operator.istio.io/owning-resource-namespace"}), "ns1");
  EXPECT_EQ(api::string_at(labels, {"operator.istio.io/component"}), "Pilot");
  EXPECT_EQ(labels.MemberCount(), 5u);
}

TEST(InstallOwnerLabels, CreatesMetadataAndLabelsWhenMissing) {
  auto obj = parse(R"({"kind":"Namespace"})");
  add_owner_labels(obj, obj.GetAllocator(), "iop", "ns1", "");
  EXPECT_EQ(owner_key(obj), "ns1/iop");
  EXPECT_FALSE(obj["metadata"]["labels"].HasMember("operator.istio.io/component"));
}

TEST(InstallOwnerKey, RoundTripsThroughOwnerLabels) {
  auto obj = parse(R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(owner_key(obj), std::nullopt);
  add_owner_labels(obj, obj.GetAllocator(), "my-iop", "istio-system", "Base");
  EXPECT_EQ(owner_key(obj), "istio-system/my-iop");
}

TEST(InstallOwnerKey, NeedsBothNameAndNamespaceLabels) {
  EXPECT_EQ(owner_key(parse(R"({"metadata":{"labels":{
    "install.operator.istio.io/owning-resource":"iop"}}})")),
            std::nullopt);
  EXPECT_EQ(owner_key(parse(R"({"metadata":{"labels":{
    "install.operator.istio.io/owning-resource":"",
    "install.operator.istio.io/owning-resource-namespace":"ns"}}})")),
            std::nullopt);
  EXPECT_EQ(owner_key(parse(R"({"metadata":{"labels":"not-an-object"}})")), std::nullopt);
  EXPECT_EQ(owner_key(parse(R"([1,2])")), std::nullopt);
}

TEST(InstallOwnerSelector, SelectsByNameAndNamespace) {
  EXPECT_EQ(owner_selector("iop", "ns"),
            "install.operator.istio.io/owning-resource=iop,"
            "install.operator.istio.io/owning-resource-namespace=ns");
}

TEST(InstallObjectId, IgnoresTheVersion) {
  auto v1 = parse(R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
    "metadata":{"name":"istiod","namespace":"ns"}})");
  auto v2 = parse(R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
    "metadata":{"name":"istiod","namespace":"ns"}})");
  EXPECT_EQ(object_id(v1), object_id(v2));
  EXPECT_EQ(object_id(v1).to_string(), "HorizontalPodAutoscaler.autoscaling ns/istiod");
  auto core = parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})");
  EXPECT_EQ(object_id(core).group, "");
}

TEST(InstallPrune, SelectsLiveObjectsNotRenderedNow) {
  ObjectId kept{"apps", "Deployment", "ns", "istiod"};
  ObjectId gone{"apps", "Deployment", "ns", "istio-ingressgateway"};
  ObjectId other_ns{"apps", "Deployment", "other", "istiod"};
  ObjectId cluster{"rbac.authorization.k8s.io", "ClusterRole", "", "istiod-clusterrole-ns"};
  std::set<ObjectId> desired{kept, cluster};
  auto out = select_prune(desired, {kept, gone, other_ns, cluster});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], gone);
  EXPECT_EQ(out[1], other_ns);
}

TEST(InstallPrune, NeverSelectsWebhookConfigurationsOrNamespaces) {
  ObjectId mwc{"admissionregistration.k8s.io", "MutatingWebhookConfiguration", "", "inj"};
  ObjectId ns{"", "Namespace", "", "istio-system"};
  EXPECT_TRUE(select_prune({}, {mwc, ns}).empty());
  EXPECT_EQ(select_prune({}, {ObjectId{"", "ConfigMap", "a", "b"}}).size(), 1u);
}

TEST(InstallPrune, KindsCoverWhatRenderingProducesButNotWebhooksOrNamespaces) {
  const auto& kinds = prunable_kinds();
  auto has = [&](std::string_view kind) {
    for (const auto& [v, k] : kinds)
      if (k == kind) return true;
    return false;
  };
  for (std::string_view k :
       {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
        "Deployment", "DaemonSet", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service",
        "ResourceQuota"})
    EXPECT_TRUE(has(k)) << k;
  EXPECT_FALSE(has("MutatingWebhookConfiguration"));
  EXPECT_FALSE(has("Namespace"));
  EXPECT_FALSE(managed_kind("MutatingWebhookConfiguration"));
  EXPECT_TRUE(managed_kind("Deployment"));
}

TEST(InstallWorkloadReadiness, DeploymentNeedsAvailableReplicasAndCurrentGeneration) {
  auto ready = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n",
    "generation":3},"spec":{"replicas":2},"status":{"observedGeneration":3,"availableReplicas":2}})");
  EXPECT_EQ(workload_not_ready(ready), "");
  auto short_ = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n",
    "generation":3},"spec":{"replicas":2},"status":{"observedGeneration":3,"availableReplicas":1}})");
  EXPECT_EQ(workload_not_ready(short_), "Deployment n/d: 1/2 replicas available");
  auto stale = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n",
    "generation":4},"spec":{"replicas":1},"status":{"observedGeneration":3,"availableReplicas":1}})");
  EXPECT_EQ(workload_not_ready(stale), "Deployment n/d: generation 4 not yet observed");
  auto fresh = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n",
    "generation":1},"spec":{}})");
  EXPECT_NE(workload_not_ready(fresh), "");  // replicas default to 1; no status yet
  auto zero = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n",
    "generation":1},"spec":{"replicas":0},"status":{"observedGeneration":1}})");
  EXPECT_EQ(workload_not_ready(zero), "");
}

TEST(InstallWorkloadReadiness, DaemonSetNeedsEveryScheduledPodAvailable) {
  auto ready = parse(R"({"kind":"DaemonSet","metadata":{"name":"cni","namespace":"kube-system",
    "generation":1},"status":{"observedGeneration":1,"desiredNumberScheduled":3,"numberAvailable":3}})");
  EXPECT_EQ(workload_not_ready(ready), "");
  auto partial = parse(R"({"kind":"DaemonSet","metadata":{"name":"cni","namespace":"kube-system",
    "generation":1},"status":{"observedGeneration":1,"desiredNumberScheduled":3,"numberAvailable":2}})");
  EXPECT_EQ(workload_not_ready(partial), "DaemonSet kube-system/cni: 2/3 pods available");
  EXPECT_EQ(workload_not_ready(parse(R"({"kind":"ConfigMap"})")), std::nullopt);
}

TEST(InstallStatus, HealthyWhenEveryWorkloadIsReady) {
  auto cm = parse(R"({"kind":"ConfigMap","metadata":{"name":"c"}})");
  auto dep = parse(R"({"kind":"Deployment","metadata":{"name":"d","generation":1},
    "spec":{"replicas":1},"status":{"observedGeneration":1,"availableReplicas":1}})");
  auto report = compute_status({{"Base", &cm, ""}, {"Pilot", &dep, ""}});
  EXPECT_EQ(report.state, InstallState::kHealthy);
  EXPECT_EQ(report.components.at("Base").state, InstallState::kHealthy);
  EXPECT_EQ(report.components.at("Pilot").state, InstallState::kHealthy);
  EXPECT_EQ(report.message, "");
}

TEST(InstallStatus, ReconcilingWhileAWorkloadIsNotReadyPerComponent) {
  auto cm = parse(R"({"kind":"ConfigMap","metadata":{"name":"c"}})");
  auto dep = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n","generation":1},
    "spec":{"replicas":1},"status":{"observedGeneration":1}})");
  auto report = compute_status({{"Base", &cm, ""}, {"Pilot", &dep, ""}});
  EXPECT_EQ(report.state, InstallState::kReconciling);
  EXPECT_EQ(report.components.at("Base").state, InstallState::kHealthy);
  EXPECT_EQ(report.components.at("Pilot").state, InstallState::kReconciling);
  EXPECT_EQ(report.components.at("Pilot").error, "Deployment n/d: 0/1 replicas available");
  EXPECT_NE(report.message.find("Deployment n/d"), std::string::npos);
}

TEST(InstallStatus, ErrorWhenAnApplyFailedNamingTheObject) {
  auto dep = parse(R"({"kind":"Deployment","metadata":{"name":"d","namespace":"n","generation":1},
    "spec":{"replicas":1},"status":{"observedGeneration":1}})");
  auto report = compute_status(
      {{"Pilot", &dep, ""}, {"Pilot", nullptr, "apply configmaps n/istio: forbidden"}});
  EXPECT_EQ(report.state, InstallState::kError);
  EXPECT_EQ(report.message, "apply configmaps n/istio: forbidden");
  EXPECT_EQ(report.components.at("Pilot").state, InstallState::kError);
  EXPECT_NE(report.components.at("Pilot").error.find("forbidden"), std::string::npos);
}

TEST(InstallStatusPatch, WritesOnlyInstallKeysAndNothingWhenUnchanged) {
  StatusReport report;
  report.state = InstallState::kHealthy;
  report.components["Pilot"].state = InstallState::kHealthy;
  std::string body = status_patch(report, 7, nullptr, "2026-01-01T00:00:00Z");
  auto patch = parse(body);
  const auto& status = patch["status"];
  EXPECT_EQ(api::string_at(status, {"status"}), "HEALTHY");
  EXPECT_EQ(status["observedGeneration"].GetInt64(), 7);
  EXPECT_EQ(api::string_at(status, {"componentStatus", "Pilot", "status"}), "HEALTHY");
  ASSERT_EQ(status["conditions"].Size(), 2u);
  EXPECT_EQ(api::string_at(status["conditions"][1], {"type"}), "Ready");
  EXPECT_EQ(api::string_at(status["conditions"][1], {"status"}), "True");
  EXPECT_FALSE(status.HasMember("revisions"));

  // The same report over the status it produced (plus another reconciler's key): no write,
  // even at a later time.
  auto live = parse(R"({"status":{"revisions":[]}})");
  for (auto& m : patch["status"].GetObject())
    live["status"].AddMember(api::Value(m.name, live.GetAllocator()),
                             api::Value(m.value, live.GetAllocator()), live.GetAllocator());
  EXPECT_EQ(status_patch(report, 7, &live["status"], "2026-01-01T01:00:00Z"), "");
  // A new generation is a change.
  EXPECT_NE(status_patch(report, 8, &live["status"], "2026-01-01T01:00:00Z"), "");
}

TEST(InstallStatusPatch, KeepsTransitionTimeWhileConditionHoldsAndDropsOldComponents) {
  StatusReport healthy;
  healthy.state = InstallState::kHealthy;
  healthy.components["Pilot"].state = InstallState::kHealthy;
  healthy.components["IngressGateways"].state = InstallState::kHealthy;
  auto first = parse(status_patch(healthy, 1, nullptr, "2026-01-01T00:00:00Z"));

  StatusReport later = healthy;
  later.components.erase("IngressGateways");
  auto second = parse(status_patch(later, 2, &first["status"], "2026-01-02T00:00:00Z"));
  const auto& ready = second["status"]["conditions"][1];
  EXPECT_EQ(api::string_at(ready, {"lastTransitionTime"}), "2026-01-01T00:00:00Z");
  EXPECT_TRUE(second["status"]["componentStatus"]["IngressGateways"].IsNull());

  StatusReport broken;
  broken.state = InstallState::kError;
  broken.message = "boom";
  auto third = parse(status_patch(broken, 2, &first["status"], "2026-01-03T00:00:00Z"));
  EXPECT_EQ(api::string_at(third["status"]["conditions"][1], {"lastTransitionTime"}),
            "2026-01-03T00:00:00Z");
  EXPECT_EQ(api::string_at(third["status"]["conditions"][1], {"reason"}), "Error");
  EXPECT_EQ(api::string_at(third["status"], {"message"}), "boom");
}

TEST(InstallStatusPatch, KeepsOtherReconcilersConditions) {
  // The restarts reconciler's RestartsHalted lives in the same list; a merge patch replaces the
  // list, so install writes it back unchanged (and an unchanged status is still no write).
  StatusReport healthy;
  healthy.state = InstallState::kHealthy;
  healthy.components["Pilot"].state = InstallState::kHealthy;
  auto first = parse(status_patch(healthy, 1, nullptr, "2026-01-01T00:00:00Z"));
  rapidjson::Document live(rapidjson::kObjectType);
  live.CopyFrom(first, live.GetAllocator());
  auto& a = live.GetAllocator();
  auto halted = parse(R"({"type":"RestartsHalted","status":"True","reason":"CanaryNotReady",
                          "message":"Deployment/shop/web: pod web-1 not Ready"})");
  live["status"]["conditions"].PushBack(rapidjson::Value(halted, a), a);
  EXPECT_EQ(status_patch(healthy, 1, &live["status"], "2026-01-02T00:00:00Z"), "");

  StatusReport broken;
  broken.state = InstallState::kError;
  broken.message = "boom";
  auto patch = parse(status_patch(broken, 1, &live["status"], "2026-01-02T00:00:00Z"));
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 3u);
  EXPECT_EQ(api::string_at(conditions[2], {"type"}), "RestartsHalted");
  EXPECT_EQ(api::string_at(conditions[2], {"reason"}), "CanaryNotReady");
}

// What the install reconciler reports for `iop` before applying anything (validation, then the
// render of the bundled chart set), as its reconcile pass decides it.
InstallRefusal refusal_for(const std::string& spec) {
  auto iop = parse(R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
    "metadata":{"name":"iop","namespace":"istio-system"},"spec":)" +
                   spec + "}");
  api::IstioOperatorValidation validation = api::validate_istio_operator(iop);
  if (!validation.ok()) return install_refusal(validation, api::Error{});
  auto rendered = manifest::render_istio_operator(iop);
  EXPECT_FALSE(rendered.ok()) << spec << " rendered";
  return install_refusal(validation, rendered.ok() ? api::Error{} : rendered.error());
}

TEST(InstallRefusal, ValuesIstioctlRefusesAreInvalidSpecNamingTheField) {
  // Passes api::validate_istio_operator (values keep unknown fields there); the pipeline's
  // spec.values check refuses it, as istioctl does.
  auto r = refusal_for(R"({"values":{"global":{"badKey":1},"pilot":{"autoscaleMax":"seven"}}})");
  EXPECT_EQ(r.reason, "InvalidSpec");
  EXPECT_TRUE(r.message.starts_with("invalid spec: ")) << r.message;
  EXPECT_NE(r.message.find("spec.values.global.badKey"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("spec.values.pilot.autoscaleMax"), std::string::npos) << r.message;
}

TEST(InstallRefusal, MeshConfigTheInjectorWouldRejectIsInvalidSpec) {
  auto r = refusal_for(R"({"meshConfig":{"enableTracing":"yes please"}})");
  EXPECT_EQ(r.reason, "InvalidSpec");
  EXPECT_NE(r.message.find("spec.meshConfig.enableTracing"), std::string::npos) << r.message;
}

TEST(InstallRefusal, UnknownVersionAndStructuralErrorsAreInvalidSpec) {
  auto version = refusal_for(R"({"version":"0.9"})");
  EXPECT_EQ(version.reason, "InvalidSpec");
  EXPECT_NE(version.message.find("0.9"), std::string::npos) << version.message;
  auto tag = refusal_for(R"({"tag":{"not":"a tag"}})");
  EXPECT_EQ(tag.reason, "InvalidSpec");
  EXPECT_NE(tag.message.find("spec.tag"), std::string::npos) << tag.message;
}

TEST(InstallRefusal, AChartDirectoryThatCannotBeReadIsRenderFailed) {
  auto r = refusal_for(R"({"installPackagePath":"/nonexistent/meshop-test/manifests"})");
  EXPECT_EQ(r.reason, "RenderFailed");
  EXPECT_TRUE(r.message.starts_with("cannot render: ")) << r.message;
  EXPECT_NE(r.message.find("/nonexistent/meshop-test/manifests"), std::string::npos) << r.message;
}

TEST(InstallStatusPatch, AnErrorCarriesItsReasonIntoTheConditions) {
  StatusReport report;
  report.state = InstallState::kError;
  report.message = "invalid spec: spec.values.global.badKey: unknown field";
  report.reason = "InvalidSpec";
  auto patch = parse(status_patch(report, 3, nullptr, "2026-01-01T00:00:00Z"));
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 2u);
  for (const auto& c : conditions.GetArray()) {
    EXPECT_EQ(api::string_at(c, {"status"}), "False");
    EXPECT_EQ(api::string_at(c, {"reason"}), "InvalidSpec");
    EXPECT_EQ(api::string_at(c, {"message"}), report.message);
  }
  report.reason.clear();
  auto plain = parse(status_patch(report, 3, nullptr, "2026-01-01T00:00:00Z"));
  EXPECT_EQ(api::string_at(plain["status"]["conditions"][0], {"reason"}), "Error");
}

}  // namespace
}  // namespace meshop::reconcilers
