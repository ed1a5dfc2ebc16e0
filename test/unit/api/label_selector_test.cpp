#include "api/label_selector.hpp"

#include <gtest/gtest.h>

#include "test/unit/api/json_text.hpp"

namespace meshop::api {
namespace {

using test_support::json;

std::string from_json_error(std::string_view text) {
  auto s = LabelSelector::from_json(json(text), "spec.selector");
  return s.ok() ? "OK" : s.message();
}

TEST(LabelSelector, MatchLabelsAndExpressions) {
  auto s = LabelSelector::from_json(json(R"({"matchLabels":{"app":"web"},"matchExpressions":[
        {"key":"tier","operator":"In","values":["a","b"]},
        {"key":"env","operator":"NotIn","values":["prod"]},
        {"key":"team","operator":"Exists"},
        {"key":"legacy","operator":"DoesNotExist"}]})"),
                                    "spec.selector");
  ASSERT_TRUE(s.ok()) << s.message();
  Document yes = json(R"({"app":"web","tier":"b","team":"x"})");
  EXPECT_TRUE(s->matches(&yes));
  for (const char* no :
       {R"({"app":"web","tier":"c","team":"x"})",
        R"({"app":"web","tier":"a","team":"x","env":"prod"})", R"({"app":"web","tier":"a"})",
        R"({"app":"web","tier":"a","team":"x","legacy":""})",
        R"({"app":"db","tier":"a","team":"x"})"}) {
    Document d = json(no);
    EXPECT_FALSE(s->matches(&d)) << no;
  }
  EXPECT_FALSE(s->matches(nullptr));
  EXPECT_EQ(s->to_string(), "app=web,env notin (prod),!legacy,team,tier in (a,b)");
}

TEST(LabelSelector, EmptyMatchesEverythingNullMatchesNothing) {
  auto all = LabelSelector::from_json(json("{}"), "x");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->matches(nullptr));
  auto none = LabelSelector::from_json(json("null"), "x");
  ASSERT_TRUE(none.ok());
  Document labels = json(R"({"a":"b"})");
  EXPECT_FALSE(none->matches(&labels));
}

TEST(LabelSelector, ValidationErrorsAreWordedAsTheApiserver) {
  EXPECT_EQ(from_json_error(R"({"matchExpressions":[{"key":"a","operator":"In"}]})"),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'");
  EXPECT_EQ(
      from_json_error(R"({"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]})"),
      "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` "
      "is 'Exists' or 'DoesNotExist'");
  EXPECT_EQ(from_json_error(R"({"matchExpressions":[{"key":"a","operator":"Foo"}]})"),
            "spec.selector.matchExpressions[0].operator: Invalid value: \"Foo\": not a valid "
            "selector operator");
  EXPECT_EQ(from_json_error(R"({"matchLabels":{"-bad":"x"}})"),
            "spec.selector.matchLabels: Invalid value: \"-bad\": name part must consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  EXPECT_NE(from_json_error(
                R"({"matchExpressions":[{"key":"a","operator":"In","values":["ok","bad value"]}]})")
                .find("spec.selector.matchExpressions[0].values[1]: Invalid value: \"bad value\": "
                      "a valid label must be"),
            std::string::npos);
  std::string two = from_json_error(
      R"({"matchExpressions":[{"key":"a","operator":"In"},{"key":"b","operator":"X"}]})");
  EXPECT_EQ(two.front(), '[');
  EXPECT_NE(two.find("matchExpressions[1].operator"), std::string::npos);
}

TEST(LabelSelector, KeyAndValueSyntax) {
  EXPECT_TRUE(label_key_errors("app.kubernetes.io/name").empty());
  EXPECT_TRUE(label_key_errors("a").empty());
  EXPECT_EQ(label_key_errors("/a").front(), "prefix part must be non-empty");
  EXPECT_EQ(label_key_errors("a/").front(), "name part must be non-empty");
  EXPECT_EQ(label_key_errors(std::string(64, 'a')).front(),
            "name part must be no more than 63 characters");
  EXPECT_NE(
      label_key_errors("Example.com/a").front().find("prefix part a lowercase RFC 1123 subdomain"),
      std::string::npos);
  EXPECT_FALSE(label_key_errors("a/b/c").empty());
  EXPECT_TRUE(label_value_errors("").empty());
  EXPECT_TRUE(label_value_errors("v1.2_3-x").empty());
  EXPECT_FALSE(label_value_errors("-x").empty());
  EXPECT_EQ(label_value_errors(std::string(64, 'a')).front(), "must be no more than 63 characters");
}

TEST(LabelSelector, StringSyntax) {
  auto s = LabelSelector::parse("a=b, c!=d,e in (x, y),f notin (z),g,!h,i>3,j==k");
  ASSERT_TRUE(s.ok()) << s.message();
  Document match = json(R"({"a":"b","e":"y","g":"","i":"4","j":"k"})");
  EXPECT_TRUE(s->matches(&match));
  Document low = json(R"({"a":"b","e":"y","g":"","i":"3","j":"k"})");
  EXPECT_FALSE(s->matches(&low));
  Document h = json(R"({"a":"b","e":"y","g":"","i":"4","j":"k","h":"1"})");
  EXPECT_FALSE(s->matches(&h));
  EXPECT_EQ(s->to_string(), "a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3,j==k");
  EXPECT_TRUE(LabelSelector::parse("")->matches_everything());
  EXPECT_TRUE(LabelSelector::parse("a=")->matches(nullptr) == false);
  EXPECT_FALSE(LabelSelector::parse("a in (b").ok());
  EXPECT_FALSE(LabelSelector::parse("a b").ok());
  EXPECT_FALSE(LabelSelector::parse("a>b").ok());
  EXPECT_FALSE(LabelSelector::parse("-a=b").ok());
  EXPECT_EQ(LabelSelector::parse("a=b,").message(),
            "unable to parse requirement at position 4 of \"a=b,\": key expected");
}

}  // namespace
}  // namespace meshop::api
