// The Istio chart sets compiled into the binary: for each version of manifests/versions.yaml,
// the manifests/charts and manifests/profiles of its istio.io/istio module (hack/chart-sets.sh
// fetches and checks them at build time), with the image hub and tag an install of that
// version uses. This is what a release of istioctl embeds (manifests.FS), once per version.
//
//   const ChartSet* set = find_chart_set("1.30");      // nullptr for a version not bundled
//   auto chart = helm::load_chart(set->tree("charts/base"), "1.30:charts/base");
//   std::optional<std::string_view> p = set->file("profiles/default.yaml");
//
// Immutable after the first call (the blob is indexed once, thread-safely); the bytes live in
// the binary's read-only data.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshop::manifest {

struct ChartSet {
  std::string version;  // "1.31"
  std::string module;   // the istio.io/istio module version it comes from
  std::string sha256;   // of its chart files (manifests/versions.yaml)
  std::string hub, tag;
  // Paths relative to manifests/: "charts/base/Chart.yaml", "profiles/default.yaml".
  std::map<std::string, std::string_view, std::less<>> files;

  std::optional<std::string_view> file(std::string_view path) const;
  // The files under `dir` ("charts/istio-control/istio-discovery"), by path relative to it.
  std::map<std::string, std::string> tree(std::string_view dir) const;
  // Profile names (profiles/<name>.yaml), sorted.
  std::vector<std::string> profiles() const;
};

// Every bundled version: the default first, then manifests/versions.yaml's order.
const std::vector<ChartSet>& chart_sets();
const ChartSet* find_chart_set(std::string_view version);
// The version installed when none is asked for (versions.yaml's `default`).
const ChartSet& default_chart_set();

}  // namespace meshop::manifest
