// k8s settings against upstream's own expectations: for istioctl's manifest-generate test
// inputs that exercise component k8s settings, the fields those settings control in
// upstream's golden outputs (module cache, operator/cmd/mesh/testdata/manifest-generate) must
// be what meshop renders (istioctl's pipeline over the default bundled chart set). The whole
// objects are compared by the differential suite (test/differential/manifest); this test reads
// upstream's committed goldens. Skipped when the module is not available.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "api/yaml.hpp"
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

// The fields k8s settings (and the values they map to) control, per kind.
std::vector<std::string> controlled_fields(std::string_view kind) {
  if (kind == "Deployment" || kind == "DaemonSet")
    return {"/spec/replicas", "/spec/template/spec/nodeSelector", "/spec/template/spec/tolerations",
            "/spec/template/spec/containers/0/resources"};
  if (kind == "HorizontalPodAutoscaler")
    return {"/spec/minReplicas", "/spec/maxReplicas", "/spec/metrics"};
  if (kind == "PodDisruptionBudget") return {"/spec/maxUnavailable", "/spec/minAvailable"};
  if (kind == "Service") return {"/spec/type"};
  return {};
}

const api::Value* present(const api::Value& v, const std::string& pointer) {
  const api::Value* x = api::find(v, pointer);
  return x == nullptr || x->IsNull() ? nullptr : x;
}

TEST(UpstreamGoldens, K8sSettingsRenderAsIstioctlRendersThem) {
  std::string module = testing::istio_module();
  if (module.empty() || !fs::exists(module))
    GTEST_SKIP() << "istio.io/istio module not available (hack/istio-module.sh)";
  fs::path dir = fs::path(module) / "operator/cmd/mesh/testdata/manifest-generate";
  int compared = 0;
  for (const char* name : {"pilot_k8s_settings", "pilot_hpa_pdb", "gateway_hpa_pdb",
                           "autoscaling_v2", "istio-cni_tolerations"}) {
    SCOPED_TRACE(name);
    fs::path input = dir / "input" / (std::string(name) + ".yaml");
    fs::path golden = dir / "output" / (std::string(name) + ".golden.yaml");
    ASSERT_TRUE(fs::exists(input) && fs::exists(golden));
    istioctl::PipelineInputs in;
    in.files.push_back({input.string(), read(input)});
    auto mine = istioctl::generate(in);
    ASSERT_TRUE(mine.ok()) << mine.message();
    auto theirs = api::yaml_stream_to_json(read(golden));
    ASSERT_TRUE(theirs.ok()) << theirs.message();
    for (const api::Document& g : *theirs) {
      if (!g.IsObject()) continue;
      std::string kind = api::string_at(g, {"kind"});
      std::string obj = api::string_at(g, {"metadata", "name"});
      std::vector<std::string> fields = controlled_fields(kind);
      if (fields.empty()) continue;
      const api::Value* m = nullptr;
      for (const istioctl::PipelineObject& o : mine->objects)
        if (api::string_at(o.object, {"kind"}) == kind &&
            api::string_at(o.object, {"metadata", "name"}) == obj)
          m = &o.object;
      ASSERT_NE(m, nullptr) << kind << " " << obj << " not rendered";
      for (const std::string& f : fields) {
        const api::Value* gv = present(g, f);
        const api::Value* mv = present(*m, f);
        EXPECT_EQ(gv == nullptr, mv == nullptr) << kind << " " << obj << " " << f;
        if (gv != nullptr && mv != nullptr) {
          EXPECT_TRUE(api::json_equal(*gv, *mv))
              << kind << " " << obj << " " << f << "\n upstream: " << api::to_json(*gv)
              << "\n meshop:   " << api::to_json(*mv);
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 20);
}

}  // namespace
}  // namespace meshop::manifest
