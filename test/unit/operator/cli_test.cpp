#include "operator/cli/cli.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/version.hpp"

namespace meshop::cli {
namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run_args(std::vector<std::string> args) {
  args.insert(args.begin(), "meshop");
  std::ostringstream out, err;
  int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(Cli, VersionPrintsVersionAndCommit) {
  auto r = run_args({"version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, "meshop version " + std::string(version()) + " (commit " +
                       std::string(git_commit()) + ")\nIstio versions: 1.31 (default) 1.30\n");
  EXPECT_FALSE(version().empty());
  EXPECT_FALSE(git_commit().empty());
}

TEST(Cli, VersionJsonIsParseableShape) {
  auto r = run_args({"version", "-o", "json"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out.rfind("{\"version\":\"" + std::string(version()) + "\",\"gitCommit\":\"", 0), 0u)
      << r.out;
  // The bundled Istio versions, as manifests/versions.yaml names them.
  EXPECT_NE(r.out.find(R"({"version":"1.31","module":"v0.0.0-20260827124520-eed52ebb66ad",)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("version":"1.30","module":"v0.0.0-20260826214018-9739e10eb9d7",)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("tag":"1.31-dev.eed52ebb66ad","default":true})"), std::string::npos)
      << r.out;
}

TEST(Cli, VersionFlagMatchesCommand) {
  auto flag = run_args({"--version"});
  auto cmd = run_args({"version"});
  EXPECT_EQ(flag.code, kExitOk);
  EXPECT_EQ(flag.out, cmd.out);
}

TEST(Cli, BadOutputFormatIsUsageError) {
  auto r = run_args({"version", "-o", "xml"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("meshop version --help"), std::string::npos) << r.err;
}

TEST(Cli, HelpListsCommandsAndExitsZero) {
  auto r = run_args({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* c : {"version", "run", "kube-inject", "manifest", "tag", "restart", "profile"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
}

TEST(Cli, SubcommandHelpIsThatCommandsHelp) {
  auto r = run_args({"version", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("--output"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kube-inject"), std::string::npos) << r.out;
}

TEST(Cli, NestedSubcommandHelp) {
  auto r = run_args({"manifest", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("generate"), std::string::npos) << r.out;
}

TEST(Cli, UnknownCommandIsUsageErrorNamingIt) {
  auto r = run_args({"frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unknown command \"frobnicate\" for \"meshop\""), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, UnknownNestedCommandNamesParent) {
  auto r = run_args({"tag", "frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unknown command \"frobnicate\" for \"meshop tag\""), std::string::npos)
      << r.err;
}

TEST(Cli, UnknownFlagIsUsageErrorNamingIt) {
  auto r = run_args({"version", "--frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unknown flag \"--frobnicate\" for \"meshop version\""), std::string::npos)
      << r.err;
}

TEST(Cli, NoCommandIsUsageErrorWithHelp) {
  auto r = run_args({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("version"), std::string::npos);
}

TEST(Cli, GroupWithoutSubcommandIsUsageError) {
  auto r = run_args({"restart"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("\"meshop restart\" needs a subcommand"), std::string::npos) << r.err;
}

TEST(Cli, BadLogLevelIsUsageError) {
  auto r = run_args({"--log-level", "loud", "version"});
  EXPECT_EQ(r.code, kExitUsage);
}

// kube-inject's input errors name the file and change nothing (no output).
TEST(Cli, KubeInjectMissingInputNamesIt) {
  auto r = run_args({"kube-inject", "-f", "/nonexistent/deploy.yaml"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, "Error: cannot read /nonexistent/deploy.yaml: no such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, KubeInjectMissingConfigFileNamesIt) {
  for (const char* flag : {"--injectConfigFile", "--valuesFile", "--meshConfigFile"}) {
    auto r = run_args({"kube-inject", flag, "/nonexistent/config.yaml", "-f", "-"});
    EXPECT_EQ(r.code, kExitError) << flag;
    EXPECT_EQ(r.err, "Error: cannot read /nonexistent/config.yaml: no such file or not readable\n")
        << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

}  // namespace
}  // namespace meshop::cli
