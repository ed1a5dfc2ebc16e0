// The restart planner at cluster scale: one pass of plan_cluster over N namespaces labelled
// istio-injection=enabled, each with 10 Deployments (ReplicaSet in between) of 10 pods that
// already run the default revision's sidecar, with the real injection engine (the default
// chart set's injector ConfigMaps, Istio's templates and values) deciding what each pod template
// would get and the webhook configuration rendered by `manifest::render_istio_operator`. Everything
// is up to date, which is the steady state the operator re-plans on every watched change.
//
//   BM_PlanCluster/<namespaces>         the engine runs for every workload (first pass)
//   BM_PlanClusterWarm/<namespaces>     the reconciler's cache of engine decisions is warm (the
//                                       passes after the first while nothing changed)
//   BM_BuildEngines                     building the revisions' engines from their ConfigMaps
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "api/json.hpp"
#include "operator/inject/injector.hpp"
#include "operator/manifest/render.hpp"
#include "reconcilers/restarts.hpp"
#include "test/support/chart_set_sources.hpp"

namespace {

using namespace meshop;

[[noreturn]] void die(const std::string& message) {
  std::cerr << "restart_plan_bench: " << message << "\n";
  std::exit(2);
}

rapidjson::Document parse(const std::string& text) {
  auto d = api::parse_json(text);
  if (!d.ok()) die("bad JSON: " + d.message() + "\n" + text);
  return std::move(*d);
}

std::string template_json(const std::string& app) {
  return R"({"metadata":{"labels":{"app":")" + app +
         R"("}},"spec":{"containers":[{"name":"app","image":"registry.example/)" + app +
         R"(:1","ports":[{"containerPort":8080}]}]}})";
}

struct Cluster {
  restart::ClusterView view;
  reconcilers::RestartsConfig config;
};

// The view a pass would load: namespaces × 10 Deployments × 10 pods.
std::unique_ptr<Cluster> make_cluster(int namespaces) {
  auto c = std::make_unique<Cluster>();
  restart::ClusterView& v = c->view;
  inject::SnapshotSources sources = test_support::chart_set_sources();
  {
    rapidjson::Document cm = parse(api::to_json(parse(
        R"({"metadata":{"name":"istio-sidecar-injector","namespace":"istio-system"},"data":{}})")));
    auto& a = cm.GetAllocator();
    cm["data"].AddMember("config", rapidjson::Value(sources.config.c_str(), a), a);
    cm["data"].AddMember("values", rapidjson::Value(sources.values.c_str(), a), a);
    v.config_maps.push_back(std::move(cm));
  }
  auto iop = parse(R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
      "metadata":{"name":"default","namespace":"istio-system"},"spec":{"profile":"minimal"}})");
  auto rendered = manifest::render_istio_operator(iop);
  if (!rendered.ok()) die("render: " + rendered.message());
  for (auto& o : rendered->objects)
    if (api::string_at(o.object, {"kind"}) == "MutatingWebhookConfiguration")
      v.webhook_configurations.push_back(parse(api::to_json(o.object)));
  if (v.webhook_configurations.empty()) die("no webhook configuration rendered");
  v.control_plane_deployments.push_back(
      parse(R"({"kind":"Deployment","metadata":{"name":"istiod","namespace":"istio-system",
        "generation":1},"spec":{"replicas":1},"status":{"observedGeneration":1,"replicas":1,
        "availableReplicas":1,"updatedReplicas":1}})"));

  // One injected pod shows what the engine gives a template now: its proxy image and status.
  auto snapshot = inject::build_snapshot(sources);
  if (!snapshot.ok()) die("engine: " + snapshot.message());
  auto sample = parse(template_json("sample"));
  sample["metadata"].AddMember("namespace", "apps", sample.GetAllocator());
  inject::PodRequest req;
  req.pod = &sample;
  req.ns = "apps";
  auto injected = inject::inject(**snapshot, req);
  if (injected.outcome != inject::Outcome::kInjected)
    die("sample not injected: " + injected.message);
  const std::string status =
      api::string_at(injected.pod, {"metadata", "annotations", "sidecar.istio.io/status"});
  std::string proxy_image;
  for (const char* list : {"initContainers", "containers"})
    if (const rapidjson::Value* cs = api::find_member(injected.pod["spec"], list))
      for (const auto& ct : cs->GetArray())
        if (api::string_at(ct, {"name"}) == "istio-proxy")
          proxy_image = api::string_at(ct, {"image"});
  if (proxy_image.empty()) die("no istio-proxy in the injected sample");

  int uid = 0;
  for (int n = 0; n < namespaces; ++n) {
    const std::string ns = "ns-" + std::to_string(n);
    v.namespaces.push_back(parse(R"({"kind":"Namespace","metadata":{"name":")" + ns +
                                 R"(","labels":{"istio-injection":"enabled"}}})"));
    for (int d = 0; d < 10; ++d) {
      const std::string app = "app-" + std::to_string(d);
      const std::string dep_uid = "d" + std::to_string(++uid);
      const std::string rs_uid = "r" + std::to_string(++uid);
      v.workloads.push_back(parse(
          R"({"kind":"Deployment","metadata":{"name":")" + app + R"(","namespace":")" + ns +
          R"(","uid":")" + dep_uid +
          R"(","generation":1},"spec":{"replicas":10,"selector":{"matchLabels":{"app":")" + app +
          R"("}},"template":)" + template_json(app) +
          R"(},"status":{"observedGeneration":1,"replicas":10,"updatedReplicas":10,"availableReplicas":10}})"));
      v.workloads.push_back(
          parse(R"({"kind":"ReplicaSet","metadata":{"name":")" + app + R"(-1","namespace":")" + ns +
                R"(","uid":")" + rs_uid +
                R"(","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":")" +
                app + R"(","uid":")" + dep_uid + R"(","controller":true}]},"spec":{"template":)" +
                template_json(app) + "}}"));
      for (int p = 0; p < 10; ++p) {
        rapidjson::Document pod = parse(
            R"({"kind":"Pod","metadata":{"name":")" + app + "-" + std::to_string(p) +
            R"(","namespace":")" + ns + R"(","labels":{"app":")" + app +
            R"("},"annotations":{},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":")" +
            app + R"(-1","uid":")" + rs_uid +
            R"(","controller":true}]},"spec":{"containers":[{"name":"app","image":"registry.example/)" +
            app + R"(:1"},{"name":"istio-proxy","image":")" + proxy_image +
            R"("}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}})");
        auto& a = pod.GetAllocator();
        pod["metadata"]["annotations"].AddMember("sidecar.istio.io/status",
                                                 rapidjson::Value(status.c_str(), a), a);
        v.pods.push_back(std::move(pod));
      }
    }
  }
  c->config.native_sidecars = inject::NativeSidecars::kDisabled;
  return c;
}

Cluster& cluster(int namespaces) {
  static std::map<int, std::unique_ptr<Cluster>> made;
  auto& c = made[namespaces];
  if (!c) c = make_cluster(namespaces);
  return *c;
}

void check_up_to_date(benchmark::State& state, const std::vector<restart::PlanEntry>& plan,
                      std::size_t workloads) {
  std::size_t none = 0;
  for (const auto& e : plan)
    none += e.action == restart::Action::kNone;
  if (plan.size() != workloads || none != workloads) {
    std::string first = plan.empty() ? "" : plan.front().why + " / " + plan.front().plan.detail;
    state.SkipWithError(("plan not all up to date: " + std::to_string(none) + " of " +
                         std::to_string(plan.size()) + "; first: " + first)
                            .c_str());
  }
}

// One plan per iteration; `warm`: the decision cache is filled once before timing and kept,
// else every iteration starts from an empty cache.
void plan_passes(benchmark::State& state, bool warm) {
  Cluster& c = cluster(static_cast<int>(state.range(0)));
  reconcilers::Engines engines = reconcilers::build_engines(c.view, c.config);
  const auto now = std::chrono::system_clock::now();
  reconcilers::DecisionCache kept;
  if (warm) (void)restart::plan_cluster(c.view, engines.desired(&kept), now);
  std::size_t workloads = 0;
  for (auto _ : state) {
    reconcilers::DecisionCache cold;
    auto plan = restart::plan_cluster(c.view, engines.desired(warm ? &kept : &cold), now);
    workloads = plan.size();
    check_up_to_date(state, plan, c.view.namespaces.size() * 10);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["workloads"] = static_cast<double>(workloads);
  state.counters["pods"] = static_cast<double>(c.view.pods.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(workloads));
}

void BM_PlanCluster(benchmark::State& state) {
  plan_passes(state, false);
}
BENCHMARK(BM_PlanCluster)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlanClusterWarm(benchmark::State& state) {
  plan_passes(state, true);
}
BENCHMARK(BM_PlanClusterWarm)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BuildEngines(benchmark::State& state) {
  Cluster& c = cluster(1);
  for (auto _ : state) {
    auto engines = reconcilers::build_engines(c.view, c.config);
    if (!engines.errors.empty()) state.SkipWithError(engines.errors.begin()->second.c_str());
    benchmark::DoNotOptimize(engines);
  }
}
BENCHMARK(BM_BuildEngines)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
