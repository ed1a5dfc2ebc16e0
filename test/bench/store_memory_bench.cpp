// Memory of the informer store of Pods at cluster scale (issue 13; a measurement, not a test).
//
//   meshop_store_memory_bench [PODS [REPLICAS]]     # default: 100000 10
//
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
#include <iostream>
#include <malloc.h>
#include <string>

#include "api/json.hpp"
#include "operator/inject/injector.hpp"
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

}  // namespace

int main(int argc, char** argv) {
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
