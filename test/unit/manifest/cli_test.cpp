// `meshop manifest generate` and `meshop profile ...` in process: the command sources are
// compiled into this test (not through meshop_cli) so the area's tests do not depend on
// every other command compiling.
#include "operator/cli/cli.hpp"

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "api/istio_operator.hpp"
#include "api/yaml.hpp"
#include "operator/cli/commands.hpp"

namespace meshop::cli {
namespace {

struct CmdResult {
  int code;
  std::string out;
  std::string err;
};

CmdResult run_cmd(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  Context ctx{out, err, {}};
  CLI::App root{"test", "meshop"};
  root.require_subcommand(1);
  add_manifest_command(root, ctx);
  add_profile_command(root, ctx);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    root.parse(rev);
  } catch (const CLI::ParseError& e) {
    return {kExitUsage, "", e.what()};
  }
  int code = ctx.action();
  return {code, out.str(), err.str()};
}

std::string seed_path() {
  return std::string(MESHOP_SOURCE_DIR) + "/test/e2e/testdata/cni-annotations.yaml";
}

bool has_object(const std::string& yaml, std::string_view kind, std::string_view name,
                std::string_view ns = {}) {
  auto docs = api::yaml_stream_to_json(yaml);
  EXPECT_TRUE(docs.ok()) << docs.message();
  if (!docs.ok()) return false;
  for (const api::Document& d : *docs)
    if (api::string_at(d, {"kind"}) == kind && api::string_at(d, {"metadata", "name"}) == name &&
        (ns.empty() || api::string_at(d, {"metadata", "namespace"}) == ns))
      return true;
  return false;
}

TEST(ManifestGenerateCommand, SeedFileRendersCniDaemonSetInKubeSystem) {
  CmdResult r = run_cmd({"manifest", "generate", "-f", seed_path()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has_object(r.out, "DaemonSet", "istio-cni-node", "kube-system"));
  EXPECT_TRUE(has_object(r.out, "ConfigMap", "istio-sidecar-injector", "istio-system"));
  EXPECT_NE(r.out.find("k8s.v1.cni.cncf.io/networks"), std::string::npos);
}

TEST(ManifestGenerateCommand, RevisionFlagRendersTheRevisionsWebhook) {
  CmdResult r = run_cmd({"manifest", "generate", "--revision", "canary"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has_object(r.out, "MutatingWebhookConfiguration", "istio-sidecar-injector-canary"));
  EXPECT_FALSE(has_object(r.out, "MutatingWebhookConfiguration", "istio-sidecar-injector"));
  EXPECT_EQ(r.out.find("name: namespace.sidecar-injector.istio.io"), std::string::npos);
}

TEST(ManifestGenerateCommand, UnknownProfileAndBadPathsExitOneNamingThem) {
  CmdResult p = run_cmd({"manifest", "generate", "--set", "profile=nosuch"});
  EXPECT_EQ(p.code, kExitError);
  EXPECT_TRUE(p.out.empty());
  EXPECT_NE(p.err.find("profile \"nosuch\" not found"), std::string::npos) << p.err;
  CmdResult s = run_cmd({"manifest", "generate", "--set", "components.pilot.k8s.replicaCount=x"});
  EXPECT_EQ(s.code, kExitError);
  EXPECT_NE(s.err.find("spec.components.pilot.k8s.replicaCount"), std::string::npos) << s.err;
  CmdResult f = run_cmd({"manifest", "generate", "-f", "/nonexistent/iop.yaml"});
  EXPECT_EQ(f.code, kExitError);
  EXPECT_NE(f.err.find("/nonexistent/iop.yaml"), std::string::npos);
}

TEST(ProfileCommand, ListNamesTheProfiles) {
  CmdResult r = run_cmd({"profile", "list"});
  ASSERT_EQ(r.code, kExitOk);
  for (const char* n : {"default", "demo", "minimal", "empty", "preview", "remote"})
    EXPECT_NE(r.out.find(std::string("    ") + n + "\n"), std::string::npos) << n;
}

TEST(ProfileCommand, DumpMergesFilesAndSelectsAConfigPath) {
  CmdResult r = run_cmd({"profile", "dump", "-f", seed_path(), "--config-path", "components"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto doc = api::yaml_to_json(r.out);
  ASSERT_TRUE(doc.ok()) << doc.message();
  EXPECT_EQ(api::string_at(*doc, {"cni", "namespace"}), "kube-system");
  EXPECT_NE(api::find(*doc, "/ingressGateways/0/enabled"), nullptr);

  CmdResult flags = run_cmd({"profile", "dump", "demo", "-p", "components", "-o", "flags"});
  ASSERT_EQ(flags.code, kExitOk) << flags.err;
  EXPECT_NE(flags.out.find("egressGateways[0].enabled=true\n"), std::string::npos) << flags.out;

  CmdResult bad = run_cmd({"profile", "dump", "--config-path", "components.nosuch"});
  EXPECT_EQ(bad.code, kExitError);
  EXPECT_NE(bad.err.find("components.nosuch"), std::string::npos);
}

TEST(ProfileCommand, DiffShowsWhatAProfileChanges) {
  CmdResult same = run_cmd({"profile", "diff", "default", "default"});
  ASSERT_EQ(same.code, kExitOk);
  EXPECT_NE(same.out.find("identical"), std::string::npos);
  CmdResult d = run_cmd({"profile", "diff", "default", "minimal"});
  ASSERT_EQ(d.code, kExitOk) << d.err;
  EXPECT_NE(d.out.find("--- default\n+++ minimal\n"), std::string::npos);
  EXPECT_NE(d.out.find("\n-    - enabled: true\n+    - enabled: false\n"), std::string::npos)
      << d.out;
  CmdResult bad = run_cmd({"profile", "diff", "default", "nosuch"});
  EXPECT_EQ(bad.code, kExitError);
  EXPECT_NE(bad.err.find("nosuch"), std::string::npos);
}

// Issue 17: a meshConfig istiod and the injector would reject stops `manifest generate`
// (and the install reconciler, which renders the same way) before any object exists.
TEST(ManifestGenerateCommand, MeshConfigUpstreamRejectsExitsOneNamingTheField) {
  CmdResult t = run_cmd({"manifest", "generate", "--set", "meshConfig.enableTracing=yes please"});
  EXPECT_EQ(t.code, kExitError);
  EXPECT_TRUE(t.out.empty());
  EXPECT_NE(t.err.find("spec.meshConfig.enableTracing: "), std::string::npos) << t.err;
  CmdResult e =
      run_cmd({"manifest", "generate", "--set", "meshConfig.outboundTrafficPolicy.mode=SOMETIMES"});
  EXPECT_EQ(e.code, kExitError);
  EXPECT_NE(e.err.find("spec.meshConfig.outboundTrafficPolicy.mode: "), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("SOMETIMES"), std::string::npos) << e.err;
  CmdResult d =
      run_cmd({"manifest", "generate", "--set", "meshConfig.defaultConfig.concurrency=two"});
  EXPECT_EQ(d.code, kExitError);
  EXPECT_NE(d.err.find("spec.meshConfig.defaultConfig.concurrency: "), std::string::npos) << d.err;
  // Semantic validation (agent.ValidateMeshConfig), not only types.
  CmdResult p =
      run_cmd({"manifest", "generate", "--set", "meshConfig.defaultConfig.statusPort=70000"});
  EXPECT_EQ(p.code, kExitError);
  EXPECT_NE(p.err.find("spec.meshConfig.defaultConfig.statusPort: "), std::string::npos) << p.err;
  CmdResult v = run_cmd({"manifest", "generate", "--set", "values.meshConfig.enableTracing=maybe"});
  EXPECT_EQ(v.code, kExitError);
  EXPECT_NE(v.err.find("spec.values.meshConfig.enableTracing: "), std::string::npos) << v.err;
  // Valid values and unknown fields (ignored by upstream's readers, so a warning) still render.
  CmdResult ok = run_cmd({"manifest", "generate", "--set", "meshConfig.enableTracing=true", "--set",
                          "meshConfig.noSuchField=1"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_NE(ok.err.find("spec.meshConfig.noSuchField: unknown field"), std::string::npos) << ok.err;
}

bool is_dns1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t begin = 0;
  while (true) {
    std::size_t dot = s.find('.', begin);
    std::string_view part = s.substr(begin, dot == std::string_view::npos ? dot : dot - begin);
    if (part.empty() || part.front() == '-' || part.back() == '-') return false;
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    if (dot == std::string_view::npos) return true;
    begin = dot + 1;
  }
}

// The longest accepted revision renders only names the apiserver accepts (Services: DNS-1035
// labels; every other object: DNS-1123 subdomains; label values: 63 characters), with every
// component enabled; one character more is refused naming spec.revision.
TEST(ManifestGenerateCommand, LongestRevisionKeepsEveryRenderedNameValid) {
  std::string rev(api::kMaxRevisionLength, 'r');
  CmdResult r = run_cmd({"manifest", "generate", "--set", "profile=demo", "--set",
                         "components.cni.enabled=true", "--set", "components.ztunnel.enabled=true",
                         "--revision", rev});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto docs = api::yaml_stream_to_json(r.out);
  ASSERT_TRUE(docs.ok()) << docs.message();
  std::size_t with_rev = 0;
  std::size_t longest_service = 0;
  for (const api::Document& d : *docs) {
    std::string kind = api::string_at(d, {"kind"});
    std::string name = api::string_at(d, {"metadata", "name"});
    if (kind.empty()) continue;  // the empty document after istioctl's last "---"
    if (name.find(rev) != std::string::npos) ++with_rev;
    if (kind == "Service") {
      EXPECT_TRUE(is_dns1123_label(name) && name.front() >= 'a') << kind << " " << name;
      if (name.find(rev) != std::string::npos)
        longest_service = std::max(longest_service, name.size());
    } else {
      EXPECT_TRUE(is_dns1123_subdomain(name)) << kind << " " << name;
    }
    if (const api::Value* labels = api::find_member(d["metadata"], "labels");
        labels != nullptr && labels->IsObject()) {
      for (const auto& l : labels->GetObject()) {
        if (l.value.IsString()) {
          EXPECT_LE(l.value.GetStringLength(), 63u)
              << kind << " " << name << " label " << api::string_view_of(l.name);
        }
      }
    }
  }
  EXPECT_GT(with_rev, 3u);          // the revision really is in the names checked
  EXPECT_EQ(longest_service, 63u);  // istiod-<rev>: the bound is tight
  CmdResult too_long = run_cmd({"manifest", "generate", "--revision", rev + "r"});
  EXPECT_EQ(too_long.code, kExitError);
  EXPECT_TRUE(too_long.out.empty());
  EXPECT_NE(too_long.err.find("spec.revision: "), std::string::npos) << too_long.err;
  EXPECT_NE(too_long.err.find("at most 56"), std::string::npos) << too_long.err;
}

}  // namespace
}  // namespace meshop::cli
