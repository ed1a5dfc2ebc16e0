// The istioctl pipeline (operator/manifest/istioctl_pipeline.hpp): values.Map semantics,
// IstioOperator -> chart values translation, k8s settings and overlays, and generate() over the
// miniature chart set in testdata/istioctl-chartset. Upstream's real charts are compared with
// istioctl's own renderer by test/differential/manifest.
#include "operator/manifest/istioctl_pipeline.hpp"

#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::manifest::istioctl {
namespace {

namespace te = template_engine;

const std::string kChartSet =
    std::string(MESHOP_SOURCE_DIR) + "/test/unit/manifest/testdata/istioctl-chartset";

std::string json(const GoValue& v) {
  std::string out;
  te::funcs::append_json(out, v, te::funcs::JsonOptions{});
  return out;
}

GoValue yaml_value(std::string_view text) {
  auto doc = api::yaml_to_json(text);
  EXPECT_TRUE(doc.ok()) << doc.message();
  return go_from_json(*doc);
}

std::string at(const GoValue& root, std::string_view path) {
  return json(go_get_path(root, path));
}

PipelineInputs inputs(std::vector<std::string> files, std::vector<std::string> flags = {}) {
  PipelineInputs in;
  int i = 0;
  for (std::string& f : files) {
    // Like istioctl, files must name their kind.
    if (f.find("kind:") == std::string::npos) f = "kind: IstioOperator\n" + f;
    in.files.push_back({"file" + std::to_string(++i) + ".yaml", std::move(f)});
  }
  in.set_flags = std::move(flags);
  in.manifests = kChartSet;
  return in;
}

const api::Value* find(const PipelineResult& r, std::string_view kind, std::string_view name) {
  for (const PipelineObject& o : r.objects)
    if (api::string_at(o.object, {"kind"}) == kind &&
        api::string_at(o.object, {"metadata", "name"}) == name)
      return &o.object;
  return nullptr;
}

std::string at(const api::Value& v, std::string_view pointer) {
  const api::Value* p = api::find(v, pointer);
  return p == nullptr ? "<none>" : api::to_json(*p);
}

// --- values.Map semantics -----------------------------------------------------------------------

TEST(IstioctlValues, SetFlagTypesValuesAsIstioctl) {
  GoValue m = go_map();
  ASSERT_TRUE(go_set_flag(m, "spec.values.a=5").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.values.b=1.5").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.values.c=true").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.values.d=x\\,y").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.values.global.tag=1.20").ok());  // always a string
  ASSERT_TRUE(go_set_flag(m, "spec.tag=7").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.values.e.f\\.g=h").ok());  // escaped dot
  EXPECT_EQ(go_get_path(m, "spec.values.a").kind(), te::Kind::kInt);
  EXPECT_EQ(at(m, "spec.values.b"), "1.5");
  EXPECT_EQ(at(m, "spec.values.c"), "true");
  EXPECT_EQ(at(m, "spec.values.d"), "\"x,y\"");
  EXPECT_EQ(at(m, "spec.values.global.tag"), "\"1.20\"");
  EXPECT_EQ(at(m, "spec.tag"), "\"7\"");
  EXPECT_EQ(json(go_get_path(m, "spec.values.e")), R"({"f.g":"h"})");
}

TEST(IstioctlValues, SetPathAppendsAndSelectsListElements) {
  GoValue m = yaml_value("spec: {components: {ingressGateways: [{name: a}, {name: b}]}}");
  ASSERT_TRUE(go_set_flag(m, "spec.components.ingressGateways[1].enabled=false").ok());
  ASSERT_TRUE(go_set_flag(m, "spec.components.ingressGateways[5].name=c").ok());  // appends
  ASSERT_TRUE(go_set_flag(m, "spec.components.ingressGateways[name:a].label.x=y").ok());
  EXPECT_EQ(at(m, "spec.components.ingressGateways"),
            R"([{"label":{"x":"y"},"name":"a"},{"enabled":false,"name":"b"},{"name":"c"}])");
  auto bad = go_set_flag(m, "spec.components.ingressGateways[name:zzz].enabled=false");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("[name:zzz]"), std::string::npos) << bad.message();
}

TEST(IstioctlValues, MergeFromSharesMapsAsGoDoes) {
  GoValue base = yaml_value("a: {x: 1}");
  GoValue other = yaml_value("a: {w: 2}\nb: {z: 3}");
  go_merge_from(base, other);
  EXPECT_EQ(json(base), R"({"a":{"w":2,"x":1},"b":{"z":3}})");
  // b is the same map in both: a write through one is seen through the other.
  ASSERT_TRUE(go_set_path(base, "b.w", GoValue::string("v")).ok());
  EXPECT_EQ(at(other, "b"), R"({"w":"v","z":3})");
  auto clone = go_deep_clone(base);
  ASSERT_TRUE(clone.ok());
  ASSERT_TRUE(go_set_path(base, "b.q", GoValue::boolean(true)).ok());
  EXPECT_EQ(at(*clone, "b"), R"({"w":"v","z":3})");
}

// --- merge_inputs
// ----------------------------------------------------------------------------------

TEST(IstioctlMerge, ProfileThenFilesThenFlags) {
  auto m = merge_inputs(
      inputs({"spec: {profile: minimal, hub: a.io/x}", "spec: {hub: b.io/x}"}, {"tag=2.0"}));
  ASSERT_TRUE(m.ok()) << m.message();
  // default.yaml < minimal.yaml: the ingress gateway is off; files in order; --set last.
  EXPECT_EQ(at(*m, "spec.components.ingressGateways"),
            R"([{"enabled":false,"name":"istio-ingressgateway"}])");
  EXPECT_EQ(at(*m, "spec.values.global.hub"), "\"b.io/x\"");
  EXPECT_EQ(at(*m, "spec.values.global.tag"), "\"2.0\"");
  EXPECT_EQ(at(*m, "spec.values.pilot.enabled"), "true");
  EXPECT_EQ(at(*m, "spec.values.pilot.cni.enabled"), "false");
  EXPECT_EQ(at(*m, "metadata.namespace"), "\"istio-system\"");
  EXPECT_EQ(at(*m, "spec.installPackagePath"), "\"" + kChartSet + "\"");
}

TEST(IstioctlMerge, TranslationOfIstioOperatorFields) {
  auto m = merge_inputs(inputs({R"(
spec:
  revision: canary
  compatibilityVersion: 1.30
  meshConfig: {accessLogFile: /dev/stdout}
  values:
    global: {istioNamespace: mesh}
    meshConfig: {enableTracing: true}
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(at(*m, "spec.values.revision"), "\"canary\"");
  EXPECT_EQ(at(*m, "spec.values.compatibilityVersion"), "\"1.3\"");  // float 1.30, printed %v
  EXPECT_EQ(at(*m, "spec.values.meshConfig"),
            R"({"accessLogFile":"/dev/stdout","enableTracing":true})");
  EXPECT_EQ(at(*m, "metadata.namespace"), "\"mesh\"");
}

TEST(IstioctlMerge, UserValuesWinOverTranslatedOnes) {
  // values.pilot.cni.enabled is translated from components.cni.enabled, then the user's own
  // values are merged again on top.
  auto m = merge_inputs(inputs({"spec: {values: {global: {hub: v.io/x}}, hub: spec.io/x}"}));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(at(*m, "spec.values.global.hub"), "\"v.io/x\"");
}

TEST(IstioctlMerge, ErrorsNameWhatIsWrong) {
  auto unknown = merge_inputs(inputs({"spec: {profile: nosuch}"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("profile \"nosuch\" not found"), std::string::npos)
      << unknown.message();
  EXPECT_NE(unknown.message().find("minimal"), std::string::npos) << unknown.message();

  auto multi = merge_inputs(inputs({"kind: IstioOperator\n---\nkind: IstioOperator\n"}));
  ASSERT_FALSE(multi.ok());
  EXPECT_NE(multi.message().find("file1.yaml: contains multiple IstioOperator"), std::string::npos)
      << multi.message();

  PipelineInputs none = inputs({});
  none.manifests.clear();
  // No chart set named: the default bundled version's, as a release of istioctl its own.
  auto no_set = merge_inputs(none);
  ASSERT_TRUE(no_set.ok()) << no_set.message();
  EXPECT_EQ(at(*no_set, "spec.installPackagePath"),
            "\"bundled:" + manifest::default_chart_set().version + "\"");
  PipelineInputs unknown_version = inputs({"spec: {version: \"0.1\"}"});
  unknown_version.manifests.clear();
  auto uv = merge_inputs(unknown_version);
  ASSERT_FALSE(uv.ok());
  EXPECT_NE(uv.message().find("spec.version: unknown Istio version \"0.1\""), std::string::npos)
      << uv.message();
}

// --- component values
// -------------------------------------------------------------------------------

TEST(IstioctlComponents, DefaultsListsAndAltEnablement) {
  auto m = merge_inputs(inputs({R"(
spec:
  components:
    egressGateways: [{name: eg1, enabled: false}, {name: eg2, namespace: edge, enabled: false}]
  values:
    gateways: {istio-egressgateway: {enabled: true}}
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  auto eg = component_instances(*find_component("EgressGateways"), *m);
  ASSERT_TRUE(eg.ok()) << eg.message();
  // values.gateways.istio-egressgateway.enabled turns every listed gateway on.
  ASSERT_EQ(eg->size(), 2u);
  EXPECT_EQ((*eg)[0].namespace_, "istio-system");
  EXPECT_EQ((*eg)[1].namespace_, "edge");
  auto cni = component_instances(*find_component("Cni"), *m);
  ASSERT_TRUE(cni.ok());
  EXPECT_TRUE(cni->empty());
}

TEST(IstioctlComponents, GatewayValuesFromTheComponent) {
  auto m = merge_inputs(inputs({R"(
spec:
  components:
    ingressGateways:
    - name: my-gw
      label: {istio: my}
      hub: gw.io/x
      tag: 1.5
      k8s:
        replicaCount: 3
        hpaSpec: {minReplicas: 2, maxReplicas: 9}
        resources: {limits: {cpu: 2000m}, requests: {cpu: 0.5}}
        service:
          ports: [{name: http, port: 81}, {name: tls, port: 443, targetPort: tls, nodePort: 30443}]
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  const ComponentDef& def = *find_component("IngressGateways");
  auto specs = component_instances(def, *m);
  ASSERT_TRUE(specs.ok()) << specs.message();
  ASSERT_EQ(specs->size(), 1u);
  auto v = component_values(def, (*specs)[0], *m);
  ASSERT_TRUE(v.ok()) << v.message();
  GoValue gw = go_get_path(*v, "spec.values.gateways.istio-ingressgateway");
  EXPECT_EQ(at(gw, "name"), "\"my-gw\"");
  EXPECT_EQ(at(gw, "labels"), R"({"istio":"my"})");
  EXPECT_EQ(at(gw, "hub"), "\"gw.io/x\"");
  EXPECT_EQ(at(gw, "tag"), "1.5");
  EXPECT_EQ(at(gw, "replicaCount"), "3");
  EXPECT_EQ(at(gw, "autoscaleMin"), "2");
  EXPECT_EQ(at(gw, "autoscaleMax"), "9");
  EXPECT_EQ(at(gw, "resources"), R"({"limits":{"cpu":"2"},"requests":{"cpu":"500m"}})");
  // ServicePort as encoding/json writes the typed struct: port and targetPort always there.
  EXPECT_EQ(at(gw, "ports"), R"([{"name":"http","port":81,"targetPort":0},)"
                             R"({"name":"tls","nodePort":30443,"port":443,"targetPort":"tls"}])");
  // The merged object itself is untouched.
  EXPECT_EQ(at(*m, "spec.values.gateways.istio-ingressgateway"), "{}");
}

TEST(IstioctlComponents, ZtunnelValuesAreFlattened) {
  auto m = merge_inputs(inputs({R"(
spec:
  profile: ambient
  components: {ztunnel: {hub: z.io/x}}
  values: {ztunnel: {resourceName: zt, logLevel: debug}, defaultRevision: ""}
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  const ComponentDef& def = *find_component("Ztunnel");
  auto specs = component_instances(def, *m);
  ASSERT_TRUE(specs.ok()) << specs.message();
  ASSERT_EQ(specs->size(), 1u);
  auto v = component_values(def, (*specs)[0], *m);
  ASSERT_TRUE(v.ok()) << v.message();
  GoValue vals = go_get_path(*v, "spec.values");
  EXPECT_EQ(at(vals, "resourceName"), "\"zt\"");
  EXPECT_EQ(at(vals, "logLevel"), "\"debug\"");
  EXPECT_EQ(at(vals, "hub"), "\"z.io/x\"");
  EXPECT_EQ(at(vals, "defaultRevision"), "\"\"");  // non-map values stay
  EXPECT_EQ(at(vals, "global.istioNamespace"), "\"istio-system\"");
  EXPECT_EQ(go_get_path(vals, "gateways").kind(), te::Kind::kInvalid);  // other maps go
}

// --- post-processing
// ---------------------------------------------------------------------------------

api::Document object(std::string_view yaml) {
  auto d = api::yaml_to_json(yaml);
  EXPECT_TRUE(d.ok()) << d.message();
  return std::move(d).value();
}

constexpr std::string_view kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod-canary}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: discovery
        args: [--a, --b=2, --c]
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
)";

TEST(IstioctlPostProcess, K8sSettingsPatchTheComponentsObjects) {
  auto m = merge_inputs(inputs({R"(
spec:
  revision: canary
  components:
    pilot:
      k8s:
        env: [{name: B, value: "3"}, {name: C, value: "4"}]
        replicaCount: 2
        podDisruptionBudget: {maxUnavailable: 1}
        service: {ports: [{name: https-dns, port: 15012, targetPort: 9999}]}
        nodeSelector: null
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  const ComponentDef& def = *find_component("Pilot");
  auto specs = component_instances(def, *m);
  ASSERT_TRUE(specs.ok() && specs->size() == 1);
  auto v = component_values(def, (*specs)[0], *m);
  ASSERT_TRUE(v.ok());
  std::vector<api::Document> objs;
  objs.push_back(object(kDeployment));
  objs.push_back(
      object("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: istiod-canary}\n"
             "spec: {minAvailable: 1}"));
  objs.push_back(
      object("apiVersion: v1\nkind: Service\nmetadata: {name: istiod-canary}\nspec:\n  ports:\n"
             "  - {name: grpc, port: 15010}\n  - {name: https-dns, port: 15012}"));
  objs.push_back(object("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: istiod}"));
  ASSERT_TRUE(post_process(def, (*specs)[0], *v, objs).ok());
  // env merges by name; the Deployment named istiod-<revision> is the target.
  EXPECT_EQ(at(objs[0], "/spec/template/spec/containers/0/env"),
            R"([{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}])");
  EXPECT_EQ(at(objs[0], "/spec/replicas"), "2");
  // istioctl nulls minAvailable (a PDB may not carry both).
  EXPECT_EQ(at(objs[1], "/spec"), R"({"minAvailable":null,"maxUnavailable":1})");
  EXPECT_EQ(
      at(objs[2], "/spec/ports"),
      R"([{"name":"grpc","port":15010},{"name":"https-dns","port":15012,"targetPort":9999}])");
  EXPECT_EQ(at(objs[3], "/spec"), "<none>");  // not the component's object
}

TEST(IstioctlPostProcess, GatewayServicePortsAreNotPatched) {
  auto m = merge_inputs(inputs({R"(
spec:
  components:
    ingressGateways:
    - name: istio-ingressgateway
      k8s: {service: {type: NodePort, ports: [{name: x, port: 1}]}}
)"}));
  ASSERT_TRUE(m.ok()) << m.message();
  const ComponentDef& def = *find_component("IngressGateways");
  auto specs = component_instances(def, *m);
  ASSERT_TRUE(specs.ok() && specs->size() == 1);
  std::vector<api::Document> objs;
  objs.push_back(
      object("apiVersion: v1\nkind: Service\nmetadata: {name: istio-ingressgateway}\n"
             "spec: {type: LoadBalancer, ports: [{name: http2, port: 80}]}"));
  ASSERT_TRUE(post_process(def, (*specs)[0], *m, objs).ok());
  EXPECT_EQ(at(objs[0], "/spec"), R"({"type":"NodePort","ports":[{"name":"http2","port":80}]})");
}

TEST(IstioctlOverlays, PathsAsTpathWalksThem) {
  api::Document d = object(kDeployment);
  auto patch = [&](std::string_view path, std::string_view value_yaml) {
    api::Document v = object(value_yaml);
    return apply_tpath_patch(d, path, v);
  };
  // [key:value] selects a map element; a null value deletes it.
  EXPECT_TRUE(patch("spec.template.spec.containers[name:discovery].env[name:A]", "null").ok());
  // [regex] selects a scalar element (unanchored; a dot would split the path).
  EXPECT_TRUE(patch("spec.template.spec.containers.[name:discovery].args.[--b]", "--b=3").ok());
  EXPECT_FALSE(patch("spec.template.spec.containers.[name:discovery].args.[--b=.*]", "x").ok());
  // Missing maps are created; an index past the end appends.
  EXPECT_TRUE(patch("spec.template.metadata.labels.x", "v").ok());
  EXPECT_TRUE(patch("spec.template.spec.containers[1]", "{name: extra}").ok());
  // A string holding a YAML mapping is that mapping.
  EXPECT_TRUE(patch("spec.strategy", "\"rollingUpdate:\\n  maxSurge: 1\\n\"").ok());
  EXPECT_EQ(at(d, "/spec/template/spec/containers/0/env"), R"([{"name":"B","value":"2"}])");
  EXPECT_EQ(at(d, "/spec/template/spec/containers/0/args"), R"(["--a","--b=3","--c"])");
  EXPECT_EQ(at(d, "/spec/template/metadata/labels"), R"({"x":"v"})");
  EXPECT_EQ(at(d, "/spec/template/spec/containers/1"), R"({"name":"extra"})");
  EXPECT_EQ(at(d, "/spec/strategy"), R"({"rollingUpdate":{"maxSurge":1}})");
  // A path that does not resolve fails (istioctl drops the patch) and changes nothing.
  std::string before = api::to_json(d);
  auto missing = patch("spec.template.spec.containers[name:nosuch].image", "x");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("[name:nosuch]"), std::string::npos) << missing.message();
  EXPECT_EQ(api::to_json(d), before);
}

// --- generate
// ---------------------------------------------------------------------------------------

TEST(IstioctlGenerate, ObjectsInIstioctlOrder) {
  auto r = generate(inputs({}));
  ASSERT_TRUE(r.ok()) << r.message();
  std::vector<std::string> got;
  for (const PipelineObject& o : r->objects)
    got.push_back(api::string_at(o.object, {"kind"}) + "/" +
                  api::string_at(o.object, {"metadata", "name"}) + "@" + o.component);
  std::vector<std::string> want{
      "CustomResourceDefinition/widgets.example.io@Base",
      "ServiceAccount/istio-reader-service-account@Base",
      "ClusterRole/istio-reader-clusterrole-istio-system@Base",
      "ConfigMap/istio@Pilot",
      "Deployment/istio-ingressgateway@IngressGateways",
      "Deployment/istiod@Pilot",
      "PodDisruptionBudget/istiod@Pilot",
      "Service/istio-ingressgateway@IngressGateways",
      "Service/istiod@Pilot",
  };
  EXPECT_EQ(got, want);
  const api::Value* istiod = find(*r, "Deployment", "istiod");
  ASSERT_NE(istiod, nullptr);
  EXPECT_EQ(at(*istiod, "/spec/template/spec/containers/0/image"),
            "\"example.io/istio/pilot:1.0\"");
  EXPECT_TRUE(r->warnings.empty());
  std::string stream = to_istioctl_stream(*r);
  EXPECT_TRUE(stream.starts_with("apiVersion: apiextensions.k8s.io/v1\n")) << stream;
  EXPECT_NE(stream.find("\n\n---\napiVersion: v1\nkind: ServiceAccount\n"), std::string::npos);
}

TEST(IstioctlGenerate, ValuesReachTheChartsAndNotesWarn) {
  auto r = generate(inputs({R"(
spec:
  profile: minimal
  revision: canary
  components:
    base: {enabled: false}
    pilot: {k8s: {replicaCount: 4, hpaSpec: {minReplicas: 2}}}
)"}));
  ASSERT_TRUE(r.ok()) << r.message();
  const api::Value* istiod = find(*r, "Deployment", "istiod-canary");
  ASSERT_NE(istiod, nullptr);
  EXPECT_EQ(at(*istiod, "/spec/replicas"), "4");
  EXPECT_EQ(at(*istiod, "/spec/template/metadata/annotations/autoscale"), "\"2-5\"");
  EXPECT_NE(find(*r, "ConfigMap", "istio-canary"), nullptr);
  EXPECT_EQ(find(*r, "ServiceAccount", "istio-reader-service-account"), nullptr);
  EXPECT_EQ(find(*r, "Deployment", "istio-ingressgateway"), nullptr);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "many istiod replicas (4)");
}

TEST(IstioctlGenerate, CrdsFollowEnableIstioConfigCRDs) {
  auto r = generate(inputs({}, {"values.base.enableIstioConfigCRDs=false"}));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(find(*r, "CustomResourceDefinition", "widgets.example.io"), nullptr);
  EXPECT_NE(find(*r, "ServiceAccount", "istio-reader-service-account"), nullptr);
}

TEST(IstioctlGenerate, BadInputIsAnErrorNamingIt) {
  auto bad_field = generate(inputs({"spec: {components: {pilot: {k8s: {replicas: 2}}}}"}));
  ASSERT_FALSE(bad_field.ok());
  EXPECT_NE(bad_field.message().find("spec.components.pilot.k8s.replicas"), std::string::npos)
      << bad_field.message();
  PipelineInputs forced = inputs({"spec: {components: {pilot: {k8s: {replicas: 2}}}}"});
  forced.force = true;
  auto f = generate(forced);
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_FALSE(f->warnings.empty());
  EXPECT_NE(f->warnings[0].find("--force"), std::string::npos);

  // k8s.hpaSpec is autoscaling/v2's spec: v2beta1 fields are unknown, as upstream decodes it.
  auto v2beta1 = generate(inputs({R"(
spec:
  components:
    ingressGateways:
    - name: istio-ingressgateway
      k8s: {hpaSpec: {metrics: [{type: Resource, resource: {name: cpu, targetAverageUtilization: 70}}]}}
)"}));
  ASSERT_FALSE(v2beta1.ok());
  EXPECT_NE(v2beta1.message().find("spec.components.ingressGateways[0].k8s.hpaSpec.metrics[0]."
                                   "resource.targetAverageUtilization: unknown field"),
            std::string::npos)
      << v2beta1.message();
  auto v2 = generate(inputs({R"(
spec:
  components:
    pilot:
      k8s: {hpaSpec: {maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}}]}}
)"}));
  EXPECT_TRUE(v2.ok()) << v2.message();

  // A chart set without the chart a component needs.
  namespace fs = std::filesystem;
  fs::path tmp = fs::temp_directory_path() / ("istioctl-chartset-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "charts");
  fs::copy(fs::path(kChartSet) / "profiles", tmp / "profiles");
  fs::copy(fs::path(kChartSet) / "charts" / "base", tmp / "charts" / "base",
           fs::copy_options::recursive);
  PipelineInputs no_pilot = inputs({});
  no_pilot.manifests = tmp.string();
  auto np = generate(no_pilot);
  fs::remove_all(tmp);
  ASSERT_FALSE(np.ok());
  EXPECT_NE(np.message().find("charts/istio-control/istio-discovery"), std::string::npos)
      << np.message();
  EXPECT_NE(np.message().find("Pilot"), std::string::npos) << np.message();

  PipelineInputs missing = inputs({});
  missing.manifests = kChartSet + "/nosuch";
  auto m = generate(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("nosuch"), std::string::npos) << m.message();
}

}  // namespace
}  // namespace meshop::manifest::istioctl
