// The injection engine end to end on upstream's sidecar template and golden data (read from
// the Go module cache at test time), plus the decision logic and snapshot errors.
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/yaml.hpp"
#include "engine_test_support.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/snapshot.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::inject {
namespace {

using engine_test::indent;
using engine_test::istio_module_dir;
using engine_test::json;
using engine_test::json_diff;
using engine_test::read_file;

std::shared_ptr<const Snapshot> snapshot_of(SnapshotSources sources) {
  auto s = build_snapshot(sources);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
  return s.ok() ? *s : nullptr;
}

SnapshotSources minimal_sources(std::string config) {
  SnapshotSources src;
  src.config = std::move(config);
  src.values = "{}";
  return src;
}

Decision decide_json(const Snapshot& s, std::string_view pod, bool kube_inject = false) {
  api::Document doc = json(pod);
  return decide(s, doc, "default", kube_inject);
}

TEST(EngineDecide, HostNetworkBeatsLabelTrue) {
  auto s = snapshot_of(minimal_sources("policy: enabled\n"));
  ASSERT_TRUE(s);
  Decision d = decide_json(*s, R"({"metadata":{"labels":{"sidecar.istio.io/inject":"true"}},
                                   "spec":{"hostNetwork":true}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kHostNetwork);
}

TEST(EngineDecide, IgnoredNamespaceUsesRequestNamespaceWhenPodHasNone) {
  auto s = snapshot_of(minimal_sources("policy: enabled\n"));
  ASSERT_TRUE(s);
  api::Document pod = json(R"({"metadata":{"labels":{"sidecar.istio.io/inject":"true"}}})");
  Decision d = decide(*s, pod, "kube-system");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kIgnoredNamespace);
  EXPECT_TRUE(decide(*s, pod, "apps").inject);
}

TEST(EngineDecide, LabelBeatsAnnotationEvenWhenEmpty) {
  auto s = snapshot_of(minimal_sources("policy: disabled\n"));
  ASSERT_TRUE(s);
  Decision d = decide_json(*s, R"({"metadata":{"labels":{"sidecar.istio.io/inject":"false"},
                                   "annotations":{"sidecar.istio.io/inject":"true"}}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kLabelFalse);
  // An empty label still replaces the annotation: the policy decides.
  d = decide_json(*s, R"({"metadata":{"labels":{"sidecar.istio.io/inject":""},
                          "annotations":{"sidecar.istio.io/inject":"true"}}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kPolicyDisabled);
  d = decide_json(*s, R"({"metadata":{"annotations":{"sidecar.istio.io/inject":"true"}}})");
  EXPECT_TRUE(d.inject);
  EXPECT_EQ(d.reason, Reason::kAnnotationTrue);
}

TEST(EngineDecide, OnlyExactTrueAndFalseCount) {
  auto s = snapshot_of(minimal_sources("policy: enabled\n"));
  ASSERT_TRUE(s);
  Decision d = decide_json(*s, R"({"metadata":{"labels":{"sidecar.istio.io/inject":"False"}}})");
  EXPECT_TRUE(d.inject);
  EXPECT_EQ(d.reason, Reason::kPolicyEnabled);
  d = decide_json(*s, R"({"metadata":{"annotations":{"sidecar.istio.io/inject":"no"}}})");
  EXPECT_TRUE(d.inject);
}

TEST(EngineDecide, NeverSelectorBeatsAlwaysSelectorAndSkipsEmptySelectors) {
  auto s = snapshot_of(minimal_sources(R"(policy: disabled
neverInjectSelector:
- {}
- matchExpressions: [{key: tier, operator: In, values: [db]}]
alwaysInjectSelector:
- matchLabels: {app: web}
)"));
  ASSERT_TRUE(s);
  Decision d = decide_json(*s, R"({"metadata":{"labels":{"app":"web","tier":"db"}}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kNeverInjectSelector);
  d = decide_json(*s, R"({"metadata":{"labels":{"app":"web"}}})");
  EXPECT_TRUE(d.inject);
  EXPECT_EQ(d.reason, Reason::kAlwaysInjectSelector);
  d = decide_json(*s, R"({"metadata":{"labels":{"app":"other"}}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kPolicyDisabled);
  // kube-inject ignores selectors and the configured policy.
  d = decide_json(*s, R"({"metadata":{"labels":{"app":"web","tier":"db"}}})", true);
  EXPECT_TRUE(d.inject);
  EXPECT_EQ(d.reason, Reason::kPolicyEnabled);
}

TEST(EngineDecide, InvalidPolicyDisablesEvenExplicitOptIn) {
  auto s = snapshot_of(minimal_sources("policy: Enabled\n"));
  ASSERT_TRUE(s);
  Decision d = decide_json(*s, R"({"metadata":{"labels":{"sidecar.istio.io/inject":"true"}}})");
  EXPECT_FALSE(d.inject);
  EXPECT_EQ(d.reason, Reason::kPolicyInvalid);
  EXPECT_EQ(reason_name(d.reason), "policy_invalid");
}

TEST(EngineSnapshot, ErrorsNameSourceAndField) {
  auto bad_template = build_snapshot(minimal_sources("templates:\n  sidecar: '{{ if }}'\n"));
  ASSERT_FALSE(bad_template.ok());
  EXPECT_NE(bad_template.message().find("config: templates.sidecar: template: inject:1:"),
            std::string::npos)
      << bad_template.message();

  auto bad_policy = build_snapshot(minimal_sources("policy: [a]\n"));
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_EQ(bad_policy.message().rfind("config: policy: expected string", 0), 0u)
      << bad_policy.message();

  SnapshotSources src = minimal_sources("policy: enabled\n");
  src.values = "[1, 2]";
  auto bad_values = build_snapshot(src);
  ASSERT_FALSE(bad_values.ok());
  EXPECT_EQ(bad_values.message().rfind("values: ", 0), 0u) << bad_values.message();
}

TEST(EngineSnapshot, DefaultsAndValuesFieldsGoCodeReads) {
  SnapshotSources src = minimal_sources("policy: enabled\n");
  src.values = R"({"global":{"hub":"h","tag":1.5,"proxy":{"holdApplicationUntilProxyStarts":true},
                   "network":"n1","multiCluster":{"clusterName":"c1"}}})";
  auto s = snapshot_of(src);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->default_templates, std::vector<std::string>{"sidecar"});
  EXPECT_EQ(s->tag, "1.5");
  EXPECT_EQ(s->proxy_image_name, "proxyv2");
  EXPECT_TRUE(s->values_hold_application);
  EXPECT_EQ(s->network, "n1");
  EXPECT_EQ(s->cluster_name, "c1");
}

TEST(EngineSnapshot, NativeSidecarAutoDetectionNeedsEveryKubeletAt133) {
  EXPECT_TRUE(kubelet_versions_support_native({"v1.33.0", "v1.34.1-gke.1"}));
  EXPECT_FALSE(kubelet_versions_support_native({"v1.33.0", "v1.28.3"}));
  EXPECT_FALSE(kubelet_versions_support_native({"garbage"}));
}

// A pod the way a ReplicaSet of Deployment `hello` creates it (upstream's objectToPod).
api::Document hello_pod() {
  return json(R"({
    "metadata": {"generateName": "hello-fake-", "namespace": "default",
      "labels": {"app": "hello", "tier": "backend", "track": "stable", "pod-template-hash": "fake"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "hello-fake",
                           "uid": "", "controller": true}]},
    "spec": {"containers": [{"name": "hello", "image": "fake.docker.io/google-samples/hello-go-gke:1.0",
      "ports": [{"name": "http", "containerPort": 80}]}]}})");
}

// Upstream's sidecar template, with the chart set's values pointed at the golden's images.
std::optional<SnapshotSources> upstream_sidecar_sources() {
  auto dir = istio_module_dir();
  if (!dir) return std::nullopt;
  std::string tmpl = read_file(
      *dir / "manifests/charts/istio-control/istio-discovery/files/injection-template.yaml");
  if (tmpl.empty()) return std::nullopt;
  SnapshotSources src;
  src.revision = "default";
  src.config =
      "policy: enabled\ndefaultTemplates: [sidecar]\ntemplates:\n  sidecar: |\n" + indent(tmpl, 4);
  auto values = api::yaml_to_json(test_support::chart_set_sources().values);
  if (!values) return std::nullopt;
  api::Value* global = api::find(*values, "/global");
  if (global == nullptr) return std::nullopt;
  auto& alloc = values->GetAllocator();
  (*global)["hub"].SetString("registry.istio.io/testing", alloc);
  (*global)["tag"].SetString("latest", alloc);
  src.values = api::to_json(*values);
  src.native_sidecars = NativeSidecars::kEnabled;
  return src;
}

TEST(EnginePipeline, HelloGetsUpstreamSidecarContainersAndStatus) {
  auto src = upstream_sidecar_sources();
  if (!src) GTEST_SKIP() << "istio.io/istio module not in the Go module cache";
  auto s = snapshot_of(*src);
  ASSERT_TRUE(s);
  api::Document pod = hello_pod();
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.failure_type << ": " << r.message;

  const api::Value* inits = api::find(r.pod, "/spec/initContainers");
  ASSERT_NE(inits, nullptr);
  ASSERT_EQ(inits->Size(), 2u);
  EXPECT_EQ(api::string_at((*inits)[0], {"name"}), "istio-init");
  EXPECT_EQ(api::string_at((*inits)[1], {"name"}), "istio-proxy");
  EXPECT_EQ(api::string_at((*inits)[1], {"image"}), "registry.istio.io/testing/proxyv2:latest");
  const api::Value* containers = api::find(r.pod, "/spec/containers");
  ASSERT_NE(containers, nullptr);
  ASSERT_EQ(containers->Size(), 1u);

  // Env built from the typed pod view: structToJSON of the ports, app container names,
  // and the canonical name derived from the owning Deployment.
  std::string ports, apps;
  for (const auto& e : (*inits)[1]["env"].GetArray()) {
    if (api::string_at(e, {"name"}) == "ISTIO_META_POD_PORTS") ports = api::string_at(e, {"value"});
    if (api::string_at(e, {"name"}) == "ISTIO_META_APP_CONTAINERS")
      apps = api::string_at(e, {"value"});
  }
  EXPECT_EQ(ports, "[\n    {\"name\":\"http\",\"containerPort\":80}\n]");
  EXPECT_EQ(apps, "hello");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "labels", "service.istio.io/canonical-name"}),
            "hello");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "sidecar.istio.io/status"}),
            "{\"initContainers\":[\"istio-init\",\"istio-proxy\"],\"containers\":null,"
            "\"volumes\":[\"workload-socket\",\"credential-socket\",\"workload-certs\","
            "\"istio-envoy\",\"istio-data\",\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\","
            "\"istio-ca-crl\"],\"imagePullSecrets\":null,\"revision\":\"default\"}");

  // The patch turns the pod as given into the injected pod.
  api::Document patched = hello_pod();
  auto patch = api::parse_json(r.patch);
  ASSERT_TRUE(patch.ok());
  ASSERT_TRUE(api::apply_json_patch(patched, *patch).ok());
  EXPECT_TRUE(api::json_equal(patched, r.pod)) << json_diff(patched, r.pod);
}

TEST(EnginePipeline, ReinjectionIsIdempotent) {
  auto src = upstream_sidecar_sources();
  if (!src) GTEST_SKIP() << "istio.io/istio module not in the Go module cache";
  auto s = snapshot_of(*src);
  ASSERT_TRUE(s);
  api::Document pod = hello_pod();
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  InjectResult first = inject(*s, req);
  ASSERT_EQ(first.outcome, Outcome::kInjected) << first.message;
  req.pod = &first.pod;
  InjectResult second = inject(*s, req);
  ASSERT_EQ(second.outcome, Outcome::kInjected) << second.message;
  EXPECT_TRUE(api::json_equal(first.pod, second.pod)) << json_diff(first.pod, second.pod);
}

TEST(EnginePipeline, UnknownTemplateFailsNamingIt) {
  auto s = snapshot_of(minimal_sources("policy: enabled\ntemplates:\n  a: ''\n"));
  ASSERT_TRUE(s);
  api::Document pod =
      json(R"({"metadata":{"annotations":{"inject.istio.io/templates":"a, missing"}},
               "spec":{"containers":[{"name":"c"}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  InjectResult r = inject(*s, req);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.failure_type, "template_not_found");
  EXPECT_NE(r.message.find("requested template \"missing\" not found; have a"), std::string::npos)
      << r.message;
}

TEST(EnginePipeline, TemplatesSeeGoTypedPodFields) {
  // Missing fields are Go zero values; maps are map[string]string; structToJSON writes JSON
  // names in Go field order with omitempty.
  auto s = snapshot_of(minimal_sources(R"(policy: enabled
templates:
  t: |
    metadata:
      annotations:
        sa: "[{{ .Spec.ServiceAccountName }}]"
        missing: "[{{ index .ObjectMeta.Labels `nope` }}]"
        port: '{{ range .Spec.Containers }}{{ range .Ports }}{{ structToJSON . }}{{ end }}{{ end }}'
        kind: "{{ .TypeMeta.Kind }}/{{ .DeploymentMeta.Name }}"
        nilsc: "{{ if .Spec.SecurityContext }}set{{ else }}unset{{ end }}"
defaultTemplates: [t]
)"));
  ASSERT_TRUE(s);
  api::Document pod = json(R"({"metadata":{"name":"p","labels":{"a":"b"}},
    "spec":{"containers":[{"name":"c","ports":[{"protocol":"UDP","containerPort":53,"name":"dns"}]}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "sa"}), "[]");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "missing"}), "[]");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "port"}),
            R"({"name":"dns","containerPort":53,"protocol":"UDP"})");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "kind"}), "Pod/p");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "nilsc"}), "unset");
}

TEST(EngineFingerprint, DependsOnTheConfigMapsOnlyAndIsStampedWhenAsked) {
  SnapshotSources src = test_support::chart_set_sources();
  src.native_sidecars = NativeSidecars::kDisabled;
  const std::string base = injector_fingerprint(src);
  EXPECT_EQ(base.size(), 16u);
  SnapshotSources same = src;
  same.revision = src.revision.empty() ? "default" : "";  // both name the default revision
  same.node_kubelet_versions = {"v1.34.0"};               // not part of the ConfigMaps
  EXPECT_EQ(injector_fingerprint(same), base);
  SnapshotSources changed = src;
  changed.values += "\n";
  EXPECT_NE(injector_fingerprint(changed), base);
  SnapshotSources canary = src;
  canary.revision = "canary";
  EXPECT_NE(injector_fingerprint(canary), base);
  // Moving text between keys changes it too (the parts are delimited).
  SnapshotSources moved = src;
  moved.mesh = "x";
  SnapshotSources moved2 = src;
  moved2.values += "x";
  EXPECT_NE(injector_fingerprint(moved), injector_fingerprint(moved2));

  api::Document pod = json(R"({"metadata":{"name":"p","namespace":"apps"},
      "spec":{"containers":[{"name":"app","image":"app:1"}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "apps";
  auto plain = snapshot_of(src);
  ASSERT_TRUE(plain);
  InjectResult r = inject(*plain, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::find(r.pod, "/metadata/annotations/meshop.io~1injector-fingerprint"), nullptr);

  src.stamp_fingerprint = true;
  auto stamped = snapshot_of(src);
  ASSERT_TRUE(stamped);
  r = inject(*stamped, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "meshop.io/injector-fingerprint"}),
            base);
}

}  // namespace
}  // namespace meshop::inject

namespace meshop::inject {
namespace {

// The JSON patch of an injected result applied to `pod` (as the apiserver does); `r.pod`
// without the namespace when `drop_namespace` (filled in from the request, never patched).
void expect_patch_gives_result(const api::Value& pod, InjectResult& r, bool drop_namespace) {
  auto patch = api::parse_json(r.patch);
  ASSERT_TRUE(patch.ok()) << r.patch;
  api::Document patched;
  patched.CopyFrom(pod, patched.GetAllocator());
  ASSERT_TRUE(api::apply_json_patch(patched, *patch).ok()) << r.patch;
  if (drop_namespace) api::find_member(r.pod, "metadata")->RemoveMember("namespace");
  EXPECT_TRUE(api::json_equal(patched, r.pod)) << json_diff(patched, r.pod);
}

// Found by fuzz_inject: a container name that is not UTF-8 reached the probe rewrite raw and
// came back escaped in one place and replaced in another, so the patch and the returned pod
// disagreed. Read as Go reads it (U+FFFD per invalid byte), both agree.
TEST(EnginePipeline, InvalidUtf8InAPodIsReadAsGoReadsItAndThePatchMatchesThePod) {
  auto s = snapshot_of(test_support::chart_set_sources());
  ASSERT_TRUE(s);
  auto pod = api::parse_json(
      "{\"metadata\":{\"name\":\"p\",\"namespace\":\"apps\"},\"spec\":{\"containers\":[{"
      "\"name\":\"sidec\xFFr\",\"image\":\"nginx\",\"livenessProbe\":{\"httpGet\":{\"path\":"
      "\"/healthz\",\"port\":8080}}}]}}");
  ASSERT_TRUE(pod.ok()) << pod.message();
  PodRequest req;
  req.pod = &*pod;
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::string_at(*api::find(r.pod, "/spec/containers/0/livenessProbe/httpGet"), {"path"}),
            "/app-health/sidec\xEF\xBF\xBDr/livez");
  expect_patch_gives_result(*pod, r, false);
}

// Found by fuzz_inject: a pod sent without metadata (no apiserver does that) got a patch that
// adds /metadata/labels to an object that has no /metadata.
TEST(EnginePipeline, PatchForAPodWithoutMetadataCreatesIt) {
  auto s = snapshot_of(test_support::chart_set_sources());
  ASSERT_TRUE(s);
  api::Document pod = json(R"({"spec":{"containers":[{"name":"app","image":"nginx"}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "apps";
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(r.patch.rfind(R"([{"op":"add","path":"/metadata","value":{}},)", 0), 0u) << r.patch;
  expect_patch_gives_result(pod, r, true);
}

}  // namespace
}  // namespace meshop::inject
