// `meshop manifest generate --manifests DIR`: the istioctl pipeline behind the CLI flag, over the
// miniature chart set in testdata/istioctl-chartset.
#include <sstream>

#include <gtest/gtest.h>

#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"

namespace meshop::cli {
namespace {

const std::string kChartSet =
    std::string(MESHOP_SOURCE_DIR) + "/test/unit/manifest/testdata/istioctl-chartset";

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
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    root.parse(rev);
  } catch (const CLI::ParseError& e) {
    return {kExitUsage, "", e.what()};
  }
  int code = ctx.action();
  return {code, out.str(), err.str()};
}

TEST(ManifestGenerateManifests, PrintsIstioctlsStream) {
  auto r = run_cmd({"manifest", "generate", "--manifests", kChartSet, "--set", "profile=minimal",
                    "--revision", "canary"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto docs = api::yaml_stream_to_json(r.out);
  ASSERT_TRUE(docs.ok()) << docs.message();
  std::vector<std::string> names;
  for (const api::Document& d : *docs)
    if (!d.IsNull()) names.push_back(api::string_at(d, {"metadata", "name"}));
  EXPECT_EQ(names,
            (std::vector<std::string>{"widgets.example.io", "istio-reader-service-account",
                                      "istio-reader-clusterrole-istio-system", "istio-canary",
                                      "istiod-canary", "istiod-canary", "istiod-canary"}));
  // Each object is followed by "\n---\n", as istioctl prints it.
  EXPECT_TRUE(r.out.ends_with("\n\n---\n")) << r.out;
}

TEST(ManifestGenerateManifests, ErrorsExitOneNamingTheProblem) {
  auto missing = run_cmd({"manifest", "generate", "--manifests", kChartSet + "/nosuch"});
  EXPECT_EQ(missing.code, kExitError);
  EXPECT_NE(missing.err.find("nosuch: no such directory"), std::string::npos) << missing.err;
  EXPECT_TRUE(missing.out.empty());

  auto not_a_set = run_cmd({"manifest", "generate", "--manifests", kChartSet + "/charts"});
  EXPECT_EQ(not_a_set.code, kExitError);
  EXPECT_NE(not_a_set.err.find("not a chart set"), std::string::npos) << not_a_set.err;

  auto profile =
      run_cmd({"manifest", "generate", "--manifests", kChartSet, "--set", "profile=nosuch"});
  EXPECT_EQ(profile.code, kExitError);
  EXPECT_NE(profile.err.find("profile \"nosuch\" not found"), std::string::npos) << profile.err;
  EXPECT_NE(profile.err.find("ambient, default, minimal"), std::string::npos) << profile.err;

  auto field = run_cmd({"manifest", "generate", "--manifests", kChartSet, "--set",
                        "components.pilot.k8s.replicas=3"});
  EXPECT_EQ(field.code, kExitError);
  EXPECT_NE(field.err.find("spec.components.pilot.k8s.replicas"), std::string::npos) << field.err;
  auto forced = run_cmd({"manifest", "generate", "--manifests", kChartSet, "--force", "--set",
                         "components.pilot.k8s.replicas=3"});
  EXPECT_EQ(forced.code, kExitOk) << forced.err;
  EXPECT_NE(forced.err.find("continuing because of --force"), std::string::npos) << forced.err;

  // Without a chart set named, the default bundled version renders; --force applies to it.
  auto force_alone = run_cmd({"manifest", "generate", "--force"});
  EXPECT_EQ(force_alone.code, kExitOk) << force_alone.err;
}

}  // namespace
}  // namespace meshop::cli
