// `meshop template render`: output only on success, Go's error on stderr with exit 1,
// JSON and YAML data, and a clear error for a missing file.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/cli/cli.hpp"

namespace meshop::cli {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

class TemplateRenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("meshop-template-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  static CliRun run_args(std::vector<std::string> args) {
    args.insert(args.begin(), "meshop");
    std::ostringstream out, err;
    int code = run(args, out, err);
    return {code, out.str(), err.str()};
  }

  std::filesystem::path dir_;
};

TEST_F(TemplateRenderCli, RendersJsonDataWithFloatNumbers) {
  auto t = write("t.tmpl", "port={{.port}} {{printf \"%T\" .port}} {{.name | printf \"%q\"}}\n");
  auto d = write("d.json", R"({"port": 15020, "name": "x"})");
  auto r = run_args({"template", "render", "-t", t, "-d", d});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "port=15020 float64 \"x\"\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(TemplateRenderCli, RendersYamlDataWithGoYamlTyping) {
  auto t = write("t.tmpl", "{{.a}} {{.b}} {{.c}} {{printf \"%T\" .b}}");
  auto d = write("d.yaml", "a: yes\nb: \"1.0\"\nc: [1, 2,]\n");
  auto r = run_args({"template", "render", "--template", t, "--data", d});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "true 1.0 [1 2] string");
}

TEST_F(TemplateRenderCli, WithoutDataDotIsNil) {
  auto t = write("t.tmpl", "[{{.}}]");
  auto r = run_args({"template", "render", "-t", t});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "[<no value>]");
}

TEST_F(TemplateRenderCli, ExecutionErrorPrintsNothingOnStdout) {
  auto t = write("inject", "partial output\n{{.a.b}}");
  auto d = write("d.json", R"({"a": null})");
  auto r = run_args({"template", "render", "-t", t, "-d", d});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "template: inject:2:4: executing \"inject\" at <.a.b>: nil pointer evaluating "
            "interface {}.b\n");
}

TEST_F(TemplateRenderCli, ParseErrorExitsOne) {
  auto t = write("t", "{{if}}");
  auto r = run_args({"template", "render", "-t", t});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "template: t:1: missing value for if\n");
}

TEST_F(TemplateRenderCli, MissingFilesAreNamed) {
  auto missing = (dir_ / "nope.tmpl").string();
  auto r = run_args({"template", "render", "-t", missing});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  auto t = write("t", "x");
  auto missing_data = (dir_ / "nope.json").string();
  r = run_args({"template", "render", "-t", t, "-d", missing_data});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find(missing_data), std::string::npos) << r.err;
}

TEST_F(TemplateRenderCli, BadDataIsAnError) {
  auto t = write("t", "x");
  auto d = write("d.yaml", "a: [1, 2\n");
  auto r = run_args({"template", "render", "-t", t, "-d", d});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("d.yaml"), std::string::npos) << r.err;
}

TEST_F(TemplateRenderCli, TemplateFlagIsRequired) {
  auto r = run_args({"template", "render"});
  EXPECT_EQ(r.code, kExitUsage);
}

}  // namespace
}  // namespace meshop::cli
