// The offline injector defaults (manifest/injector_defaults.hpp) are the ConfigMaps an install
// of a bundled chart set renders: Istio's own templates (every one the chart ships), the chart
// set's hub and tag, the revision's name, and a snapshot the engine builds and injects with.
#include "operator/manifest/injector_defaults.hpp"

#include <string>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::manifest {
namespace {

std::string data_of(const istioctl::PipelineResult& r, std::string_view name, const char* key) {
  for (const auto& o : r.objects) {
    const api::Value* kind = api::find_member(o.object, "kind");
    const api::Value* n = api::find(o.object, "/metadata/name");
    if (kind == nullptr || !kind->IsString() ||
        std::string_view(kind->GetString()) != "ConfigMap" || n == nullptr || !n->IsString() ||
        std::string_view(n->GetString()) != name)
      continue;
    const api::Value* v = api::find(o.object, std::string("/data/") + key);
    return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
  }
  return "";
}

TEST(InjectorDefaults, AreTheChartSetsRenderedConfigMaps) {
  for (const ChartSet& set : chart_sets()) {
    for (std::string revision : {"", "canary"}) {
      SCOPED_TRACE(set.version + " revision \"" + revision + "\"");
      auto sources = chart_set_injector_sources(set.version, revision);
      ASSERT_TRUE(sources.ok()) << sources.message();
      EXPECT_EQ(sources->revision, revision);

      istioctl::PipelineInputs in;
      in.version = set.version;
      in.revision = revision;
      auto rendered = istioctl::generate(in);
      ASSERT_TRUE(rendered.ok()) << rendered.message();
      std::string suffix = revision.empty() ? "" : "-" + revision;
      EXPECT_EQ(sources->config, data_of(*rendered, "istio-sidecar-injector" + suffix, "config"));
      EXPECT_EQ(sources->values, data_of(*rendered, "istio-sidecar-injector" + suffix, "values"));
      EXPECT_EQ(sources->mesh, data_of(*rendered, "istio" + suffix, "mesh"));

      // Istio's templates, all of them (meshop's hand-written copy had two).
      auto config = api::yaml_to_json(sources->config);
      ASSERT_TRUE(config.ok()) << config.message();
      for (const char* t :
           {"sidecar", "gateway", "grpc-simple", "grpc-agent", "waypoint", "kube-gateway"})
        EXPECT_NE(api::find(*config, std::string("/templates/") + t), nullptr) << t;
      auto values = api::yaml_to_json(sources->values);
      ASSERT_TRUE(values.ok()) << values.message();
      const api::Value* hub = api::find(*values, "/global/hub");
      const api::Value* tag = api::find(*values, "/global/tag");
      ASSERT_TRUE(hub && hub->IsString() && tag && tag->IsString());
      EXPECT_EQ(hub->GetString(), set.hub);
      EXPECT_EQ(tag->GetString(), set.tag);
      const api::Value* rev = api::find(*values, "/revision");
      ASSERT_TRUE(rev && rev->IsString());
      EXPECT_EQ(rev->GetString(), revision);

      // The engine takes them as they are and injects Istio's proxy image.
      inject::SnapshotSources s = *sources;
      s.native_sidecars = inject::NativeSidecars::kDisabled;
      auto snapshot = inject::build_snapshot(s);
      ASSERT_TRUE(snapshot.ok()) << snapshot.message();
      auto pod = api::parse_json(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"},)"
          R"("spec":{"containers":[{"name":"app","image":"app:1"}]}})");
      ASSERT_TRUE(pod.ok());
      inject::PodRequest request;
      request.pod = &*pod;
      request.ns = "a";
      request.kube_inject = true;
      inject::InjectResult r = inject::inject(**snapshot, request);
      ASSERT_EQ(r.outcome, inject::Outcome::kInjected) << r.message;
      EXPECT_NE(r.patch.find(set.hub + "/proxyv2:" + set.tag), std::string::npos);
    }
  }
}

TEST(InjectorDefaults, UnknownVersionIsNamed) {
  auto sources = chart_set_injector_sources("0.9", "");
  ASSERT_FALSE(sources.ok());
  EXPECT_NE(sources.message().find("\"0.9\" is not bundled"), std::string::npos);
}

}  // namespace
}  // namespace meshop::manifest
