// `meshop manifest generate` and `meshop profile ...` in process: the command sources are
// compiled into this test (not through meshop_cli) so the area's tests do not depend on
// every other command compiling.
#include "operator/cli/cli.hpp"

#include <sstream>

#include <gtest/gtest.h>

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
  EXPECT_NE(p.err.find("unknown profile \"nosuch\""), std::string::npos) << p.err;
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

}  // namespace
}  // namespace meshop::cli
