// Renders upstream's sidecar injection template (read at run time, never committed) over
// realistic data, to compare with the same render in Go (hack/gotemplate's
// BenchmarkRender). Run through hack/bench-template.sh, which prepares both inputs:
//   MESHOP_BENCH_TEMPLATE  path of the template (istio-discovery files/injection-template.yaml)
//   MESHOP_BENCH_DATA      path of the JSON data (gotemplate sidecar-data output)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace {

using meshop::template_engine::Template;
using meshop::template_engine::Value;

std::string read_file(const char* env) {
  const char* path = std::getenv(env);
  if (path == nullptr) {
    std::cerr << env << " is not set (run hack/bench-template.sh)\n";
    std::exit(2);
  }
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Inputs {
  std::shared_ptr<const Template> tmpl;
  Value data;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    std::string text = read_file("MESHOP_BENCH_TEMPLATE");
    auto data = meshop::template_engine::funcs::parse_json_value(read_file("MESHOP_BENCH_DATA"));
    if (!data) {
      std::cerr << "bad data: " << data.message() << "\n";
      std::exit(2);
    }
    auto t = Template::parse("inject", text);
    if (!t) {
      std::cerr << t.message() << "\n";
      std::exit(2);
    }
    return Inputs{*t, *data};
  }();
  return in;
}

// One injection render: execute the parsed template on the data (what the webhook does per
// pod; parsing happens once per config load).
void BM_RenderSidecar(benchmark::State& state) {
  const Inputs& in = inputs();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto out = in.tmpl->execute(in.data);
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    bytes = out->size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["output_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderSidecar);

void BM_ParseSidecar(benchmark::State& state) {
  std::string text = read_file("MESHOP_BENCH_TEMPLATE");
  for (auto _ : state) {
    auto t = Template::parse("inject", text);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ParseSidecar);

}  // namespace

BENCHMARK_MAIN();
