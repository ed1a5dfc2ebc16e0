// The install reconciler against the real local control plane (kwok makes pods Ready, so
// istiod Deployments become available): install with owner labels and HEALTHY status, drift
// repair, pruning, invalid specs, revision conflicts, the pause annotation and uninstall.
//
// Each test uses its own namespace (spec.namespace and values.global.istioNamespace point
// there) and its own revision, so the cluster-scoped objects (ClusterRoles named after revision
// and namespace) do not collide with other tests. The CRD is applied from crd/ if missing.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "reconcilers/install.hpp"
#include "test/e2e/reconcilers/e2e_support.hpp"

namespace meshop::reconcilers {
namespace {

using namespace std::chrono_literals;
using e2e::parse;

class InstallE2e : public e2e::ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(connect());
    ASSERT_NO_FATAL_FAILURE(ensure_istio_operator_crd());
    suffix_ = unique_suffix();
    ns_ = "install-e2e-" + suffix_;
    revision_ = "inst-" + suffix_;
    ASSERT_NO_FATAL_FAILURE(create_namespace(ns_));
  }

  void TearDown() override {
    // Finalizers off first, or the namespace would wait for a reconciler that is not running.
    auto iops = run(client_->list(istio_operator_resource(), ns_));
    if (iops)
      for (const auto& item : iops->list["items"].GetArray()) {
        std::string name = api::string_at(item, {"metadata", "name"});
        (void)run(client_->patch(istio_operator_resource(), ns_, name, kube::PatchType::kMerge,
                                 R"({"metadata":{"finalizers":null}})"));
        (void)run(client_->remove(istio_operator_resource(), ns_, name));
      }
    // Cluster-scoped objects the installs created (their names carry the test namespace).
    for (const auto* type :
         {&kube::resources::kClusterRoles, &kube::resources::kClusterRoleBindings,
          &kube::resources::kMutatingWebhookConfigurations,
          &kube::resources::kValidatingWebhookConfigurations}) {
      kube::ListOptions o;
      o.label_selector = std::string(kOwningResourceNamespaceLabel) + "=" + ns_;
      auto listed = run(client_->list(*type, "", o));
      if (!listed) continue;
      for (const auto& item : listed->list["items"].GetArray())
        (void)run(client_->remove(*type, "", api::string_at(item, {"metadata", "name"})));
    }
    for (const std::string& extra : extra_namespaces_)
      (void)run(client_->remove(kube::resources::kNamespaces, "", extra));
    (void)run(client_->remove(kube::resources::kNamespaces, "", ns_));
  }

  // An IstioOperator of profile minimal in the test namespace; `spec_extra` holds more spec
  // members (JSON, starting with a comma) and `metadata_extra` more metadata members.
  void create_iop(const std::string& name, const std::string& spec_extra = "",
                  const std::string& metadata_extra = "", std::string revision = "") {
    if (revision.empty()) revision = revision_;
    std::string body = R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
      "metadata":{"name":")" +
                       name + R"(","namespace":")" + ns_ + "\"" + metadata_extra + R"(},
      "spec":{"profile":"minimal","revision":")" +
                       revision + R"(","namespace":")" + ns_ +
                       R"(","values":{"global":{"istioNamespace":")" + ns_ + R"("}})" + spec_extra +
                       "}}";
    auto r = run(client_->create(istio_operator_resource(), ns_, parse(body)));
    ASSERT_TRUE(r) << r.error().message;
  }

  std::string key(const std::string& name) const { return ns_ + "/" + name; }
  std::string istiod() const { return "istiod-" + revision_; }
  std::string pilot_cluster_role() const { return "istiod-clusterrole-" + revision_ + "-" + ns_; }
  std::string reader_cluster_role() const {
    return "istio-reader-clusterrole-" + revision_ + "-" + ns_;
  }

  // Reconciles until the outcome's state is `state` (up to ~60 s); the last outcome.
  InstallOutcome reconcile_until(InstallReconciler& r, const std::string& name,
                                 InstallState state) {
    InstallOutcome last;
    for (int i = 0; i < 120; ++i) {
      auto outcome = run(r.reconcile_once(key(name)));
      EXPECT_TRUE(outcome) << outcome.message();
      if (!outcome) return last;
      last = *outcome;
      if (last.state == state) return last;
      std::this_thread::sleep_for(500ms);
    }
    ADD_FAILURE() << "state " << to_string(state) << " not reached; last: " << to_string(last.state)
                  << " " << last.message;
    return last;
  }

  kube::Result<rapidjson::Document> get(const kube::ResourceType& type, const std::string& ns,
                                        const std::string& name) {
    return run(client_->get(type, ns, name));
  }
  rapidjson::Document get_iop(const std::string& name) {
    auto r = get(istio_operator_resource(), ns_, name);
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : rapidjson::Document();
  }

  std::string suffix_, ns_, revision_;
  std::vector<std::string> extra_namespaces_;  // deleted in TearDown
};

TEST_F(InstallE2e, InstallsLabelledObjectsAndBecomesHealthy) {
  create_iop("iop");
  InstallReconciler r(client_);
  auto outcome = reconcile_until(r, "iop", InstallState::kHealthy);
  EXPECT_EQ(outcome.kind, InstallOutcome::Kind::kApplied);
  EXPECT_GT(outcome.applied, 5);

  auto deployment = get(kube::resources::kDeployments, ns_, istiod());
  ASSERT_TRUE(deployment) << deployment.error().message;
  EXPECT_EQ(owner_key(*deployment), key("iop"));
  const auto& labels = (*deployment)["metadata"]["labels"];
  EXPECT_EQ(api::string_at(labels, {"app.kubernetes.io/managed-by"}), "meshop");
  EXPECT_EQ(api::string_at(labels, {"operator.istio.io/component"}), "Pilot");
  auto cluster_role = get(kube::resources::kClusterRoles, "", pilot_cluster_role());
  ASSERT_TRUE(cluster_role) << cluster_role.error().message;
  EXPECT_EQ(owner_key(*cluster_role), key("iop"));
  // MutatingWebhookConfigurations are the webhooks reconciler's.
  auto mwc = get(kube::resources::kMutatingWebhookConfigurations, "",
                 "istio-sidecar-injector-" + revision_ + "-" + ns_);
  EXPECT_FALSE(mwc);

  auto iop = get_iop("iop");
  EXPECT_EQ(api::string_at(iop, {"status", "status"}), "HEALTHY");
  EXPECT_EQ(api::string_at(iop, {"status", "componentStatus", "Pilot", "status"}), "HEALTHY");
  EXPECT_EQ(api::string_at(iop, {"status", "componentStatus", "Base", "status"}), "HEALTHY");
  EXPECT_EQ(iop["status"]["observedGeneration"].GetInt64(),
            iop["metadata"]["generation"].GetInt64());
  ASSERT_TRUE(iop["metadata"].HasMember("finalizers"));
  EXPECT_EQ(api::string_view_of(iop["metadata"]["finalizers"][0]), "meshop.io/uninstall");
  bool ready = false;
  for (const auto& c : iop["status"]["conditions"].GetArray())
    ready = ready ||
            (api::string_at(c, {"type"}) == "Ready" && api::string_at(c, {"status"}) == "True");
  EXPECT_TRUE(ready);

  // Level-triggered: another pass writes no status (resourceVersion unchanged).
  std::string rv = api::string_at(iop, {"metadata", "resourceVersion"});
  auto again = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->state, InstallState::kHealthy);
  EXPECT_EQ(again->pruned, 0);
  EXPECT_EQ(api::string_at(get_iop("iop"), {"metadata", "resourceVersion"}), rv);
}

TEST_F(InstallE2e, MissingTargetNamespaceIsCreatedLabelledAndKeptOnUninstall) {
  // The control plane goes to a namespace that does not exist yet.
  std::string control = ns_ + "-ctl";
  extra_namespaces_.push_back(control);
  std::string body = R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
    "metadata":{"name":"iop","namespace":")" +
                     ns_ + R"("},
    "spec":{"profile":"minimal","revision":")" +
                     revision_ + R"(","namespace":")" + control +
                     R"(","values":{"global":{"istioNamespace":")" + control + R"("}}}})";
  auto created = run(client_->create(istio_operator_resource(), ns_, parse(body)));
  ASSERT_TRUE(created) << created.error().message;
  InstallReconciler r(client_);
  auto first = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(first->created_namespaces, std::vector<std::string>{control});
  auto outcome = reconcile_until(r, "iop", InstallState::kHealthy);
  EXPECT_TRUE(outcome.created_namespaces.empty());  // exists now
  auto ns = get(kube::resources::kNamespaces, "", control);
  ASSERT_TRUE(ns) << ns.error().message;
  EXPECT_EQ(owner_key(*ns), key("iop"));
  EXPECT_TRUE(get(kube::resources::kDeployments, control, istiod()).ok());

  ASSERT_TRUE(run(client_->remove(istio_operator_resource(), ns_, "iop")));
  auto uninstalled = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(uninstalled) << uninstalled.message();
  EXPECT_EQ(uninstalled->kind, InstallOutcome::Kind::kUninstalled);
  EXPECT_FALSE(get(kube::resources::kDeployments, control, istiod()).ok());
  auto kept = get(kube::resources::kNamespaces, "", control);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_TRUE(api::string_at(*kept, {"metadata", "deletionTimestamp"}).empty());
}

TEST_F(InstallE2e, DeletedDeploymentIsRecreatedAndEditedFieldRestored) {
  create_iop("iop");
  InstallReconciler r(client_);
  reconcile_until(r, "iop", InstallState::kHealthy);
  auto cm = get(kube::resources::kConfigMaps, ns_, "istio-" + revision_);
  ASSERT_TRUE(cm) << cm.error().message;
  std::string mesh = api::string_at(*cm, {"data", "mesh"});
  ASSERT_FALSE(mesh.empty());

  auto removed = run(client_->remove(kube::resources::kDeployments, ns_, istiod()));
  ASSERT_TRUE(removed) << removed.error().message;
  for (int i = 0; i < 100 && get(kube::resources::kDeployments, ns_, istiod()).ok(); ++i)
    std::this_thread::sleep_for(100ms);
  ASSERT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  kube::PatchOptions by_hand;
  by_hand.field_manager = "kubectl-edit";
  auto edited =
      run(client_->patch(kube::resources::kConfigMaps, ns_, "istio-" + revision_,
                         kube::PatchType::kMerge, R"({"data":{"mesh":"edited: true"}})", by_hand));
  ASSERT_TRUE(edited) << edited.error().message;

  auto outcome = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_TRUE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  auto restored = get(kube::resources::kConfigMaps, ns_, "istio-" + revision_);
  ASSERT_TRUE(restored);
  EXPECT_EQ(api::string_at(*restored, {"data", "mesh"}), mesh);
  reconcile_until(r, "iop", InstallState::kHealthy);
}

TEST_F(InstallE2e, ObjectsNoLongerRenderedArePruned) {
  create_iop("iop");
  InstallReconciler r(client_);
  reconcile_until(r, "iop", InstallState::kHealthy);
  // Istio's charts: base holds the CRDs and the reader ServiceAccount, istio-discovery the
  // reader ClusterRole and istiod's HorizontalPodAutoscaler.
  ASSERT_TRUE(get(kube::resources::kServiceAccounts, ns_, "istio-reader-service-account").ok());
  ASSERT_TRUE(get(kube::resources::kHorizontalPodAutoscalers, ns_, istiod()).ok());
  ASSERT_TRUE(
      get(kube::resources::kCustomResourceDefinitions, "", "virtualservices.networking.istio.io")
          .ok());

  auto patched = run(client_->patch(istio_operator_resource(), ns_, "iop", kube::PatchType::kMerge,
                                    R"({"spec":{"components":{"base":{"enabled":false}},
                             "values":{"pilot":{"autoscaleEnabled":false}}}})"));
  ASSERT_TRUE(patched) << patched.error().message;
  auto outcome = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_GE(outcome->pruned, 2);  // the reader ServiceAccount, the HorizontalPodAutoscaler
  EXPECT_FALSE(get(kube::resources::kServiceAccounts, ns_, "istio-reader-service-account").ok());
  EXPECT_FALSE(get(kube::resources::kHorizontalPodAutoscalers, ns_, istiod()).ok());
  // CRDs are never pruned (other installs and every Istio object depend on them), and what is
  // still rendered stays.
  EXPECT_TRUE(
      get(kube::resources::kCustomResourceDefinitions, "", "virtualservices.networking.istio.io")
          .ok());
  EXPECT_TRUE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  EXPECT_TRUE(get(kube::resources::kClusterRoles, "", reader_cluster_role()).ok());
  EXPECT_TRUE(get(kube::resources::kClusterRoles, "", pilot_cluster_role()).ok());
  auto iop = get_iop("iop");
  EXPECT_FALSE(iop["status"]["componentStatus"].HasMember("Base"));
}

TEST_F(InstallE2e, InvalidSpecIsErrorWithFieldPathsAndOthersUnaffected) {
  // Both pass the CRD's schema (tag keeps unknown fields, hub is any string); meshop's
  // validation rejects them.
  create_iop("bad", R"(,"tag":{"not":"a tag"},"meshConfig":{})", "", revision_);
  auto patched = run(client_->patch(istio_operator_resource(), ns_, "bad", kube::PatchType::kMerge,
                                    R"({"spec":{"hub":"docker.io/Bad Hub"}})"));
  ASSERT_TRUE(patched) << patched.error().message;
  create_iop("good", "", "", revision_ + "-b");

  auto events = kube::EventRecorder::create(client_);
  InstallReconciler r(client_, {}, nullptr, events);
  auto bad = run(r.reconcile_once(key("bad")));
  ASSERT_TRUE(bad) << bad.message();
  EXPECT_EQ(bad->kind, InstallOutcome::Kind::kInvalid);
  EXPECT_EQ(bad->applied, 0);
  auto iop = get_iop("bad");
  EXPECT_EQ(api::string_at(iop, {"status", "status"}), "ERROR");
  std::string message = api::string_at(iop, {"status", "message"});
  EXPECT_NE(message.find("spec.tag"), std::string::npos) << message;
  EXPECT_NE(message.find("spec.hub"), std::string::npos) << message;
  EXPECT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());

  auto action = run(r.reconcile(key("bad")));
  EXPECT_EQ(action.kind, runtime::Action::Kind::kTerminalError);

  run([](std::shared_ptr<kube::EventRecorder> e) -> kube::Task<int> {
    co_await e->flush();
    co_return 0;
  }(events));
  auto listed = run(client_->list(kube::resources::kEvents, ns_));
  ASSERT_TRUE(listed) << listed.error().message;
  bool warned = false;
  for (const auto& e : listed->list["items"].GetArray())
    warned = warned || (api::string_at(e, {"reason"}) == "InvalidSpec" &&
                        api::string_at(e, {"type"}) == "Warning" &&
                        api::string_at(e, {"regarding", "name"}) == "bad");
  EXPECT_TRUE(warned);

  auto good = run(r.reconcile_once(key("good")));
  ASSERT_TRUE(good) << good.message();
  EXPECT_EQ(good->kind, InstallOutcome::Kind::kApplied);
  EXPECT_TRUE(get(kube::resources::kDeployments, ns_, "istiod-" + revision_ + "-b").ok());
}

TEST_F(InstallE2e, MeshConfigTheInjectorWouldRejectIsErrorWithNothingApplied) {
  // Passes the CRD (meshConfig keeps unknown fields) and meshop's structural validation; the
  // injector would refuse the rendered ConfigMap and deny every pod of the revision.
  create_iop("iop", R"(,"meshConfig":{"enableTracing":"yes please"})");
  InstallReconciler r(client_);
  auto outcome = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kInvalid);
  EXPECT_EQ(outcome->applied, 0);
  auto iop = get_iop("iop");
  EXPECT_EQ(api::string_at(iop, {"status", "status"}), "ERROR");
  std::string message = api::string_at(iop, {"status", "message"});
  EXPECT_NE(message.find("spec.meshConfig.enableTracing: "), std::string::npos) << message;
  EXPECT_FALSE(get(kube::resources::kConfigMaps, ns_, "istio-" + revision_).ok());
  EXPECT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  EXPECT_EQ(run(r.reconcile(key("iop"))).kind, runtime::Action::Kind::kTerminalError);
}

TEST_F(InstallE2e, ValuesIstioctlWouldRefuseAreErrorWithTheirPathsAndNothingApplied) {
  // The CRD keeps unknown values fields; istioctl's validation refuses an unknown field and a
  // wrong type in spec.values (jsonpb into the Values message), and so does meshop.
  create_iop("iop");
  auto patched = run(client_->patch(
      istio_operator_resource(), ns_, "iop", kube::PatchType::kMerge,
      R"({"spec":{"values":{"global":{"badKey":1},"pilot":{"autoscaleMax":"seven"}}}})"));
  ASSERT_TRUE(patched) << patched.error().message;
  InstallReconciler r(client_);
  auto outcome = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kInvalid);
  EXPECT_EQ(outcome->applied, 0);
  auto iop = get_iop("iop");
  EXPECT_EQ(api::string_at(iop, {"status", "status"}), "ERROR");
  std::string message = api::string_at(iop, {"status", "message"});
  EXPECT_NE(message.find("spec.values.global.badKey: unknown field"), std::string::npos) << message;
  EXPECT_NE(message.find("spec.values.pilot.autoscaleMax: "), std::string::npos) << message;
  // Invalid input, not a render failure: the conditions say so.
  ASSERT_TRUE(iop["status"]["conditions"].IsArray());
  for (const auto& c : iop["status"]["conditions"].GetArray())
    EXPECT_EQ(api::string_at(c, {"reason"}), "InvalidSpec") << api::to_json(c);
  EXPECT_FALSE(get(kube::resources::kConfigMaps, ns_, "istio-" + revision_).ok());
  EXPECT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  EXPECT_EQ(run(r.reconcile(key("iop"))).kind, runtime::Action::Kind::kTerminalError);
}

TEST_F(InstallE2e, ApplyRejectedByTheApiserverIsErrorNamingTheObject) {
  // Valid for istioctl's pipeline (a nodeSelector is a map of strings) but not a label key: the
  // apiserver refuses istiod's Deployment.
  create_iop("iop", R"(,"components":{"pilot":{"k8s":{"nodeSelector":{"not a label key!":"x"}}}})");
  InstallReconciler r(client_);
  // On a fresh cluster the first passes only apply Istio's CRDs and wait for them.
  auto outcome = run(r.reconcile_once(key("iop")));
  for (int i = 0; i < 60 && outcome && outcome->state == InstallState::kReconciling &&
                  outcome->message.starts_with("waiting for CustomResourceDefinitions");
       ++i) {
    std::this_thread::sleep_for(500ms);
    outcome = run(r.reconcile_once(key("iop")));
  }
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kApplyFailed);
  EXPECT_GT(outcome->applied, 0);  // the other objects went in
  auto iop = get_iop("iop");
  EXPECT_EQ(api::string_at(iop, {"status", "status"}), "ERROR");
  std::string message = api::string_at(iop, {"status", "message"});
  EXPECT_NE(message.find(istiod()), std::string::npos) << message;
  EXPECT_EQ(api::string_at(iop, {"status", "componentStatus", "Pilot", "status"}), "ERROR");
  EXPECT_EQ(api::string_at(iop, {"status", "componentStatus", "Base", "status"}), "HEALTHY");
  EXPECT_TRUE(get(kube::resources::kConfigMaps, ns_, "istio-" + revision_).ok());
  // The apiserver's 422 Invalid keeps its kind up to the error policy: only an edit of the
  // spec fixes it, so no retry until the IstioOperator changes.
  EXPECT_EQ(run(r.reconcile(key("iop"))).kind, runtime::Action::Kind::kTerminalError);

  // Fixed spec: installs.
  auto fixed =
      run(client_->patch(istio_operator_resource(), ns_, "iop", kube::PatchType::kMerge,
                         R"({"spec":{"components":{"pilot":{"k8s":{"nodeSelector":null}}}}})"));
  ASSERT_TRUE(fixed) << fixed.error().message;
  reconcile_until(r, "iop", InstallState::kHealthy);
}

TEST_F(InstallE2e, SecondOperatorOfARevisionIsErrorNamingTheOwner) {
  create_iop("first");
  std::this_thread::sleep_for(1100ms);  // creationTimestamp has one-second resolution
  create_iop("second");
  InstallReconciler r(client_);
  auto second = run(r.reconcile_once(key("second")));
  ASSERT_TRUE(second) << second.message();
  EXPECT_EQ(second->kind, InstallOutcome::Kind::kConflict);
  EXPECT_EQ(api::string_at(get_iop("second"), {"status", "status"}), "ERROR");
  EXPECT_NE(api::string_at(get_iop("second"), {"status", "message"}).find(key("first")),
            std::string::npos);
  EXPECT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());
  auto first = run(r.reconcile_once(key("first")));
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(first->kind, InstallOutcome::Kind::kApplied);
}

TEST_F(InstallE2e, IgnoreReconcileAnnotationPausesEverything) {
  create_iop("paused", "", R"(,"annotations":{"install.istio.io/ignoreReconcile":"true"})");
  InstallReconciler r(client_);
  auto outcome = run(r.reconcile_once(key("paused")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kIgnored);
  auto iop = get_iop("paused");
  EXPECT_FALSE(iop["metadata"].HasMember("finalizers"));
  EXPECT_FALSE(iop.HasMember("status"));
  EXPECT_FALSE(get(kube::resources::kDeployments, ns_, istiod()).ok());

  // Un-paused it installs; paused again, a deleted object stays deleted.
  auto set = [&](const char* value) {
    std::string body =
        std::string(R"({"metadata":{"annotations":{"install.istio.io/ignoreReconcile":)") + value +
        "}}}";
    auto p = run(
        client_->patch(istio_operator_resource(), ns_, "paused", kube::PatchType::kMerge, body));
    ASSERT_TRUE(p) << p.error().message;
  };
  set("null");
  auto installed = run(r.reconcile_once(key("paused")));
  ASSERT_TRUE(installed) << installed.message();
  EXPECT_EQ(installed->kind, InstallOutcome::Kind::kApplied);
  set(R"("true")");
  ASSERT_TRUE(run(client_->remove(kube::resources::kConfigMaps, ns_, "istio-" + revision_)));
  auto paused = run(r.reconcile_once(key("paused")));
  ASSERT_TRUE(paused) << paused.message();
  EXPECT_EQ(paused->kind, InstallOutcome::Kind::kIgnored);
  EXPECT_FALSE(get(kube::resources::kConfigMaps, ns_, "istio-" + revision_).ok());
}

TEST_F(InstallE2e, DeletingTheOperatorUninstallsAndReleasesTheFinalizer) {
  create_iop("iop");
  InstallReconciler r(client_);
  reconcile_until(r, "iop", InstallState::kHealthy);
  ASSERT_TRUE(run(client_->remove(istio_operator_resource(), ns_, "iop")));
  EXPECT_TRUE(get(istio_operator_resource(), ns_, "iop").ok());  // held by the finalizer

  auto outcome = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(outcome) << outcome.message();
  EXPECT_EQ(outcome->kind, InstallOutcome::Kind::kUninstalled);
  EXPECT_GT(outcome->pruned, 5);
  auto gone = get(istio_operator_resource(), ns_, "iop");
  ASSERT_FALSE(gone);
  EXPECT_TRUE(gone.error().is(kube::ErrorKind::kNotFound));
  for (const auto& [api_version, kind] : prunable_kinds()) {
    auto type = run(client_->discover(api_version, kind));
    if (!type && kind == "NetworkAttachmentDefinition") continue;  // no Multus on this cluster
    ASSERT_TRUE(type) << type.error().message;
    kube::ListOptions o;
    o.label_selector = owner_selector("iop", ns_);
    auto listed = run(client_->list(*type, "", o));
    ASSERT_TRUE(listed) << listed.error().message;
    EXPECT_EQ(listed->list["items"].Size(), 0u) << kind;
  }
  // The namespace was not meshop's to delete.
  EXPECT_TRUE(get(kube::resources::kNamespaces, "", ns_).ok());
}

}  // namespace
}  // namespace meshop::reconcilers

namespace meshop::reconcilers {
namespace {

// With a live view (meshop run passes its informers' stores), an object nobody changed since
// the last apply is not applied again; an edited or deleted one is.
TEST_F(InstallE2e, UnchangedObjectsAreNotAppliedAgainButDriftStillIs) {
  create_iop("iop");
  std::map<ObjectId, std::shared_ptr<const rapidjson::Value>> live;
  InstallConfig config;
  config.live = [&live](const ObjectId& id) -> std::shared_ptr<const rapidjson::Value> {
    auto it = live.find(id);
    return it == live.end() ? nullptr : it->second;
  };
  InstallReconciler r(client_, config);
  reconcile_until(r, "iop", InstallState::kHealthy);

  // What a watch cache would hold now: the namespaced objects the install owns.
  auto refresh = [&] {
    live.clear();
    kube::ListOptions o;
    o.label_selector = owner_selector("iop", ns_);
    for (const auto* type :
         {&kube::resources::kConfigMaps, &kube::resources::kServiceAccounts,
          &kube::resources::kServices, &kube::resources::kRoles, &kube::resources::kRoleBindings}) {
      auto listed = run(client_->list(*type, ns_, o));
      ASSERT_TRUE(listed) << listed.error().message;
      for (const auto& item : listed->list["items"].GetArray()) {
        auto doc = std::make_shared<rapidjson::Document>();
        doc->CopyFrom(item, doc->GetAllocator());
        live[ObjectId{type->group, type->kind, ns_, api::string_at(item, {"metadata", "name"})}] =
            std::move(doc);
      }
    }
  };
  refresh();
  ASSERT_GE(live.size(), 4u);
  auto quiet = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(quiet) << quiet.message();
  EXPECT_EQ(quiet->state, InstallState::kHealthy);
  EXPECT_EQ(quiet->unchanged, static_cast<int>(live.size()));
  // The rest (the Deployment, cluster-scoped RBAC: not in this view) is still applied.
  EXPECT_GT(quiet->applied, 0);

  // Edited by hand: applied again, and the edit is taken back.
  auto cm = get(kube::resources::kConfigMaps, ns_, "istio-" + revision_);
  ASSERT_TRUE(cm) << cm.error().message;
  const std::string mesh = api::string_at(*cm, {"data", "mesh"});
  kube::PatchOptions by_hand;
  by_hand.field_manager = "kubectl-edit";
  ASSERT_TRUE(
      run(client_->patch(kube::resources::kConfigMaps, ns_, "istio-" + revision_,
                         kube::PatchType::kMerge, R"({"data":{"mesh":"edited: true"}})", by_hand)));
  // Deleted: applied again, i.e. re-created.
  const std::string service = istiod();
  ASSERT_TRUE(run(client_->remove(kube::resources::kServices, ns_, service)));
  for (int i = 0; i < 100 && get(kube::resources::kServices, ns_, service).ok(); ++i)
    std::this_thread::sleep_for(100ms);
  refresh();
  auto repaired = run(r.reconcile_once(key("iop")));
  ASSERT_TRUE(repaired) << repaired.message();
  EXPECT_EQ(repaired->unchanged, static_cast<int>(live.size()) - 1);  // all but the ConfigMap
  auto restored = get(kube::resources::kConfigMaps, ns_, "istio-" + revision_);
  ASSERT_TRUE(restored);
  EXPECT_EQ(api::string_at(*restored, {"data", "mesh"}), mesh);
  EXPECT_TRUE(get(kube::resources::kServices, ns_, service).ok());
}

}  // namespace
}  // namespace meshop::reconcilers
