// The Kubernetes-typed spec.values (operator/manifest/k8s_values.hpp): the generated tables of
// every bundled version and the strict decoding istioctl applies to them, directly and through
// the pipeline. The accept/refuse comparison with upstream's renderer on the same fragments is
// test/differential/manifest (value_fragments()).
#include "operator/manifest/k8s_values.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::manifest {
namespace {

std::vector<std::string> error_paths(const std::string& values_yaml,
                                     std::string_view version = "1.31") {
  auto doc = api::yaml_to_json(values_yaml);
  EXPECT_TRUE(doc.ok()) << doc.message();
  std::vector<std::string> out;
  for (const api::FieldError& e : k8s_values::check_values(*doc, version))
    out.push_back(e.path);
  return out;
}

const k8s_values::StrictPath* find_path(std::string_view version, std::string_view json) {
  const auto* t = k8s_values::paths_for(version);
  if (t == nullptr) return nullptr;
  for (const auto& p : t->paths)
    if (p.json_path == json) return &p;
  return nullptr;
}

TEST(K8sValues, EveryBundledVersionHasItsTableFromUpstreamsValidation) {
  for (const ChartSet& set : chart_sets()) {
    const auto* t = k8s_values::paths_for(set.version);
    ASSERT_NE(t, nullptr) << set.version;
    // validateValues' calls, with the types upstream names there.
    const auto* affinity = find_path(set.version, "pilot.affinity");
    ASSERT_NE(affinity, nullptr) << set.version;
    EXPECT_EQ(affinity->type->name, "k8s.io.api.core.v1.Affinity");
    EXPECT_FALSE(affinity->list);
    const auto* tolerations = find_path(set.version, "gateways.istio-ingressgateway.tolerations");
    ASSERT_NE(tolerations, nullptr) << set.version;
    EXPECT_EQ(tolerations->proto_path, "gateways.istio_ingressgateway.tolerations");
    EXPECT_EQ(tolerations->type->name, "k8s.io.api.core.v1.Toleration");
    EXPECT_TRUE(tolerations->list);
    const auto* never = find_path(set.version, "sidecarInjectorWebhook.neverInjectSelector");
    ASSERT_NE(never, nullptr) << set.version;
    EXPECT_EQ(never->type->name, "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector");
    // Not every Struct value is Kubernetes-typed: pilot.nodeSelector is decoded as a Struct
    // only, upstream does not check it.
    EXPECT_EQ(find_path(set.version, "pilot.nodeSelector"), nullptr);
  }
  EXPECT_EQ(k8s_values::paths_for("0.1"), nullptr);
}

TEST(K8sValues, UnknownFieldsAtAnyDepthAreErrorsNamingThePath) {
  EXPECT_EQ(error_paths("pilot: {affinity: {bogus: 1}}"),
            std::vector<std::string>{"spec.values.pilot.affinity.bogus"});
  EXPECT_EQ(error_paths("pilot: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuring"
                        "Execution: {nodeSelectorTerms: [{matchExpressions: [{key: a, "
                        "operator: In, values: [b], extra: 1}]}]}}}}"),
            std::vector<std::string>{
                "spec.values.pilot.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                "Execution.nodeSelectorTerms[0].matchExpressions[0].extra"});
  auto doc = api::yaml_to_json("pilot: {affinity: {bogus: 1}}");
  auto errors = k8s_values::check_values(*doc, "1.31");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "unknown field \"bogus\" in k8s.io.api.core.v1.Affinity");
}

TEST(K8sValues, DecodesAsGoDoesCaseInsensitiveNamesInlineStructsAndStringTargets) {
  // encoding/json matches field names case-insensitively; a Volume's source is an embedded
  // struct (json:",inline"); sigs.k8s.io/yaml turns scalars into strings for string fields.
  EXPECT_TRUE(error_paths("pilot: {tolerations: [{Key: a, OPERATOR: Exists, value: 5, "
                          "effect: true, tolerationSeconds: 30}]}")
                  .empty());
  EXPECT_TRUE(error_paths("pilot: {volumes: [{name: v, emptyDir: {sizeLimit: 1Gi}}, "
                          "{name: s, secret: {secretName: x, defaultMode: 420}}]}")
                  .empty());
  EXPECT_TRUE(error_paths("global: {proxy: {lifecycle: {preStop: {exec: {command: [sleep, 5]}}}}}")
                  .empty());
  EXPECT_TRUE(error_paths("sidecarInjectorWebhook: {neverInjectSelector: [{matchLabels: "
                          "{a: b}}, {matchExpressions: [{key: x, operator: Exists}]}]}")
                  .empty());
  // The proto name of a gateway works as jsonpb accepts it.
  EXPECT_EQ(
      error_paths("gateways: {istio_ingressgateway: {tolerations: [{bad: 1}]}}"),
      std::vector<std::string>{"spec.values.gateways.istio_ingressgateway.tolerations[0].bad"});
}

TEST(K8sValues, WrongTypesAreErrors) {
  EXPECT_EQ(error_paths("pilot: {tolerations: [{tolerationSeconds: x}, {tolerationSeconds: 1.5}, "
                        "{tolerationSeconds: null}, {key: [a]}]}"),
            (std::vector<std::string>{"spec.values.pilot.tolerations[0].tolerationSeconds",
                                      "spec.values.pilot.tolerations[1].tolerationSeconds",
                                      "spec.values.pilot.tolerations[3].key"}));
  EXPECT_EQ(error_paths("pilot: {volumes: [{name: v, emptyDir: {sizeLimit: lots}}]}"),
            std::vector<std::string>{"spec.values.pilot.volumes[0].emptyDir.sizeLimit"});
  EXPECT_EQ(error_paths("pilot: {affinity: {nodeAffinity: []}}"),
            std::vector<std::string>{"spec.values.pilot.affinity.nodeAffinity"});
  EXPECT_EQ(error_paths("pilot: {seccompProfile: {type: RuntimeDefault, localhostProfile: {}}}"),
            std::vector<std::string>{"spec.values.pilot.seccompProfile.localhostProfile"});
  EXPECT_EQ(error_paths("global: {proxy: {lifecycle: {preStop: {httpGet: {port: 1.5}}}}}"),
            std::vector<std::string>{"spec.values.global.proxy.lifecycle.preStop.httpGet.port"});
  EXPECT_TRUE(
      error_paths("global: {proxy: {lifecycle: {preStop: {httpGet: {port: http}}}}}").empty());
}

api::Result<istioctl::PipelineResult> generate(const std::string& spec, bool force = false) {
  istioctl::PipelineInputs in;
  in.files.push_back(
      {"iop.yaml", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n" + spec});
  in.force = force;
  return istioctl::generate(in);
}

TEST(K8sValues, ThePipelineRefusesThemAsInvalidInputAndForceProceeds) {
  auto r = generate("  values: {pilot: {affinity: {bogus: 1}}}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().invalid());
  EXPECT_NE(r.message().find("spec.values.pilot.affinity.bogus: unknown field \"bogus\" in "
                             "k8s.io.api.core.v1.Affinity"),
            std::string::npos)
      << r.message();
  auto forced = generate("  values: {pilot: {affinity: {bogus: 1}}}\n", true);
  ASSERT_TRUE(forced.ok()) << forced.message();
  // A valid affinity renders.
  auto ok = generate(
      "  values: {pilot: {affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuring"
      "Execution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, "
      "labelSelector: {matchLabels: {app: istiod}}}}]}}}}\n");
  EXPECT_TRUE(ok.ok()) << ok.message();
}

}  // namespace
}  // namespace meshop::manifest
