#include "operator/manifest/values_schema.hpp"

#include <cmath>

#include "operator/inject/mesh/proto_json.hpp"

namespace meshop::manifest::values_schema {
namespace {

using inject::proto::FieldDescriptor;
using inject::proto::FieldKind;
using inject::proto::MessageDescriptor;

constexpr std::string_view kIntOrString = "istio.operator.v1alpha1.IntOrString";

std::string describe(const api::Value& v) {
  std::string out = v.IsString()   ? "string"
                    : v.IsBool()   ? "boolean"
                    : v.IsNumber() ? "number"
                    : v.IsObject() ? "mapping"
                    : v.IsArray()  ? "list"
                                   : "null";
  if (v.IsString() || v.IsNumber()) {
    std::string text = api::to_json(v);
    if (text.size() > 64) text = text.substr(0, 61) + "...";
    out += " " + text;
  }
  return out;
}

// "spec.values.global.proxy.privileged: expected ..." -> {path, "expected ..."}: the leaf
// readers put the path in front of their message.
api::FieldError split(const std::string& path, const std::string& message) {
  if (message.starts_with(path + ": ")) return {path, message.substr(path.size() + 2)};
  return {path, message};
}

class Checker {
 public:
  std::vector<api::FieldError> errors;

  void message(const api::Value& in, const MessageDescriptor& type, const std::string& path) {
    if (in.IsNull()) return;
    if (!in.IsObject()) {
      errors.push_back(
          {path, "expected a mapping (" + std::string(type.full_name) + "), got " + describe(in)});
      return;
    }
    for (const auto& m : in.GetObject()) {
      std::string_view name = api::string_view_of(m.name);
      std::string p = path + "." + std::string(name);
      const FieldDescriptor* f = nullptr;
      for (const FieldDescriptor& cand : type.fields)
        if (cand.json_name == name || cand.proto_name == name) f = &cand;
      if (f == nullptr) {
        // jsonpb's words: `unknown field "badKey" in istio.operator.v1alpha1.GlobalConfig`.
        errors.push_back(
            {p, "unknown field \"" + std::string(name) + "\" in " + std::string(type.full_name)});
        continue;
      }
      // A null field is absent, except a singular google.protobuf.Value (null is a value).
      if (m.value.IsNull()) continue;
      field(*f, m.value, p);
    }
  }

 private:
  api::Document scratch_;

  void field(const FieldDescriptor& f, const api::Value& in, const std::string& path) {
    if (f.repeated()) {
      if (!in.IsArray()) {
        errors.push_back({path, "expected a list, got " + describe(in)});
        return;
      }
      for (rapidjson::SizeType i = 0; i < in.Size(); ++i)
        // json.Unmarshal of a null element leaves the zero value.
        if (!in[i].IsNull() || f.kind == FieldKind::kValue)
          singular(f, in[i], path + "[" + std::to_string(i) + "]");
      return;
    }
    if (f.is_map()) {
      if (!in.IsObject()) {
        errors.push_back({path, "expected a mapping, got " + describe(in)});
        return;
      }
      for (const auto& m : in.GetObject())
        if (!m.value.IsNull() || f.kind == FieldKind::kValue)
          singular(f, m.value, path + "." + std::string(api::string_view_of(m.name)));
      return;
    }
    singular(f, in, path);
  }

  void singular(const FieldDescriptor& f, const api::Value& in, const std::string& path) {
    if (f.kind == FieldKind::kMessage) {
      if (f.message->full_name == kIntOrString) {
        int_or_string(in, path);
      } else {
        message(in, *f.message, path);
      }
      return;
    }
    auto v = inject::proto::read_leaf(f, in, scratch_.GetAllocator(), path);
    if (!v.ok()) errors.push_back(split(path, v.message()));
  }

  // IntOrString's UnmarshalJSON (operator/pkg/apis/value_types_json.go): a JSON string, or
  // whatever json.Unmarshal takes as an int32.
  void int_or_string(const api::Value& in, const std::string& path) {
    if (in.IsString() || in.IsNull()) return;
    if (in.IsNumber()) {
      double d = in.GetDouble();
      if (in.IsInt64() ? (in.GetInt64() >= INT32_MIN && in.GetInt64() <= INT32_MAX)
                       : (!in.IsUint64() && std::trunc(d) == d && d >= INT32_MIN && d <= INT32_MAX))
        return;
    }
    errors.push_back({path, "expected an integer (int32) or a string, got " + describe(in)});
  }
};

}  // namespace

const MessageDescriptor* values_descriptor(std::string_view version) {
  for (const VersionSchema& v : versions())
    if (v.version == version) return v.values;
  return nullptr;
}

std::vector<api::FieldError> check_values(const api::Value& values, const MessageDescriptor& schema,
                                          const std::string& path) {
  Checker c;
  c.message(values, schema, path);
  return std::move(c.errors);
}

}  // namespace meshop::manifest::values_schema
