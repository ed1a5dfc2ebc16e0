// Opt-in scan of the engine against upstream's injector on every TestInjection case, using the
// fixtures `hack/injectoracle.sh settings --out DIR` renders (cases.json, settings/<id>/,
// pods/<case>.jsonl with the oracle's injected pod as "want"). Set MESHOP_INJECT_FIXTURES=DIR
// to run it; it is skipped otherwise (the golden suite in test/golden is the gate; this test
// prints a per-case diff to work from). Comparison as upstream's webhook-path test: JSON
// equality with list order significant, sidecar.istio.io/status removed, fieldRef apiVersion
// ignored.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "engine_test_support.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/snapshot.hpp"

namespace meshop::inject {
namespace {

using engine_test::json_diff;
using engine_test::read_file;

void strip_for_compare(api::Value& v, api::Allocator& alloc) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray())
      strip_for_compare(e, alloc);
    return;
  }
  if (!v.IsObject()) return;
  if (api::Value* ann = api::find(v, "/metadata/annotations"); ann != nullptr && ann->IsObject()) {
    ann->RemoveMember("sidecar.istio.io/status");
    if (ann->MemberCount() == 0) api::find(v, "/metadata")->RemoveMember("annotations");
  }
  if (api::Value* fr = api::find_member(v, "fieldRef"); fr != nullptr && fr->IsObject())
    fr->RemoveMember("apiVersion");
  for (auto& m : v.GetObject())
    strip_for_compare(m.value, alloc);
}

TEST(EngineOracleFixtures, WebhookPathMatchesUpstream) {
  const char* dir_env = std::getenv("MESHOP_INJECT_FIXTURES");
  if (dir_env == nullptr || *dir_env == '\0') GTEST_SKIP() << "MESHOP_INJECT_FIXTURES not set";
  std::filesystem::path dir(dir_env);
  auto cases = api::parse_json(read_file(dir / "cases.json"));
  ASSERT_TRUE(cases.ok()) << cases.message();
  const char* only = std::getenv("MESHOP_INJECT_CASE");
  bool verbose = std::getenv("MESHOP_INJECT_VERBOSE") != nullptr;

  std::map<std::string, std::shared_ptr<const Snapshot>> snapshots;
  int total = 0, passed = 0;
  std::string failures;
  for (const auto& c : (*cases)["cases"].GetArray()) {
    std::string name = api::string_at(c, {"name"});
    if (only != nullptr && name != only) continue;
    const api::Value* webhook = api::find_member(c, "webhook_path");
    if (webhook == nullptr || !webhook->IsBool() || !webhook->GetBool()) continue;
    std::string settings = api::string_at(c, {"settings"});
    std::string native = api::string_at(c, {"native_sidecars"});
    std::string compliance = api::string_at(c, {"compliance_policy"});
    const api::Value* openshift = api::find_member(c, "openshift");
    bool is_openshift = openshift != nullptr && openshift->IsBool() && openshift->GetBool();
    const api::Value* nodes = api::find_member(c, "node_kubelet_versions");
    std::string key = settings + "|" + native + "|" + compliance + "|" +
                      (is_openshift ? "os" : "") + "|" + (nodes ? api::to_json(*nodes) : "");
    auto& snap = snapshots[key];
    if (!snap) {
      SnapshotSources src;
      src.revision = api::string_at(c, {"revision"});
      src.config = read_file(dir / "settings" / settings / "config");
      src.values = read_file(dir / "settings" / settings / "values");
      src.mesh = read_file(dir / "settings" / settings / "mesh");
      src.native_sidecars = native == "false"  ? NativeSidecars::kDisabled
                            : native == "true" ? NativeSidecars::kEnabled
                                               : NativeSidecars::kAuto;
      src.node_kubelet_versions = {"v1.33.0", "v1.34.0"};
      if (nodes != nullptr && nodes->IsArray()) {
        src.node_kubelet_versions.clear();
        for (const auto& v : nodes->GetArray())
          if (v.IsString()) src.node_kubelet_versions.emplace_back(api::string_view_of(v));
      }
      src.compliance_policy = compliance;
      src.openshift = is_openshift;
      auto built = build_snapshot(src);
      ASSERT_TRUE(built.ok()) << name << ": " << built.message();
      snap = *built;
    }
    std::filesystem::path pods = api::string_at(c, {"pods"});
    if (pods.is_relative()) pods = dir / pods;
    std::ifstream lines(pods);
    std::string line;
    int part = 0;
    while (std::getline(lines, line)) {
      ++part;
      ++total;
      auto item = api::parse_json(line);
      ASSERT_TRUE(item.ok());
      PodRequest req;
      req.pod = api::find_member(*item, "pod");
      req.ns = api::string_at(*item, {"namespace"});
      // The oracle's fake cluster: namespace test-ns carries OpenShift's UID/GID ranges.
      api::Document ns_object = engine_test::json(
          R"({"metadata":{"name":"test-ns","annotations":{
               "openshift.io/sa.scc.uid-range":"1000620000/10000",
               "openshift.io/sa.scc.supplemental-groups":"1000620000/10000"}}})");
      std::string pod_ns = api::string_at(*req.pod, {"metadata", "namespace"});
      if ((pod_ns.empty() ? req.ns : pod_ns) == "test-ns") req.namespace_object = &ns_object;
      InjectResult r = inject(*snap, req);
      std::string label = name + "#" + std::to_string(part);
      const api::Value* want = api::find_member(*item, "want");
      std::string expect_error = api::string_at(c, {"expect_error"});
      if (!expect_error.empty() || want == nullptr) {
        std::string lower = r.message;
        for (char& ch : lower)
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (r.outcome == Outcome::kFailed && lower.find(expect_error) != std::string::npos)
          ++passed;
        else
          failures +=
              label + ": expected error containing " + expect_error + ", got " + r.message + "\n";
        continue;
      }
      api::Document got;
      if (r.outcome == Outcome::kInjected) {
        // As upstream's test: the patch applied to the pod as sent.
        got.CopyFrom(*req.pod, got.GetAllocator());
        auto patch = api::parse_json(r.patch);
        if (!patch || !api::apply_json_patch(got, *patch).ok()) {
          failures += label + ": patch does not apply\n";
          continue;
        }
      } else if (r.outcome == Outcome::kSkipped) {
        got.CopyFrom(*req.pod, got.GetAllocator());
      } else {
        failures += label + ": failed: " + r.failure_type + ": " + r.message + "\n";
        continue;
      }
      api::Document expected;
      expected.CopyFrom(*want, expected.GetAllocator());
      strip_for_compare(got, got.GetAllocator());
      strip_for_compare(expected, expected.GetAllocator());
      if (api::json_equal(got, expected)) {
        ++passed;
      } else {
        std::string diff = json_diff(expected, got);
        if (!verbose && diff.size() > 1500) diff = diff.substr(0, 1500) + "...";
        failures += label + ": differs (patch from expected to got):\n" + diff + "\n";
      }
    }
  }
  std::cout << "engine oracle scan: " << passed << "/" << total << " pods match\n";
  EXPECT_GT(total, 0) << "no webhook-path pods found under " << dir;
  EXPECT_EQ(passed, total) << failures;
}

}  // namespace
}  // namespace meshop::inject
