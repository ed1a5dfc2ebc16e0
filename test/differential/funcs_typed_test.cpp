// The parts of the sprig/Istio function libraries that the Go differential suite cannot
// reach, because Go's oracle only sees JSON-shaped data: typed Objects (what the injection
// engine passes for ProxyConfig, ObjectMeta, ...) and the registration order of
// default_functions().
#include <cstdlib>

#include <gtest/gtest.h>

#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::template_engine {
namespace {

// A struct-like typed object with fixed fields and optional JSON methods.
class FakeObject : public Object {
 public:
  std::shared_ptr<Map> fields = std::make_shared<Map>();
  std::string marshal_json;  // empty: no MarshalJSON method
  std::string proto_json;    // empty: no ProtoToJSON method
  bool nil = false;

  std::string_view go_type() const override { return "*v1alpha1.ProxyConfig"; }
  std::string_view go_kind() const override { return "ptr"; }
  bool is_nil() const override { return nil; }
  std::optional<Value> field(std::string_view name) const override {
    if (const Value* v = fields->find(name)) return *v;
    return std::nullopt;
  }
  std::optional<Function> method(std::string_view name) const override {
    auto constant = [](std::string s) {
      return Function(Signature{{}, std::nullopt},
                      [s](Args) -> Result<Value> { return Value::string(s); });
    };
    if (name == "MarshalJSON" && !marshal_json.empty()) return constant(marshal_json);
    if (name == "ProtoToJSON" && !proto_json.empty()) return constant(proto_json);
    return std::nullopt;
  }
  void format(std::string& out, bool, bool) const override { out += "{fake}"; }
};

std::string render(std::string_view text, const Value& data) {
  auto t = Template::parse("t", text);
  if (!t) return "PARSE ERROR: " + t.message();
  auto r = (*t)->execute(data);
  if (!r) return "EXEC ERROR: " + r.message();
  return *r;
}

Value data_with(std::string_view key, Value v) {
  auto m = std::make_shared<Map>();
  m->set(key, std::move(v));
  return Value::map(std::move(m));
}

TEST(TemplateFunctionsTyped, AnnotationReadsAnnotationsFieldOfTypedObjectMeta) {
  auto meta = std::make_shared<FakeObject>();
  auto anns = std::make_shared<StringMap>();
  anns->set("sidecar.istio.io/interceptionMode", "TPROXY");
  meta->fields->set("Annotations", Value::string_map(anns));
  Value data = data_with("ObjectMeta", Value::object(meta));
  EXPECT_EQ(render("{{ annotation .ObjectMeta `sidecar.istio.io/interceptionMode` `REDIRECT` }}|"
                   "{{ annotation .ObjectMeta `absent` `REDIRECT` }}|"
                   "{{ isset .ObjectMeta.Annotations `sidecar.istio.io/interceptionMode` }}",
                   data),
            "TPROXY|REDIRECT|true");
}

TEST(TemplateFunctionsTyped, ProtoToJsonUsesTheObjectsProtoToJsonMethod) {
  auto pc = std::make_shared<FakeObject>();
  pc->proto_json = R"({"discoveryAddress":"istiod:15012"})";
  EXPECT_EQ(render("{{ protoToJSON .ProxyConfig }}", data_with("ProxyConfig", Value::object(pc))),
            R"({"discoveryAddress":"istiod:15012"})");
}

TEST(TemplateFunctionsTyped, ProtoToJsonOfObjectWithoutMethodIsEmptyObject) {
  auto pc = std::make_shared<FakeObject>();
  EXPECT_EQ(render("{{ protoToJSON .ProxyConfig }}", data_with("ProxyConfig", Value::object(pc))),
            "{}");
}

TEST(TemplateFunctionsTyped, ToJsonAndToYamlEncodeObjectsThroughMarshalJson) {
  auto o = std::make_shared<FakeObject>();
  o->marshal_json = R"({"b":1,"a":"x"})";
  Value data = data_with("O", Value::object(o));
  EXPECT_EQ(render("{{ toJson (list .O) }}", data), R"([{"b":1,"a":"x"}])");
  EXPECT_EQ(render("{{ toYaml .O }}", data), "a: x\nb: 1\n");
  EXPECT_EQ(render("{{ structToJSON .O }}", data), R"({"b":1,"a":"x"})");
}

TEST(TemplateFunctionsTyped, ToJsonOfObjectWithoutMarshalJsonIsEmptyAsSprigIgnoresTheError) {
  auto o = std::make_shared<FakeObject>();
  Value data = data_with("O", Value::object(o));
  EXPECT_EQ(render("[{{ toJson .O }}]", data), "[]");
  EXPECT_EQ(render("{{ structToJSON .O }}", data), "{}");
}

TEST(TemplateFunctionsTyped, NilObjectIsEmptyAndEncodesAsNull) {
  auto o = std::make_shared<FakeObject>();
  o->nil = true;
  Value data = data_with("O", Value::object(o));
  EXPECT_EQ(render("{{ empty .O }} {{ toJson .O }} {{ default `d` .O }}", data), "true null d");
}

TEST(TemplateFunctionsTyped, IstioOverridesSprigForIndentContainsEnvOmit) {
  // Istio's indent leaves the first line alone; sprig's nindent pads every line.
  EXPECT_EQ(render("{{ indent 2 \"a\\nb\" }}|{{ nindent 2 \"a\\nb\" }}", Value::nil()),
            "a\n  b|\n  a\n  b");
  EXPECT_EQ(render("{{ contains \"ell\" \"hello\" }}", Value::nil()), "true");
  ::setenv("MESHOP_FUNCS_TYPED_TEST", "set", 1);
  EXPECT_EQ(
      render("{{ env \"MESHOP_FUNCS_TYPED_TEST\" \"d\" }} {{ env \"MESHOP_FUNCS_NOPE\" \"d\" }}",
             Value::nil()),
      "set d");
  EXPECT_EQ(render("{{ typeOf (omit (strdict \"a\" \"1\" \"b\" \"2\") \"a\") }}", Value::nil()),
            "map[string]string");
}

TEST(TemplateFunctionsTyped, MergeMutatesItsDestinationLikeSprig) {
  Value data = *funcs::parse_json_value(R"({"dst": {"a": 1}, "src": {"b": 2}})");
  EXPECT_EQ(render("{{ $_ := merge .dst .src }}{{ .dst }}", data), "map[a:1 b:2]");
}

}  // namespace
}  // namespace meshop::template_engine
