// The Go fmt/strconv emulation function libraries build on (functions.hpp). Expected
// strings are what Go 1.26's fmt and strconv return for the same arguments.
#include <gtest/gtest.h>

#include "operator/template/fmt_internal.hpp"
#include "operator/template/functions.hpp"

namespace meshop::template_engine {
namespace {

Value s(std::string v) {
  return Value::string(std::move(v));
}
Value i(std::int64_t v) {
  return Value::integer(v);
}
Value f(double v) {
  return Value::float64(v);
}

Value list(std::vector<Value> items) {
  return Value::list(std::make_shared<List>(std::move(items)));
}

TEST(GoFmt, SprintSpacesOnlyBetweenNonStrings) {
  std::vector<Value> args = {s("a"), i(1), i(2), s("b"), Value::nil(), f(3.5)};
  EXPECT_EQ(sprint(args), "a1 2b<nil> 3.5");
  std::vector<Value> ln = {s("a"), i(1), Value::nil()};
  EXPECT_EQ(sprintln(ln), "a 1 <nil>\n");
}

TEST(GoFmt, SprintfFlagsWidthsAndComposites) {
  std::vector<Value> args = {f(3.14159), s("hi"),
                             s("hi"),    i(255),
                             s("abc"),   list({f(1), s("a"), Value::nil()}),
                             i(5),       f(-3.5),
                             i(7),       Value::integer('x', Kind::kInt32),
                             s("é")};
  EXPECT_EQ(sprintf("%6.2f|%-8q|%x|%X|% x|%#v|%+d|%08.3f|%-08d|%3c|%-4s|", args),
            "  3.14|\"hi\"    |6869|FF|61 62 63|[]interface {}{1, \"a\", interface {}(nil)}|+5|"
            "-003.500|7       |  x|é   |");
}

TEST(GoFmt, FloatVerbsMatchStrconv) {
  std::vector<Value> v = {f(1e6), f(1e21), f(1e-7), f(100), f(0), f(123456789)};
  EXPECT_EQ(sprintf("%v %v %v %v %v %v", v), "1e+06 1e+21 1e-07 100 0 1.23456789e+08");
  std::vector<Value> g = {f(1e100), f(1e-10), f(123), f(1), f(0), f(5.5), f(1), f(3)};
  EXPECT_EQ(sprintf("%g|%G|%.2g|%#g|%e|%.0e|%b|%x", g),
            "1e+100|1E-10|1.2e+02|1.00000|0.000000e+00|6e+00|4503599627370496p-52|0x1.8p+01");
  EXPECT_EQ(format_float(0.1, 'g', -1), "0.1");
  EXPECT_EQ(format_float(1234.5678, 'e', 3), "1.235e+03");
  EXPECT_EQ(format_float(2.5, 'f', 0), "2");
}

TEST(GoFmt, ArgumentIndexesAndBadArguments) {
  std::vector<Value> args = {i(1), i(2), i(3), s("abc"), i(2), s("abcdef")};
  EXPECT_EQ(sprintf("%[2]d %[1]d|%[5]d|%*d|%.*s", args),
            "2 1|2|%!(BADWIDTH)%!d(MISSING)|%!(BADPREC)%!s(MISSING)");
  std::vector<Value> one = {i(1)};
  EXPECT_EQ(sprintf("%d %!", one), "1 %!!(MISSING)");
  std::vector<Value> nils = {Value::nil(), Value::nil(), Value::nil()};
  EXPECT_EQ(sprintf("%v|%d|%s", nils), "<nil>|%!d(<nil>)|%!s(<nil>)");
}

TEST(GoFmt, MapsPrintSortedAndNested) {
  auto inner = std::make_shared<Map>();
  auto m = std::make_shared<Map>();
  m->set("b", list({f(1)}));
  m->set("a", Value::map(inner));
  auto sm = std::make_shared<StringMap>();
  sm->set("k", "v");
  std::vector<Value> args = {Value::boolean(true), Value::map(m), Value::string_map(sm), list({})};
  EXPECT_EQ(sprintf("%t|%v|%s|%d", args), "true|map[a:map[] b:[1]]|map[k:v]|[]");
}

TEST(GoFmt, QuoteEscapesLikeStrconv) {
  EXPECT_EQ(go_quote("a\"b\\\n\t\x01\u00e9\u2028\xff"), "\"a\\\"b\\\\\\n\\t\\x01é\\u2028\\xff\"");
}

TEST(GoFmt, TypeAndKindNames) {
  EXPECT_EQ(go_type_name(list({})), "[]interface {}");
  EXPECT_EQ(go_type_name(Value::list(std::make_shared<List>(std::vector<Value>{}, "string"))),
            "[]string");
  EXPECT_EQ(go_type_name(Value::map(std::make_shared<Map>())), "map[string]interface {}");
  EXPECT_EQ(go_type_name(Value::nil()), "<nil>");
  EXPECT_EQ(go_kind_name(Value::string_map(std::make_shared<StringMap>())), "map");
  EXPECT_EQ(go_kind_name(f(1)), "float64");
  EXPECT_EQ(go_kind_name(Value()), "invalid");
}

}  // namespace
}  // namespace meshop::template_engine
