#include "operator/inject/mesh/proto_schema.hpp"

#include <string>
#include <unordered_map>

namespace meshop::inject::proto {
namespace {

// Name indexes of every message, built once on first use (function-local static: thread-safe
// initialisation, read-only afterwards).
struct Index {
  std::unordered_map<std::string_view, const MessageDescriptor*> messages;
  // (message, name) -> field, for JSON/proto names and for Go names.
  std::unordered_map<std::string, const FieldDescriptor*> by_json;
  std::unordered_map<std::string, const FieldDescriptor*> by_go;
};

std::string key(const MessageDescriptor* m, std::string_view name) {
  std::string k(reinterpret_cast<const char*>(&m), sizeof m);
  k += name;
  return k;
}

const Index& index() {
  static const Index idx = [] {
    Index i;
    for (const MessageDescriptor* m : all_messages()) {
      i.messages.emplace(m->full_name, m);
      for (const FieldDescriptor& f : m->fields) {
        // The proto name first so that the JSON name wins when they differ only there.
        i.by_json.emplace(key(m, f.proto_name), &f);
        i.by_json[key(m, f.json_name)] = &f;
        i.by_go.emplace(key(m, f.go_name), &f);
      }
    }
    return i;
  }();
  return idx;
}

}  // namespace

const EnumValue* EnumDescriptor::find(std::string_view name) const {
  for (const EnumValue& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

const EnumValue* EnumDescriptor::find(std::int32_t number) const {
  // Aliases (two names, one number) resolve to the first name, as protobuf-go does.
  for (const EnumValue& v : values)
    if (v.number == number) return &v;
  return nullptr;
}

const FieldDescriptor* MessageDescriptor::find_field(std::string_view name) const {
  const auto& m = index().by_json;
  auto it = m.find(key(this, name));
  return it == m.end() ? nullptr : it->second;
}

const FieldDescriptor* MessageDescriptor::find_go_field(std::string_view go_name) const {
  const auto& m = index().by_go;
  auto it = m.find(key(this, go_name));
  return it == m.end() ? nullptr : it->second;
}

const MessageDescriptor* find_message(std::string_view full_name) {
  const auto& m = index().messages;
  auto it = m.find(full_name);
  return it == m.end() ? nullptr : it->second;
}

const MessageDescriptor& mesh_config_descriptor() {
  static const MessageDescriptor* d = find_message("istio.mesh.v1alpha1.MeshConfig");
  return *d;
}

const MessageDescriptor& proxy_config_descriptor() {
  static const MessageDescriptor* d = find_message("istio.mesh.v1alpha1.ProxyConfig");
  return *d;
}

std::string_view go_element_type(const FieldDescriptor& field) {
  switch (field.kind) {
    case FieldKind::kString:
      return "string";
    case FieldKind::kBool:
      return "bool";
    case FieldKind::kInt32:
      return "int32";
    case FieldKind::kInt64:
      return "int64";
    case FieldKind::kUint32:
      return "uint32";
    case FieldKind::kUint64:
      return "uint64";
    case FieldKind::kDouble:
      return "float64";
    case FieldKind::kFloat:
      return "float32";
    case FieldKind::kBytes:
      return "[]uint8";
    case FieldKind::kEnum:
      return field.enum_type->go_type;
    case FieldKind::kMessage:
      return field.message->go_type;
    case FieldKind::kDuration:
      return "*durationpb.Duration";
    case FieldKind::kTimestamp:
      return "*timestamppb.Timestamp";
    case FieldKind::kBoolValue:
      return "*wrapperspb.BoolValue";
    case FieldKind::kInt32Value:
      return "*wrapperspb.Int32Value";
    case FieldKind::kUInt32Value:
      return "*wrapperspb.UInt32Value";
    case FieldKind::kInt64Value:
      return "*wrapperspb.Int64Value";
    case FieldKind::kUInt64Value:
      return "*wrapperspb.UInt64Value";
    case FieldKind::kDoubleValue:
      return "*wrapperspb.DoubleValue";
    case FieldKind::kFloatValue:
      return "*wrapperspb.FloatValue";
    case FieldKind::kStringValue:
      return "*wrapperspb.StringValue";
    case FieldKind::kBytesValue:
      return "*wrapperspb.BytesValue";
    case FieldKind::kStruct:
      return "*structpb.Struct";
    case FieldKind::kValue:
      return "*structpb.Value";
    case FieldKind::kListValue:
      return "*structpb.ListValue";
    case FieldKind::kAny:
      return "*anypb.Any";
    case FieldKind::kEmpty:
      return "*emptypb.Empty";
  }
  return "";
}

}  // namespace meshop::inject::proto
