// The injector configuration of the default bundled chart set, for tests, fuzzers and
// benchmarks that inject with a real one: ConfigMaps istio-sidecar-injector (`config`,
// `values`) and istio (`mesh`) exactly as `meshop manifest generate` renders them for the default
// profile (manifest::chart_set_injector_sources), i.e. Istio's own injection templates and
// values, what a cluster installed from that chart set serves.
//
// Rendering takes a few hundred milliseconds: it is done once per process (magic static) and
// every caller gets a copy to adjust (revision, native_sidecars, ...). A render failure is a
// build defect (the chart set is embedded), reported on stderr and aborting the program.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "operator/inject/injector.hpp"
#include "operator/manifest/injector_defaults.hpp"

namespace meshop::test_support {

inline inject::SnapshotSources chart_set_sources() {
  static const inject::SnapshotSources sources = [] {
    auto rendered = manifest::chart_set_injector_sources("", "");
    if (!rendered.ok()) {
      std::fprintf(stderr, "the default chart set's injector ConfigMaps: %s\n",
                   rendered.message().c_str());
      std::abort();
    }
    return *rendered;
  }();
  return sources;
}

}  // namespace meshop::test_support
