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
//   BM_PassWarm/<namespaces>            a whole executing pass of the restarts reconciler over
//                                       informer stores holding that cluster (`meshop run`), after
//                                       a first pass: the view taken from the stores, the plan
//                                       (the plan memo and decision cache warm), rollouts,
//                                       waves, metrics, Events and status; writes go to a
//                                       recording fake (none is made: everything is up to date)
//   BM_PassCold/<namespaces>            the same pass by a new reconciler (nothing remembered)
//   BM_ViewFromStores/1000              the view such a pass takes from the stores
//   BM_PlanMemoWarm/1000                plan_cluster over that view with the plan memo warm
//
// The restarts pass target (issue 13): < 50 ms CPU warm at 100k pods (BM_PassWarm/1000).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <malloc.h>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "operator/inject/injector.hpp"
#include "operator/manifest/render.hpp"
#include "reconcilers/restarts.hpp"
#include "test/support/chart_set_sources.hpp"
#include "test/support/recording_writer.hpp"

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
  c->config.control_plane_namespace = "istio-system";
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

// The informer stores `meshop run` keeps, holding the cluster's objects (shared, as the stores
// share them with a view).
struct Stores {
  runtime::Store namespaces, webhooks, iops, deployments, replica_sets, empty, pods, pdbs,
      config_maps, nodes;
  reconcilers::RestartsCache cache;
};

std::unique_ptr<Stores> make_stores(const Cluster& c) {
  auto s = std::make_unique<Stores>();
  auto items = [](const restart::ObjectList& list) {
    std::vector<runtime::Object> out;
    for (std::size_t i = 0; i < list.size(); ++i)
      out.push_back(list.item(i));
    return out;
  };
  std::vector<runtime::Object> deployments = items(c.view.control_plane_deployments);
  std::vector<runtime::Object> replica_sets;
  for (std::size_t i = 0; i < c.view.workloads.size(); ++i)
    (api::string_at(c.view.workloads[i], {"kind"}) == "Deployment" ? deployments : replica_sets)
        .push_back(c.view.workloads.item(i));
  s->namespaces.replace(items(c.view.namespaces));
  s->webhooks.replace(items(c.view.webhook_configurations));
  s->iops.replace(std::vector<runtime::Object>{});
  s->deployments.replace(std::move(deployments));
  s->replica_sets.replace(std::move(replica_sets));
  s->empty.replace(std::vector<runtime::Object>{});
  s->pods.replace(items(c.view.pods));
  s->pdbs.replace(std::vector<runtime::Object>{});
  s->config_maps.replace(items(c.view.config_maps));
  s->nodes.replace(std::vector<runtime::Object>{});
  s->cache.namespaces = &s->namespaces;
  s->cache.webhook_configurations = &s->webhooks;
  s->cache.istio_operators = &s->iops;
  s->cache.workloads = {&s->deployments, &s->replica_sets, &s->empty};
  s->cache.deployments = &s->deployments;
  s->cache.pods = &s->pods;
  s->cache.pod_disruption_budgets = &s->pdbs;
  s->cache.config_maps = &s->config_maps;
  s->cache.nodes = &s->nodes;
  s->cache.pod_index = std::make_shared<reconcilers::PodIndex>(s->pods);  // as setup_restarts
  return s;
}

// One executing pass, driven to its end on `io`.
api::Result<reconcilers::PassReport> run_pass(boost::asio::io_context& io,
                                              reconcilers::RestartsReconciler& r) {
  std::optional<api::Result<reconcilers::PassReport>> out;
  auto run = [&]() -> kube::Task<void> { out.emplace(co_await r.pass(true)); };
  boost::asio::co_spawn(io, run(), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.restart();
  io.run();
  if (!out) die("the pass did not finish");
  return std::move(*out);
}

void check_pass(benchmark::State& state, const api::Result<reconcilers::PassReport>& report,
                std::size_t workloads, const test_support::RecordingWriter& writer) {
  if (!report.ok()) {
    state.SkipWithError(("pass failed: " + report.message()).c_str());
    return;
  }
  std::size_t none = 0;
  for (const auto& e : report->plan)
    none += e.action == restart::Action::kNone;
  // The workloads, and istiod (no pods: up to date).
  if (none != workloads + 1 || report->plan.size() != workloads + 1 || !writer.calls.empty())
    state.SkipWithError(("pass not all up to date: " + std::to_string(none) + " of " +
                         std::to_string(report->plan.size()) + ", " +
                         std::to_string(writer.calls.size()) + " writes")
                            .c_str());
}

void passes(benchmark::State& state, bool warm) {
  Cluster& c = cluster(static_cast<int>(state.range(0)));
  std::unique_ptr<Stores> stores = make_stores(c);
  reconcilers::RestartsConfig config = c.config;
  config.cache = &stores->cache;
  boost::asio::io_context io;
  auto writer = std::make_shared<test_support::RecordingWriter>();
  const std::size_t workloads = c.view.namespaces.size() * 10;
  malloc_trim(0);
  const std::size_t heap_before = mallinfo2().uordblks;
  auto reconciler = std::make_unique<reconcilers::RestartsReconciler>(config, writer);
  if (warm) {
    check_pass(state, run_pass(io, *reconciler), workloads, *writer);
    // What the reconciler keeps between passes (plan memo, decision cache, rollouts, the
    // view's last groups): the planner's share of `meshop run`'s memory.
    malloc_trim(0);
    state.counters["kept_bytes_per_workload"] =
        static_cast<double>(mallinfo2().uordblks - heap_before) / static_cast<double>(workloads);
  }
  for (auto _ : state) {
    if (!warm) {
      state.PauseTiming();
      reconciler = std::make_unique<reconcilers::RestartsReconciler>(config, writer);
      state.ResumeTiming();
    }
    auto report = run_pass(io, *reconciler);
    state.PauseTiming();
    check_pass(state, report, workloads, *writer);
    state.ResumeTiming();
    report = api::Error{"released"};  // as the controller drops it: part of a pass's cost
  }
  state.counters["workloads"] = static_cast<double>(workloads);
  state.counters["pods"] = static_cast<double>(c.view.pods.size());
}

// The pass's two big parts alone: the view taken from the stores, and the plan over it with the
// plan memo warm (the same engines and memo as a reconciler keeps).
void BM_ViewFromStores(benchmark::State& state) {
  Cluster& c = cluster(static_cast<int>(state.range(0)));
  std::unique_ptr<Stores> stores = make_stores(c);
  for (auto _ : state) {
    auto view = reconcilers::cluster_view_from(stores->cache, c.config);
    if (!view.ok()) state.SkipWithError(view.message().c_str());
    benchmark::DoNotOptimize(view);
  }
}
BENCHMARK(BM_ViewFromStores)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_PlanMemoWarm(benchmark::State& state) {
  Cluster& c = cluster(static_cast<int>(state.range(0)));
  std::unique_ptr<Stores> stores = make_stores(c);
  auto view = reconcilers::cluster_view_from(stores->cache, c.config);
  if (!view.ok()) die(view.message());
  reconcilers::Engines engines = reconcilers::build_engines(*view, c.config);
  reconcilers::DecisionCache decisions;
  restart::PlanMemo memo;
  restart::ClusterPlanOptions options;
  options.memo = &memo;
  options.desired_key = "bench";
  const auto now = std::chrono::system_clock::now();
  (void)restart::plan_cluster(*view, engines.desired(&decisions), now, options);
  for (auto _ : state) {
    auto plan = restart::plan_cluster(*view, engines.desired(&decisions), now, options);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["hits"] = static_cast<double>(memo.hits());
}
BENCHMARK(BM_PlanMemoWarm)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_PassWarm(benchmark::State& state) {
  passes(state, true);
}
BENCHMARK(BM_PassWarm)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_PassCold(benchmark::State& state) {
  passes(state, false);
}
BENCHMARK(BM_PassCold)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
