// The regex functions on inputs a backtracking engine cannot run (Go's regexp and RE2 are
// linear), and GoRegexp's contract where the Go differential (test/differential/cases/
// regex.cases) cannot reach: megabyte inputs and pattern limits.
#include <string>

#include <gtest/gtest.h>

#include "operator/template/functions.hpp"
#include "operator/template/go_regexp.hpp"
#include "test/unit/template/test_util.hpp"

namespace meshop::template_engine {
namespace {

using testing::render_with;

std::string render_default(std::string_view tmpl, const Value& data = Value::nil()) {
  return render_with(default_functions(), tmpl, data);
}

Value data_with(std::string key, std::string value) {
  auto m = std::make_shared<Map>();
  m->set(std::move(key), Value::string(std::move(value)));
  return Value::map(std::move(m));
}

// std::regex took exponential time here (every split of the a's between the two stars).
TEST(RegexFunctions, NestedStarOverManyAsCompletes) {
  EXPECT_EQ(render_default(R"({{ regexMatch "(a*)*b" (repeat 40 "a") }})"), "OK false");
  EXPECT_EQ(render_default(R"({{ regexFind "(a|aa)+$" (printf "%sb" (repeat 60 "a")) }})"), "OK ");
}

// std::regex recursed once per character and overflowed the stack.
TEST(RegexFunctions, MillionCharacterInputDoesNotOverflow) {
  std::string s;
  for (int i = 0; i < 1'000'000; ++i)
    s += (i % 3 == 0) ? 'b' : 'a';
  Value data = data_with("s", s);
  EXPECT_EQ(render_default(R"({{ regexMatch "^(a|b)*$" .s }})", data), "OK true");
  EXPECT_EQ(render_default(R"({{ regexMatch "^(a|b)*c$" .s }})", data), "OK false");
  EXPECT_EQ(render_default(R"({{ regexFind "^(a|b)*$" .s | len }})", data), "OK 1000000");
  EXPECT_EQ(render_default(R"({{ regexReplaceAll "^(a|b)*$" .s "<$1>" }})", data),
            "OK <b>");  // the last character
  EXPECT_EQ(render_default(R"({{ regexFindAll "b" .s -1 | len }})", data), "OK 333334");
}

TEST(GoRegexp, ErrorsAreGosTexts) {
  auto r = GoRegexp::compile("(a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "error parsing regexp: missing closing ): `(a`");
  r = GoRegexp::compile("a**");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "error parsing regexp: invalid nested repetition operator: `**`");
  // The first error from the left wins, also over the ones the named-group scan finds.
  r = GoRegexp::compile(R"(\8(?P<a-b>x))");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "error parsing regexp: invalid escape sequence: `\\8`");
}

TEST(GoRegexp, DeepNestingIsAnErrorOrLinearNeverACrash) {
  std::string captures(1000, '(');
  captures += 'a';
  captures += std::string(1000, ')');
  auto r = GoRegexp::compile(captures);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "error parsing regexp: expression nests too deeply: `" + captures + "`");

  std::string groups;
  for (int i = 0; i < 20000; ++i)
    groups += "(?:";
  groups += 'a';
  groups += std::string(20000, ')');
  auto g = GoRegexp::compile(groups);
  ASSERT_TRUE(g) << g.message();
  EXPECT_TRUE(g->match("xa"));
}

TEST(GoRegexp, DuplicateNamesAsInGo) {
  auto r = GoRegexp::compile("(?P<v>x)|(?<v>y)");
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->replace_all("xyz", "<$v>"), "<x><y>z");
}

TEST(GoRegexp, MatchesStartOnlyAtRuneBoundaries) {
  // \B holds between the two bytes of é; Go never looks there, so "aéa" has no \B.
  auto r = GoRegexp::compile(R"(\B)");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->match("aéa"));
  EXPECT_TRUE(r->match("éé"));
  EXPECT_EQ(r->find_all("éé", -1), (std::vector<GoRegexp::Span>{{0, 0}, {2, 2}, {4, 4}}));
}

TEST(GoRegexp, InvalidBytesAreOneRuneEach) {
  auto r = GoRegexp::compile(".");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->find_all("a\xff\xfe"
                        "b",
                        -1),
            (std::vector<GoRegexp::Span>{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(r->replace_all_literal("\xff", "$0"), "$0");
}

}  // namespace
}  // namespace meshop::template_engine
