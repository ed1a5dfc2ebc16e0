#include <gtest/gtest.h>

#include "api/istio_operator.hpp"
#include "api/yaml.hpp"

namespace meshop::api {
namespace {

IstioOperatorValidation validate_yaml(std::string_view text) {
  auto doc = yaml_to_json(text);
  EXPECT_TRUE(doc.ok()) << doc.message();
  return validate_istio_operator(*doc);
}

std::vector<std::string> paths(const IstioOperatorValidation& v) {
  std::vector<std::string> out;
  for (const FieldError& e : v.errors)
    out.push_back(e.path);
  return out;
}

TEST(IstioOperatorValidation, AcceptsTheSeedShape) {
  auto v = validate_yaml(R"(
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: x}
spec:
  profile: demo
  hub: docker.io/istio
  tag: 1.20
  revision: canary
  meshConfig: {accessLogFile: /dev/stdout}
  components:
    cni: {enabled: true, namespace: kube-system}
    pilot:
      k8s:
        replicaCount: 2
        env: [{name: A, value: b}]
        overlays:
        - kind: Deployment
          name: istiod
          patches: [{path: spec.replicas, value: 3}]
    ingressGateways: [{name: istio-ingressgateway, enabled: true, label: {app: gw}}]
  values: {cni: {chained: false}}
  restarts: {mode: DryRun}
)");
  EXPECT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(v.warnings.empty());
}

TEST(IstioOperatorValidation, ReportsEveryErrorWithItsFieldPath) {
  auto v = validate_yaml(R"(
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  revision: Canary_1
  namespace: "-bad"
  profiel: demo
  values: [1]
  components:
    pilot:
      enabled: "yes"
      k8s:
        replicaCount: two
        nodeSelector: {disk: 1}
        env: [{value: x}]
        unknownSetting: 1
        overlays:
        - kind: Deployment
          patches: [{value: 1}]
    gizmo: {}
    ingressGateways:
    - name: gw
    - name: gw
)");
  EXPECT_EQ(paths(v), (std::vector<std::string>{
                          "spec.revision",
                          "spec.namespace",
                          "spec.profiel",
                          "spec.values",
                          "spec.components.pilot.enabled",
                          "spec.components.pilot.k8s.replicaCount",
                          "spec.components.pilot.k8s.nodeSelector.disk",
                          "spec.components.pilot.k8s.env[0].name",
                          "spec.components.pilot.k8s.unknownSetting",
                          "spec.components.pilot.k8s.overlays[0].patches[0].path",
                          "spec.components.pilot.k8s.overlays[0].name",
                          "spec.components.gizmo",
                          "spec.components.ingressGateways[1].name",
                      }))
      << v.message();
  EXPECT_NE(v.message().find("spec.components.pilot.k8s.replicaCount: expected integer, got "
                             "string \"two\""),
            std::string::npos)
      << v.message();
}

TEST(IstioOperatorValidation, WrongKindAndApiVersionAreErrors) {
  auto v = validate_yaml("apiVersion: v1\nkind: ConfigMap\n");
  EXPECT_EQ(paths(v), (std::vector<std::string>{"apiVersion", "kind"}));
}

// Both name the chart set the renderer uses (it checks that the directory or version exists).
TEST(IstioOperatorValidation, InstallPackagePathAndVersionAreStrings) {
  auto v = validate_yaml("spec: {installPackagePath: /tmp/charts, version: \"1.30\"}\n");
  EXPECT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(v.warnings.empty());
  auto bad = validate_yaml("spec: {version: {a: 1}}\n");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("spec.version"), std::string::npos) << bad.message();
}

TEST(IstioOperatorValidation, BadImageTagAndHubAreErrors) {
  auto v = validate_yaml("spec: {hub: 'Docker.io/Istio', tag: 'a b'}\n");
  EXPECT_EQ(paths(v), (std::vector<std::string>{"spec.hub", "spec.tag"})) << v.message();
}

TEST(IstioOperatorView, TypedFieldsAndComponents) {
  auto doc = yaml_to_json(R"(
metadata: {name: cni-annotations, namespace: istio-system}
spec:
  tag: 1.20
  revision: canary
  components:
    cni: {enabled: true, namespace: kube-system, k8s: {replicaCount: 1}}
    pilot: {enabled: false}
    ingressGateways: [{name: a, label: {x: yy}}, {name: b, enabled: false}]
  values: {a: 1}
)");
  ASSERT_TRUE(doc.ok());
  std::vector<std::string> warnings;
  auto view = parse_istio_operator(*doc, &warnings);
  ASSERT_TRUE(view.ok()) << view.message();
  EXPECT_EQ(view->name, "cni-annotations");
  EXPECT_EQ(view->tag, "1.2");  // a YAML float, as upstream reads it
  EXPECT_EQ(view->revision, "canary");
  ASSERT_TRUE(view->components.contains("cni"));
  EXPECT_EQ(view->components.at("cni").namespace_, "kube-system");
  EXPECT_EQ(view->components.at("cni").enabled, std::optional<bool>(true));
  EXPECT_NE(view->components.at("cni").k8s, nullptr);
  EXPECT_EQ(view->components.at("pilot").enabled, std::optional<bool>(false));
  ASSERT_EQ(view->ingress_gateways.size(), 2u);
  EXPECT_EQ(view->ingress_gateways[0].label.at("x"), "yy");
  EXPECT_EQ(view->ingress_gateways[1].enabled, std::optional<bool>(false));
  ASSERT_NE(view->values, nullptr);
}

TEST(IstioOperatorValidation, UnquotedYamlBooleanInALabelIsATypeError) {
  // `y` is a YAML 1.1 boolean: the label map would not decode into map[string]string upstream.
  auto v = validate_yaml("spec: {components: {ingressGateways: [{name: a, label: {x: y}}]}}");
  EXPECT_EQ(paths(v), (std::vector<std::string>{"spec.components.ingressGateways[0].label.x"}));
}

TEST(IstioOperatorValidation, TolerationsAreDecodedStrictlyInK8s) {
  // (The Kubernetes-typed spec.values are the render's to check: k8s_values_test.cpp.)
  auto v = validate_yaml(R"(
spec:
  components:
    ztunnel: {k8s: {tolerations: [{key: a, operator: Exists}, {thats: not-a-real-field}]}}
)");
  EXPECT_EQ(paths(v),
            (std::vector<std::string>{"spec.components.ztunnel.k8s.tolerations[1].thats"}))
      << v.message();
}

TEST(IstioOperatorView, InvalidSpecIsAnErrorListingAllProblems) {
  auto doc = yaml_to_json("spec: {revision: 5, components: {pilot: {k8s: {replicaCount: -1}}}}");
  ASSERT_TRUE(doc.ok());
  auto view = parse_istio_operator(*doc);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.message().find("spec.revision: expected string"), std::string::npos);
  EXPECT_NE(view.message().find("spec.components.pilot.k8s.replicaCount: must be >= 0"),
            std::string::npos);
}

TEST(IstioOperatorValidation, RevisionLongerThanItsDerivedNamesAllowIsAnError) {
  std::string ok_rev(kMaxRevisionLength, 'a');
  auto ok = validate_yaml(
      "{apiVersion: install.istio.io/v1alpha1, kind: IstioOperator, "
      "spec: {revision: " +
      ok_rev + "}}");
  EXPECT_TRUE(ok.ok()) << ok.message();
  auto v = validate_yaml(
      "{apiVersion: install.istio.io/v1alpha1, kind: IstioOperator, "
      "spec: {revision: " +
      ok_rev + "b}}");
  ASSERT_EQ(v.errors.size(), 1u) << v.message();
  EXPECT_EQ(v.errors[0].path, "spec.revision");
  EXPECT_NE(v.errors[0].message.find("57 characters; at most 56"), std::string::npos)
      << v.errors[0].message;
  EXPECT_NE(v.errors[0].message.find("istiod-<revision>"), std::string::npos);
  // 64 characters is still reported once, as a DNS label error.
  auto l = validate_yaml(
      "{apiVersion: install.istio.io/v1alpha1, kind: IstioOperator, "
      "spec: {revision: " +
      std::string(64, 'a') + "}}");
  EXPECT_EQ(paths(l), std::vector<std::string>{"spec.revision"});
}

}  // namespace
}  // namespace meshop::api
