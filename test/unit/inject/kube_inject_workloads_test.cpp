// meshop kube-inject's workload handling (operator/inject/workloads.hpp) over kube-inject's
// built-in configuration (the default chart set's injector ConfigMaps): which kinds get a sidecar
// and where, Lists, pass-through, warnings, errors.
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/workloads.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::inject {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::shared_ptr<const Snapshot> chart_set_snapshot(
    NativeSidecars native = NativeSidecars::kDisabled) {
  SnapshotSources sources = test_support::chart_set_sources();
  sources.native_sidecars = native;
  auto snapshot = build_snapshot(sources);
  EXPECT_TRUE(snapshot.ok()) << (snapshot.ok() ? "" : snapshot.message());
  return snapshot.ok() ? *snapshot : nullptr;
}

struct Injected {
  std::string text;
  std::vector<api::Document> docs;
  KubeInjectReport report;
};

Injected run(std::string_view input, NativeSidecars native = NativeSidecars::kDisabled) {
  Injected out;
  auto snapshot = chart_set_snapshot(native);
  if (!snapshot) return out;
  auto text = inject_stream(*snapshot, input, out.report);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.message());
  if (!text.ok()) return out;
  out.text = *text;
  auto docs = api::yaml_stream_to_json(out.text);
  EXPECT_TRUE(docs.ok()) << (docs.ok() ? "" : docs.message());
  if (docs.ok()) out.docs = std::move(*docs);
  // Every document is followed by "---", which opens one last, empty (null) document.
  if (!out.docs.empty() && out.docs.back().IsNull()) out.docs.pop_back();
  return out;
}

std::vector<std::string> names_at(const api::Value& root, std::string_view pointer) {
  std::vector<std::string> names;
  const api::Value* list = api::find(root, pointer);
  if (list == nullptr || !list->IsArray()) return names;
  for (const api::Value& item : list->GetArray())
    names.push_back(api::string_at(item, {"name"}));
  return names;
}

const api::Value* container(const api::Value& spec, std::string_view list, std::string_view name) {
  const api::Value* items = api::find_member(spec, list);
  if (items == nullptr || !items->IsArray()) return nullptr;
  for (const api::Value& c : items->GetArray())
    if (api::string_at(c, {"name"}) == name) return &c;
  return nullptr;
}

std::string env_value(const api::Value& c, std::string_view name) {
  const api::Value* env = api::find_member(c, "env");
  if (env == nullptr || !env->IsArray()) return "<none>";
  for (const api::Value& e : env->GetArray())
    if (api::string_at(e, {"name"}) == name) return api::string_at(e, {"value"});
  return "<none>";
}

std::string workload(std::string_view kind, std::string_view api_version,
                     std::string_view extra = "") {
  return "apiVersion: " + std::string(api_version) + "\nkind: " + std::string(kind) +
         "\nmetadata:\n  name: web\n  namespace: shop\nspec:\n" + std::string(extra) +
         "  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n"
         "      containers:\n      - name: web\n        image: nginx\n        ports:\n"
         "        - containerPort: 8080\n";
}

TEST(KubeInject, DeploymentPodTemplateGetsIstioProxyAndInit) {
  Injected out = run(workload("Deployment", "apps/v1"));
  ASSERT_EQ(out.docs.size(), 1u);
  const api::Value* spec = api::find(out.docs[0], "/spec/template/spec");
  ASSERT_NE(spec, nullptr);
  EXPECT_THAT(names_at(*spec, "/containers"), ElementsAre("web", "istio-proxy"));
  EXPECT_THAT(names_at(*spec, "/initContainers"), ElementsAre("istio-init"));
  const api::Value* proxy = container(*spec, "containers", "istio-proxy");
  ASSERT_NE(proxy, nullptr);
  // kube-inject passes the workload's own identity to the templates.
  EXPECT_EQ(env_value(*proxy, "ISTIO_META_OWNER"),
            "kubernetes://apis/apps/v1/namespaces/shop/deployments/web");
  EXPECT_EQ(env_value(*proxy, "ISTIO_META_WORKLOAD_NAME"), "web");
  EXPECT_EQ(api::string_at(out.docs[0],
                           {"spec", "template", "metadata", "labels", "security.istio.io/tlsMode"}),
            "istio");
  // The workload namespace lent to the engine is not left on the pod template.
  EXPECT_EQ(api::find(out.docs[0], "/spec/template/metadata/namespace"), nullptr);
  EXPECT_EQ(out.report.injected, 1);
  EXPECT_THAT(out.report.warnings, IsEmpty());
  EXPECT_TRUE(out.text.ends_with("---\n"));
}

TEST(KubeInject, NativeSidecarModePutsProxyInInitContainersWithRestartPolicyAlways) {
  Injected out = run(workload("Deployment", "apps/v1"), NativeSidecars::kEnabled);
  ASSERT_EQ(out.docs.size(), 1u);
  const api::Value* spec = api::find(out.docs[0], "/spec/template/spec");
  ASSERT_NE(spec, nullptr);
  EXPECT_THAT(names_at(*spec, "/containers"), ElementsAre("web"));
  EXPECT_THAT(names_at(*spec, "/initContainers"), ElementsAre("istio-init", "istio-proxy"));
  const api::Value* proxy = container(*spec, "initContainers", "istio-proxy");
  ASSERT_NE(proxy, nullptr);
  EXPECT_EQ(api::string_at(*proxy, {"restartPolicy"}), "Always");
}

TEST(KubeInject, EveryTemplateKindIsInjected) {
  struct Case {
    std::string kind, api_version, extra;
  };
  const std::vector<Case> cases = {
      {"ReplicaSet", "apps/v1", ""},
      {"StatefulSet", "apps/v1", "  serviceName: web\n"},
      {"DaemonSet", "apps/v1", ""},
      {"Job", "batch/v1", ""},
      {"ReplicationController", "v1", ""},
      {"DeploymentConfig", "apps.openshift.io/v1", ""},
      // Kinds match by name whatever the version, as upstream's unversioned scheme does.
      {"Deployment", "extensions/v1beta1", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + " " + c.api_version);
    Injected out = run(workload(c.kind, c.api_version, c.extra));
    ASSERT_EQ(out.docs.size(), 1u);
    EXPECT_THAT(names_at(out.docs[0], "/spec/template/spec/containers"),
                ElementsAre("web", "istio-proxy"));
    EXPECT_EQ(api::string_at(out.docs[0], {"kind"}), c.kind);
  }
}

TEST(KubeInject, PodIsInjectedInPlace) {
  Injected out =
      run("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\nspec:\n"
          "  containers:\n  - name: app\n    image: busybox\n");
  ASSERT_EQ(out.docs.size(), 1u);
  EXPECT_THAT(names_at(out.docs[0], "/spec/containers"), ElementsAre("app", "istio-proxy"));
  EXPECT_EQ(api::string_at(out.docs[0], {"metadata", "name"}), "p");
  EXPECT_EQ(api::string_at(out.docs[0], {"metadata", "annotations", "istio.io/rev"}), "default");
}

TEST(KubeInject, CronJobInjectsJobTemplatePodAndAnnotatesJobTemplate) {
  Injected out =
      run("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: tick\nspec:\n"
          "  schedule: \"*/1 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
          "          restartPolicy: OnFailure\n          containers:\n          - name: tick\n"
          "            image: busybox\n");
  ASSERT_EQ(out.docs.size(), 1u);
  EXPECT_THAT(names_at(out.docs[0], "/spec/jobTemplate/spec/template/spec/containers"),
              ElementsAre("tick", "istio-proxy"));
  // As upstream: labels and annotations land on the Job template's metadata.
  EXPECT_EQ(api::string_at(out.docs[0],
                           {"spec", "jobTemplate", "metadata", "annotations", "istio.io/rev"}),
            "default");
  EXPECT_EQ(api::string_at(out.docs[0], {"spec", "jobTemplate", "metadata", "labels",
                                         "service.istio.io/canonical-name"}),
            "tick");
}

TEST(KubeInject, ListItemsAreInjectedOneByOne) {
  Injected out = run(
      "apiVersion: v1\nkind: List\nitems:\n"
      "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n  spec:\n    ports:\n"
      "    - port: 80\n"
      "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d\n  spec:\n"
      "    template:\n      spec:\n        containers:\n        - name: d\n          image: x\n");
  ASSERT_EQ(out.docs.size(), 1u);
  EXPECT_EQ(api::string_at(out.docs[0], {"kind"}), "List");
  EXPECT_EQ(api::find(out.docs[0], "/items/0/spec/template"), nullptr);
  EXPECT_THAT(names_at(out.docs[0], "/items/1/spec/template/spec/containers"),
              ElementsAre("d", "istio-proxy"));
  const api::Value* service = api::find(out.docs[0], "/items/0");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(api::string_at(*service, {"kind"}), "Service");
  EXPECT_EQ(out.report.injected, 1);
}

TEST(KubeInject, OtherObjectsPassThroughByteForByteAndInOrder) {
  const std::string service =
      "# the front door\napiVersion: v1\nkind: Service\nmetadata: {name: web}   # flow style\n"
      "spec:\n  ports: [{port: 80}]\n";
  const std::string config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
  std::string input = service + "---\n" + workload("Deployment", "apps/v1") + "--- # next\n" +
                      config_map + "---\n---\n";
  Injected out = run(input);
  ASSERT_EQ(out.docs.size(), 3u);
  EXPECT_EQ(api::string_at(out.docs[0], {"kind"}), "Service");
  EXPECT_EQ(api::string_at(out.docs[1], {"kind"}), "Deployment");
  EXPECT_EQ(api::string_at(out.docs[2], {"kind"}), "ConfigMap");
  // Untouched documents keep their text, comments and flow style included.
  EXPECT_TRUE(out.text.starts_with(service + "---\n")) << out.text;
  EXPECT_TRUE(out.text.ends_with(config_map + "---\n")) << out.text;
}

TEST(KubeInject, HostNetworkWorkloadPassesThroughWithWarning) {
  std::string input = workload("Deployment", "apps/v1");
  input.replace(input.find("      containers:"), 0, "      hostNetwork: true\n");
  Injected out = run(input);
  ASSERT_EQ(out.docs.size(), 1u);
  EXPECT_EQ(out.text, input + "---\n");
  EXPECT_EQ(out.report.injected, 0);
  EXPECT_THAT(out.report.warnings,
              ElementsAre("===> Skipping injection because Deployment \"shop/web\" has host "
                          "networking enabled"));
}

TEST(KubeInject, InjectFalseLabelPassesThroughWithWarning) {
  std::string input = workload("Deployment", "apps/v1");
  input.replace(input.find("        app: web"), 0, "        sidecar.istio.io/inject: \"false\"\n");
  Injected out = run(input);
  EXPECT_EQ(out.text, input + "---\n");
  ASSERT_EQ(out.report.warnings.size(), 1u);
  EXPECT_THAT(out.report.warnings[0],
              HasSubstr("Skipping injection because Deployment \"shop/web\" has sidecar "
                        "injection disabled"));
}

TEST(KubeInject, BadYamlNamesDocumentLineAndColumn) {
  auto snapshot = chart_set_snapshot();
  ASSERT_NE(snapshot, nullptr);
  KubeInjectReport report;
  auto out = inject_stream(
      *snapshot, "apiVersion: v1\nkind: Service\n---\napiVersion: v1\nkind: [Pod\n", report);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.message(), HasSubstr("document 2"));
  EXPECT_THAT(out.message(), HasSubstr("line 6"));
  EXPECT_THAT(out.message(), HasSubstr("column"));
}

TEST(KubeInject, InvalidSeparatorLineIsAnError) {
  auto docs = split_yaml_documents("a: 1\n--- b: 2\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(docs.message(), HasSubstr("line 2"));
  EXPECT_THAT(docs.message(), HasSubstr("invalid document separator"));
}

TEST(KubeInject, SplitterDropsEmptyDocumentsAndKeepsLines) {
  auto docs = split_yaml_documents("---\na: 1\n---\n---  # c\nb: 2");
  ASSERT_TRUE(docs.ok()) << docs.message();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].text, "a: 1\n");
  EXPECT_EQ((*docs)[0].first_line, 2);
  EXPECT_EQ((*docs)[1].text, "b: 2");
  EXPECT_EQ((*docs)[1].first_line, 5);
}

TEST(KubeInject, EngineFailureNamesTheObjectAndAnnotation) {
  std::string input = workload("Deployment", "apps/v1");
  input.replace(input.find("      labels:"), 0,
                "      annotations:\n"
                "        traffic.sidecar.istio.io/includeOutboundIPRanges: not-a-cidr\n");
  auto snapshot = chart_set_snapshot();
  ASSERT_NE(snapshot, nullptr);
  KubeInjectReport report;
  auto out = inject_stream(*snapshot, "kind: Namespace\n---\n" + input, report);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.message(), HasSubstr("document 2"));
  EXPECT_THAT(out.message(), HasSubstr("Deployment \"shop/web\""));
  EXPECT_THAT(out.message(), HasSubstr("includeOutboundIPRanges"));
}

TEST(KubeInject, WorkloadWithoutPodTemplateIsAnError) {
  auto snapshot = chart_set_snapshot();
  ASSERT_NE(snapshot, nullptr);
  KubeInjectReport report;
  auto out = inject_stream(*snapshot,
                           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                           "  name: d\nspec:\n  replicas: 1\n",
                           report);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.message(), HasSubstr("Deployment \"d\": spec.template.spec is required"));
}

TEST(KubeInject, InjectingTwiceGivesTheSameResult) {
  Injected once = run(workload("Deployment", "apps/v1"));
  Injected twice = run(once.text);
  ASSERT_EQ(twice.docs.size(), 1u);
  EXPECT_THAT(names_at(twice.docs[0], "/spec/template/spec/containers"),
              ElementsAre("web", "istio-proxy"));
  EXPECT_THAT(names_at(twice.docs[0], "/spec/template/spec/initContainers"),
              ElementsAre("istio-init"));
}

}  // namespace
}  // namespace meshop::inject
