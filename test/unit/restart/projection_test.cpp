// What the Pod store keeps (projection.hpp): a plan over projected pods is the plan over the
// whole pods, for every verdict the planner can reach; and what is dropped is really dropped.
#include "operator/restart/projection.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/record.hpp"
#include "operator/restart/cluster_plan.hpp"
#include "operator/restart/evict.hpp"
#include "operator/restart/halt.hpp"
#include "operator/restart/rollout.hpp"
#include "operator/runtime/object.hpp"
#include "test/unit/restart/fixtures.hpp"

namespace meshop::restart {
namespace {

// A pod as the API returns it: `pod()` of the fixtures with what a real one carries besides.
rapidjson::Document api_pod(const std::string& json, const std::string& ns, const std::string& uid,
                            const std::string& owner_uid, const std::string& extra_meta = "") {
  rapidjson::Document d = parse(json);
  auto& a = d.GetAllocator();
  d.AddMember("kind", "Pod", a);  // as load_cluster_view sets it on listed items
  rapidjson::Value& meta = d["metadata"];
  std::string owner = owner_uid.empty()
                          ? std::string("[]")
                          : R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":")" +
                                owner_uid + R"(","controller":true,"blockOwnerDeletion":true}])";
  rapidjson::Document more = parse(
      R"({"namespace":")" + ns + R"(","uid":")" + uid +
      R"(","resourceVersion":"7","creationTimestamp":"2026-12-01T10:00:00Z",
      "labels":{"app":"web","pod-template-hash":"abc"},"ownerReferences":)" +
      owner + R"(,"managedFields":[{"manager":"kube-controller-manager"}])" + extra_meta + "}");
  for (auto& m : more.GetObject())
    meta.AddMember(rapidjson::Value(m.name, a), rapidjson::Value(m.value, a), a);
  if (!meta.HasMember("annotations"))
    meta.AddMember("annotations", rapidjson::Value(rapidjson::kObjectType), a);
  meta["annotations"].AddMember("prometheus.io/scrape", "true", a);
  meta["annotations"].AddMember("kubectl.kubernetes.io/default-container", "app", a);
  rapidjson::Value& spec = d["spec"];
  spec.AddMember("nodeName", "kwok-node-0", a);
  spec.AddMember("volumes", rapidjson::Value(parse(R"([{"name":"v","emptyDir":{}}])"), a), a);
  for (auto& c : spec["containers"].GetArray())
    c.AddMember("env", rapidjson::Value(parse(R"([{"name":"A","value":"b"}])"), a), a);
  d.AddMember("status",
              rapidjson::Value(parse(R"({"phase":"Running","podIP":"10.0.0.1",
      "conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True",
      "lastTransitionTime":"2026-12-01T10:00:01Z"}],
      "containerStatuses":[{"name":"app","restartCount":2,"image":"app:1","ready":false,
      "state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 10s"}}}]})"),
                               a),
              a);
  return d;
}

// reconcilers/watches.cpp pods()'s shared paths (the restart library does not link the
// reconcilers).
const std::vector<std::string> kPodStorePaths = {
    "/0", "/0/metadata/annotations", "/0/spec", "/0/status",
    "/3", "/metadata/annotations",   "/spec",   "/status"};
// reconcilers/watches.cpp every()'s.
const std::vector<std::string> kWorkloadStorePaths = {"/metadata/labels", "/spec", "/status"};

// Whatever of a pod the executor reads changes its record, and the readers see the change:
// a new resourceVersion, a deletionTimestamp, the Ready condition, a container's restarts.
TEST(ProjectPod, APodThatChangesIsSeenChanged) {
  runtime::SharedParts parts;
  auto stored = [&](const std::string& extra_meta, const std::string& ready,
                    int restarts) -> runtime::Object {
    rapidjson::Document d =
        api_pod(pod("web-1", "canary", "hub/proxyv2:1.1"), "ns-a", "u1", "rs-1", extra_meta);
    auto& a = d.GetAllocator();
    d["status"]["conditions"][1]["status"].SetString(ready.c_str(), a);
    d["status"]["containerStatuses"][0]["restartCount"].SetInt(restarts);
    d["status"]["containerStatuses"][0].RemoveMember("state");
    project_pod(d);
    return runtime::compact_object(d, parts, kPodStorePaths);
  };
  const runtime::Object base = stored("", "True", 0);
  const runtime::Object again = stored("", "True", 0);
  EXPECT_EQ(api::field(*base, "/metadata/labels"), api::field(*again, "/metadata/labels"))
      << "one base for both";
  EXPECT_EQ(api::to_json(*again), api::to_json(*base));

  auto since = std::optional<SystemTime>(SystemTime{});
  rapidjson::Document workload = parse(deployment("Deployment", "ns-a"));
  auto health = [&](const runtime::Object& p) {
    return workload_health(workload, {p.get()}, {}, since, true);
  };
  EXPECT_FALSE(health(base).regressed) << health(base).what;

  rapidjson::Document newer =
      api_pod(pod("web-1", "canary", "hub/proxyv2:1.1"), "ns-a", "u1", "rs-1");
  newer["metadata"]["resourceVersion"].SetString("8");
  newer["status"]["containerStatuses"][0]["restartCount"].SetInt(0);
  newer["status"]["containerStatuses"][0].RemoveMember("state");
  project_pod(newer);
  runtime::Object new_rv = runtime::compact_object(newer, parts, kPodStorePaths);
  EXPECT_EQ(api::field_string(*new_rv, "/metadata/resourceVersion"), "8");
  EXPECT_EQ(runtime::resource_version_of(*new_rv), "8");
  EXPECT_EQ(api::field(*new_rv, "/metadata/labels"), api::field(*base, "/metadata/labels"))
      << "nothing else changed";

  const runtime::Object deleting =
      stored(R"(,"deletionTimestamp":"2026-12-01T11:00:00Z")", "True", 0);
  EXPECT_EQ(api::field_string(*deleting, "/metadata/deletionTimestamp"), "2026-12-01T11:00:00Z");
  EXPECT_EQ(api::field(*base, "/metadata/deletionTimestamp"), nullptr);
  EXPECT_EQ(runtime::meta_string(*deleting, "deletionTimestamp"), "2026-12-01T11:00:00Z");

  const runtime::Object unready = stored("", "False", 0);
  EXPECT_NE(api::field(*unready, "/status"), api::field(*base, "/status"));
  EXPECT_EQ(api::field(*unready, "/spec/containers"), api::field(*base, "/spec/containers"))
      << "still shared";
  EXPECT_EQ(health(unready).reason, "NotReady");

  const runtime::Object restarted = stored("", "True", 3);
  EXPECT_EQ(health(restarted).reason, "ContainerRestarts");

  // Evicting: a terminating pod is waited for, an unready one named.
  rapidjson::Document dep = parse(deployment("Deployment", "ns-a"));
  dep["spec"].AddMember(
      "strategy",
      rapidjson::Value(parse(R"({"rollingUpdate":{"maxUnavailable":1}})"), dep.GetAllocator()),
      dep.GetAllocator());
  EvictStep ok = evict_step(dep, {base.get()}, {"web-1"}, SystemTime{}, std::chrono::seconds(60));
  EvictStep term =
      evict_step(dep, {deleting.get()}, {"web-1"}, SystemTime{}, std::chrono::seconds(60));
  EvictStep wait =
      evict_step(dep, {unready.get()}, {"web-1"}, SystemTime{}, std::chrono::seconds(60));
  EXPECT_EQ(ok.ready, 1);
  EXPECT_EQ(term.waiting, "waiting for pod web-1 to terminate");
  EXPECT_EQ(wait.waiting, "waiting for pod web-1 to be Ready");

  // And as the object it stands for.
  rapidjson::Document whole = api::from_record(*deleting);
  EXPECT_EQ(api::string_at(whole, {"metadata", "name"}), "web-1");
  EXPECT_EQ(api::string_at(whole, {"metadata", "namespace"}), "ns-a");
  EXPECT_EQ(api::string_at(whole, {"metadata", "deletionTimestamp"}), "2026-12-01T11:00:00Z");
  EXPECT_EQ(api::string_at(whole, {"metadata", "creationTimestamp"}), "2026-12-01T10:00:00Z");
}

TEST(ProjectPod, KeepsWhatThePlannersReadAndDropsTheRest) {
  rapidjson::Document p = api_pod(pod("web-1", "canary", "hub/proxyv2:1.1", "fp1"), "ns-a", "u1",
                                  "rs-1", R"(,"deletionTimestamp":"2026-12-01T11:00:00Z")");
  PodState before = observe_pod(p);
  project_pod(p);
  ASSERT_TRUE(api::is_record(p)) << "a controlled pod is a record: its siblings share the rest";
  EXPECT_EQ(api::to_json(p[api::kRecordBase]).find("web-1"), std::string::npos)
      << "nothing of its own in the base";
  for (const char* kept :
       {"/metadata/name", "/metadata/namespace", "/metadata/resourceVersion",
        "/metadata/creationTimestamp", "/metadata/deletionTimestamp", "/metadata/labels/app",
        "/metadata/ownerReferences/0/uid", "/metadata/ownerReferences/0/controller",
        "/spec/containers/1/image", "/status/phase", "/status/conditions/0/status",
        "/status/containerStatuses/0/name", "/status/containerStatuses/0/restartCount",
        "/status/containerStatuses/0/state/waiting/reason"})
    EXPECT_NE(api::field(p, kept), nullptr) << kept;
  for (const char* dropped :
       {"/kind", "/apiVersion", "/metadata/uid", "/metadata/managedFields",
        "/metadata/annotations/prometheus.io~1scrape",
        "/metadata/ownerReferences/0/blockOwnerDeletion", "/spec/nodeName", "/spec/volumes",
        "/spec/containers/0/env", "/status/podIP", "/status/conditions/1",
        "/status/conditions/0/lastTransitionTime", "/status/containerStatuses/0/image",
        "/status/containerStatuses/0/state/waiting/message"})
    EXPECT_EQ(api::field(p, dropped), nullptr) << dropped;
  ASSERT_NE(api::field(p, "/status/conditions/0"), nullptr);
  EXPECT_EQ(api::string_at(*api::field(p, "/status/conditions/0"), {"type"}), "Ready");
  PodState after = observe_pod(p);
  EXPECT_EQ(after.injected, before.injected);
  EXPECT_EQ(after.revision, "canary");
  EXPECT_EQ(after.proxy_image, "hub/proxyv2:1.1");
  EXPECT_EQ(after.fingerprint, "fp1");
}

TEST(ProjectPod, PodsNoControllerOwnsStayWhole) {
  rapidjson::Document p = api_pod(pod("bare", ""), "ns-b", "u2", "");
  project_pod(p);
  EXPECT_EQ(api::string_at(p, {"kind"}), "Pod");
  EXPECT_EQ(api::find(p, "/metadata/managedFields"), nullptr);
  EXPECT_NE(api::find(p, "/spec/volumes"), nullptr) << "the engine decides on the whole pod";
  EXPECT_NE(api::find(p, "/spec/containers/0/env"), nullptr);
  EXPECT_NE(api::find(p, "/metadata/annotations/prometheus.io~1scrape"), nullptr);
}

TEST(ProjectNode, KeepsTheKubeletVersion) {
  rapidjson::Document n = parse(R"({"metadata":{"name":"n1","uid":"x","resourceVersion":"3",
      "labels":{"a":"b"}},"spec":{"podCIDR":"10.0.0.0/24"},"status":{"nodeInfo":{
      "kubeletVersion":"v1.36.3","osImage":"kwok"},"capacity":{"pods":"110"}}})");
  project_node(n);
  EXPECT_EQ(
      api::to_json(n),
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"x","resourceVersion":"3"},)"
      R"("status":{"nodeInfo":{"kubeletVersion":"v1.36.3"}}})");
}

// A Deployment's status and annotations as the deployment controller writes them.
constexpr const char* kDeploymentAnnotations =
    R"({"deployment.kubernetes.io/revision":"3","meshop.io/restart":"true"})";
constexpr const char* kDeploymentStatus = R"({"observedGeneration":1,"replicas":2,
    "updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"conditions":[
    {"type":"Available","status":"True","lastUpdateTime":"2026-12-01T10:00:09Z",
    "lastTransitionTime":"2026-12-01T10:00:09Z","reason":"MinimumReplicasAvailable",
    "message":"Deployment has minimum availability."},
    {"type":"Progressing","status":"True","lastUpdateTime":"2026-12-01T10:00:09Z",
    "lastTransitionTime":"2026-12-01T10:00:00Z","reason":"NewReplicaSetAvailable",
    "message":"ReplicaSet \"w-5d8c\" has successfully progressed."}]})";

// Each verdict: up to date, revision changed, proxy image changed, template changed, injection
// enabled (the pod has no sidecar), a terminating pod, a bare pod and a Job's pod.
TEST(ProjectPod, PlanOverProjectedPodsAndWorkloadsIsThePlanOverWholeOnes) {
  auto build = [](bool projected, runtime::SharedParts* parts = nullptr) {
    ClusterView view;
    view.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector", "default", "default", true)));
    view.webhook_configurations.push_back(
        parse(configuration("istio-sidecar-injector-canary", "canary", "canary", false)));
    view.namespaces.push_back(
        parse(R"({"metadata":{"name":"ns-a","labels":{"istio.io/rev":"canary"}}})"));
    view.namespaces.push_back(
        parse(R"({"metadata":{"name":"ns-b","labels":{"istio-injection":"enabled"}}})"));
    view.istio_operators.push_back(parse(
        R"({"metadata":{"namespace":"istio-system","name":"canary-iop"},"spec":{"revision":"canary",
        "restarts":{"mode":"Auto","includeTemplateChanges":true}},"status":{"status":"HEALTHY"}})"));
    view.istio_operators.push_back(parse(
        R"({"metadata":{"namespace":"istio-system","name":"default-iop"},"spec":{},"status":{"status":"HEALTHY"}})"));
    struct W {
      std::string ns, name;
      std::vector<std::string> pods;  // fixture pods
    };
    std::vector<W> workloads = {
        {"ns-a",
         "same",
         {pod("same-b", "canary", "hub/proxyv2:1.1", "fp-canary"),
          pod("same-a", "canary", "hub/proxyv2:1.1", "fp-canary")}},
        {"ns-a",
         "moved",
         {pod("moved-b", "canary", "hub/proxyv2:1.1", "fp-canary"),
          pod("moved-a", "default", "hub/proxyv2:1.0", "fp-default")}},
        {"ns-a", "image", {pod("image-a", "canary", "hub/proxyv2:0.9", "fp-canary")}},
        {"ns-a", "template", {pod("template-a", "canary", "hub/proxyv2:1.1", "fp-old")}},
        {"ns-b", "fresh", {pod("fresh-a", ""), pod("fresh-b", "")}},
    };
    int uid = 0;
    for (const W& w : workloads) {
      std::string d = deployment("Deployment", w.ns);
      d.replace(d.find(R"("name":"w")"), 10, R"("name":")" + w.name + R"(")");
      rapidjson::Document dep = parse(d);
      auto& a = dep.GetAllocator();
      dep["metadata"].AddMember("uid", api::make_string(w.name, a), a);
      dep["metadata"].AddMember("creationTimestamp", "2026-12-01T09:00:00Z", a);
      dep["metadata"].AddMember("annotations", rapidjson::Value(parse(kDeploymentAnnotations), a),
                                a);
      dep.AddMember("status", rapidjson::Value(parse(kDeploymentStatus), a), a);
      view.workloads.push_back(std::move(dep));
      rapidjson::Document rs = parse(
          R"({"kind":"ReplicaSet","metadata":{"name":")" + w.name + R"(-rs","namespace":")" + w.ns +
          R"(","uid":")" + w.name +
          R"(-rs","creationTimestamp":"2026-12-01T09:00:01Z",
          "annotations":{"deployment.kubernetes.io/revision":"1"},
          "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":")" +
          w.name + R"(","uid":")" + w.name +
          R"(","controller":true,"blockOwnerDeletion":true}]},"spec":{"replicas":2,"template":{"metadata":{
          "labels":{"app":"x"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}},
          "status":{"replicas":2,"readyReplicas":2}})");
      view.workloads.push_back(std::move(rs));
      for (const std::string& p : w.pods)
        view.pods.push_back(api_pod(p, w.ns, "p" + std::to_string(++uid), w.name + "-rs"));
    }
    view.pods.push_back(api_pod(pod("bare", "default", "hub/proxyv2:1.0"), "ns-b", "bare", ""));
    if (projected) {
      ClusterView out;
      out.webhook_configurations = view.webhook_configurations;
      out.namespaces = view.namespaces;
      out.istio_operators = view.istio_operators;
      for (const rapidjson::Value& w : view.workloads) {
        rapidjson::Document copy;
        copy.CopyFrom(w, copy.GetAllocator());
        const std::string kind = api::string_at(w, {"kind"});
        project_workload(copy, "apps/v1", kind);
        if (parts != nullptr)  // as the workload stores keep them
          out.workloads.push_back(runtime::compact_object(copy, *parts, kWorkloadStorePaths));
        else
          out.workloads.push_back(std::move(copy));
      }
      for (const rapidjson::Value& p : view.pods) {
        rapidjson::Document copy;
        copy.CopyFrom(p, copy.GetAllocator());
        project_pod(copy);
        if (parts != nullptr)  // as the pod store keeps it: the base shared with its siblings
          out.pods.push_back(runtime::compact_object(copy, *parts, kPodStorePaths));
        else
          out.pods.push_back(std::move(copy));
      }
      return out;
    }
    return view;
  };
  DesiredFn desired = [](const std::string& revision,
                         const rapidjson::Value&) -> std::optional<Desired> {
    Desired d;
    d.inject = true;
    d.revision = revision;
    d.proxy_image = revision == "canary" ? "hub/proxyv2:1.1" : "hub/proxyv2:1.0";
    d.fingerprint = "fp-" + revision;
    return d;
  };
  SystemTime now = std::chrono::system_clock::now();
  std::vector<PlanEntry> whole = plan_cluster(build(false), desired, now);
  runtime::SharedParts parts;
  ClusterView stored_view = build(true, &parts);
  ASSERT_TRUE(api::is_record(stored_view.pods[0]));
  EXPECT_EQ(api::field(stored_view.pods[0], "/metadata/labels"),
            api::field(stored_view.pods[1], "/metadata/labels"))
      << "two pods of one ReplicaSet, one base";
  std::vector<PlanEntry> stored = plan_cluster(stored_view, desired, now);
  std::vector<PlanEntry> projected = plan_cluster(build(true), desired, now);
  ASSERT_EQ(whole.size(), 6u);
  ASSERT_EQ(projected.size(), whole.size());
  ASSERT_EQ(stored.size(), whole.size());
  std::set<std::string> reasons;
  for (std::size_t i = 0; i < 2 * whole.size(); ++i) {
    const PlanEntry& w = whole[i % whole.size()];
    const PlanEntry& p = (i < whole.size() ? projected : stored)[i % whole.size()];
    SCOPED_TRACE(w.plan.ns + "/" + w.plan.name);
    EXPECT_EQ(p.plan.kind, w.plan.kind);
    EXPECT_EQ(p.plan.name, w.plan.name);
    EXPECT_EQ(p.plan.verdict, w.plan.verdict);
    EXPECT_EQ(p.plan.reason, w.plan.reason);
    EXPECT_EQ(p.plan.detail, w.plan.detail);
    EXPECT_EQ(p.plan.current_revision, w.plan.current_revision);
    EXPECT_EQ(p.action, w.action);
    EXPECT_EQ(p.why, w.why);
    EXPECT_EQ(p.cause, w.cause);
    if (w.plan.reason) reasons.insert(std::string(reason_name(*w.plan.reason)));
  }
  // The fixture reaches what it claims to (else the comparison proves little).
  EXPECT_EQ(reasons, (std::set<std::string>{"InjectionEnabled", "ProxyImageChanged",
                                            "RevisionChanged", "TemplateChanged"}));
}

TEST(ProjectWorkload, DropsOnlyWhatNobodyReads) {
  rapidjson::Document d = parse(deployment("Deployment", "ns-a"));
  auto& a = d.GetAllocator();
  d["metadata"].AddMember("annotations", rapidjson::Value(parse(kDeploymentAnnotations), a), a);
  d["metadata"].AddMember("generation", 1, a);
  d["metadata"].AddMember("managedFields", rapidjson::Value(parse(R"([{"manager":"kubectl"}])"), a),
                          a);
  d.AddMember("status", rapidjson::Value(parse(kDeploymentStatus), a), a);
  rapidjson::Document whole;
  whole.CopyFrom(d, whole.GetAllocator());
  project_workload(d, "apps/v1", "Deployment");
  EXPECT_EQ(api::string_at(d, {"apiVersion"}), "apps/v1");
  for (const char* kept :
       {"/kind", "/metadata/generation", "/metadata/annotations/meshop.io~1restart",
        "/spec/template/spec/containers/0/image", "/status/observedGeneration",
        "/status/conditions/1/reason"})
    EXPECT_NE(api::find(d, kept), nullptr) << kept;
  for (const char* dropped :
       {"/metadata/managedFields", "/metadata/creationTimestamp",
        "/metadata/annotations/deployment.kubernetes.io~1revision",
        "/status/conditions/0/lastUpdateTime", "/status/conditions/1/lastTransitionTime",
        "/status/conditions/1/message"})
    EXPECT_EQ(api::find(d, dropped), nullptr) << dropped;

  // The rollout follower and the health watch decide the same on both, with a stalled rollout
  // too (Progressing False: its reason and message are what the health watch reports).
  auto same_decisions = [](const rapidjson::Value& full, const rapidjson::Value& kept) {
    SystemTime t0 = std::chrono::system_clock::now();
    RolloutStatus rw =
        rollout_status(full, t0, t0 + std::chrono::seconds(5), std::chrono::seconds(600));
    RolloutStatus rp =
        rollout_status(kept, t0, t0 + std::chrono::seconds(5), std::chrono::seconds(600));
    EXPECT_EQ(rp.state, rw.state);
    EXPECT_EQ(rp.message, rw.message);
    EXPECT_EQ(rolls_pod_by_pod(kept), rolls_pod_by_pod(full));
    Health hw = workload_health(full, {}, {}, std::nullopt, true);
    Health hp = workload_health(kept, {}, {}, std::nullopt, true);
    EXPECT_EQ(hp.regressed, hw.regressed);
    EXPECT_EQ(hp.reason, hw.reason);
    EXPECT_EQ(hp.what, hw.what);
  };
  same_decisions(whole, d);
  std::string stalled = kDeploymentStatus;
  stalled.replace(stalled.rfind(R"("status":"True")"), 15, R"("status":"False")");
  stalled.replace(stalled.find("NewReplicaSetAvailable"), 22, "ProgressDeadlineExceeded");
  whole.RemoveMember("status");
  whole.AddMember("status", rapidjson::Value(parse(stalled), whole.GetAllocator()),
                  whole.GetAllocator());
  rapidjson::Document projected;
  projected.CopyFrom(whole, projected.GetAllocator());
  project_workload(projected, "apps/v1", "Deployment");
  same_decisions(whole, projected);
  EXPECT_EQ(rollout_status(projected, SystemTime{}, SystemTime{}, std::chrono::seconds(600)).state,
            RolloutState::kFailed)
      << "the fixture reaches the failed rollout";
}

TEST(ProjectWorkload, AnOwnedReplicaSetIsOnlyALinkAndAnOwnerlessOneStaysWhole) {
  const std::string rs =
      R"({"metadata":{"name":"w-1","namespace":"ns-a","uid":"rs-1","resourceVersion":"5",
      "labels":{"app":"w"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment",
      "name":"w","uid":"d-1","controller":true,"blockOwnerDeletion":true}]},"spec":{"replicas":2,"template":{"spec":{
      "containers":[{"name":"app","image":"app:1"}]}}},"status":{"replicas":2}})";
  rapidjson::Document owned = parse(rs);
  project_workload(owned, "apps/v1", "ReplicaSet");
  EXPECT_EQ(api::to_json(owned),
            R"({"kind":"ReplicaSet","metadata":{"name":"w-1",)"
            R"("namespace":"ns-a","uid":"rs-1","resourceVersion":"5","ownerReferences":[{)"
            R"("uid":"d-1","controller":true}]}})");
  // What the ownership walk and the store read of it.
  EXPECT_EQ(controller_uid(owned), "d-1");
  EXPECT_EQ(runtime::object_key(owned), "ns-a/w-1");
  EXPECT_EQ(runtime::uid_of(owned), "rs-1");
  EXPECT_EQ(runtime::resource_version_of(owned), "5");
  // A new version (a relabel, a scale: its resourceVersion) is a changed link.
  std::string moved = rs;
  moved.replace(moved.find(R"("resourceVersion":"5")"), 21, R"("resourceVersion":"6")");
  rapidjson::Document owned_again = parse(moved);
  project_workload(owned_again, "apps/v1", "ReplicaSet");
  EXPECT_EQ(runtime::resource_version_of(owned_again), "6");
  // Adopted by another controller (its uid): the walk follows the new one.
  std::string adopted = rs;
  adopted.replace(adopted.find(R"("uid":"d-1")"), 11, R"("uid":"d-2")");
  rapidjson::Document owned_by_other = parse(adopted);
  project_workload(owned_by_other, "apps/v1", "ReplicaSet");
  EXPECT_EQ(controller_uid(owned_by_other), "d-2");
  {
    ObjectList workloads;
    workloads.push_back(parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{
        "name":"w","namespace":"ns-a","uid":"d-1"}})"));
    workloads.push_back(std::move(owned));
    const Owners owners(workloads);
    rapidjson::Document p =
        api_pod(pod("w-1-a", "default", "hub/proxyv2:1.0"), "ns-a", "p", "rs-1");
    project_pod(p);
    ASSERT_NE(owners.top_of(p), nullptr);
    EXPECT_EQ(runtime::name_of(*owners.top_of(p)), "w") << "pod -> link -> Deployment";
  }
  rapidjson::Document ownerless = parse(rs);
  ownerless["metadata"].RemoveMember("ownerReferences");
  project_workload(ownerless, "apps/v1", "ReplicaSet");
  EXPECT_NE(api::find(ownerless, "/spec/template/spec/containers/0"), nullptr)
      << "its own workload: the plan reads its template";
  EXPECT_NE(api::find(ownerless, "/status/replicas"), nullptr);
}

}  // namespace
}  // namespace meshop::restart
