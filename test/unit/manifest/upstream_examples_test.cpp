// Every IstioOperator example in upstream Istio (the pinned module in the Go module cache:
// operator/ and manifests/ files with `kind: IstioOperator`, and the injection testdata's
// *.iop.yaml) must parse and render. The few that upstream itself uses as invalid input must
// fail. Skipped when the module cannot be found (hack/istio-module.sh, or MESHOP_ISTIO_MODULE).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "operator/manifest/istioctl_pipeline.hpp"
#include "test/unit/manifest/test_support.hpp"

namespace meshop::manifest {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> examples(const fs::path& module) {
  std::vector<fs::path> out;
  for (const char* dir : {"operator", "manifests"}) {
    if (!fs::exists(module / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(module / dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
      if (read(e.path()).find("kind: IstioOperator") != std::string::npos) out.push_back(e.path());
    }
  }
  fs::path inject = module / "pkg/kube/inject/testdata/inject";
  if (fs::exists(inject))
    for (const auto& e : fs::directory_iterator(inject))
      if (e.path().filename().string().ends_with(".iop.yaml")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Inputs upstream's own tests use to check that bad input is refused (relative to the module).
const std::set<std::string>& invalid_on_purpose() {
  static const std::set<std::string> files = {
      "operator/cmd/mesh/testdata/manifest-generate/input/invalid-k8s-values.yaml",  // tolerations
      "operator/cmd/mesh/testdata/manifest-generate/input/invalid-k8s.yaml",         // tolerations
      "operator/cmd/mesh/testdata/manifest-generate/input/multiple_iops.yaml",
      // values.global.badKey: upstream renders it only with --force.
      "operator/cmd/mesh/testdata/manifest-generate/input/flag_force.yaml",
      // autoscaling/v2beta1 HPA fields, which upstream's renderer refuses ("unknown field").
      "operator/cmd/mesh/testdata/manifest-generate/input/autoscaling_v2beta1_k8s_and_values.yaml",
      "operator/cmd/mesh/testdata/manifest-generate/input/deprecated_autoscaling_k8s_spec.yaml",
  };
  return files;
}

TEST(UpstreamExamples, EveryIstioOperatorExampleRenders) {
  std::string module = testing::istio_module();
  if (module.empty() || !fs::exists(module))
    GTEST_SKIP() << "istio.io/istio module not available (hack/istio-module.sh)";
  std::vector<fs::path> files = examples(module);
  ASSERT_GT(files.size(), 20u) << "expected many IstioOperator examples under " << module;
  int rendered = 0;
  for (const fs::path& f : files) {
    std::string rel = fs::relative(f, module).string();
    istioctl::PipelineInputs in;
    in.files.push_back({rel, read(f)});
    auto r = istioctl::generate(in);
    if (invalid_on_purpose().contains(rel)) {
      EXPECT_FALSE(r.ok()) << rel << " is invalid upstream but rendered";
      continue;
    }
    EXPECT_TRUE(r.ok()) << rel << ": " << r.message();
    if (r.ok()) ++rendered;
  }
  std::cout << "rendered " << rendered << " of " << files.size()
            << " upstream IstioOperator files\n";
}

}  // namespace
}  // namespace meshop::manifest
