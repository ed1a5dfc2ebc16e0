// Helpers shared by the sprig and Istio function libraries (funcs_sprig.cpp,
// funcs_istio.cpp): the Go library behaviour those functions are built from — UTF-8 rune
// handling as Go's strings package does it, encoding/json output, reflect.DeepEqual, sprig's
// `empty` and `strval`, spf13/cast integer/float conversion — on template Values.
//
// Everything here is a pure function of its arguments; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::template_engine::funcs {

// --- UTF-8 as Go decodes it: an invalid byte is U+FFFD of width 1. ---
struct Rune {
  char32_t r;
  int width;
};
Rune decode_rune(std::string_view s, std::size_t i);
void append_rune(std::string& out, char32_t r);
bool is_space_rune(char32_t r);  // unicode.IsSpace
char32_t to_upper_rune(char32_t r);
char32_t to_lower_rune(char32_t r);

// strings.ToUpper / ToLower / Title / TrimSpace / Trim(s, cutset) / Replace(s, old, new, -1).
std::string go_to_upper(std::string_view s);
std::string go_to_lower(std::string_view s);
std::string go_title(std::string_view s);
std::string_view go_trim_space(std::string_view s);
std::string_view go_trim(std::string_view s, std::string_view cutset);
std::string go_replace_all(std::string_view s, std::string_view from, std::string_view to);

// sprig's strval: strings as is, objects with a String method through it, else fmt %v.
std::string strval(const Value& v);
// sprig's empty(): nil, "", 0, false, empty collection, nil pointer.
bool sprig_empty(const Value& v);
// reflect.DeepEqual on the types templates see (types must match: 1 and 1.0 differ).
bool deep_equal(const Value& a, const Value& b);

// spf13/cast ToInt64 / ToFloat64 (failures are 0, as sprig ignores cast's error), and Go's
// float64 -> int64 conversion as amd64 does it (out of range and NaN give INT64_MIN).
std::int64_t cast_to_int64(const Value& v);
double cast_to_float64(const Value& v);
std::int64_t go_float_to_int64(double d);
// strconv.ParseInt(s, 0, 64) (base prefixes, underscores) / strconv.Atoi (decimal only).
std::optional<std::int64_t> go_parse_int(std::string_view s, bool base_prefixes);
std::optional<double> go_parse_float(std::string_view s);

// encoding/json. `ok` is false when Go's Marshal would fail (NaN, +Inf, a typed object it
// cannot see into); the text is then meaningless.
struct JsonOptions {
  bool escape_html = true;
  int indent = 0;  // MarshalIndent("", "  ") when 2
};
bool append_json(std::string& out, const Value& v, const JsonOptions& options, int depth = 0);
void append_json_string(std::string& out, std::string_view s, bool escape_html);
// The error json.Marshal gives for a value append_json refuses, worded as Go's:
// "json: unsupported type: complex128", "json: unsupported value: NaN".
std::string json_marshal_error(const Value& v);
// json.Unmarshal into interface{}: numbers float64, objects map[string]interface {}, last
// duplicate key wins, invalid UTF-8 replaced by U+FFFD. Errors are worded like Go's.
Result<Value> parse_json_value(std::string_view text);
// A RapidJSON DOM as template data (numbers float64, as encoding/json into interface{}).
Value from_rapidjson(const rapidjson::Value& j);

// A fresh copy of lists and maps, recursively (copystructure.Copy for JSON-shaped data).
Value deep_copy(const Value& v);

// A map[string]string view of v for Istio's map[string]string parameters: a StringMap as is,
// a map[string]interface {} whose values are all strings, nil as the nil map. Otherwise the
// Go argument-type error.
Result<Value> as_string_map(const Value& v);
// Field `name` of a map (key) or typed object (exported field); invalid otherwise.
Value member(const Value& v, std::string_view name);

Value make_string_list(std::vector<std::string> items);

}  // namespace meshop::template_engine::funcs
