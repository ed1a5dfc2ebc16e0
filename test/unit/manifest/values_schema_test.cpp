// spec.values checked as istioctl checks it (operator/manifest/values_schema.hpp), through the
// pipeline over the bundled chart sets and through render_istio_operator (what the install
// reconciler renders before applying anything). The full accept/refuse comparison with
// upstream's renderer is test/differential/manifest.
#include "operator/manifest/values_schema.hpp"

#include <gtest/gtest.h>

#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/manifest/render.hpp"

namespace meshop::manifest {
namespace {

api::Result<istioctl::PipelineResult> generate(const std::string& spec, bool force = false,
                                               const std::string& version = "") {
  istioctl::PipelineInputs in;
  in.files.push_back(
      {"iop.yaml", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n" + spec});
  in.force = force;
  in.version = version;
  return istioctl::generate(in);
}

TEST(ValuesSchema, EveryBundledVersionHasItsSchema) {
  for (const ChartSet& set : chart_sets()) {
    const auto* d = values_schema::values_descriptor(set.version);
    ASSERT_NE(d, nullptr) << set.version;
    EXPECT_EQ(d->full_name, "istio.operator.v1alpha1.Values");
    bool global = false;
    for (const auto& f : d->fields)
      global = global || f.json_name == "global";
    EXPECT_TRUE(global);
  }
  EXPECT_EQ(values_schema::values_descriptor("0.1"), nullptr);
}

TEST(ValuesSchema, UnknownFieldIsAnErrorNamingItsPathAndForceMakesItAWarning) {
  auto r = generate("  values: {global: {badKey: 1}}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("spec.values.global.badKey: unknown field \"badKey\" in "
                             "istio.operator.v1alpha1.GlobalConfig"),
            std::string::npos)
      << r.message();

  auto forced = generate("  values: {global: {badKey: 1}}\n", true);
  ASSERT_TRUE(forced.ok()) << forced.message();
  bool warned = false;
  for (const std::string& w : forced->warnings)
    warned = warned || (w.starts_with("spec invalid; continuing because of --force") &&
                        w.find("spec.values.global.badKey") != std::string::npos);
  EXPECT_TRUE(warned);
  EXPECT_FALSE(forced->objects.empty());
}

TEST(ValuesSchema, WrongTypesAreReportedEachWithItsPath) {
  auto r = generate(
      "  values:\n"
      "    pilot: {autoscaleMax: seven, traceSampling: abc, resources: [a]}\n"
      "    global: {proxy: {privileged: \"yes\", image: 5, tracer: jaeger}}\n"
      "    revisionTags: prod\n"
      "    gateways: {istio-ingressgateway: {rollingMaxSurge: true}}\n");
  ASSERT_FALSE(r.ok());
  for (const char* path :
       {"spec.values.pilot.autoscaleMax: expected uint32",
        "spec.values.pilot.traceSampling:", "spec.values.pilot.resources: expected a mapping",
        "spec.values.global.proxy.privileged:", "spec.values.global.proxy.image: expected a string",
        "spec.values.global.proxy.tracer: unknown value",
        "spec.values.revisionTags: expected a list",
        "spec.values.gateways.istio-ingressgateway.rollingMaxSurge:"})
    EXPECT_NE(r.message().find(path), std::string::npos) << path << "\n" << r.message();
}

TEST(ValuesSchema, AcceptsWhatJsonpbAcceptsAndLeavesUnvalidatedValuesAlone) {
  auto r = generate(
      "  values:\n"
      "    pilot: {autoscaleMax: \"7\", autoscaleMin: 2.0, traceSampling: \"1.5\",\n"
      "            keepaliveMaxServerConnectionAge: 30m, deploymentLabels: {any: {x: [1]}}}\n"
      "    istio_cni: {enabled: false}\n"
      "    global: {proxy: {tracer: datadog, privileged: null}}\n"
      "    gateways: {istio-ingressgateway: {rollingMaxSurge: \"25%\", rollingMaxUnavailable: 1}}\n"
      "    ztunnel: {anything: {goes: true}}\n"
      "  unvalidatedValues: {global: {notInTheSchema: 1}}\n");
  ASSERT_TRUE(r.ok()) << r.message();
}

// validateValues' list checks: CIDRs as netip.ParsePrefix takes them, ports in [0, 65535].
TEST(ValuesSchema, ProxyIpRangesAndPortListsAreCheckedAsUpstream) {
  EXPECT_TRUE(generate("  values: {global: {proxy: {includeIPRanges: \"10.0.0.0/8,fd00::/8\",\n"
                       "    excludeIPRanges: \"*\", excludeInboundPorts: \"15020,*\"}}}\n")
                  .ok());
  for (const char* bad : {"includeIPRanges: \"1.2.3.4/99\"", "includeIPRanges: \"010.0.0.0/8\"",
                          "excludeIPRanges: \"10.0.0.0/8, 10.1.0.0/16\"",
                          "excludeInboundPorts: \"70000\"", "includeInboundPorts: \"80,http\""}) {
    auto r = generate(std::string("  values: {global: {proxy: {") + bad + "}}}\n");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.message().find("spec.values.global.proxy."), std::string::npos) << r.message();
  }
}

// Each version is checked with its own schema: global.readerServiceAccount is new in 1.31.
TEST(ValuesSchema, EachBundledVersionChecksWithItsOwnSchema) {
  if (find_chart_set("1.30") == nullptr || find_chart_set("1.31") == nullptr)
    GTEST_SKIP() << "needs the 1.30 and 1.31 chart sets";
  const std::string spec = "  values: {global: {readerServiceAccount: {name: reader}}}\n";
  auto v131 = generate(spec, false, "1.31");
  EXPECT_TRUE(v131.ok()) << v131.message();
  auto v130 = generate(spec, false, "1.30");
  ASSERT_FALSE(v130.ok());
  EXPECT_NE(v130.message().find("spec.values.global.readerServiceAccount: unknown field"),
            std::string::npos)
      << v130.message();
}

// What the install reconciler renders: the error names the field, and nothing is rendered.
TEST(ValuesSchema, RenderIstioOperatorRefusesBeforeRendering) {
  auto doc = api::yaml_to_json(R"(
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: x, namespace: istio-system}
spec:
  values: {global: {proxy: {privileged: "yes please"}}}
)");
  ASSERT_TRUE(doc.ok()) << doc.message();
  auto r = render_istio_operator(*doc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("spec.values.global.proxy.privileged: expected a boolean"),
            std::string::npos)
      << r.message();
}

}  // namespace
}  // namespace meshop::manifest
