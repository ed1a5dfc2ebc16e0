// kube-inject's built-in defaults (the default bundled chart set's injector ConfigMaps, as
// `manifest generate` renders them: test/support/chart_set_sources.hpp) against upstream Istio's
// template files read from the Go module cache: the same pod, injected through the same engine
// with the same values and mesh config, must come out identical from the chart's rendered
// `config` and from upstream's injection-template.yaml / gateway-injection-template.yaml, for
// several settings (default, native sidecars, CNI, TPROXY, holdApplicationUntilProxyStarts,
// interception NONE, ...). It checks that the chart set carries upstream's templates unchanged
// and that nothing else in its `config` (policy, selectors, aliases, other templates) changes a
// pod.
//
// The module is located with hack/istio-module.sh (source dir from the build's CMakeCache.txt);
// without Go or the module the tests are skipped, saying why.
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/yaml.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/workloads.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::inject {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The source directory, from CMakeCache.txt above the test executable.
std::optional<fs::path> source_dir() {
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    auto cache = read_text(dir / "CMakeCache.txt");
    if (!cache) continue;
    const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    auto pos = cache->find(key);
    if (pos == std::string::npos) return std::nullopt;
    auto end = cache->find('\n', pos);
    return fs::path(cache->substr(pos + key.size(), end - pos - key.size()));
  }
  return std::nullopt;
}

const std::optional<fs::path>& istio_module() {
  static const std::optional<fs::path> dir = []() -> std::optional<fs::path> {
    auto src = source_dir();
    if (!src) return std::nullopt;
    std::string cmd = "bash '" + (*src / "hack/istio-module.sh").string() + "' 2>/dev/null";
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string out;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr)
      out += buf.data();
    if (::pclose(pipe) != 0) return std::nullopt;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
      out.pop_back();
    if (out.empty() || !fs::is_directory(out)) return std::nullopt;
    return fs::path(out);
  }();
  return dir;
}

// One setting: how values and mesh differ from the chart set's, and the native sidecar mode.
struct Setting {
  std::string name;
  NativeSidecars native = NativeSidecars::kDisabled;
  std::function<void(api::Document& values)> values;
  // Merged over the chart set's mesh config (a JSON merge patch, as YAML).
  std::string mesh_patch;
};

std::string values_for(const Setting& s) {
  auto values = api::yaml_to_json(test_support::chart_set_sources().values);
  EXPECT_TRUE(values.ok());
  if (s.values) s.values(*values);
  return api::to_json(*values);
}

std::string mesh_for(const Setting& s) {
  std::string mesh = test_support::chart_set_sources().mesh;
  if (s.mesh_patch.empty()) return mesh;
  auto doc = api::yaml_to_json(mesh);
  auto patch = api::yaml_to_json(s.mesh_patch);
  EXPECT_TRUE(doc.ok() && patch.ok()) << s.name;
  if (!doc.ok() || !patch.ok()) return mesh;
  if (!doc->IsObject()) doc->SetObject();
  api::apply_merge_patch(*doc, *patch, doc->GetAllocator());
  return api::json_to_yaml(*doc);
}

void set_path(api::Document& doc, std::initializer_list<std::string_view> path, api::Value v) {
  api::Value* at = &doc;
  auto& a = doc.GetAllocator();
  std::size_t i = 0;
  for (std::string_view key : path) {
    bool last = ++i == path.size();
    api::Value* next = api::find_member(*at, key);
    if (next == nullptr) {
      at->AddMember(api::make_string(key, a),
                    last ? api::Value(v, a) : api::Value(rapidjson::kObjectType), a);
      next = api::find_member(*at, key);
    } else if (last) {
      *next = api::Value(v, a);
    }
    at = next;
  }
}

std::shared_ptr<const Snapshot> snapshot_for(const Setting& s, std::string config) {
  SnapshotSources sources;
  sources.config = std::move(config);
  sources.values = values_for(s);
  sources.mesh = mesh_for(s);
  sources.native_sidecars = s.native;
  auto snapshot = build_snapshot(sources);
  EXPECT_TRUE(snapshot.ok()) << s.name << ": " << (snapshot.ok() ? "" : snapshot.message());
  return snapshot.ok() ? *snapshot : nullptr;
}

// upstream's config: the two templates meshop's correspond to, nothing else.
std::string upstream_config(const fs::path& module) {
  fs::path files = module / "manifests/charts/istio-control/istio-discovery/files";
  auto sidecar = read_text(files / "injection-template.yaml");
  auto gateway = read_text(files / "gateway-injection-template.yaml");
  EXPECT_TRUE(sidecar && gateway) << "templates missing under " << files;
  api::Document config(rapidjson::kObjectType);
  auto& a = config.GetAllocator();
  config.AddMember("policy", "enabled", a);
  api::Value templates(rapidjson::kObjectType);
  templates.AddMember("sidecar", api::make_string(sidecar.value_or(""), a), a);
  templates.AddMember("gateway", api::make_string(gateway.value_or(""), a), a);
  config.AddMember("templates", templates, a);
  return api::json_to_yaml(config);
}

api::Value keys_of(const api::Value* object, api::Allocator& a) {
  api::Value keys(rapidjson::kArrayType);
  if (object == nullptr || !object->IsObject()) return keys;
  std::vector<std::string> names;
  for (const auto& m : object->GetObject())
    names.emplace_back(api::string_view_of(m.name));
  std::sort(names.begin(), names.end());
  for (const std::string& n : names)
    keys.PushBack(api::make_string(n, a), a);
  return keys;
}

// The parts of a container that make up its shape; absent fields stay absent.
api::Value container_shape(const api::Value& c, api::Allocator& a) {
  api::Value shape(rapidjson::kObjectType);
  for (std::string_view field :
       {"name", "image", "imagePullPolicy", "args", "restartPolicy", "securityContext", "lifecycle",
        "readinessProbe", "startupProbe", "resources", "env"}) {
    if (const api::Value* v = api::find_member(c, field))
      shape.AddMember(api::make_string(field, a), api::Value(*v, a), a);
  }
  api::Value ports(rapidjson::kArrayType);
  if (const api::Value* p = api::find_member(c, "ports"); p != nullptr && p->IsArray())
    for (const api::Value& port : p->GetArray())
      if (const api::Value* n = api::find_member(port, "containerPort"))
        ports.PushBack(api::Value(*n, a), a);
  shape.AddMember("ports", ports, a);
  api::Value mounts(rapidjson::kArrayType);
  if (const api::Value* m = api::find_member(c, "volumeMounts"); m != nullptr && m->IsArray())
    for (const api::Value& mount : m->GetArray())
      mounts.PushBack(api::make_string(api::string_at(mount, {"mountPath"}), a), a);
  shape.AddMember("volumeMounts", mounts, a);
  return shape;
}

api::Document pod_shape(const api::Value& workload) {
  api::Document shape(rapidjson::kObjectType);
  auto& a = shape.GetAllocator();
  const api::Value* meta = api::find(workload, "/spec/template/metadata");
  const api::Value* spec = api::find(workload, "/spec/template/spec");
  shape.AddMember("labels", keys_of(meta ? api::find_member(*meta, "labels") : nullptr, a), a);
  shape.AddMember("annotations",
                  keys_of(meta ? api::find_member(*meta, "annotations") : nullptr, a), a);
  for (std::string_view list : {"initContainers", "containers"}) {
    api::Value out(rapidjson::kArrayType);
    const api::Value* items = spec ? api::find_member(*spec, list) : nullptr;
    if (items != nullptr && items->IsArray())
      for (const api::Value& c : items->GetArray())
        out.PushBack(container_shape(c, a), a);
    shape.AddMember(api::make_string(list, a), out, a);
  }
  api::Value volumes(rapidjson::kArrayType);
  const api::Value* vols = spec ? api::find_member(*spec, "volumes") : nullptr;
  if (vols != nullptr && vols->IsArray())
    for (const api::Value& v : vols->GetArray())
      volumes.PushBack(api::make_string(api::string_at(v, {"name"}), a), a);
  shape.AddMember("volumes", volumes, a);
  if (spec != nullptr)
    for (std::string_view field : {"securityContext", "imagePullSecrets"})
      if (const api::Value* v = api::find_member(*spec, field))
        shape.AddMember(api::make_string(field, a), api::Value(*v, a), a);
  return shape;
}

std::optional<api::Document> inject_one(const Snapshot& snapshot, const std::string& input) {
  KubeInjectReport report;
  auto out = inject_stream(snapshot, input, report);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.message());
  if (!out.ok()) return std::nullopt;
  EXPECT_EQ(report.injected, 1) << *out;
  auto docs = api::yaml_stream_to_json(*out);
  // Every document is followed by "---", which opens one last, empty (null) document.
  if (docs.ok() && !docs->empty() && docs->back().IsNull()) docs->pop_back();
  EXPECT_TRUE(docs.ok() && docs->size() == 1);
  if (!docs.ok() || docs->empty()) return std::nullopt;
  return std::move((*docs)[0]);
}

class KubeInjectParity : public ::testing::TestWithParam<Setting> {};

void expect_same_pod(const Setting& s, const std::string& input, const std::string& label) {
  const auto& module = istio_module();
  if (!module) GTEST_SKIP() << "istio.io/istio module not available (hack/istio-module.sh)";
  auto ours = snapshot_for(s, test_support::chart_set_sources().config);
  auto theirs = snapshot_for(s, upstream_config(*module));
  ASSERT_TRUE(ours && theirs);
  auto our_pod = inject_one(*ours, input);
  auto their_pod = inject_one(*theirs, input);
  ASSERT_TRUE(our_pod && their_pod);
  // Guard against comparing two pods the templates left alone: upstream's has the proxy and
  // its volumes.
  std::string their_shape = api::to_json(pod_shape(*their_pod));
  EXPECT_NE(their_shape.find("\"name\":\"istio-proxy\""), std::string::npos) << their_shape;
  EXPECT_NE(their_shape.find("\"istio-token\""), std::string::npos) << their_shape;
  EXPECT_TRUE(api::json_equal(*our_pod, *their_pod))
      << label << " / " << s.name << "\nchart set: " << api::to_pretty_json(*our_pod)
      << "\nupstream:  " << api::to_pretty_json(*their_pod);
}

TEST_P(KubeInjectParity, UpstreamHelloDeploymentGetsTheSamePod) {
  const auto& module = istio_module();
  if (!module) GTEST_SKIP() << "istio.io/istio module not available (hack/istio-module.sh)";
  auto hello = read_text(*module / "pkg/kube/inject/testdata/inject/hello.yaml");
  ASSERT_TRUE(hello.has_value());
  expect_same_pod(GetParam(), *hello, "hello.yaml");
}

TEST_P(KubeInjectParity, AnnotatedMultiContainerDeploymentGetsTheSamePod) {
  // Resource, status-port, traffic, user-volume and log-level annotations, two containers with
  // ports, an image pull policy: the parts of the templates that read annotations.
  const std::string input = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: store
spec:
  selector:
    matchLabels: {app: shop}
  template:
    metadata:
      labels:
        app: shop
        version: v2
      annotations:
        sidecar.istio.io/proxyCPU: 200m
        sidecar.istio.io/proxyMemoryLimit: 1Gi
        status.sidecar.istio.io/port: "15555"
        traffic.sidecar.istio.io/excludeOutboundPorts: "9000"
        traffic.sidecar.istio.io/includeOutboundPorts: "80,443"
        traffic.sidecar.istio.io/excludeInboundPorts: "7000"
        traffic.sidecar.istio.io/excludeInterfaces: eth9
        sidecar.istio.io/agentLogLevel: debug
        sidecar.istio.io/userVolume: '{"extra":{"emptyDir":{}}}'
        sidecar.istio.io/userVolumeMount: '{"extra":{"mountPath":"/extra","readOnly":true}}'
        sidecar.istio.io/bootstrapOverride: custom-bootstrap
        istio.io/reroute-virtual-interfaces: eth1
        traffic.sidecar.istio.io/kubevirtInterfaces: eth2
        apm.datadoghq.com/env: '{"DD_ENV":"prod","DD_SERVICE":"shop"}'
    spec:
      serviceAccountName: shop
      containers:
      - name: web
        image: nginx
        ports:
        - containerPort: 8080
          name: http
        - containerPort: 9090
          protocol: UDP
      - name: worker
        image: busybox
)";
  expect_same_pod(GetParam(), input, "annotated");
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> all = {
      {"default", NativeSidecars::kDisabled, nullptr, ""},
      {"native", NativeSidecars::kEnabled, nullptr, ""},
      {"cni", NativeSidecars::kDisabled,
       [](api::Document& v) {
         set_path(v, {"pilot", "cni", "enabled"}, api::Value(true));
         set_path(v, {"global", "network"}, api::Value("network1"));
       },
       ""},
      {"cni_native", NativeSidecars::kEnabled,
       [](api::Document& v) {
         set_path(v, {"pilot", "cni", "enabled"}, api::Value(true));
       },
       ""},
      {"tproxy", NativeSidecars::kDisabled, nullptr, "defaultConfig: {interceptionMode: TPROXY}"},
      {"interception_none", NativeSidecars::kDisabled, nullptr,
       "defaultConfig: {interceptionMode: NONE}"},
      {"hold_application", NativeSidecars::kDisabled,
       [](api::Document& v) {
         set_path(v, {"global", "proxy", "holdApplicationUntilProxyStarts"}, api::Value(true));
       },
       ""},
      {"hold_application_native", NativeSidecars::kEnabled,
       [](api::Document& v) {
         set_path(v, {"global", "proxy", "holdApplicationUntilProxyStarts"}, api::Value(true));
       },
       ""},
      {"pull_policy_mtls_certs_secrets", NativeSidecars::kDisabled,
       [](api::Document& v) {
         set_path(v, {"global", "imagePullPolicy"}, api::Value("Always"));
         set_path(v, {"global", "mountMtlsCerts"}, api::Value(true));
         api::Value secrets(rapidjson::kArrayType);
         secrets.PushBack("regcred", v.GetAllocator());
         set_path(v, {"global", "imagePullSecrets"}, std::move(secrets));
       },
       ""},
      {"many_values", NativeSidecars::kDisabled,
       [](api::Document& v) {
         auto& a = v.GetAllocator();
         auto seccomp = api::yaml_to_json("type: RuntimeDefault");
         set_path(v, {"global", "proxy", "seccompProfile"}, api::Value(*seccomp, a));
         auto lifecycle = api::yaml_to_json("preStop: {exec: {command: [sleep, '5']}}");
         set_path(v, {"global", "proxy", "lifecycle"}, api::Value(*lifecycle, a));
         set_path(v, {"global", "caName"}, api::Value("GkeWorkloadCertificate"));
         set_path(v, {"pilot", "env", "ENABLE_CLUSTER_TRUST_BUNDLE_API"}, api::Value(true));
         set_path(v, {"global", "logAsJson"}, api::Value(true));
         set_path(v, {"global", "sts", "servicePort"}, api::Value(15463));
         set_path(v, {"global", "proxy", "outlierLogPath"}, api::Value("/dev/stdout"));
         set_path(v, {"global", "nativeNftables"}, api::Value(true));
         set_path(v, {"global", "proxy_init", "forceApplyIptables"}, api::Value(true));
         set_path(v, {"global", "meshID"}, api::Value("mesh1"));
         set_path(v, {"global", "multiCluster", "clusterName"}, api::Value("c1"));
         set_path(v, {"global", "proxy", "tracer"}, api::Value("datadog"));
         set_path(v, {"global", "proxy", "startupProbe", "enabled"}, api::Value(false));
         set_path(v, {"global", "proxy", "resources"}, api::Value(rapidjson::kNullType));
       },
       ""},
      {"proxy_metadata_localhost", NativeSidecars::kEnabled, nullptr,
       "defaultConfig:\n  proxyMetadata:\n    ISTIO_META_ENABLE_HBONE: \"true\"\n"
       "    IPTABLES_TRACE_LOGGING: \"true\"\n    EXTRA: x\n"
       "inboundTrafficPolicy:\n  mode: LOCALHOST\n"},
      {"bind_service_cni_tproxy", NativeSidecars::kDisabled,
       [](api::Document& v) {
         set_path(v, {"pilot", "cni", "enabled"}, api::Value(true));
         set_path(v, {"pilot", "cni", "provider"}, api::Value("multus"));
         set_path(v, {"global", "proxy", "capNetBindService"}, api::Value(true));
         set_path(v, {"global", "proxy", "statusPort"}, api::Value(0));
         set_path(v, {"global", "pilotCertProvider"}, api::Value("kubernetes"));
       },
       "defaultConfig: {interceptionMode: TPROXY}"},
  };
  return all;
}

INSTANTIATE_TEST_SUITE_P(Settings, KubeInjectParity, ::testing::ValuesIn(settings()),
                         [](const auto& p) { return p.param.name; });

// The gateway template, selected by annotation, on a gateway-like Deployment.
TEST(KubeInjectParityGateway, GatewayTemplateGivesTheSamePod) {
  const std::string input = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress
  namespace: istio-ingress
spec:
  template:
    metadata:
      labels: {istio: ingressgateway}
      annotations:
        inject.istio.io/templates: gateway
    spec:
      containers:
      - name: istio-proxy
        image: auto
)";
  expect_same_pod(settings()[0], input, "gateway");
}

// Each setting reaches the templates (else the parity tests could compare one pod over and
// over): upstream's own pods differ in shape between each pair of settings above.
TEST(KubeInjectParityShape, DistinguishesEverySetting) {
  const auto& module = istio_module();
  if (!module) GTEST_SKIP() << "istio.io/istio module not available (hack/istio-module.sh)";
  auto hello = read_text(*module / "pkg/kube/inject/testdata/inject/hello.yaml");
  ASSERT_TRUE(hello.has_value());
  std::vector<api::Document> shapes;
  for (const Setting& s : settings()) {
    if (s.name == "hold_application_native") continue;  // hold is moot with native sidecars
    auto snapshot = snapshot_for(s, upstream_config(*module));
    ASSERT_TRUE(snapshot);
    auto pod = inject_one(*snapshot, *hello);
    ASSERT_TRUE(pod);
    shapes.push_back(pod_shape(*pod));
  }
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t j = i + 1; j < shapes.size(); ++j)
      EXPECT_FALSE(api::json_equal(shapes[i], shapes[j])) << "settings " << i << " and " << j;
}

TEST(KubeInjectChartSet, ConfigHasUpstreamsTemplatesAndBuildsASnapshot) {
  auto config = api::yaml_to_json(test_support::chart_set_sources().config);
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(api::string_at(*config, {"policy"}), "enabled");
  const api::Value* templates = api::find_member(*config, "templates");
  ASSERT_NE(templates, nullptr);
  for (std::string_view name :
       {"sidecar", "gateway", "grpc-agent", "grpc-simple", "waypoint", "kube-gateway"})
    EXPECT_NE(api::find_member(*templates, name), nullptr) << name;
  auto snapshot = build_snapshot(test_support::chart_set_sources());
  ASSERT_TRUE(snapshot.ok()) << snapshot.message();
}

}  // namespace
}  // namespace meshop::inject
