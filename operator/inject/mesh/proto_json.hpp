// Protobuf messages of the mesh schema held as "canonical JSON", and the two conversions
// Istio applies to them: legacy jsonpb unmarshalling into an existing message, and legacy
// jsonpb marshalling (github.com/golang/protobuf/jsonpb, which istio's protomarshal uses).
//
// Canonical form of a message (what MeshConfig::json()/ProxyConfig::json() expose): a JSON
// object keyed by JSON (lowerCamelCase) names, holding exactly the fields protobuf considers
// populated, each in the form jsonpb writes it:
//   - scalars only when not zero ("" / false / 0 are unset in proto3); 64-bit integers as
//     decimal strings; enums as their value name (a number only for a value the schema does
//     not name); unset enum (0) absent;
//   - messages as objects (present even when empty: `tracing: {}` differs from no tracing);
//   - wrappers (BoolValue, Int32Value, ...) as their bare value, present even when zero;
//   - Durations as jsonpb strings ("45s", "0.100s"); Struct/Value/ListValue/Any as raw JSON;
//   - repeated fields as arrays and maps as objects, absent when empty;
//   - at most one member of a oneof.
// Thread-safety: pure functions over caller-owned DOMs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"
#include "operator/inject/mesh/proto_schema.hpp"

namespace meshop::inject::proto {

struct ApplyOptions {
  // Unknown fields are ignored, as upstream's protomarshal.ApplyYAML does (it retries with
  // AllowUnknownFields). When set, their paths are appended here so callers can warn.
  std::vector<std::string>* unknown_fields = nullptr;
};

// Applies the JSON value `in` to the canonical message `msg` with legacy jsonpb's semantics
// for unmarshalling into a non-empty message: every field present in `in` (by JSON name or
// proto name; the JSON name wins when both appear) REPLACES the field in `msg` (a message
// field is replaced whole, not merged; a list or map is replaced, not appended); fields absent
// from `in` or null there keep their value; a top-level null is a no-op. Setting a oneof
// member clears the others. Integers may be quoted ("15020"), enums may be names or numbers.
// Errors name the field path, prefixed with `path` ("defaultConfig.concurrency: expected an
// integer, got string \"two\""); on error `msg` may be partially updated.
api::Status apply_json(const MessageDescriptor& type, const api::Value& in, api::Value& msg,
                       api::Allocator& allocator, std::string_view path,
                       const ApplyOptions& options = {});

// Reads one value of a field that is not a message (a scalar, an enum, a wrapper, a Duration,
// Struct, Value, ListValue, ...) as apply_json does for each such field or list element:
// the canonical form, or an error naming `path`. Other schemas' checkers (spec.values) walk
// messages themselves and use this for the leaves.
api::Result<api::Value> read_leaf(const FieldDescriptor& field, const api::Value& in,
                                  api::Allocator& allocator, std::string_view path);

// Appends the legacy jsonpb text (jsonpb.Marshaler{}) of the canonical message `msg`: fields
// in declaration order, populated fields only, map keys sorted, compact, HTML-escaped strings.
void append_jsonpb(std::string& out, const MessageDescriptor& type, const api::Value& msg);
std::string to_jsonpb(const MessageDescriptor& type, const api::Value& msg);

// Helpers over canonical messages.
const api::Value* get_field(const api::Value& msg, const FieldDescriptor& field);
void set_field(api::Value& msg, const FieldDescriptor& field, api::Value value,
               api::Allocator& allocator);
void clear_field(api::Value& msg, const FieldDescriptor& field);

}  // namespace meshop::inject::proto
