// Helpers for the template engine tests: render a template over JSON data with the
// builtins only (or a given function map) and get Go's "output or error" in one string.
#pragma once

#include <string>
#include <string_view>

#include "api/json.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::template_engine::testing {

// JSON text -> template data as encoding/json into interface{} gives it (numbers float64).
inline Value json_data(std::string_view json) {
  if (json.empty()) return Value();
  auto doc = api::parse_json(json);
  if (!doc.ok()) return Value::string("BAD TEST DATA: " + doc.message());
  return funcs::from_rapidjson(*doc);
}

// "OK <output>" or "ERR <message>", like the Go oracle prints.
inline std::string render_with(const FunctionMap& fm, std::string_view tmpl, const Value& data,
                               const std::string& name = "t") {
  auto t = Template::parse(name, tmpl, fm);
  if (!t.ok()) return "ERR " + t.message();
  auto out = (*t)->execute(data);
  if (!out.ok()) return "ERR " + out.message();
  return "OK " + *out;
}

inline const FunctionMap& no_functions() {
  static const FunctionMap empty;
  return empty;
}

inline std::string render(std::string_view tmpl, std::string_view json = "") {
  return render_with(no_functions(), tmpl, json_data(json));
}

// The data most tests use.
inline constexpr std::string_view kData =
    R"({"a": null, "s": "str", "e": "", "l": [1, "x", null], "el": [], "m": {"k": 1, "j": "v"},
        "em": {}, "f": 3, "fl": 1.5, "t": true, "F": false})";

inline std::string run(std::string_view tmpl) {
  return render(tmpl, kData);
}

}  // namespace meshop::template_engine::testing
