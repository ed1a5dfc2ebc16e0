// In-process injection benchmarks (upstream's BenchmarkInjection shapes):
//   BM_InjectHello        upstream's testdata/inject/hello.yaml pod template, engine only
//   BM_InjectHelloDistinct
//                         the same pod under a new name every iteration: the rendered text is
//                         new each time (ISTIO_META_WORKLOAD_NAME, ISTIO_META_OWNER), so the
//                         snapshot's parse memo (RenderCache) never has the same text; it reads
//                         only the changed lines again (counter parse_memo_rereads); a pod of a
//                         new workload
//   BM_InjectManyEnv      a pod with one container and 2,000 env vars ("many env vars"), engine
//   BM_ServeReviewHello   the whole webhook path without the network: AdmissionReview JSON in,
//                         decision + patch + base64 + review JSON out, for the hello pod
//                         (no memoization: every iteration runs the engine)
//   BM_ServeReviewHelloMemoized
//                         the same with the webhook's InjectionCache: the repeated review is
//                         answered from memory (counter hit_ratio)
//   BM_ServeReviewUpstreamTestPod
//                         the same path for exactly the review upstream's BenchmarkInjectServePC0
//                         serves (makeTestData: admission.k8s.io/v1beta1, pod "test" with one
//                         volume, init container, container and image pull secret), with a
//                         uid and request.kind Pod (meshop refuses a review without them)
//   BM_ServeReviewContainers/N
//                         the webhook path for a pod with N containers (issue 17: 40,000 took
//                         33 s); counter allowed says whether it was injected or refused
// hack/bench-webhook.sh runs upstream's own Go benchmarks (BenchmarkInjection "many env vars",
// BenchmarkInjectServePC0) beside these and prints the ratios.
// Configuration: MESHOP_BENCH_SETTINGS=DIR (files config, values[, mesh], e.g. an injectoracle
// settings directory with upstream's templates) or the default chart set's injector ConfigMaps
// (Istio's templates and values, as an install renders them). The hello pod is
// read from the istio module (MESHOP_ISTIO_DIR, else hack/istio-module.sh) at run time.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/render_cache.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/webhook/admission.hpp"
#include "operator/webhook/config_dir.hpp"
#include "operator/webhook/injection_cache.hpp"
#include "test/support/chart_set_sources.hpp"

namespace {

using namespace meshop;

[[noreturn]] void die(const std::string& message) {
  std::cerr << "inject_bench: " << message << "\n";
  std::exit(2);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) die("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string istio_dir() {
  if (const char* d = std::getenv("MESHOP_ISTIO_DIR")) return d;
  std::string cmd = "bash " MESHOP_SOURCE_DIR "/hack/istio-module.sh";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) die("cannot run " + cmd);
  char buf[4096];
  std::string out;
  while (fgets(buf, sizeof buf, p))
    out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  if (out.empty()) die(cmd + " printed nothing");
  return out;
}

const std::shared_ptr<const inject::Snapshot>& snapshot() {
  static std::shared_ptr<const inject::Snapshot> s = [] {
    inject::SnapshotSources sources;
    if (const char* dir = std::getenv("MESHOP_BENCH_SETTINGS"); dir && *dir) {
      auto read = webhook::read_config_dir(dir, "");
      if (!read.ok()) die(read.message());
      sources = *read;
    } else {
      sources = test_support::chart_set_sources();
    }
    sources.native_sidecars = inject::NativeSidecars::kDisabled;
    auto built = inject::build_snapshot(sources);
    if (!built.ok()) die("build_snapshot: " + built.message());
    return *built;
  }();
  return s;
}

// The Deployment's pod template as a Pod in namespace "default".
std::string hello_pod_json() {
  auto doc =
      api::yaml_to_json(read_file(istio_dir() + "/pkg/kube/inject/testdata/inject/hello.yaml"));
  if (!doc.ok()) die("hello.yaml: " + doc.message());
  const auto& tmpl = (*doc)["spec"]["template"];
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":)";
  std::string meta = api::to_json(tmpl["metadata"]);
  meta.insert(1, R"("name":"hello-abc","namespace":"default",)");
  pod += meta + R"(,"spec":)" + api::to_json(tmpl["spec"]) + "}";
  return pod;
}

std::string many_env_pod_json(int n) {
  std::string env;
  for (int i = 0; i < n; ++i) {
    if (i) env += ',';
    env += R"({"name":"something-)" + std::to_string(i) + R"(","value":"blah"})";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"foo","namespace":"bar"},)"
         R"("spec":{"containers":[{"name":"app","image":"fake","env":[)" +
         env + "]}]}}";
}

void run_inject(benchmark::State& state, const std::string& pod_json, const std::string& ns) {
  auto pod = api::parse_json(pod_json);
  if (!pod.ok()) die(pod.message());
  const auto& snap = snapshot();
  inject::PodRequest req;
  req.pod = &*pod;
  req.ns = ns;
  auto check = inject::inject(*snap, req);
  if (check.outcome != inject::Outcome::kInjected) die("not injected: " + check.message);
  for (auto _ : state) {
    auto r = inject::inject(*snap, req);
    benchmark::DoNotOptimize(r.patch.data());
  }
  state.counters["patch_bytes"] = static_cast<double>(check.patch.size());
}

void BM_InjectHello(benchmark::State& state) {
  run_inject(state, hello_pod_json(), "default");
}
BENCHMARK(BM_InjectHello)->Unit(benchmark::kMicrosecond);

// The hello pod under `n` different names (hello-0 ... hello-<n-1>), as JSON text.
std::vector<std::string> distinct_hello_pods(std::size_t n) {
  const std::string base = hello_pod_json();
  const std::string name = R"("name":"hello-abc")";
  std::size_t at = base.find(name);
  if (at == std::string::npos) die("hello pod without its name");
  std::vector<std::string> pods;
  pods.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string json = base;
    json.replace(at, name.size(), R"("name":"hello-)" + std::to_string(i) + "\"");
    pods.push_back(std::move(json));
  }
  return pods;
}

// More distinct pods than the render cache keeps texts of one key (RenderCache::kTextsPerKey):
// every iteration's rendering is a text the cache does not have, read again from a kept one,
// as for the first pod of a new workload. Built before the timed loop (no PauseTiming per
// iteration: its clock reads cost as much as what is measured here, and vary more).
constexpr std::size_t kDistinctPods = 64;
static_assert(kDistinctPods > inject::RenderCache::kTextsPerKey);

void BM_InjectHelloDistinct(benchmark::State& state) {
  std::vector<api::Document> pods;
  for (const auto& json : distinct_hello_pods(kDistinctPods)) {
    auto pod = api::parse_json(json);
    if (!pod.ok()) die(pod.message());
    pods.push_back(std::move(*pod));
  }
  const auto& snap = snapshot();
  std::size_t n = 0;
  for (auto _ : state) {
    inject::PodRequest req;
    req.pod = &pods[n++ % pods.size()];
    req.ns = "default";
    auto r = inject::inject(*snap, req);
    if (r.outcome != inject::Outcome::kInjected) die("not injected: " + r.message);
    benchmark::DoNotOptimize(r.patch.data());
  }
  auto st = snap->render_cache.stats();
  state.counters["parse_memo_entries"] = static_cast<double>(st.entries);
  state.counters["parse_memo_bytes"] = static_cast<double>(st.bytes);
  state.counters["parse_memo_rereads"] = static_cast<double>(st.rereads);
}
BENCHMARK(BM_InjectHelloDistinct)->Unit(benchmark::kMicrosecond);

void BM_InjectManyEnv(benchmark::State& state) {
  run_inject(state, many_env_pod_json(2000), "bar");
}
BENCHMARK(BM_InjectManyEnv)->Unit(benchmark::kMicrosecond);

// Serves `bodies` in turn (one body: the same review again and again).
void serve_reviews(benchmark::State& state, const std::vector<std::string>& bodies,
                   bool must_inject = true, bool memoize = false) {
  webhook::RevisionStore store;
  webhook::RevisionConfig config;
  config.revision = "default";
  config.snapshot = snapshot();
  store.publish(config);
  webhook::Engine engine = webhook::default_engine();
  webhook::InjectionCache cache;
  webhook::AdmissionContext ctx{store, engine, nullptr, "default", memoize ? &cache : nullptr};
  std::vector<webhook::HttpRequest> requests;
  for (const auto& body : bodies) {
    webhook::HttpRequest req;
    req.method = "POST";
    req.target = "/inject";
    req.content_type = "application/json";
    req.body = body;
    requests.push_back(req);
  }
  auto check = webhook::serve(ctx, requests.front());
  bool allowed = check.body.find("\"patch\"") != std::string::npos;
  if (must_inject && !allowed) die("no patch: " + check.body);
  std::size_t n = 0;
  for (auto _ : state) {
    auto reply = webhook::serve(ctx, requests[n++ % requests.size()]);
    benchmark::DoNotOptimize(reply.body.data());
  }
  state.counters["allowed"] = allowed ? 1 : 0;
  state.counters["request_bytes"] = static_cast<double>(bodies.front().size());
  if (memoize) {
    auto st = cache.stats();
    if (st.hits == 0) die("memoized benchmark without a single hit");
    state.counters["hit_ratio"] =
        static_cast<double>(st.hits) / static_cast<double>(st.hits + st.misses);
  }
}

void serve_review(benchmark::State& state, const std::string& body, bool must_inject = true,
                  bool memoize = false) {
  serve_reviews(state, {body}, must_inject, memoize);
}

std::string review_of(const std::string& pod) {
  return R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","object":)" +
         pod + "}}";
}

std::string hello_review() {
  return review_of(hello_pod_json());
}

void BM_ServeReviewHello(benchmark::State& state) {
  serve_review(state, hello_review());
}
BENCHMARK(BM_ServeReviewHello)->Unit(benchmark::kMicrosecond);

// The whole path for a new pod each time (the pods of BM_InjectHelloDistinct): no memo of the
// whole review can answer it, and its rendering is a text the render cache does not have.
void BM_ServeReviewHelloDistinct(benchmark::State& state) {
  std::vector<std::string> bodies;
  for (const auto& pod : distinct_hello_pods(kDistinctPods))
    bodies.push_back(review_of(pod));
  serve_reviews(state, bodies);
}
BENCHMARK(BM_ServeReviewHelloDistinct)->Unit(benchmark::kMicrosecond);

// The same review again and again with memoization on (a rollout's identical pods).
void BM_ServeReviewHelloMemoized(benchmark::State& state) {
  serve_review(state, hello_review(), true, true);
}
BENCHMARK(BM_ServeReviewHelloMemoized)->Unit(benchmark::kMicrosecond);

// The bytes Go's json.Marshal gives for makeTestData's v1beta1 review (no uid, no namespace).
void BM_ServeReviewUpstreamTestPod(benchmark::State& state) {
  serve_review(
      state,
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"","resource":""},"operation":"CREATE","userInfo":{},"object":{"metadata":{"name":"test","creationTimestamp":null},"spec":{"volumes":[{"name":"v0"}],"initContainers":[{"name":"c0","resources":{}}],"containers":[{"name":"c1","resources":{}}],"imagePullSecrets":[{"name":"p0"}]},"status":{}},"oldObject":null,"options":null}})");
}
BENCHMARK(BM_ServeReviewUpstreamTestPod)->Unit(benchmark::kMicrosecond);

void BM_ServeReviewContainers(benchmark::State& state) {
  std::string containers;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    if (i) containers += ',';
    containers += R"({"name":"c)" + std::to_string(i) + R"(","image":"app:1"})";
  }
  serve_review(
      state,
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"many"},"spec":{"containers":[)" +
          containers + "]}}}}",
      false);
}
BENCHMARK(BM_ServeReviewContainers)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(40000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
