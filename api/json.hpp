// The JSON DOM: rapidjson::Document/Value is meshop's canonical form of every Kubernetes object.
//
// This header adds the few operations the rest of the code needs on top of RapidJSON:
// parsing with positioned errors, Go-compatible serialization, RFC 6901 JSON pointers and a
// deep equality with JSON (not RapidJSON) semantics.
//
// Ownership: a Value's strings and children live in the allocator of the Document that built
// it. Copy between documents with `Value(v, target.GetAllocator())`; never mix allocators.
// All functions are pure or operate only on their arguments: safe to call from any thread on
// distinct documents, and concurrently on the same const document.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"

namespace meshop::api {

using Document = rapidjson::Document;
using Value = rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// Parses one JSON text (RFC 8259; trailing garbage is an error). The error names the byte
// offset and the line/column: "invalid JSON at line 3, column 7 (offset 25): Missing a comma
// or '}' after an object member." Nesting deeper than 10000 levels is rejected (every walk
// over a DOM is recursive). Of duplicate member names the last is kept, as Go's decoder
// keeps it (at its own position). Bytes that are not UTF-8 read as
// U+FFFD, one per byte, as Go's decoder reads them (line/column then count the replacements).
Result<Document> parse_json(std::string_view text);

// Appends `s` as a JSON string literal the way Go's encoding/json writes it: \b \f \n \r \t
// and other controls as \u00XX, U+2028/U+2029 escaped, invalid UTF-8 as \ufffd (one per
// byte), and <, >, & as \u003c... when `escape_html`.
void append_json_string(std::string& out, std::string_view s, bool escape_html = true);

struct JsonWriteOptions {
  // Indent width for pretty output; 0 writes compact JSON.
  int indent = 0;
  // Escape '<', '>' and '&' as \u003c, \u003e, \u0026, as Go's json.Marshal does by default.
  bool escape_html = true;
};

// Serializes like Go's encoding/json: object members in DOM order, numbers as Go formats a
// float64 or an integer (1.0 -> "1", 1e21 -> "1e+21", 1e-7 -> "1e-7"), strings with Go's
// escapes (U+2028/U+2029 escaped, invalid UTF-8 replaced by U+FFFD). NaN/Inf cannot occur in a
// DOM built by this library; they are written as null if a caller put them there.
void append_json(std::string& out, const Value& value, const JsonWriteOptions& options = {});
std::string to_json(const Value& value, const JsonWriteOptions& options = {});
inline std::string to_pretty_json(const Value& value) {
  return to_json(value, JsonWriteOptions{.indent = 2});
}

// JSON equality: objects are equal when they have the same member names with equal values,
// in any order; arrays element-wise; numbers by value. Number choice: integers compare exactly
// as integers; when either side is a floating-point number both compare as double (what Go does
// for values decoded into float64, so 1 == 1.0 and 1e2 == 100). Duplicate member names (which
// this library never produces) compare by their first occurrence.
bool json_equal(const Value& a, const Value& b);

// RFC 6901 JSON pointers. "" is the whole document; "/a/0/b~1c" names a["0"]... with ~1 = '/'
// and ~0 = '~'. Array indices are decimal without leading zeros; "-" (past the end) only names
// a position for JSON Patch "add".
Result<std::vector<std::string>> parse_json_pointer(std::string_view pointer);
std::string escape_json_pointer_token(std::string_view token);
std::string make_json_pointer(const std::vector<std::string>& tokens);

// Resolves a pointer; nullptr when it is malformed or names nothing.
const Value* find(const Value& root, std::string_view pointer);
Value* find(Value& root, std::string_view pointer);

// Parses an RFC 6901 array index token; -1 if the token is not a canonical index.
long long parse_array_index(std::string_view token);

// Member lookup by name that works with string_view (no temporary Value). Inline: the
// injection path makes a few hundred per review, most of them past names of another length.
inline const Value* find_member(const Value& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  const auto size = static_cast<rapidjson::SizeType>(name.size());
  if (size != name.size()) return nullptr;
  for (const auto& m : object.GetObject()) {
    if (m.name.GetStringLength() == size &&
        (size == 0 || (m.name.GetString()[0] == name[0] &&
                       std::memcmp(m.name.GetString(), name.data(), size) == 0)))
      return &m.value;
  }
  return nullptr;
}
inline Value* find_member(Value& object, std::string_view name) {
  return const_cast<Value*>(find_member(static_cast<const Value&>(object), name));
}

// The string at the member path `names` (e.g. {"metadata", "name"}), or "" when a member is
// missing, a step is not an object, or the last value is not a string.
std::string string_at(const Value& root, std::initializer_list<std::string_view> names);

// The integer at the member path `names`, or `fallback` when a member is missing, a step is
// not an object, or the last value is not an integer that fits int64.
std::int64_t int_at(const Value& root, std::initializer_list<std::string_view> names,
                    std::int64_t fallback);

// ---- Editing (the one set of helpers every reconciler and builder uses) ----

// Sets member `name` of `object` to `value` (replacing it in place, so member order is kept;
// else appended). `object` must be an object.
void set_member(Value& object, std::string_view name, Value value, Allocator& allocator);
// set_member with a copy of the string `value`.
void set_string_member(Value& object, std::string_view name, std::string_view value,
                       Allocator& allocator);
// Member `name` of `object` as an object: created when missing, replaced by {} when it is not
// an object. `object` must be an object.
Value& ensure_object_member(Value& object, std::string_view name, Allocator& allocator);

// A string Value holding a copy of `s` in `allocator`.
inline Value make_string(std::string_view s, Allocator& allocator) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator);
}
inline std::string_view string_view_of(const Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

}  // namespace meshop::api
