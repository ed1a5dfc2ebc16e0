// What the differential against Helm (test/differential/helm) does not reach: bad charts,
// error wording, and the template group's cross-file resolution on its own.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/helm/objects.hpp"
#include "operator/helm/render.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::helm {
namespace {

namespace fs = std::filesystem;
using template_engine::TemplateGroup;
using template_engine::Value;

class ChartDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meshop-helm-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "templates");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  Value values(const std::string& json) {
    auto doc = api::parse_json(json);
    return template_engine::funcs::from_rapidjson(*doc);
  }
  fs::path dir_;
};

TEST(TemplateGroup, TemplateActionFindsDefinitionsOfOtherTextsAndLaterOnesWin) {
  TemplateGroup g(helm_functions());
  ASSERT_TRUE(g.add("a/_helpers.tpl", R"({{define "n"}}first{{end}})").ok());
  ASSERT_TRUE(g.add("a/main.yaml", R"(x={{template "n" .}})").ok());
  EXPECT_EQ(*g.execute_template("a/main.yaml", Value()), "x=first");
  ASSERT_TRUE(g.add("b/_helpers.tpl", R"({{define "n"}}second{{end}})").ok());
  EXPECT_EQ(*g.execute_template("a/main.yaml", Value()), "x=second");
  // An empty redefinition never replaces a non-empty one (Go's AddParseTree).
  ASSERT_TRUE(g.add("c/_helpers.tpl", R"({{define "n"}}{{end}})").ok());
  EXPECT_EQ(*g.execute_template("a/main.yaml", Value()), "x=second");
}

TEST(TemplateGroup, ErrorsNameTheFileAndPositionOfTheFailingNode) {
  TemplateGroup g(helm_functions());
  ASSERT_TRUE(g.add("h.tpl", "{{define \"d\"}}\n  {{.a.b}}{{end}}").ok());
  ASSERT_TRUE(g.add("m.yaml", "line1\n{{template \"d\" 1}}").ok());
  auto r = g.execute_template("m.yaml", Value());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "template: h.tpl:2:6: executing \"d\" at <.a.b>: can't evaluate field a in type int");
  auto missing = g.add("bad.yaml", "{{ nosuchfunc }}");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "template: bad.yaml:1: function \"nosuchfunc\" not defined");
  EXPECT_FALSE(g.has_template("bad.yaml"));
}

TEST(HelmFunctions, EnvIsNotAvailableAsInHelm) {
  EXPECT_EQ(helm_functions().find("env"), nullptr);
  EXPECT_EQ(helm_functions().find("expandenv"), nullptr);
  EXPECT_NE(helm_functions().find("include"), nullptr);
}

TEST(HelmGlob, StarsStayInASegmentDoubleStarsCross) {
  EXPECT_TRUE(detail::glob_match("files/*.txt", "files/a.txt"));
  EXPECT_FALSE(detail::glob_match("files/*.txt", "files/deep/a.txt"));
  EXPECT_TRUE(detail::glob_match("files/**", "files/deep/a.txt"));
  EXPECT_TRUE(detail::glob_match("files/{a,b}.txt", "files/b.txt"));
  EXPECT_TRUE(detail::glob_match("files/[a-c]?.txt", "files/bx.txt"));
  EXPECT_FALSE(detail::glob_match("files/[!a]*.txt", "files/a.txt"));
}

TEST_F(ChartDir, MissingChartYamlIsAnErrorNamingTheDirectory) {
  auto c = load_chart(dir_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find(dir_.string()), std::string::npos);
  EXPECT_NE(c.message().find("Chart.yaml file is missing"), std::string::npos);
  EXPECT_FALSE(load_chart(dir_ / "nope").ok());
}

TEST_F(ChartDir, ChartYamlWithoutNameOrVersionIsRejectedAsHelmDoes) {
  write("Chart.yaml", "apiVersion: v2\nversion: 1.0.0\n");
  EXPECT_NE(load_chart(dir_).message().find("validation: chart.metadata.name is required"),
            std::string::npos);
  write("Chart.yaml", "apiVersion: v2\nname: x\n");
  EXPECT_NE(load_chart(dir_).message().find("validation: chart.metadata.version is required"),
            std::string::npos);
  write("Chart.yaml", "apiVersion: v3\nname: x\nversion: 1.0.0\n");
  EXPECT_NE(load_chart(dir_).message().find("apiVersion 'v3' is not valid"), std::string::npos);
  write("Chart.yaml", "name: [unclosed\n");
  EXPECT_NE(load_chart(dir_).message().find("Chart.yaml: yaml:"), std::string::npos);
}

TEST_F(ChartDir, PackagedSubchartIsAnErrorNamingIt) {
  write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
  write("charts/dep-1.0.0.tgz", "not really");
  auto c = load_chart(dir_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("charts/dep-1.0.0.tgz"), std::string::npos);
}

TEST_F(ChartDir, ValuesYamlThatIsNotAMappingIsAnError) {
  write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
  write("values.yaml", "- a\n");
  EXPECT_NE(load_chart(dir_).message().find("values.yaml: not a mapping"), std::string::npos);
}

TEST_F(ChartDir, ParseAndExecutionErrorsHaveHelmsWording) {
  write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
  write("templates/a.yaml", "ok\n{{ if }}\n");
  auto c = load_chart(dir_);
  ASSERT_TRUE(c.ok()) << c.message();
  auto r = render(*c, Value());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "parse error at (x/templates/a.yaml:2): missing value for if");

  write("templates/a.yaml", "a: {{ required \"a is required\" .Values.a }}\n");
  c = load_chart(dir_);
  r = render(*c, Value());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "execution error at (x/templates/a.yaml:1:6): a is required");
  r = render(*c, values(R"({"a": "set"})"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->templates.at("x/templates/a.yaml"), "a: set\n");
}

TEST_F(ChartDir, OverrideNullDeletesADefaultAndMapsMergeDeeply) {
  write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
  write("values.yaml", "a: 1\nm: {p: 1, q: 2}\n");
  auto c = load_chart(dir_);
  ASSERT_TRUE(c.ok()) << c.message();
  Value v = coalesce_values(*c, values(R"({"a": null, "m": {"q": 3, "r": 4}})"));
  std::string json;
  ASSERT_TRUE(template_engine::funcs::append_json(json, v, {}));
  EXPECT_EQ(json, R"({"m":{"p":1,"q":3,"r":4}})");
  // The chart's defaults are not modified by a render.
  std::string defaults;
  ASSERT_TRUE(template_engine::funcs::append_json(defaults, c->values, {}));
  EXPECT_EQ(defaults, R"({"a":1,"m":{"p":1,"q":2}})");
}

TEST_F(ChartDir, PartialsAreNotOutputAndIncludeRecursionIsBounded) {
  write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
  write("templates/_loop.tpl", R"({{define "loop"}}{{include "loop" .}}{{end}})");
  write("templates/a.yaml", R"({{ include "loop" . }})");
  auto c = load_chart(dir_);
  ASSERT_TRUE(c.ok()) << c.message();
  auto r = render(*c, Value());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("rendering template has a nested reference name: loop"),
            std::string::npos)
      << r.message();
  write("templates/a.yaml", "plain\n");
  c = load_chart(dir_);
  r = render(*c, Value());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->templates.size(), 1u);
  EXPECT_EQ(r->templates.count("x/templates/_loop.tpl"), 0u);
}

}  // namespace
}  // namespace meshop::helm
