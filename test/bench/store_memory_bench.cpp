// Memory of the informer stores at cluster scale (issue 13; a measurement, not a test).
//
//   meshop_store_memory_bench [PODS [REPLICAS]]             # default: 100000 10
//   meshop_store_memory_bench cluster [NAMESPACES [REPLICAS]]  # default: 10000 10
//
// `cluster`: what `meshop run` holds for hack/bench-run-scale.sh's cluster: NAMESPACES namespaces
// (istio-injection=enabled), one Deployment "app" in each with REPLICAS replicas, its
// ReplicaSet, and its pods as the sidecar webhook injected them and kwok reports them. Each kind
// goes through the store of its real watch (reconcilers/watches.cpp namespaces(), every(), pods())
// and all the stores share one SharedParts, as a runtime::Cache's stores do. Prints the heap per
// object of each kind (filled in that order: a ReplicaSet's share of a part the Deployment made
// first is counted with the Deployments) and the total.
//
// Without `cluster`:
// Builds PODS pods the way a cluster holds them: each one what the default chart set's injector
// gives a Deployment's pod template (the real engine: istio-init, istio-proxy, volumes, the
// sidecar.istio.io/status annotation), with a ReplicaSet owner per REPLICAS pods, its
// pod-template-hash label, a uid, resourceVersion and creation time of its own, and the status a
// kubelet reports for a Running pod (four conditions with times, container statuses with ids and
// start times, IPs). Each pod goes through the store of `meshop run`'s pod watch
// (reconcilers/watches.cpp pods(): restart::project_pod, and its shared paths), and once through a
// store with the projection only (what every pod cost before the parts were shared), and the
// heap each store holds is read from the allocator (mallinfo2) and printed per pod, with the
// time per apply. The JSON each pod arrives as is built and dropped before the next, as an
// informer's watch event is.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <malloc.h>
#include <memory>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "operator/inject/injector.hpp"
#include "operator/kube/resource.hpp"
#include "operator/runtime/store.hpp"
#include "reconcilers/watches.hpp"
#include "test/support/chart_set_sources.hpp"

namespace {

using namespace meshop;

[[noreturn]] void die(const std::string& message) {
  std::cerr << "store_memory_bench: " << message << "\n";
  std::exit(2);
}

rapidjson::Document parse(const std::string& text) {
  auto d = api::parse_json(text);
  if (!d.ok()) die("bad JSON: " + d.message());
  return std::move(*d);
}

std::size_t heap_in_use() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

std::string hex(unsigned n, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*x", width, n);
  return buf;
}

// The injected pod of Deployment `app` in `ns`, as the engine gives it.
std::string injected_template(const inject::Snapshot& snapshot) {
  rapidjson::Document pod = parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"shop","labels":{"app":"web"}},
      "spec":{"containers":[{"name":"web","image":"registry.example/web:1","ports":
      [{"containerPort":8080}]}]}})");
  inject::PodRequest req;
  req.pod = &pod;
  req.ns = "shop";
  auto injected = inject::inject(snapshot, req);
  if (injected.outcome != inject::Outcome::kInjected) die("not injected: " + injected.message);
  return api::to_json(injected.pod);
}

// Pod `i` of ReplicaSet `rs`: the injected template with what the apiserver and kubelet add.
rapidjson::Document cluster_pod(const std::string& injected, unsigned i, unsigned rs) {
  rapidjson::Document pod = parse(injected);
  auto& a = pod.GetAllocator();
  const std::string hash = hex(rs * 2654435761u, 10);
  const std::string rs_name = "web-" + hash;
  const std::string ns = "shop-" + std::to_string(rs / 10);
  auto& meta = pod["metadata"];
  meta.RemoveMember("namespace");
  meta.AddMember("name", rapidjson::Value((rs_name + "-" + hex(i * 40503u, 5)).c_str(), a), a);
  meta.AddMember("namespace", rapidjson::Value(ns.c_str(), a), a);
  meta.AddMember(
      "uid", rapidjson::Value((hex(i, 8) + "-4c1e-4b6a-9c7d-" + hex(i * 7919u, 12)).c_str(), a), a);
  meta.AddMember("resourceVersion", rapidjson::Value(std::to_string(100000 + i).c_str(), a), a);
  meta.AddMember("creationTimestamp", "2026-12-06T05:00:00Z", a);
  meta["labels"].AddMember("pod-template-hash", rapidjson::Value(hash.c_str(), a), a);
  rapidjson::Document owner =
      parse(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":")" + rs_name + R"(","uid":")" +
            hex(rs, 8) + R"(-0000-4000-8000-000000000000","controller":true,
            "blockOwnerDeletion":true})");
  rapidjson::Value owners(rapidjson::kArrayType);
  owners.PushBack(rapidjson::Value(owner, a), a);
  meta.AddMember("ownerReferences", owners, a);
  pod["spec"].AddMember("nodeName", "kwok-node-0", a);
  rapidjson::Document status =
      parse(R"({"phase":"Running","conditions":[
      {"type":"Initialized","status":"True","lastTransitionTime":"2026-12-06T05:00:01Z"},
      {"type":"Ready","status":"True","lastTransitionTime":"2026-12-06T05:00:02Z"},
      {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-12-06T05:00:02Z"},
      {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-12-06T05:00:00Z"}],
      "hostIP":"10.0.0.1","podIP":"10.244.)" +
            std::to_string(i / 250 % 250) + "." + std::to_string(i % 250) +
            R"(","startTime":"2026-12-06T05:00:00Z",
      "qosClass":"Burstable","containerStatuses":[
      {"name":"istio-proxy","ready":true,"restartCount":0,"started":true,"image":"proxyv2",
       "imageID":"","containerID":"kwok://)" +
            hex(i, 16) + R"(","state":{"running":{"startedAt":"2026-12-06T05:00:01Z"}}},
      {"name":"web","ready":true,"restartCount":0,"started":true,"image":"web:1","imageID":"",
       "containerID":"kwok://)" +
            hex(i + 1, 16) + R"(","state":{"running":{"startedAt":"2026-12-06T05:00:01Z"}}}]})");
  pod.RemoveMember("status");
  pod.AddMember("status", rapidjson::Value(status, a), a);
  return pod;
}

struct Reading {
  double bytes_per_pod;
  double us_per_apply;
  std::size_t parts;
};

Reading fill(runtime::Store& store, const std::string& injected, unsigned pods, unsigned replicas) {
  std::size_t before = heap_in_use();
  double apply_us = 0;
  for (unsigned i = 0; i < pods; ++i) {
    rapidjson::Document pod = cluster_pod(injected, i, i / replicas);
    auto a0 = std::chrono::steady_clock::now();
    store.apply(std::move(pod));
    apply_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a0).count();
  }
  std::size_t after = heap_in_use();
  return {static_cast<double>(after - before) / pods, apply_us / pods, store.shared_parts()};
}

// ---- cluster mode ----

constexpr const char* kTime = "2026-12-06T05:00:00Z";

std::string uid_of(const char* kind, unsigned i) {
  return hex(i, 8) + "-" + kind + "-4b6a-9c7d-" + hex(i * 7919u, 12);
}

// The pod template of hack/bench-run-scale.sh's Deployment, as the apiserver defaults it.
constexpr const char* kTemplateSpec = R"({"nodeName":"kwok-node-0",
    "automountServiceAccountToken":false,"containers":[{"name":"app",
    "image":"registry.invalid/bench:1","resources":{},"terminationMessagePath":"/dev/termination-log",
    "terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always",
    "terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},
    "schedulerName":"default-scheduler"})";

// A list item carries neither apiVersion nor kind; managedFields as server-side apply leaves them.
rapidjson::Document cluster_namespace(unsigned k) {
  const std::string name = "scale-" + std::to_string(k);
  return parse(R"({"metadata":{"name":")" + name + R"(","uid":")" + uid_of("0001", k) +
               R"(","resourceVersion":")" + std::to_string(1000 + k) +
               R"(","creationTimestamp":")" + kTime +
               R"(","labels":{"istio-injection":"enabled","kubernetes.io/metadata.name":")" + name +
               R"(","meshop-bench":"scale"},"managedFields":[{"manager":"kubectl",
               "operation":"Apply","apiVersion":"v1","time":")" +
               kTime + R"(","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{
               "f:istio-injection":{},"f:meshop-bench":{}}}}}]},"spec":{"finalizers":
               ["kubernetes"]},"status":{"phase":"Active"}})");
}

std::string rs_hash(unsigned k) {
  return hex(k * 2654435761u, 10);
}

rapidjson::Document cluster_deployment(unsigned k, unsigned replicas) {
  const std::string r = std::to_string(replicas);
  return parse(R"({"metadata":{"name":"app","namespace":"scale-)" + std::to_string(k) +
               R"(","uid":")" + uid_of("0002", k) + R"(","resourceVersion":")" +
               std::to_string(200000 + k) + R"(","generation":1,"creationTimestamp":")" + kTime +
               R"(","labels":{"meshop-bench":"scale"},"annotations":{
               "deployment.kubernetes.io/revision":"1"},"managedFields":[{"manager":"kubectl",
               "operation":"Apply","apiVersion":"apps/v1","time":")" +
               kTime + R"(","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},
               "spec":{"replicas":)" +
               r + R"(,"selector":{"matchLabels":{"app":"app"}},"template":{"metadata":{
               "creationTimestamp":null,"labels":{"app":"app"}},"spec":)" +
               kTemplateSpec + R"(},"strategy":{"type":"RollingUpdate","rollingUpdate":{
               "maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,
               "progressDeadlineSeconds":600},"status":{"observedGeneration":1,"replicas":)" +
               r + R"(,"updatedReplicas":)" + r + R"(,"readyReplicas":)" + r +
               R"(,"availableReplicas":)" + r + R"(,"conditions":[{"type":"Available",
               "status":"True","lastUpdateTime":"2026-12-06T05:00:09Z",
               "lastTransitionTime":"2026-12-06T05:00:09Z","reason":"MinimumReplicasAvailable",
               "message":"Deployment has minimum availability."},{"type":"Progressing",
               "status":"True","lastUpdateTime":"2026-12-06T05:00:09Z",
               "lastTransitionTime":"2026-12-06T05:00:00Z","reason":"NewReplicaSetAvailable",
               "message":"ReplicaSet \"app-)" +
               rs_hash(k) + R"(\" has successfully progressed."}]}})");
}

rapidjson::Document cluster_replica_set(unsigned k, unsigned replicas) {
  const std::string r = std::to_string(replicas);
  const std::string hash = rs_hash(k);
  return parse(R"({"metadata":{"name":"app-)" + hash + R"(","namespace":"scale-)" +
               std::to_string(k) + R"(","uid":")" + uid_of("0003", k) + R"(","resourceVersion":")" +
               std::to_string(300000 + k) + R"(","generation":1,"creationTimestamp":")" + kTime +
               R"(","labels":{"app":"app","pod-template-hash":")" + hash +
               R"("},"annotations":{"deployment.kubernetes.io/desired-replicas":")" + r +
               R"(","deployment.kubernetes.io/max-replicas":")" + std::to_string(replicas + 3) +
               R"(","deployment.kubernetes.io/revision":"1"},"ownerReferences":[{
               "apiVersion":"apps/v1","kind":"Deployment","name":"app","uid":")" +
               uid_of("0002", k) + R"(","controller":true,"blockOwnerDeletion":true}],
               "managedFields":[{"manager":"kube-controller-manager","operation":"Update",
               "apiVersion":"apps/v1","time":")" +
               kTime + R"(","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:replicas":{}}},
               "subresource":"status"}]},"spec":{"replicas":)" +
               r + R"(,"selector":{"matchLabels":{"app":"app","pod-template-hash":")" + hash +
               R"("}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"app",
               "pod-template-hash":")" +
               hash + R"("}},"spec":)" + kTemplateSpec + R"(}},"status":{"replicas":)" + r +
               R"(,"fullyLabeledReplicas":)" + r + R"(,"readyReplicas":)" + r +
               R"(,"availableReplicas":)" + r + R"(,"observedGeneration":1}})");
}

// The Deployment's pod as the sidecar webhook gives it (the real engine, default chart set).
std::string cluster_injected(const inject::Snapshot& snapshot) {
  rapidjson::Document pod =
      parse(std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"scale-0",
      "labels":{"app":"app"}},"spec":)") +
            kTemplateSpec + "}");
  inject::PodRequest req;
  req.pod = &pod;
  req.ns = "scale-0";
  auto injected = inject::inject(snapshot, req);
  if (injected.outcome != inject::Outcome::kInjected) die("not injected: " + injected.message);
  return api::to_json(injected.pod);
}

// Pod `i` of the ReplicaSet of namespace `k`, Running and Ready.
rapidjson::Document cluster_pod(const std::string& injected, unsigned k, unsigned i,
                                unsigned global) {
  rapidjson::Document pod = parse(injected);
  auto& a = pod.GetAllocator();
  const std::string hash = rs_hash(k);
  auto& meta = pod["metadata"];
  meta.RemoveMember("namespace");
  meta.AddMember("name", api::make_string("app-" + hash + "-" + hex(i * 40503u + k, 5), a), a);
  meta.AddMember("generateName", api::make_string("app-" + hash + "-", a), a);
  meta.AddMember("namespace", api::make_string("scale-" + std::to_string(k), a), a);
  meta.AddMember("uid", api::make_string(uid_of("0004", global), a), a);
  meta.AddMember("resourceVersion", api::make_string(std::to_string(400000 + global), a), a);
  meta.AddMember("creationTimestamp", rapidjson::StringRef(kTime), a);
  meta["labels"].AddMember("pod-template-hash", api::make_string(hash, a), a);
  rapidjson::Document owner =
      parse(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":"app-)" + hash + R"(","uid":")" +
            uid_of("0003", k) + R"(","controller":true,"blockOwnerDeletion":true})");
  rapidjson::Value owners(rapidjson::kArrayType);
  owners.PushBack(rapidjson::Value(owner, a), a);
  meta.AddMember("ownerReferences", owners, a);
  rapidjson::Document status = parse(
      R"({"phase":"Running","conditions":[
      {"type":"Initialized","status":"True","lastTransitionTime":"2026-12-06T05:00:01Z"},
      {"type":"Ready","status":"True","lastTransitionTime":"2026-12-06T05:00:02Z"},
      {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-12-06T05:00:02Z"},
      {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-12-06T05:00:00Z"}],
      "hostIP":"10.0.0.1","podIP":"10.)" +
      std::to_string(global / 62500 % 250) + "." + std::to_string(global / 250 % 250) + "." +
      std::to_string(global % 250) +
      R"(","startTime":"2026-12-06T05:00:00Z","qosClass":"Burstable","containerStatuses":[
      {"name":"app","ready":true,"restartCount":0,"started":true,"image":"registry.invalid/bench:1",
       "imageID":"","containerID":"kwok://)" +
      hex(global, 16) + R"(","state":{"running":{"startedAt":"2026-12-06T05:00:01Z"}}},
      {"name":"istio-proxy","ready":true,"restartCount":0,"started":true,"image":"proxyv2",
       "imageID":"","containerID":"kwok://)" +
      hex(global + 1, 16) + R"(","state":{"running":{"startedAt":"2026-12-06T05:00:01Z"}}}]})");
  pod.RemoveMember("status");
  pod.AddMember("status", rapidjson::Value(status, a), a);
  return pod;
}

int cluster_main(unsigned namespaces, unsigned replicas) {
  auto snapshot = inject::build_snapshot(test_support::chart_set_sources());
  if (!snapshot.ok()) die("engine: " + snapshot.message());
  const std::string injected = cluster_injected(**snapshot);
  namespace watches = reconcilers::watches;
  runtime::SharedParts parts;  // a runtime::Cache's: one for every store
  auto store_of = [&parts](const runtime::WatchSpec& spec) {
    return std::make_unique<runtime::Store>(spec.projection, spec.shared_paths, &parts);
  };
  auto ns_store = store_of(watches::namespaces());
  auto deployment_store = store_of(watches::every(kube::resources::kDeployments));
  auto rs_store = store_of(watches::every(kube::resources::kReplicaSets));
  auto pod_store = store_of(watches::pods());
  if (std::getenv("MESHOP_BENCH_SHOW") != nullptr) {
    auto show = [](const char* what, const runtime::WatchSpec& spec, rapidjson::Document d) {
      if (spec.projection) spec.projection(d);
      std::printf("%s as its store keeps it: %s\n", what, api::to_json(d).c_str());
    };
    show("namespace", watches::namespaces(), cluster_namespace(0));
    show("deployment", watches::every(kube::resources::kDeployments),
         cluster_deployment(0, replicas));
    show("replicaset", watches::every(kube::resources::kReplicaSets),
         cluster_replica_set(0, replicas));
    show("pod", watches::pods(), cluster_pod(injected, 0, 0, 0));
  }
  struct Kind {
    const char* name;
    unsigned count;
    std::function<void(unsigned)> apply;
    double bytes = 0, us = 0;
  };
  std::vector<Kind> kinds = {
      {"namespace", namespaces, [&](unsigned k) { ns_store->apply(cluster_namespace(k)); }},
      {"deployment", namespaces,
       [&](unsigned k) { deployment_store->apply(cluster_deployment(k, replicas)); }},
      {"replicaset", namespaces,
       [&](unsigned k) { rs_store->apply(cluster_replica_set(k, replicas)); }},
      {"pod", namespaces * replicas,
       [&](unsigned g) { pod_store->apply(cluster_pod(injected, g / replicas, g % replicas, g)); }},
  };
  double total = 0;
  for (Kind& kind : kinds) {
    std::size_t before = heap_in_use();
    auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < kind.count; ++i)
      kind.apply(i);
    kind.us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        kind.count;
    kind.bytes = static_cast<double>(heap_in_use() - before);
    total += kind.bytes;
  }
  std::printf("namespaces=%u deployments=%u replicasets=%u pods=%u shared_parts=%zu\n", namespaces,
              namespaces, namespaces, namespaces * replicas, parts.size());
  for (const Kind& kind : kinds)
    std::printf(
        "%-10s %7u objects %6.0f bytes/object %7.1f MiB  (%.1f us/apply incl. making "
        "the JSON)\n",
        kind.name, kind.count, kind.bytes / kind.count, kind.bytes / 1048576, kind.us);
  std::printf("total      %.1f MiB\n", total / 1048576);
  for (const Kind& kind : kinds)
    std::printf("RESULT cluster.%s.bytes_per_object %.0f\n", kind.name, kind.bytes / kind.count);
  std::printf("RESULT cluster.total_mib %.1f\n", total / 1048576);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "cluster") {
    unsigned namespaces = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 10000;
    unsigned replicas = argc > 3 ? static_cast<unsigned>(std::stoul(argv[3])) : 10;
    if (namespaces == 0 || replicas == 0)
      die("usage: meshop_store_memory_bench cluster [NAMESPACES [REPLICAS]]");
    return cluster_main(namespaces, replicas);
  }
  unsigned pods = argc > 1 ? static_cast<unsigned>(std::stoul(argv[1])) : 100000;
  unsigned replicas = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 10;
  if (pods == 0 || replicas == 0) die("usage: meshop_store_memory_bench [PODS [REPLICAS]]");
  auto snapshot = inject::build_snapshot(test_support::chart_set_sources());
  if (!snapshot.ok()) die("engine: " + snapshot.message());
  const std::string injected = injected_template(**snapshot);
  {
    rapidjson::Document sample = cluster_pod(injected, 0, 0);
    std::printf("pod JSON as the watch sends it: %zu bytes\n", api::to_json(sample).size());
    if (std::getenv("MESHOP_BENCH_SHOW") != nullptr) {
      runtime::WatchSpec s = reconcilers::watches::pods();
      s.projection(sample);
      std::printf("as the pod store keeps it: %s\n", api::to_json(sample).c_str());
    }
  }
  runtime::WatchSpec spec = reconcilers::watches::pods();
  Reading shared, alone;
  {
    runtime::Store store(spec.projection, spec.shared_paths);
    shared = fill(store, injected, pods, replicas);
  }
  {
    runtime::Store store(spec.projection);
    alone = fill(store, injected, pods, replicas);
  }
  std::printf("pods=%u replicas_per_replicaset=%u\n", pods, replicas);
  std::printf("projection + shared parts: %.0f bytes/pod (%.1f MiB), %.1f us/apply, %zu parts\n",
              shared.bytes_per_pod, shared.bytes_per_pod * pods / 1048576, shared.us_per_apply,
              shared.parts);
  std::printf("projection only:           %.0f bytes/pod (%.1f MiB), %.1f us/apply\n",
              alone.bytes_per_pod, alone.bytes_per_pod * pods / 1048576, alone.us_per_apply);
  std::printf("RESULT store.shared.bytes_per_pod %.0f\nRESULT store.alone.bytes_per_pod %.0f\n",
              shared.bytes_per_pod, alone.bytes_per_pod);
  return 0;
}
