// `meshop manifest generate --manifests DIR` in process: istioctl's pipeline over an Istio
// release's charts and profiles (read from the module cache at run time, never committed), for
// the two inputs hack/bench-manifest.sh times as whole commands beside istioctl's renderer —
// the default profile and the seeds' CNI IstioOperator — and the pieces that dominate it:
// rendering the base chart (its ~1 MB of CRDs through fromYaml/toYaml) and parsing / writing
// that CRD text as YAML.
//
//   MESHOP_BENCH_MANIFESTS  an Istio release's manifests/ (default: the pinned module's, found
//                           at configure time)
//   meshop_manifest_bench [--benchmark_filter=...]
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "api/yaml.hpp"
#include "operator/helm/chart.hpp"
#include "operator/helm/render.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace {

namespace istioctl = meshop::manifest::istioctl;

std::string manifests_dir() {
  if (const char* env = std::getenv("MESHOP_BENCH_MANIFESTS")) return env;
#ifdef MESHOP_ISTIO_MODULE_DIR
  return std::string(MESHOP_ISTIO_MODULE_DIR) + "/manifests";
#else
  std::cerr << "MESHOP_BENCH_MANIFESTS is not set (an Istio release's manifests/)\n";
  std::exit(2);
#endif
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

istioctl::PipelineInputs inputs_for(bool cni) {
  istioctl::PipelineInputs in;
  in.manifests = manifests_dir();
  if (cni) {
    std::string path = std::string(MESHOP_SOURCE_DIR) + "/test/e2e/testdata/cni-annotations.yaml";
    in.files.push_back({path, read_file(path)});
  }
  return in;
}

// The whole command minus process start: generate, then the YAML stream it prints.
void run_generate(benchmark::State& state, bool cni) {
  istioctl::PipelineInputs in = inputs_for(cni);
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto r = istioctl::generate(in);
    if (!r.ok()) {
      state.SkipWithError(r.message().c_str());
      return;
    }
    std::string out = istioctl::to_istioctl_stream(*r);
    bytes = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["output_bytes"] = static_cast<double>(bytes);
}

void BM_ManifestGenerateDefault(benchmark::State& state) {
  run_generate(state, false);
}
BENCHMARK(BM_ManifestGenerateDefault)->Unit(benchmark::kMillisecond);

void BM_ManifestGenerateCniAnnotations(benchmark::State& state) {
  run_generate(state, true);
}
BENCHMARK(BM_ManifestGenerateCniAnnotations)->Unit(benchmark::kMillisecond);

// The base chart loaded once and rendered with istioctl's release options.
void BM_HelmRenderBase(benchmark::State& state) {
  auto chart = meshop::helm::load_chart(manifests_dir() + "/charts/base");
  if (!chart.ok()) {
    state.SkipWithError(chart.message().c_str());
    return;
  }
  meshop::helm::Capabilities caps;
  caps.kube_version = "v1.32.0";
  auto values =
      meshop::template_engine::Value::map(std::make_shared<meshop::template_engine::Map>());
  for (auto _ : state) {
    auto r =
        meshop::helm::render(*chart, values, {.name = "istio", .namespace_ = "istio-system"}, caps);
    if (!r.ok()) {
      state.SkipWithError(r.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_HelmRenderBase)->Unit(benchmark::kMillisecond);

const std::string& crd_text() {
  static const std::string text =
      read_file(manifests_dir() + "/charts/base/files/crd-all.gen.yaml");
  return text;
}

void BM_YamlParseCrds(benchmark::State& state) {
  const std::string& text = crd_text();
  for (auto _ : state) {
    auto docs = meshop::api::yaml_stream_to_json(text);
    if (!docs.ok()) {
      state.SkipWithError(docs.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(docs);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_YamlParseCrds)->Unit(benchmark::kMillisecond);

void BM_YamlWriteCrds(benchmark::State& state) {
  auto docs = meshop::api::yaml_stream_to_json(crd_text());
  if (!docs.ok()) {
    state.SkipWithError(docs.message().c_str());
    return;
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const auto& d : *docs) {
      std::string out = meshop::api::json_to_yaml(d);
      bytes += out.size();
      benchmark::DoNotOptimize(out);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_YamlWriteCrds)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
