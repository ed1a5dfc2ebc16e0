// Typed Go data seen through Object: fields, methods (also on nil pointers), enums with
// String(), nil-pointer errors. The expectations are what Go 1.26 prints for the same
// templates over equivalent Go types (a ProxyConfig-like struct, *wrapperspb.BoolValue,
// an int32 enum) stored in a map[string]any.
#include <gtest/gtest.h>

#include "test/unit/template/test_util.hpp"

namespace meshop::template_engine::testing {
namespace {

// *wrapperspb.BoolValue / *wrapperspb.Int32Value; nullopt is the nil pointer.
class Wrapper : public Object {
 public:
  Wrapper(std::string type, std::optional<std::int64_t> v, bool is_bool)
      : type_(std::move(type)), v_(v), is_bool_(is_bool) {}
  std::string_view go_type() const override { return type_; }
  std::string_view go_kind() const override { return "ptr"; }
  bool is_nil() const override { return !v_.has_value(); }
  std::optional<Function> method(std::string_view name) const override {
    if (name != "GetValue") return std::nullopt;
    Value v = value();
    return Function({}, [v](Args) -> Result<Value> { return v; });
  }
  std::optional<Value> field(std::string_view name) const override {
    if (name != "Value") return std::nullopt;
    return value();
  }
  void format(std::string& out, bool, bool) const override {
    out += "{" + sprint_value(value()) + "}";
  }

 private:
  Value value() const {
    std::int64_t v = v_.value_or(0);
    return is_bool_ ? Value::boolean(v != 0) : Value::integer(v, Kind::kInt32);
  }
  std::string type_;
  std::optional<std::int64_t> v_;
  bool is_bool_;
};

// An int32 enum with String().
class Mode : public Object {
 public:
  explicit Mode(int v) : v_(v) {}
  std::string_view go_type() const override { return "v1alpha1.Mode"; }
  std::string_view go_kind() const override { return "int32"; }
  bool is_stringer() const override { return true; }
  std::optional<std::int64_t> int_value() const override { return v_; }
  std::optional<Function> method(std::string_view name) const override {
    if (name != "String") return std::nullopt;
    std::string s(names()[v_]);
    return Function({}, [s](Args) -> Result<Value> { return Value::string(s); });
  }
  void format(std::string& out, bool, bool) const override { out += names()[v_]; }

 private:
  static const char* const* names() {
    static const char* const n[] = {"REDIRECT", "TPROXY", "NONE"};
    return n;
  }
  int v_;
};

class Nil : public Object {
 public:
  explicit Nil(std::string type) : type_(std::move(type)) {}
  std::string_view go_type() const override { return type_; }
  std::string_view go_kind() const override { return "ptr"; }
  bool is_nil() const override { return true; }
  std::optional<Function> method(std::string_view name) const override {
    // (*Tracing).GetTlsSettings and (*TLS).GetCaCertificates work on nil receivers.
    if (name == "GetTlsSettings")
      return Function({}, [](Args) -> Result<Value> {
        return Value::object(std::make_shared<Nil>("*v1alpha1.TLS"));
      });
    if (name == "GetCaCertificates")
      return Function({}, [](Args) -> Result<Value> { return Value::string(""); });
    return std::nullopt;
  }
  std::optional<Value> field(std::string_view name) const override {
    if (name == "TlsSettings" || name == "CaCertificates") return Value();
    return std::nullopt;
  }
  void format(std::string&, bool, bool) const override {}

 private:
  std::string type_;
};

// *v1alpha1.ProxyConfig
class ProxyConfig : public Object {
 public:
  explicit ProxyConfig(bool held) : held_(held) {}
  std::string_view go_type() const override { return "*v1alpha1.ProxyConfig"; }
  std::string_view go_kind() const override { return "ptr"; }
  std::optional<Function> method(std::string_view name) const override {
    if (name == "GetTracing")
      return Function({}, [](Args) -> Result<Value> {
        return Value::object(std::make_shared<Nil>("*v1alpha1.Tracing"));
      });
    if (name == "Add")
      return Function({{ParamType::int_(), ParamType::int_()}}, [](Args a) -> Result<Value> {
        return Value::integer(a[0].as_int() + a[1].as_int());
      });
    return std::nullopt;
  }
  std::optional<Value> field(std::string_view name) const override {
    if (name == "HoldApplicationUntilProxyStarts")
      return Value::object(std::make_shared<Wrapper>(
          "*wrapperspb.BoolValue", held_ ? std::optional<std::int64_t>(1) : std::nullopt, true));
    if (name == "Concurrency")
      return Value::object(
          std::make_shared<Wrapper>("*wrapperspb.Int32Value", std::nullopt, false));
    if (name == "InterceptionMode") return Value::object(std::make_shared<Mode>(held_ ? 1 : 0));
    if (name == "ProxyMetadata") {
      auto m = std::make_shared<StringMap>();
      if (held_) m->set("A", "1");
      return Value::string_map(m);
    }
    if (name == "DiscoveryAddress") return Value::string(held_ ? "istiod:15012" : "");
    if (name == "Tracing") return Value::object(std::make_shared<Nil>("*v1alpha1.Tracing"));
    return std::nullopt;
  }
  void format(std::string& out, bool, bool) const override { out += "{...}"; }

 private:
  bool held_;
};

std::string render_pc(bool held, std::string_view tmpl) {
  auto m = std::make_shared<Map>();
  m->set("ProxyConfig", Value::object(std::make_shared<ProxyConfig>(held)));
  return render_with(no_functions(), tmpl, Value::map(m));
}

TEST(TemplateObjects, MethodsOnNilWrapperGiveZeroValues) {
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.HoldApplicationUntilProxyStarts.GetValue}}"),
            "OK false");
  EXPECT_EQ(render_pc(true, "{{.ProxyConfig.HoldApplicationUntilProxyStarts.GetValue}}"),
            "OK true");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Concurrency.GetValue}}"), "OK 0");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates}}|"),
            "OK |");
}

TEST(TemplateObjects, EnumsPrintThroughString) {
  EXPECT_EQ(render_pc(false,
                      "{{.ProxyConfig.InterceptionMode}}|{{.ProxyConfig.InterceptionMode.String}}|"
                      "{{printf \"%d %v %s %T\" .ProxyConfig.InterceptionMode "
                      ".ProxyConfig.InterceptionMode .ProxyConfig.InterceptionMode "
                      ".ProxyConfig.InterceptionMode}}"),
            "OK REDIRECT|REDIRECT|0 REDIRECT REDIRECT v1alpha1.Mode");
  EXPECT_EQ(render_pc(true, "{{eq .ProxyConfig.InterceptionMode.String \"TPROXY\"}}"), "OK true");
}

TEST(TemplateObjects, NilPointersAreFalsyAndPrintNil) {
  EXPECT_EQ(
      render_pc(false, "{{if .ProxyConfig.HoldApplicationUntilProxyStarts}}y{{else}}n{{end}}"),
      "OK n");
  EXPECT_EQ(render_pc(true, "{{if .ProxyConfig.HoldApplicationUntilProxyStarts}}y{{else}}n{{end}}"),
            "OK y");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.HoldApplicationUntilProxyStarts}}"), "OK <nil>");
  EXPECT_EQ(render_pc(true, "{{.ProxyConfig.HoldApplicationUntilProxyStarts}}"), "OK {true}");
  EXPECT_EQ(render_pc(true, "{{print .ProxyConfig.HoldApplicationUntilProxyStarts}}"),
            "OK &{true}");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Tracing}}"), "OK <nil>");
}

TEST(TemplateObjects, FieldErrorsNameTheGoType) {
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Concurrency.Value}}"),
            "ERR template: t:1:14: executing \"t\" at <.ProxyConfig.Concurrency.Value>: nil "
            "pointer evaluating *wrapperspb.Int32Value.Value");
  // Boxed in map[string]any, the static type is interface {}.
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Nope}}"),
            "ERR template: t:1:14: executing \"t\" at <.ProxyConfig.Nope>: can't evaluate field "
            "Nope in type interface {}");
  EXPECT_EQ(render_pc(true, "{{.ProxyConfig.DiscoveryAddress 1}}"),
            "ERR template: t:1:14: executing \"t\" at <.ProxyConfig.DiscoveryAddress>: "
            "DiscoveryAddress has arguments but cannot be invoked as function");
}

TEST(TemplateObjects, MethodArgumentsAreCheckedLikeFunctions) {
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Add 1 2}}"), "OK 3");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Add 1}}"),
            "ERR template: t:1:14: executing \"t\" at <.ProxyConfig.Add>: wrong number of args for "
            "Add: want 2 got 1");
  EXPECT_EQ(render_pc(false, "{{.ProxyConfig.Add \"a\" 1}}"),
            "ERR template: t:1:19: executing \"t\" at <\"a\">: expected integer; found \"a\"");
}

TEST(TemplateObjects, StringMapFieldsIndexToEmptyString) {
  EXPECT_EQ(render_pc(true,
                      "{{.ProxyConfig.ProxyMetadata.A}}|{{.ProxyConfig.ProxyMetadata.B}}|{{index "
                      ".ProxyConfig.ProxyMetadata \"B\"}}|"),
            "OK 1|<no value>||");
  EXPECT_EQ(render_pc(false, "{{printf \"%T\" .ProxyConfig}}"), "OK *v1alpha1.ProxyConfig");
}

}  // namespace
}  // namespace meshop::template_engine::testing
