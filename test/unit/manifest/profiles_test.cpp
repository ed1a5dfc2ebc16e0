// Upstream's profiles (the profiles/ of each bundled chart set) through istioctl's pipeline:
// every profile is laid over default, enables the components upstream's profile enables, and
// the profile's chart values (the charts' files/profile-*.yaml) reach the rendered objects.
// Whole objects are compared with upstream's renderer by the differential suite
// (test/differential/manifest); these tests name the behaviour.
#include <algorithm>

#include <gtest/gtest.h>

#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
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

// `meshop profile dump --set profile=NAME` as a document.
api::Document merged(const std::string& profile) {
  istioctl::PipelineInputs in;
  in.set_flags.push_back("profile=" + profile);
  auto m = istioctl::merge_inputs(in);
  EXPECT_TRUE(m.ok()) << m.message();
  if (!m.ok()) return {};
  auto doc = istioctl::go_to_document(*m);
  EXPECT_TRUE(doc.ok()) << doc.message();
  return doc.ok() ? std::move(doc).value() : api::Document();
}

TEST(Profiles, EveryBundledVersionCarriesUpstreamsProfiles) {
  for (const ChartSet& set : chart_sets()) {
    SCOPED_TRACE(set.version);
    std::vector<std::string> names = set.profiles();
    for (const char* n : {"ambient", "default", "demo", "empty", "minimal", "openshift",
                          "openshift-ambient", "preview", "remote", "stable"})
      EXPECT_TRUE(has(names, n)) << n;
  }
}

TEST(Profiles, UnknownProfileIsAnErrorNamingIt) {
  auto r = render_texts({}, {"profile=nosuch"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("nosuch"), std::string::npos) << r.message();
}

TEST(Profiles, EveryProfileIsLaidOverDefault) {
  api::Document demo = merged("demo");
  EXPECT_EQ(at(demo, "spec.components.base.enabled"), "true");  // from default
  EXPECT_EQ(at(demo, "spec.components.egressGateways[0].enabled"), "true");
  EXPECT_EQ(at(demo, "spec.values.profile"), "\"demo\"");
  // The bundled version's hub and tag lie over the profile, as a release istioctl's build
  // hub/tag do.
  const ChartSet& set = default_chart_set();
  EXPECT_EQ(at(demo, "spec.hub"), "\"" + set.hub + "\"");
  EXPECT_EQ(at(demo, "spec.tag"), "\"" + set.tag + "\"");
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
                 Case{"ambient", true, true, false, false, true, true},
                 Case{"openshift", true, true, true, false, true, false},
                 Case{"openshift-ambient", true, true, false, false, true, true}}) {
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
  EXPECT_EQ(find_object(*r, "ConfigMap", "istio-sidecar-injector"), nullptr);
  const api::Value* mwc = find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector");
  ASSERT_NE(mwc, nullptr);
  EXPECT_EQ(testing::json_at(*mwc, "/webhooks/0/clientConfig/url"), "\"https://x:15017/inject\"");
}

TEST(Profiles, AmbientTurnsOnAmbientInIstiodAndTheCni) {
  auto r = render_texts({}, {"profile=ambient"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* cni = find_object(*r, "ConfigMap", "istio-cni-config");
  ASSERT_NE(cni, nullptr);
  EXPECT_EQ(api::string_at(*cni, {"data", "AMBIENT_ENABLED"}), "true");
  const api::Value* istiod = find_object(*r, "Deployment", "istiod");
  ASSERT_NE(istiod, nullptr);
  std::string env = testing::json_at(*istiod, "/spec/template/spec/containers/0/env");
  EXPECT_NE(env.find(R"({"name":"PILOT_ENABLE_AMBIENT","value":"true"})"), std::string::npos)
      << env;
}

}  // namespace
}  // namespace meshop::manifest
