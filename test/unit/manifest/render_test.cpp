// What `meshop manifest generate` renders (istioctl's pipeline over the default bundled chart
// set): overlay order, --set typing and selectors, the injector's ConfigMap and webhook
// configuration per revision, k8s settings and overlays, object order. Each expectation is
// what upstream's renderer prints for the same input (hack/renderoracle.sh generate); whole
// objects are compared by the differential suite (test/differential/manifest).
#include "operator/manifest/render.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "api/mesh_conventions.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/tree_path.hpp"
#include "test_support.hpp"

namespace meshop::manifest {
namespace {

using testing::find_object;
using testing::json_at;
using testing::names_of_kind;
using testing::render_texts;

std::string read_source_file(const std::string& rel) {
  std::ifstream in(std::string(MESHOP_SOURCE_DIR) + "/" + rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hub_of(const RenderResult& r) {
  const api::Value* d = find_object(r, "Deployment", "istiod");
  return d == nullptr ? "" : json_at(*d, "/spec/template/spec/containers/0/image");
}

// The parsed `config` of the injector ConfigMap.
api::Document injector_config(const RenderResult& r, std::string_view name) {
  const api::Value* cm = find_object(r, "ConfigMap", name);
  EXPECT_NE(cm, nullptr) << name;
  if (cm == nullptr) return {};
  auto doc = api::yaml_to_json(api::string_at(*cm, {"data", "config"}));
  EXPECT_TRUE(doc.ok()) << doc.message();
  return std::move(doc).value();
}

std::vector<std::string> webhook_names(const api::Value& mwc) {
  std::vector<std::string> out;
  for (const api::Value& w : mwc["webhooks"].GetArray())
    out.push_back(api::string_at(w, {"name"}));
  return out;
}

constexpr const char* kHubA = "spec: {values: {global: {hub: a.io/x}}}";
constexpr const char* kHubB = "spec: {values: {global: {hub: b.io/x}}}";

// The bundled chart set's hub and tag lie under the profile's, as a release istioctl's build
// hub/tag do.
std::string image(std::string_view hub, std::string_view tag) {
  return "\"" + std::string(hub) + "/pilot:" + std::string(tag) + "\"";
}

TEST(OverlayOrder, LaterFilesWinAndSetFlagsWinOverFiles) {
  const ChartSet& set = default_chart_set();
  auto only_profile = render_texts({});
  ASSERT_TRUE(only_profile.ok()) << only_profile.message();
  EXPECT_EQ(hub_of(*only_profile), image(set.hub, set.tag));
  auto ab = render_texts({kHubA, kHubB});
  ASSERT_TRUE(ab.ok()) << ab.message();
  EXPECT_EQ(hub_of(*ab), image("b.io/x", set.tag));
  auto ba = render_texts({kHubB, kHubA});
  ASSERT_TRUE(ba.ok());
  EXPECT_EQ(hub_of(*ba), image("a.io/x", set.tag));
  auto set_flags = render_texts({kHubA, kHubB}, {"values.global.hub=c.io/x", "tag=1.2.3"});
  ASSERT_TRUE(set_flags.ok());
  EXPECT_EQ(hub_of(*set_flags), image("c.io/x", "1.2.3"));
}

TEST(OverlayOrder, ValuesWinOverSpecHubAndComponentHubWinsOverBoth) {
  auto r = render_texts({"spec: {hub: spec.io/h, values: {global: {hub: values.io/h}}}"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(hub_of(*r), image("values.io/h", default_chart_set().tag));
  auto c = render_texts({"spec: {hub: spec.io/h, components: {pilot: {hub: comp.io/h, tag: t1}}}"});
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(hub_of(*c), image("comp.io/h", "t1"));
}

TEST(OverlayOrder, SetFlagsAreTypedAndReachListsBySelector) {
  auto r = render_texts({}, {"values.pilot.autoscaleEnabled=false", "values.pilot.replicaCount=3",
                             "components.ingressGateways[0].enabled=false",
                             "components.egressGateways[0].name=istio-egressgateway",
                             "components.egressGateways[0].enabled=true"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* d = find_object(*r, "Deployment", "istiod");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(json_at(*d, "/spec/replicas"), "3");
  EXPECT_EQ(find_object(*r, "Deployment", "istio-ingressgateway"), nullptr);
  EXPECT_NE(find_object(*r, "Deployment", "istio-egressgateway"), nullptr);
  // As in istioctl, --set applies to the files before the profile is merged: a selector finds
  // gateways the files list.
  auto sel = render_texts({"spec: {components: {ingressGateways: [{name: a}, {name: b}]}}"},
                          {"components.ingressGateways.[name:b].enabled=false"});
  ASSERT_TRUE(sel.ok()) << sel.message();
  EXPECT_NE(find_object(*sel, "Deployment", "a"), nullptr);
  EXPECT_EQ(find_object(*sel, "Deployment", "b"), nullptr);
}

TEST(OverlayOrder, SetProfileSelectsTheProfile) {
  auto r = render_texts({}, {"profile=minimal"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(find_object(*r, "Deployment", "istio-ingressgateway"), nullptr);
  EXPECT_NE(find_object(*r, "Deployment", "istiod"), nullptr);
}

TEST(OverlayOrder, InvalidSetPathOrValueIsAnErrorNamingIt) {
  auto r = render_texts({}, {"components.ingressGateways.[name:nope].enabled=false"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("[name:nope]"), std::string::npos) << r.message();
  auto typo = render_texts({}, {"componets.pilot.enabled=false"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.message().find("spec.componets"), std::string::npos) << typo.message();
  auto typed = render_texts({}, {"components.pilot.k8s.replicaCount=two"});
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.message().find("spec.components.pilot.k8s.replicaCount: expected integer"),
            std::string::npos)
      << typed.message();
}

TEST(OverlayOrder, MultipleIstioOperatorsInOneFileAreRejected) {
  auto r = render_texts({"kind: IstioOperator\nspec: {}\n---\nkind: IstioOperator\nspec: {}\n"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("multiple IstioOperator"), std::string::npos);
}

TEST(Render, SeedCniAnnotationsRendersCniInKubeSystemAndTheInjectedAnnotation) {
  std::string seed = read_source_file("test/e2e/testdata/cni-annotations.yaml");
  ASSERT_FALSE(seed.empty());
  auto r = render_texts({seed});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* ds = find_object(*r, "DaemonSet", "istio-cni-node");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(api::string_at(*ds, {"metadata", "namespace"}), "kube-system");
  std::string ds_json = api::to_json(*ds);
  EXPECT_NE(ds_json.find(R"({"name":"cni-bin-dir","hostPath":{"path":"/var/lib/cni/bin"}})"),
            std::string::npos)
      << ds_json;
  EXPECT_NE(ds_json.find(R"({"name":"cni-net-dir","hostPath":{"path":"/etc/cni/multus/net.d"}})"),
            std::string::npos);
  const api::Value* cni_cm = find_object(*r, "ConfigMap", "istio-cni-config");
  ASSERT_NE(cni_cm, nullptr);
  EXPECT_EQ(api::string_at(*cni_cm, {"metadata", "namespace"}), "kube-system");
  EXPECT_EQ(api::string_at(*cni_cm, {"data", "CHAINED_CNI_PLUGIN"}), "false");
  EXPECT_EQ(api::string_at(*cni_cm, {"data", "CNI_CONF_NAME"}), "istio-cni.conf");
  EXPECT_EQ(api::string_at(*cni_cm, {"data", "EXCLUDE_NAMESPACES"}), "istio-system,kube-system");

  api::Document config = injector_config(*r, "istio-sidecar-injector");
  EXPECT_EQ(json_at(config, "/injectedAnnotations"),
            R"({"k8s.v1.cni.cncf.io/networks":"istio-cni"})");
  EXPECT_EQ(json_at(config, "/policy"), "\"enabled\"");
  EXPECT_EQ(json_at(config, "/defaultTemplates"), R"(["sidecar"])");
  // The injector's values say CNI is on, so the sidecar template skips istio-init.
  const api::Value* cm = find_object(*r, "ConfigMap", "istio-sidecar-injector");
  ASSERT_NE(cm, nullptr);
  auto values = api::parse_json(api::string_at(*cm, {"data", "values"}));
  ASSERT_TRUE(values.ok()) << values.message();
  EXPECT_EQ(json_at(*values, "/pilot/cni/enabled"), "true");
  EXPECT_EQ(json_at(*values, "/sidecarInjectorWebhook/injectedAnnotations"),
            R"({"k8s.v1.cni.cncf.io/networks":"istio-cni"})");
}

TEST(Render, InjectorConfigCarriesTheChartsInjectionTemplates) {
  auto r = render_texts({});
  ASSERT_TRUE(r.ok());
  api::Document config = injector_config(*r, "istio-sidecar-injector");
  const api::Value* templates = api::find(config, "/templates");
  ASSERT_NE(templates, nullptr);
  std::vector<std::string> names;
  for (const auto& m : templates->GetObject())
    names.emplace_back(api::string_view_of(m.name));
  for (const char* t :
       {"sidecar", "gateway", "grpc-simple", "grpc-agent", "waypoint", "kube-gateway"})
    EXPECT_NE(std::find(names.begin(), names.end(), t), names.end()) << t;
  // The sidecar template is the chart's files/injection-template.yaml, byte for byte.
  std::optional<std::string_view> chart_file = default_chart_set().file(
      "charts/istio-control/istio-discovery/files/injection-template.yaml");
  ASSERT_TRUE(chart_file.has_value());
  const api::Value* sidecar = api::find(config, "/templates/sidecar");
  ASSERT_NE(sidecar, nullptr);
  EXPECT_EQ(api::string_view_of(*sidecar), *chart_file);
  // User templates are added next to the built-in ones.
  auto user =
      render_texts({"spec: {values: {sidecarInjectorWebhook: {templates: {custom: 'x: y'}}}}"});
  ASSERT_TRUE(user.ok()) << user.message();
  api::Document ucfg = injector_config(*user, "istio-sidecar-injector");
  EXPECT_EQ(json_at(ucfg, "/templates/custom"), "\"x: y\"");
  EXPECT_NE(api::find(ucfg, "/templates/sidecar"), nullptr);
}

void expect_common_webhook_fields(const api::Value& w, const std::string& service) {
  SCOPED_TRACE(api::string_at(w, {"name"}));
  EXPECT_EQ(json_at(w, "/failurePolicy"), "\"Fail\"");
  EXPECT_EQ(json_at(w, "/sideEffects"), "\"None\"");
  EXPECT_EQ(json_at(w, "/admissionReviewVersions"), R"(["v1"])");
  EXPECT_EQ(
      json_at(w, "/rules"),
      R"([{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}])");
  EXPECT_EQ(json_at(w, "/reinvocationPolicy"), "\"Never\"");
  EXPECT_EQ(
      json_at(w, "/clientConfig/service"),
      R"({"name":")" + service + R"(","namespace":"istio-system","path":"/inject","port":443})");
}

TEST(Webhook, CanaryRevisionRendersOnlyTheRevisionEntries) {
  auto r = render_texts({"spec: {revision: canary}"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(find_object(*r, "Deployment", "istiod-canary"), nullptr);
  EXPECT_NE(find_object(*r, "ConfigMap", "istio-sidecar-injector-canary"), nullptr);
  EXPECT_NE(find_object(*r, "ConfigMap", "istio-canary"), nullptr);
  EXPECT_EQ(names_of_kind(*r, "MutatingWebhookConfiguration"),
            std::vector<std::string>{"istio-sidecar-injector-canary"});
  const api::Value* mwc =
      find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector-canary");
  ASSERT_NE(mwc, nullptr);
  EXPECT_EQ(webhook_names(*mwc),
            (std::vector<std::string>{"rev.namespace.sidecar-injector.istio.io",
                                      "rev.object.sidecar-injector.istio.io"}));
  const api::Value& ns = (*mwc)["webhooks"][0];
  expect_common_webhook_fields(ns, "istiod-canary");
  EXPECT_EQ(
      json_at(ns, "/namespaceSelector"),
      R"({"matchExpressions":[{"key":"istio.io/rev","operator":"In","values":["canary"]},{"key":"istio-injection","operator":"DoesNotExist"}]})");
  EXPECT_EQ(
      json_at(ns, "/objectSelector"),
      R"({"matchExpressions":[{"key":"sidecar.istio.io/inject","operator":"NotIn","values":["false"]}]})");
  const api::Value& obj = (*mwc)["webhooks"][1];
  expect_common_webhook_fields(obj, "istiod-canary");
  EXPECT_EQ(
      json_at(obj, "/namespaceSelector"),
      R"({"matchExpressions":[{"key":"istio.io/rev","operator":"DoesNotExist"},{"key":"istio-injection","operator":"DoesNotExist"}]})");
  EXPECT_EQ(
      json_at(obj, "/objectSelector"),
      R"({"matchExpressions":[{"key":"sidecar.istio.io/inject","operator":"NotIn","values":["false"]},{"key":"istio.io/rev","operator":"In","values":["canary"]}]})");
  EXPECT_EQ(json_at(*mwc, "/metadata/labels/istio.io~1rev"), "\"canary\"");
  // --revision is the same as spec.revision.
  auto flag = render_texts({}, {}, "canary");
  ASSERT_TRUE(flag.ok());
  EXPECT_NE(find_object(*flag, "MutatingWebhookConfiguration", "istio-sidecar-injector-canary"),
            nullptr);
}

TEST(Webhook, DefaultRevisionAddsLegacySelectorsAndAutoOnlyWhenEnabledByDefault) {
  auto r = render_texts({});
  ASSERT_TRUE(r.ok());
  const api::Value* mwc = find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector");
  ASSERT_NE(mwc, nullptr);
  EXPECT_EQ(webhook_names(*mwc),
            (std::vector<std::string>{
                "rev.namespace.sidecar-injector.istio.io", "rev.object.sidecar-injector.istio.io",
                "namespace.sidecar-injector.istio.io", "object.sidecar-injector.istio.io"}));
  for (const api::Value& w : (*mwc)["webhooks"].GetArray())
    expect_common_webhook_fields(w, "istiod");
  EXPECT_EQ(json_at((*mwc)["webhooks"][0], "/namespaceSelector/matchExpressions/0/values"),
            R"(["default"])");
  EXPECT_EQ(
      json_at((*mwc)["webhooks"][2], "/namespaceSelector"),
      R"({"matchExpressions":[{"key":"istio-injection","operator":"In","values":["enabled"]}]})");
  EXPECT_EQ(
      json_at((*mwc)["webhooks"][3], "/objectSelector"),
      R"({"matchExpressions":[{"key":"sidecar.istio.io/inject","operator":"In","values":["true"]},{"key":"istio.io/rev","operator":"DoesNotExist"}]})");

  auto on = render_texts({}, {"values.sidecarInjectorWebhook.enableNamespacesByDefault=true"});
  ASSERT_TRUE(on.ok());
  const api::Value* mwc2 =
      find_object(*on, "MutatingWebhookConfiguration", "istio-sidecar-injector");
  ASSERT_NE(mwc2, nullptr);
  ASSERT_EQ(webhook_names(*mwc2).size(), 5u);
  const api::Value& autow = (*mwc2)["webhooks"][4];
  EXPECT_EQ(api::string_at(autow, {"name"}), "auto.sidecar-injector.istio.io");
  EXPECT_EQ(
      json_at(autow, "/namespaceSelector"),
      R"({"matchExpressions":[{"key":"istio-injection","operator":"DoesNotExist"},{"key":"istio.io/rev","operator":"DoesNotExist"},{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system","kube-public","kube-node-lease","local-path-storage"]}]})");
  EXPECT_EQ(
      json_at(autow, "/objectSelector"),
      R"({"matchExpressions":[{"key":"sidecar.istio.io/inject","operator":"DoesNotExist"},{"key":"istio.io/rev","operator":"DoesNotExist"}]})");
}

// The selectors meshop writes itself (the webhooks reconciler's auto. entry and check, meshop
// tag's legacy entries: api::injection_selector_json) are the charts' own, entry by entry.
TEST(Webhook, MeshopsSelectorsAreTheChartsOwn) {
  using api::InjectionEntry;
  const std::vector<std::pair<std::string, InjectionEntry>> entries = {
      {"rev.namespace.sidecar-injector.istio.io", InjectionEntry::kRevNamespace},
      {"rev.object.sidecar-injector.istio.io", InjectionEntry::kRevObject},
      {"namespace.sidecar-injector.istio.io", InjectionEntry::kNamespace},
      {"object.sidecar-injector.istio.io", InjectionEntry::kObject},
      {"auto.sidecar-injector.istio.io", InjectionEntry::kAuto}};
  for (const char* revision : {"", "canary"}) {
    auto r = render_texts({}, {"values.sidecarInjectorWebhook.enableNamespacesByDefault=true"},
                          revision);
    ASSERT_TRUE(r.ok()) << r.message();
    std::string name = *revision == 0 ? "istio-sidecar-injector"
                                      : std::string("istio-sidecar-injector-") + revision;
    const api::Value* mwc = find_object(*r, "MutatingWebhookConfiguration", name);
    ASSERT_NE(mwc, nullptr) << name;
    std::size_t checked = 0;
    for (const api::Value& w : (*mwc)["webhooks"].GetArray()) {
      std::string entry = api::string_at(w, {"name"});
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const auto& e) { return e.first == entry; });
      ASSERT_NE(it, entries.end()) << entry;
      std::string rev = *revision == 0 ? "default" : revision;
      EXPECT_EQ(json_at(w, "/namespaceSelector"),
                api::injection_selector_json(it->second, true, rev))
          << name << " " << entry;
      EXPECT_EQ(json_at(w, "/objectSelector"), api::injection_selector_json(it->second, false, rev))
          << name << " " << entry;
      ++checked;
    }
    EXPECT_EQ(checked, *revision == 0 ? 5u : 2u) << name;
  }
}

TEST(Webhook, OutsideIstioSystemTheNameCarriesTheNamespace) {
  auto r = render_texts({"spec: {components: {pilot: {namespace: istio-control}}}"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector-istio-control"),
            nullptr);
}

TEST(Webhook, OperatorManagedWebhooksAreNotRendered) {
  auto r = render_texts({}, {"values.global.operatorManageWebhooks=true"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(names_of_kind(*r, "MutatingWebhookConfiguration").empty());
}

TEST(K8sSettings, AppliedToTheWorkloadServicePdbAndHpa) {
  auto r = render_texts({R"(
spec:
  components:
    pilot:
      k8s:
        replicaCount: 4
        resources: {requests: {cpu: 123m}}
        env: [{name: NEW_VAR, value: new_value}, {name: REVISION, value: patched}]
        nodeSelector: {disk: ssd}
        tolerations: [{key: k, operator: Exists}]
        podAnnotations: {a: b}
        affinity: {nodeAffinity: {}}
        securityContext: {runAsUser: 5}
        strategy: {rollingUpdate: {maxSurge: 1}}
        hpaSpec: {minReplicas: 2, maxReplicas: 333}
        podDisruptionBudget: {maxUnavailable: 1}
        service: {type: NodePort}
        serviceAnnotations: {s: t}
)"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* d = find_object(*r, "Deployment", "istiod");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(json_at(*d, "/spec/replicas"), "4");
  // Strategic merge: maps merge (as istioctl's patches do).
  EXPECT_EQ(json_at(*d, "/spec/strategy"),
            R"({"rollingUpdate":{"maxSurge":1,"maxUnavailable":"25%"}})");
  const api::Value* pod = api::find(*d, "/spec/template/spec");
  EXPECT_EQ(json_at(*pod, "/containers/0/resources"),
            R"({"requests":{"cpu":"123m","memory":"2048Mi"}})");
  EXPECT_EQ(json_at(*pod, "/nodeSelector"), R"({"disk":"ssd"})");
  EXPECT_EQ(json_at(*pod, "/tolerations"), R"([{"key":"k","operator":"Exists"}])");
  EXPECT_EQ(json_at(*pod, "/securityContext"), R"({"runAsUser":5})");
  EXPECT_EQ(json_at(*d, "/spec/template/metadata/annotations/a"), "\"b\"");
  std::string env = json_at(*pod, "/containers/0/env");
  EXPECT_NE(env.find(R"({"name":"NEW_VAR","value":"new_value"})"), std::string::npos) << env;
  EXPECT_NE(env.find(R"({"name":"REVISION","value":"patched"})"), std::string::npos) << env;
  EXPECT_NE(env.find(R"("name":"POD_NAME")"), std::string::npos) << env;  // merged, not replaced
  const api::Value* hpa = find_object(*r, "HorizontalPodAutoscaler", "istiod");
  ASSERT_NE(hpa, nullptr);
  EXPECT_EQ(json_at(*hpa, "/spec/maxReplicas"), "333");
  EXPECT_EQ(json_at(*hpa, "/spec/minReplicas"), "2");
  // The chart renders a PDB for more than one replica (minReplicas 2); the patch sets
  // maxUnavailable and nulls minAvailable, as upstream's strategic merge leaves it.
  const api::Value* pdb = find_object(*r, "PodDisruptionBudget", "istiod");
  ASSERT_NE(pdb, nullptr);
  EXPECT_EQ(json_at(*pdb, "/spec/maxUnavailable"), "1");
  EXPECT_EQ(json_at(*pdb, "/spec/minAvailable"), "null");
  const api::Value* svc = find_object(*r, "Service", "istiod");
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(json_at(*svc, "/spec/type"), "\"NodePort\"");
  EXPECT_EQ(json_at(*svc, "/metadata/annotations"), R"({"s":"t"})");
}

TEST(K8sSettings, GatewayServicePortsComeFromK8sService) {
  auto r = render_texts({R"(
spec:
  components:
    ingressGateways:
    - name: istio-ingressgateway
      k8s:
        service:
          type: ClusterIP
          ports: [{name: http, port: 8081, targetPort: 8081}]
)"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* svc = find_object(*r, "Service", "istio-ingressgateway");
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(json_at(*svc, "/spec/type"), "\"ClusterIP\"");
  EXPECT_EQ(json_at(*svc, "/spec/ports"), R"([{"name":"http","port":8081,"targetPort":8081}])");
}

TEST(K8sSettings, OverlaysPatchByPathAndDelete) {
  auto r = render_texts({R"(
spec:
  components:
    pilot:
      k8s:
        overlays:
        - kind: Deployment
          name: istiod
          patches:
          - path: spec.template.spec.containers.[name:discovery].args.[30m]
            value: 60m
          - path: spec.template.spec.containers.[name:discovery].ports.[containerPort:8080].containerPort
            value: 1234
          - path: spec.template.spec.containers.[name:discovery].env.[name:POD_NAMESPACE].valueFrom
            value: |
              fieldRef:
                apiVersion: v2
                fieldPath: metadata.myPath
          - path: spec.template.spec.containers.[name:discovery].env.[name:REVISION]
          - path: spec.template.spec.containers.[name:discovery].securityContext
        - kind: Service
          name: istiod
          patches:
          - path: spec.ports.[name:https-dns].port
            value: 11111
        - kind: MutatingWebhookConfiguration
          name: istio-sidecar-injector
          patches:
          - path: webhooks.[name:namespace\.sidecar-injector\.istio\.io].clientConfig.service.name
            value: foo
)"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* d = find_object(*r, "Deployment", "istiod");
  ASSERT_NE(d, nullptr);
  const api::Value* c = api::find(*d, "/spec/template/spec/containers/0");
  std::string args = json_at(*c, "/args");
  EXPECT_NE(args.find("\"60m\""), std::string::npos) << args;
  EXPECT_EQ(args.find("\"30m\""), std::string::npos) << args;
  EXPECT_EQ(json_at(*c, "/ports/0/containerPort"), "1234");
  EXPECT_EQ(api::find(*c, "/securityContext"), nullptr);
  std::string env = json_at(*c, "/env");
  EXPECT_EQ(env.find("\"REVISION\""), std::string::npos) << env;
  EXPECT_NE(
      env.find(
          R"({"name":"POD_NAMESPACE","valueFrom":{"fieldRef":{"apiVersion":"v2","fieldPath":"metadata.myPath"}}})"),
      std::string::npos)
      << env;
  const api::Value* svc = find_object(*r, "Service", "istiod");
  EXPECT_EQ(json_at(*svc, "/spec/ports/1"),
            R"({"port":11111,"name":"https-dns","protocol":"TCP"})");
  const api::Value* mwc = find_object(*r, "MutatingWebhookConfiguration", "istio-sidecar-injector");
  EXPECT_EQ(json_at((*mwc)["webhooks"][2], "/clientConfig/service/name"), "\"foo\"");
  EXPECT_EQ(json_at((*mwc)["webhooks"][0], "/clientConfig/service/name"), "\"istiod\"");
}

// As upstream: a patch whose path finds nothing is dropped (istioctl logs it; no error, no
// warning), and the object is rendered unpatched.
TEST(K8sSettings, OverlayPatchThatFindsNothingIsDropped) {
  auto r = render_texts({R"(
spec:
  components:
    pilot:
      k8s:
        overlays:
        - kind: Deployment
          name: istiod
          patches:
          - path: spec.template.spec.containers.[name:nosuch].image
            value: x
)"});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(
      json_at(*find_object(*r, "Deployment", "istiod"), "/spec/template/spec/containers/0/name"),
      "\"discovery\"");
}

TEST(Render, ObjectsComeInIstioctlsOrder) {
  auto r = render_texts({"metadata: {name: my-iop}\nspec: {profile: demo}"});
  ASSERT_TRUE(r.ok()) << r.message();
  // istioctl's order: CRDs, ServiceAccounts, ClusterRoles, ClusterRoleBindings,
  // ValidatingWebhookConfigurations, ConfigMaps, the rest, HPAs, Services.
  auto rank = [](std::string_view kind) {
    static const char* order[] = {
        "CustomResourceDefinition",       "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
        "ValidatingWebhookConfiguration", "ConfigMap"};
    for (int i = 0; i < 6; ++i)
      if (kind == order[i]) return i;
    if (kind == "HorizontalPodAutoscaler") return 7;
    if (kind == "Service") return 8;
    return 6;
  };
  int last = 0;
  for (const RenderedObject& o : r->objects) {
    int k = rank(api::string_at(o.object, {"kind"}));
    EXPECT_GE(k, last) << api::string_at(o.object, {"kind"}) << " "
                       << api::string_at(o.object, {"metadata", "name"});
    last = k;
    // The charts label what their component renders; the object's component is that one.
    std::string label = json_at(o.object, "/metadata/labels/operator.istio.io~1component");
    if (label != "<missing>") {
      EXPECT_EQ(label, "\"" + o.component + "\"");
    }
  }
  EXPECT_EQ(api::string_at(r->objects.front().object, {"kind"}), "CustomResourceDefinition");
  EXPECT_EQ(api::string_at(r->objects.back().object, {"kind"}), "Service");
  // Stable: the same input renders the same bytes.
  auto again = render_texts({"metadata: {name: my-iop}\nspec: {profile: demo}"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_multi_document_yaml(*r), to_multi_document_yaml(*again));
}

TEST(Render, RestartsExtensionDoesNotChangeTheManifest) {
  auto plain = render_texts({"spec: {}"});
  auto with = render_texts({"spec: {restarts: {mode: Auto, maxConcurrent: 2}}"});
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(with.ok()) << with.message();
  EXPECT_EQ(to_multi_document_yaml(*plain), to_multi_document_yaml(*with));
}

TEST(Render, MultiDocumentYamlReadsBackAsTheSameObjects) {
  auto r = render_texts({});
  ASSERT_TRUE(r.ok());
  auto docs = api::yaml_stream_to_json(to_multi_document_yaml(*r));
  ASSERT_TRUE(docs.ok()) << docs.message();
  ASSERT_EQ(docs->size(), r->objects.size());
  for (std::size_t i = 0; i < docs->size(); ++i)
    EXPECT_TRUE(api::json_equal((*docs)[i], r->objects[i].object)) << i;
}

TEST(Render, MeshConfigMergesUserSettingsOverRevisionDefaults) {
  auto r =
      render_texts({"spec: {revision: canary, meshConfig: {accessLogFile: /dev/stdout, "
                    "defaultConfig: {holdApplicationUntilProxyStarts: true}}}"});
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* cm = find_object(*r, "ConfigMap", "istio-canary");
  ASSERT_NE(cm, nullptr);
  auto mesh = api::yaml_to_json(api::string_at(*cm, {"data", "mesh"}));
  ASSERT_TRUE(mesh.ok()) << mesh.message();
  EXPECT_EQ(json_at(*mesh, "/accessLogFile"), "\"/dev/stdout\"");
  EXPECT_EQ(json_at(*mesh, "/defaultConfig/discoveryAddress"),
            "\"istiod-canary.istio-system.svc:15012\"");
  EXPECT_EQ(json_at(*mesh, "/defaultConfig/holdApplicationUntilProxyStarts"), "true");
}

}  // namespace
}  // namespace meshop::manifest
