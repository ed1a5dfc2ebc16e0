// Helm's FuncMap (pkg/engine/funcs.go): sprig's TxtFuncMap without env/expandenv, then
// Helm's extras. include and tpl are bound per render (render.cpp).
#include <cmath>

#include "api/yaml.hpp"
#include "operator/helm/objects.hpp"
#include "operator/helm/render.hpp"
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::helm {
namespace {

using template_engine::Args;
using template_engine::Kind;
using template_engine::List;
using template_engine::Map;
using template_engine::ParamType;
using template_engine::Result;
using template_engine::Value;

const char* json_kind(const rapidjson::Value& d) {
  if (d.IsArray()) return "array";
  if (d.IsObject()) return "object";
  if (d.IsString()) return "string";
  if (d.IsBool()) return "bool";
  return "number";
}

std::string go_json_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::kList:
      return "array";
    case Kind::kMap:
      return "object";
    case Kind::kString:
      return "string";
    case Kind::kBool:
      return "bool";
    default:
      return "number";
  }
}

// --- TOML (BurntSushi/toml's encoder for JSON-shaped data) ------------------------------

std::string toml_key(std::string_view k) {
  bool bare = !k.empty();
  for (char c : k)
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  return bare ? std::string(k) : template_engine::go_quote(k);
}

bool is_table(const Value& v) {
  return (v.kind() == Kind::kMap && v.as_map() != nullptr) ||
         (v.kind() == Kind::kStringMap && v.as_string_map() != nullptr);
}

bool is_table_array(const Value& v) {
  if (v.kind() != Kind::kList || v.as_list() == nullptr || v.as_list()->items.empty()) return false;
  for (const Value& e : v.as_list()->items)
    if (!is_table(e)) return false;
  return true;
}

std::optional<std::string> toml_value(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return template_engine::go_quote(v.as_string());
    case Kind::kBool:
      return std::string(v.as_bool() ? "true" : "false");
    case Kind::kFloat64: {
      double f = v.as_float();
      if (std::isnan(f)) return std::string("nan");
      if (std::isinf(f)) return std::string(f > 0 ? "inf" : "-inf");
      std::string s = template_engine::format_float(f, 'f', -1);
      if (s.find('.') == std::string::npos) s += ".0";
      return s;
    }
    case Kind::kList: {
      std::string s = "[";
      if (v.as_list() != nullptr)
        for (std::size_t i = 0; i < v.as_list()->items.size(); ++i) {
          auto e = toml_value(v.as_list()->items[i]);
          if (!e) return std::nullopt;
          s += (i ? ", " : "") + *e;
        }
      return s + "]";
    }
    default:
      if (v.is_integer()) return template_engine::sprint_value(v);
      return std::nullopt;
  }
}

std::vector<std::pair<std::string, Value>> table_entries(const Value& v) {
  std::vector<std::pair<std::string, Value>> out;
  if (v.kind() == Kind::kMap) {
    for (const auto& [k, e] : v.as_map()->entries())
      out.emplace_back(k, e);
  } else {
    for (const auto& [k, e] : v.as_string_map()->entries())
      out.emplace_back(k, Value::string(e));
  }
  return out;
}

// Plain keys first, then tables and arrays of tables, as BurntSushi writes them.
std::optional<std::string> toml_table(const Value& t, const std::string& prefix, int depth) {
  std::string out;
  auto entries = table_entries(t);
  for (const auto& [k, v] : entries) {
    if (v.is_nil_or_invalid() || is_table(v) || is_table_array(v)) continue;
    auto s = toml_value(v);
    if (!s) return std::nullopt;
    out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + toml_key(k) + " = " + *s + "\n";
  }
  // Sub-tables and arrays of tables after the plain keys, together in key order.
  for (const auto& [k, v] : entries) {
    if (!is_table(v) && !is_table_array(v)) continue;
    std::string name = prefix.empty() ? toml_key(k) : prefix + "." + toml_key(k);
    std::string pad(static_cast<std::size_t>(depth) * 2, ' ');
    // BurntSushi separates top-level headers by a blank line, nested ones by none.
    std::string sep = depth == 0 ? "\n" : "";
    if (is_table(v)) {
      auto sub = toml_table(v, name, depth + 1);
      if (!sub) return std::nullopt;
      out += sep + pad + "[" + name + "]\n" + *sub;
      continue;
    }
    for (const Value& e : v.as_list()->items) {
      auto sub = toml_table(e, name, depth + 1);
      if (!sub) return std::nullopt;
      out += sep + pad + "[[" + name + "]]\n" + *sub;
    }
  }
  return out;
}

Value error_map(std::string message) {
  auto m = std::make_shared<Map>();
  m->set("Error", Value::string(std::move(message)));
  return Value::map(std::move(m));
}

Value error_list(std::string message) {
  auto l = std::make_shared<List>();
  l->items.push_back(Value::string(std::move(message)));
  return Value::list(std::move(l));
}

}  // namespace

const template_engine::FunctionMap& helm_functions() {
  static const template_engine::FunctionMap functions = [] {
    template_engine::FunctionMap fm;
    template_engine::add_sprig_txt_func_map(fm);
    fm.erase("env");
    fm.erase("expandenv");
    const ParamType kStr = ParamType::string(), kAny = ParamType::any();

    fm.add("toYaml", {{kAny}},
           [](Args a) -> Result<Value> { return Value::string(detail::to_yaml(a[0])); });
    fm.add("mustToYaml", {{kAny}}, [](Args a) -> Result<Value> {
      std::string json;
      if (!template_engine::funcs::append_json(json, a[0], {}))
        return template_engine::fail("error marshaling into JSON: " +
                                     template_engine::funcs::json_marshal_error(a[0]));
      return Value::string(detail::to_yaml(a[0]));
    });
    fm.add("fromYaml", {{kStr}}, [](Args a) -> Result<Value> {
      auto doc = api::yaml_to_json(a[0].as_string());
      if (!doc) return error_map(doc.message());
      if (doc->IsNull()) return Value::map(std::make_shared<Map>());
      if (!doc->IsObject())
        return error_map(std::string("error unmarshaling JSON: while decoding JSON: json: "
                                     "cannot unmarshal ") +
                         json_kind(*doc) + " into Go value of type map[string]interface {}");
      return template_engine::funcs::from_rapidjson(*doc);
    });
    fm.add("fromYamlArray", {{kStr}}, [](Args a) -> Result<Value> {
      auto doc = api::yaml_to_json(a[0].as_string());
      if (!doc) return error_list(doc.message());
      if (doc->IsNull()) return Value::list(std::make_shared<List>());
      if (!doc->IsArray())
        return error_list(std::string("error unmarshaling JSON: while decoding JSON: json: "
                                      "cannot unmarshal ") +
                          json_kind(*doc) + " into Go value of type []interface {}");
      return template_engine::funcs::from_rapidjson(*doc);
    });
    fm.add("toJson", {{kAny}}, [](Args a) -> Result<Value> {
      std::string out;
      if (!template_engine::funcs::append_json(out, a[0], {})) return Value::string("");
      return Value::string(std::move(out));
    });
    fm.add("mustToJson", {{kAny}}, [](Args a) -> Result<Value> {
      std::string out;
      if (!template_engine::funcs::append_json(out, a[0], {}))
        return template_engine::fail(template_engine::funcs::json_marshal_error(a[0]));
      return Value::string(std::move(out));
    });
    fm.add("fromJson", {{kStr}}, [](Args a) -> Result<Value> {
      auto v = template_engine::funcs::parse_json_value(a[0].as_string());
      if (!v) return error_map(v.message());
      if (v->is_nil()) return Value::map(std::make_shared<Map>());
      if (v->kind() != Kind::kMap)
        return error_map("json: cannot unmarshal " + go_json_kind(*v) +
                         " into Go value of type map[string]interface {}");
      return *v;
    });
    fm.add("fromJsonArray", {{kStr}}, [](Args a) -> Result<Value> {
      auto v = template_engine::funcs::parse_json_value(a[0].as_string());
      if (!v) return error_list(v.message());
      if (v->is_nil()) return Value::list(std::make_shared<List>());
      if (v->kind() != Kind::kList)
        return error_list("json: cannot unmarshal " + go_json_kind(*v) +
                          " into Go value of type []interface {}");
      return *v;
    });
    fm.add("toToml", {{kAny}}, [](Args a) -> Result<Value> {
      if (!is_table(a[0]))
        return Value::string("toml: top-level values must be Go maps or structs");
      auto s = toml_table(a[0], "", 0);
      if (!s) return Value::string("toml: cannot encode a value");
      return Value::string(std::move(*s));
    });
    // Helm wraps required/fail messages so that its error formatter can show them alone.
    fm.add("required", {{kStr, kAny}}, [](Args a) -> Result<Value> {
      if (a[1].is_nil_or_invalid() || (a[1].is_string() && a[1].as_string().empty()))
        return template_engine::fail(std::string(kErrStart) + std::string(a[0].as_string()) +
                                     std::string(kErrEnd));
      return a[1];
    });
    fm.add("fail", {{kStr}}, [](Args a) -> Result<Value> {
      return template_engine::fail(std::string(kErrStart) + std::string(a[0].as_string()) +
                                   std::string(kErrEnd));
    });
    fm.add("lookup", {{kStr, kStr, kStr, kStr}},
           [](Args) -> Result<Value> { return Value::map(std::make_shared<Map>()); });
    fm.add("getHostByName", {{kStr}}, [](Args) -> Result<Value> { return Value::string(""); });
    // Placeholders so that templates parse; render() binds the real ones to the chart.
    fm.add("include", {{kStr, kAny}},
           [](Args) -> Result<Value> { return Value::string("not implemented"); });
    fm.add("tpl", {{kStr, kAny}},
           [](Args) -> Result<Value> { return Value::string("not implemented"); });
    return fm;
  }();
  return functions;
}

}  // namespace meshop::helm
