// Post-processing against upstream's injection goldens (istio.io/istio
// pkg/kube/inject/testdata/inject, read from the Go module cache at test time; skipped when the
// module is absent). For every input X.yaml with a golden X.yaml.injected, the input pod (plus
// an istio-proxy container when it has none) goes through apply_prometheus_merge() and
// rewrite_app_probes() with upstream's defaults, and must give the golden's
// ISTIO_PROMETHEUS_ANNOTATIONS and ISTIO_KUBE_APP_PROBERS values byte for byte, the golden's
// prometheus annotations, and the golden's probes and lifecycle hooks on every app container.
// Templates do not touch any of these, so the rest of the pipeline is not needed.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"
#include "postprocess_test_support.hpp"

namespace meshop::inject {
namespace {

namespace fs = std::filesystem;
using testing::FakeMesh;
using testing::parse;

// The pod a workload document is injected as, or null for kinds without one. kube-inject
// treats a CronJob's jobTemplate metadata as the pod's metadata (upstream's IntoObject), so its
// annotations live there.
api::Document pod_of(const rapidjson::Value& doc) {
  api::Document pod;
  if (!doc.IsObject()) return pod;
  std::string kind = api::string_at(doc, {"kind"});
  if (kind == "Pod") {
    pod.CopyFrom(doc, pod.GetAllocator());
  } else if (kind == "CronJob") {
    const rapidjson::Value* meta = api::find(doc, "/spec/jobTemplate/metadata");
    const rapidjson::Value* spec = api::find(doc, "/spec/jobTemplate/spec/template/spec");
    if (meta == nullptr || spec == nullptr) return pod;
    pod.SetObject();
    pod.AddMember("metadata", rapidjson::Value(*meta, pod.GetAllocator()), pod.GetAllocator());
    pod.AddMember("spec", rapidjson::Value(*spec, pod.GetAllocator()), pod.GetAllocator());
  } else if (const rapidjson::Value* t = api::find(doc, "/spec/template");
             t != nullptr && kind != "Service" && kind != "List") {
    pod.CopyFrom(*t, pod.GetAllocator());
  }
  return pod;
}

std::string env_value(rapidjson::Value& pod, std::string_view name) {
  rapidjson::Value* sidecar = postprocess::find_sidecar(pod);
  if (sidecar == nullptr) return "<no sidecar>";
  const rapidjson::Value* env = api::find_member(*sidecar, "env");
  if (env == nullptr || !env->IsArray()) return "<absent>";
  for (const auto& v : env->GetArray()) {
    if (api::string_at(v, {"name"}) == name) return api::string_at(v, {"value"});
  }
  return "<absent>";
}

std::set<std::pair<std::string, std::string>> prometheus_annotations(const rapidjson::Value& pod) {
  std::set<std::pair<std::string, std::string>> out;
  if (const rapidjson::Value* a = postprocess::annotations_of(pod)) {
    for (const auto& m : a->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (postprocess::sanitize_label_name(key).rfind("prometheus_", 0) == 0 &&
          m.value.IsString()) {
        out.emplace(key, m.value.GetString());
      }
    }
  }
  return out;
}

// Probes and hooks of app containers, by container name.
std::vector<std::pair<std::string, std::string>> app_probes(const rapidjson::Value& pod) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* list : {"/spec/initContainers", "/spec/containers"}) {
    const rapidjson::Value* cs = api::find(pod, list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      std::string name = api::string_at(c, {"name"});
      if (name == "istio-proxy" || name == "istio-init" || name == "istio-validation") continue;
      for (const char* field : {"readinessProbe", "livenessProbe", "startupProbe", "lifecycle"}) {
        if (const rapidjson::Value* v = api::find_member(c, field)) {
          out.emplace_back(name + "." + field, api::to_json(*v));
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The non-empty documents of a YAML stream (goldens end with "---").
api::Result<std::vector<api::Document>> documents(const fs::path& path) {
  auto docs = api::yaml_stream_to_json(testing::read_file(path));
  if (!docs.ok()) return docs;
  std::vector<api::Document> out;
  for (auto& d : *docs) {
    if (!d.IsNull()) out.push_back(std::move(d));
  }
  return out;
}

TEST(PostprocessGolden, PrometheusAndProbesMatchUpstreamGoldens) {
  fs::path dir = testing::istio_inject_testdata();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio is not in the Go module cache";
  int compared = 0, with_probers = 0, with_prometheus_env = 0, merged_annotations = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml") continue;
    fs::path golden_path = entry.path();
    golden_path += ".injected";
    if (!fs::exists(golden_path)) continue;
    auto inputs = documents(entry.path());
    auto goldens = documents(golden_path);
    ASSERT_TRUE(inputs.ok()) << name;
    ASSERT_TRUE(goldens.ok()) << name;
    if (inputs->size() != goldens->size()) continue;
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      api::Document pod = pod_of((*inputs)[i]);
      api::Document golden = pod_of((*goldens)[i]);
      rapidjson::Value* want = &golden;
      if (pod.IsNull() || golden.IsNull() || postprocess::find_sidecar(golden) == nullptr) {
        continue;
      }
      SCOPED_TRACE(name + " document " + std::to_string(i + 1));
      auto& a = pod.GetAllocator();
      // The grpc-agent template turns probe rewriting off through this annotation.
      if (postprocess::annotation(pod, "inject.istio.io/templates") == "grpc-agent") {
        postprocess::set_annotation(pod, "sidecar.istio.io/rewriteAppHTTPProbers", "false", a);
      }
      if (postprocess::find_sidecar(pod) == nullptr) {
        rapidjson::Value* spec = api::find(pod, "/spec");
        ASSERT_NE(spec, nullptr);
        rapidjson::Value* containers = api::find_member(*spec, "containers");
        ASSERT_NE(containers, nullptr);
        rapidjson::Value proxy(rapidjson::kObjectType);
        proxy.AddMember("name", "istio-proxy", a);
        containers->PushBack(proxy, a);
      }
      const bool was_injected =
          postprocess::annotation(pod, postprocess::kStatusAnnotation).has_value();
      ASSERT_TRUE(apply_prometheus_merge(pod, FakeMesh(true), 15020).ok());
      ASSERT_TRUE(rewrite_app_probes(
                      pod, parse(R"({"sidecarInjectorWebhook":{"rewriteAppHTTPProbe":true}})"),
                      was_injected, 15020)
                      .ok());
      EXPECT_EQ(env_value(pod, "ISTIO_KUBE_APP_PROBERS"),
                env_value(*want, "ISTIO_KUBE_APP_PROBERS"));
      EXPECT_EQ(env_value(pod, "ISTIO_PROMETHEUS_ANNOTATIONS"),
                env_value(*want, "ISTIO_PROMETHEUS_ANNOTATIONS"));
      EXPECT_EQ(prometheus_annotations(pod), prometheus_annotations(*want));
      auto got_probes = app_probes(pod), want_probes = app_probes(*want);
      ASSERT_EQ(got_probes.size(), want_probes.size());
      for (std::size_t k = 0; k < got_probes.size(); ++k) {
        EXPECT_EQ(got_probes[k].first, want_probes[k].first);
        EXPECT_TRUE(api::json_equal(parse(got_probes[k].second), parse(want_probes[k].second)))
            << got_probes[k].first << "\n got " << got_probes[k].second << "\nwant "
            << want_probes[k].second;
      }
      ++compared;
      with_probers += env_value(*want, "ISTIO_KUBE_APP_PROBERS") != "<absent>";
      with_prometheus_env += env_value(*want, "ISTIO_PROMETHEUS_ANNOTATIONS") != "<absent>";
      merged_annotations += !prometheus_annotations(*want).empty();
    }
  }
  // The corpus holds ~100 such pods; these floors catch a reader that silently finds nothing.
  EXPECT_GE(compared, 80);
  EXPECT_GE(with_probers, 15);
  EXPECT_GE(with_prometheus_env, 1);
  EXPECT_GE(merged_annotations, 80);
  std::cout << "compared " << compared << " pods: " << with_probers << " with app probers, "
            << with_prometheus_env << " with prometheus env, " << merged_annotations
            << " with prometheus annotations\n";
}

// The five traffic-annotations-bad-*.yaml inputs upstream expects to fail, with the word its
// test looks for (lowercased error).
TEST(PostprocessGolden, BadTrafficAnnotationInputsFailWithUpstreamWords) {
  fs::path dir = testing::istio_inject_testdata();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio is not in the Go module cache";
  for (const char* word : {"includeipranges", "excludeipranges", "includeinboundports",
                           "excludeinboundports", "excludeoutboundports"}) {
    fs::path path = dir / ("traffic-annotations-bad-" + std::string(word) + ".yaml");
    ASSERT_TRUE(fs::exists(path)) << path;
    auto docs = api::yaml_stream_to_json(testing::read_file(path));
    ASSERT_TRUE(docs.ok());
    bool failed = false;
    for (const auto& doc : *docs) {
      api::Document pod = pod_of(doc);
      if (pod.IsNull()) continue;
      auto st = validate_annotations(pod);
      if (st.ok()) continue;
      failed = true;
      std::string lower = st.message();
      for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      EXPECT_NE(lower.find(word), std::string::npos) << st.message();
    }
    EXPECT_TRUE(failed) << word;
  }
}

// Every other input of the corpus passes validation (upstream injects them all).
TEST(PostprocessGolden, GoodInputsPassValidation) {
  fs::path dir = testing::istio_inject_testdata();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio is not in the Go module cache";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name.rfind("traffic-annotations-bad-", 0) == 0) {
      continue;
    }
    fs::path golden = entry.path();
    golden += ".injected";
    if (!fs::exists(golden)) continue;
    auto docs = api::yaml_stream_to_json(testing::read_file(entry.path()));
    ASSERT_TRUE(docs.ok()) << name;
    for (const auto& doc : *docs) {
      if (api::Document pod = pod_of(doc); !pod.IsNull()) {
        auto st = validate_annotations(pod);
        EXPECT_TRUE(st.ok()) << name << ": " << (st.ok() ? "" : st.message());
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 80);
}

}  // namespace
}  // namespace meshop::inject
