#include "operator/manifest/profiles.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "operator/manifest/tree_path.hpp"
#include "test_support.hpp"

namespace meshop::manifest {
namespace {

using testing::find_object;
using testing::names_of_kind;
using testing::render_texts;

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string at(const api::Value& v, std::string_view path) {
  const api::Value* x = get_path(v, path);
  return x == nullptr ? "<missing>" : api::to_json(*x);
}

TEST(Profiles, ListsUpstreamsProfiles) {
  std::vector<std::string> names = profile_names();
  for (const char* n : {"ambient", "default", "demo", "empty", "minimal", "preview", "remote"})
    EXPECT_TRUE(has(names, n)) << n;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Profiles, UnknownProfileIsAnErrorNamingIt) {
  auto p = load_profile("nosuch");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("unknown profile \"nosuch\""), std::string::npos) << p.message();
  EXPECT_NE(p.message().find("default"), std::string::npos);
  auto r = render_texts({}, {"profile=nosuch"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("nosuch"), std::string::npos);
}

TEST(Profiles, EveryProfileIsLaidOverDefault) {
  auto demo = load_profile("demo");
  ASSERT_TRUE(demo.ok()) << demo.message();
  EXPECT_EQ(at(*demo, "spec.components.base.enabled"), "true");  // from default
  EXPECT_EQ(at(*demo, "spec.hub"), "\"docker.io/istio\"");
  EXPECT_EQ(at(*demo, "spec.components.egressGateways[0].enabled"), "true");
  EXPECT_EQ(at(*demo, "spec.values.profile"), "\"demo\"");
}

TEST(Profiles, EnableTheComponentsUpstreamsProfilesEnable) {
  struct Case {
    const char* profile;
    bool base, pilot, ingress, egress, cni, ztunnel;
  };
  for (Case c : {Case{"default", true, true, true, false, false, false},
                 Case{"demo", true, true, true, true, false, false},
                 Case{"minimal", true, true, false, false, false, false},
                 Case{"empty", false, false, false, false, false, false},
                 Case{"preview", true, true, true, false, false, false},
                 Case{"remote", true, true, false, false, false, false},
                 Case{"ambient", true, true, false, false, true, true}}) {
    SCOPED_TRACE(c.profile);
    auto r = render_texts({}, {std::string("profile=") + c.profile});
    ASSERT_TRUE(r.ok()) << r.message();
    auto components = [&](std::string_view name) {
      return std::any_of(r->objects.begin(), r->objects.end(),
                         [&](const RenderedObject& o) { return o.component == name; });
    };
    EXPECT_EQ(components("Base"), c.base);
    EXPECT_EQ(components("Pilot"), c.pilot);
    EXPECT_EQ(components("IngressGateways"), c.ingress);
    EXPECT_EQ(components("EgressGateways"), c.egress);
    EXPECT_EQ(components("Cni"), c.cni);
    EXPECT_EQ(components("Ztunnel"), c.ztunnel);
  }
}

TEST(Profiles, DemoTurnsOffAutoscalingAndLogsAccess) {
  auto r = render_texts({}, {"profile=demo"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(names_of_kind(*r, "HorizontalPodAutoscaler").empty());
  const api::Value* mesh = find_object(*r, "ConfigMap", "istio");
  ASSERT_NE(mesh, nullptr);
  EXPECT_NE(api::string_at(*mesh, {"data", "mesh"}).find("accessLogFile: /dev/stdout"),
            std::string::npos);
  auto def = render_texts({});
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(has(names_of_kind(*def, "HorizontalPodAutoscaler"), "istiod"));
}

TEST(Profiles, RemoteRendersNoIstiodAndNoConfigMaps) {
  auto r = render_texts(
      {}, {"profile=remote", "values.istiodRemote.injectionURL=https://x:15017/inject"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(find_object(*r, "Deployment", "istiod"), nullptr);
  EXPECT_EQ(find_object(*r, "ConfigMap", "istio"), nullptr);
  EXPECT_EQ(find_object(*r, "ConfigMap", "istio-sidecar-injector"), nullptr);
  const api::Value* mwc = find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector");
  ASSERT_NE(mwc, nullptr);
  EXPECT_EQ(testing::json_at(*mwc, "/webhooks/0/clientConfig/url"), "\"https://x:15017/inject\"");
}

TEST(Profiles, PreviewAndAmbientSetTheirProxyMetadata) {
  auto preview = load_profile("preview");
  ASSERT_TRUE(preview.ok());
  EXPECT_EQ(at(*preview, "spec.meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE"),
            "\"true\"");
  auto ambient = load_profile("ambient");
  ASSERT_TRUE(ambient.ok());
  EXPECT_EQ(at(*ambient, "spec.values.cni.ambient.enabled"), "true");
  EXPECT_EQ(at(*ambient, "spec.values.pilot.env.PILOT_ENABLE_AMBIENT"), "\"true\"");
}

}  // namespace
}  // namespace meshop::manifest
