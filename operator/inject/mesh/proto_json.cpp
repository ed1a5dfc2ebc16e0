#include "operator/inject/mesh/proto_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "operator/inject/mesh/go_duration.hpp"

namespace meshop::inject::proto {
namespace {

using api::Allocator;
using api::Value;

std::string_view json_type_name(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "mapping";
    case rapidjson::kArrayType:
      return "list";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "value";
}

std::string describe(const Value& v) {
  std::string out(json_type_name(v));
  if (v.IsString() || v.IsNumber()) {
    std::string text = api::to_json(v, {.escape_html = false});
    if (text.size() > 64) text = text.substr(0, 61) + "...";
    out += " " + text;
  }
  return out;
}

std::string join_path(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string(name);
  std::string out(path);
  out += '.';
  out += name;
  return out;
}

std::string index_path(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

api::Error error_at(std::string_view path, std::string message) {
  if (path.empty()) return api::Error{std::move(message)};
  return api::Error{std::string(path) + ": " + message};
}

// An integer as legacy jsonpb reads one: json.Unmarshal into the Go integer type of the text
// with surrounding quotes stripped. So a quoted integer works; fractions, exponents and other
// strings do not. sigs.k8s.io/yaml writes a float that has an integral value without a
// fraction ("1.0" -> 1), so such doubles are integers here too.
struct IntegerLimits {
  std::int64_t min;
  std::uint64_t max;
  std::string_view go_type;
};

api::Result<std::int64_t> signed_in_range(std::int64_t v, const IntegerLimits& l,
                                          std::string_view path, const Value& in) {
  if (v < l.min || (v > 0 && static_cast<std::uint64_t>(v) > l.max))
    return error_at(path, "value " + describe(in) + " out of range for " + std::string(l.go_type));
  return v;
}

// Returns the value as int64 for signed types; for uint64 the bit pattern.
api::Result<std::int64_t> read_integer(const Value& in, const IntegerLimits& l,
                                       std::string_view path) {
  auto wrong = [&] {
    return error_at(path,
                    "expected " + std::string(l.go_type) + " (an integer), got " + describe(in));
  };
  bool is_unsigned64 = l.max == std::numeric_limits<std::uint64_t>::max();
  if (in.IsNumber()) {
    if (in.IsUint64() && is_unsigned64) return static_cast<std::int64_t>(in.GetUint64());
    if (in.IsInt64()) {
      if (in.GetInt64() < 0 && l.min == 0) return wrong();
      return signed_in_range(in.GetInt64(), l, path, in);
    }
    if (in.IsUint64())
      return signed_in_range(std::numeric_limits<std::int64_t>::max(), l, path, in);
    double d = in.GetDouble();
    if (std::trunc(d) != d || std::fabs(d) >= 1e21) return wrong();
    // Outside [-2^63, 2^64) no 64-bit integer holds it (and converting would be undefined).
    if (d < -9223372036854775808.0 || d >= 18446744073709551616.0)
      return error_at(path,
                      "value " + describe(in) + " out of range for " + std::string(l.go_type));
    if (d >= 0 && is_unsigned64) return static_cast<std::int64_t>(static_cast<std::uint64_t>(d));
    if (d > 9.2e18)
      return error_at(path,
                      "value " + describe(in) + " out of range for " + std::string(l.go_type));
    if (d < 0 && l.min == 0) return wrong();
    return signed_in_range(static_cast<std::int64_t>(d), l, path, in);
  }
  if (!in.IsString()) return wrong();
  std::string_view s = api::string_view_of(in);
  // json.Unmarshal skips JSON whitespace around the number.
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  bool neg = !s.empty() && s[0] == '-';
  std::string_view digits = neg ? s.substr(1) : s;
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0') ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return wrong();
  if (neg && l.min == 0) return wrong();
  std::uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (ec != std::errc() || ptr != digits.data() + digits.size())
    return error_at(path, "value " + describe(in) + " out of range for " + std::string(l.go_type));
  if (is_unsigned64) return static_cast<std::int64_t>(magnitude);
  if (neg) {
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1)
      return error_at(path,
                      "value " + describe(in) + " out of range for " + std::string(l.go_type));
    return signed_in_range(static_cast<std::int64_t>(0 - magnitude), l, path, in);
  }
  if (magnitude > l.max)
    return error_at(path, "value " + describe(in) + " out of range for " + std::string(l.go_type));
  return static_cast<std::int64_t>(magnitude);
}

constexpr IntegerLimits kInt32{std::numeric_limits<std::int32_t>::min(),
                               std::numeric_limits<std::int32_t>::max(), "int32"};
constexpr IntegerLimits kUint32{0, std::numeric_limits<std::uint32_t>::max(), "uint32"};
constexpr IntegerLimits kInt64{std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max(), "int64"};
constexpr IntegerLimits kUint64{0, std::numeric_limits<std::uint64_t>::max(), "uint64"};

// RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

api::Result<double> read_double(const Value& in, std::string_view path, std::string& special) {
  if (in.IsNumber()) return in.GetDouble();
  if (in.IsString()) {
    std::string_view s = api::string_view_of(in);
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") {
      special = std::string(s);
      return 0.0;
    }
    // A quoted JSON number (legacy jsonpb strips the quotes and decodes the rest as JSON).
    if (is_json_number(s)) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec == std::errc() && ptr == s.data() + s.size()) return d;
    }
  }
  return error_at(path, "expected a number, got " + describe(in));
}

// The zero value of a kind, for null list elements and map values (json.Unmarshal of null
// leaves the Go zero value; a message becomes an empty one).
Value zero_value(const FieldDescriptor& f, Allocator& a) {
  switch (f.kind) {
    case FieldKind::kString:
    case FieldKind::kBytes:
      return Value(rapidjson::kStringType);
    case FieldKind::kBool:
      return Value(false);
    case FieldKind::kInt64:
    case FieldKind::kUint64:
      return api::make_string("0", a);
    case FieldKind::kEnum: {
      const EnumValue* v = f.enum_type->find(0);
      return v != nullptr ? api::make_string(v->name, a) : Value(0);
    }
    case FieldKind::kInt32:
    case FieldKind::kUint32:
    case FieldKind::kDouble:
    case FieldKind::kFloat:
      return Value(0);
    case FieldKind::kValue:
      return Value(rapidjson::kNullType);
    case FieldKind::kListValue:
      return Value(rapidjson::kArrayType);
    case FieldKind::kDuration:
      return api::make_string("0s", a);
    default:
      return Value(rapidjson::kObjectType);
  }
}

api::Result<Value> read_singular(const FieldDescriptor& f, const Value& in, Allocator& a,
                                 std::string_view path, const ApplyOptions& options);

api::Result<Value> read_scalar_kind(FieldKind kind, const FieldDescriptor& f, const Value& in,
                                    Allocator& a, std::string_view path) {
  switch (kind) {
    case FieldKind::kString:
    case FieldKind::kBytes:
      if (!in.IsString()) return error_at(path, "expected a string, got " + describe(in));
      return Value(in, a);
    case FieldKind::kBool:
      if (!in.IsBool()) return error_at(path, "expected a boolean, got " + describe(in));
      return Value(in.GetBool());
    case FieldKind::kInt32: {
      auto v = read_integer(in, kInt32, path);
      if (!v.ok()) return v.error();
      return Value(static_cast<std::int32_t>(*v));
    }
    case FieldKind::kUint32: {
      auto v = read_integer(in, kUint32, path);
      if (!v.ok()) return v.error();
      return Value(static_cast<std::uint32_t>(*v));
    }
    case FieldKind::kInt64: {
      auto v = read_integer(in, kInt64, path);
      if (!v.ok()) return v.error();
      return api::make_string(std::to_string(*v), a);
    }
    case FieldKind::kUint64: {
      auto v = read_integer(in, kUint64, path);
      if (!v.ok()) return v.error();
      return api::make_string(std::to_string(static_cast<std::uint64_t>(*v)), a);
    }
    case FieldKind::kDouble:
    case FieldKind::kFloat: {
      std::string special;
      auto v = read_double(in, path, special);
      if (!v.ok()) return v.error();
      if (!special.empty()) return api::make_string(special, a);
      double d = kind == FieldKind::kFloat ? static_cast<double>(static_cast<float>(*v)) : *v;
      if (d == std::trunc(d) && std::fabs(d) < 9e15) return Value(static_cast<std::int64_t>(d));
      return Value(d);
    }
    case FieldKind::kEnum: {
      const EnumDescriptor& e = *f.enum_type;
      if (in.IsString()) {
        const EnumValue* v = e.find(api::string_view_of(in));
        if (v == nullptr) {
          std::string names;
          for (const EnumValue& ev : e.values) {
            if (!names.empty()) names += ", ";
            names += ev.name;
          }
          return error_at(path, "unknown value " + describe(in) + " for enum " +
                                    std::string(e.full_name) + " (one of " + names + ")");
        }
        return api::make_string(v->name, a);
      }
      auto n = read_integer(in, kInt32, path);
      if (!n.ok() || in.IsString())
        return error_at(path, "expected an enum value name or number, got " + describe(in));
      const EnumValue* v = e.find(static_cast<std::int32_t>(*n));
      if (v != nullptr) return api::make_string(v->name, a);
      return Value(static_cast<std::int32_t>(*n));
    }
    default:
      break;
  }
  return error_at(path, "internal: not a scalar kind");
}

api::Result<Value> read_singular(const FieldDescriptor& f, const Value& in, Allocator& a,
                                 std::string_view path, const ApplyOptions& options) {
  switch (f.kind) {
    case FieldKind::kMessage: {
      if (in.IsNull()) return Value(rapidjson::kObjectType);
      Value msg(rapidjson::kObjectType);
      auto st = apply_json(*f.message, in, msg, a, path, options);
      if (!st.ok()) return st.error();
      return msg;
    }
    case FieldKind::kDuration: {
      if (!in.IsString())
        return error_at(path, "expected a duration string such as \"5s\", got " + describe(in));
      auto d = parse_go_duration(api::string_view_of(in));
      if (!d.ok()) return error_at(path, "bad Duration: " + d.message());
      return api::make_string(
          format_proto_duration(*d / 1000000000, static_cast<std::int32_t>(*d % 1000000000)), a);
    }
    case FieldKind::kTimestamp:
      if (!in.IsString())
        return error_at(path, "expected an RFC 3339 timestamp, got " + describe(in));
      return Value(in, a);
    case FieldKind::kBoolValue:
      return read_scalar_kind(FieldKind::kBool, f, in, a, path);
    case FieldKind::kInt32Value:
      return read_scalar_kind(FieldKind::kInt32, f, in, a, path);
    case FieldKind::kUInt32Value:
      return read_scalar_kind(FieldKind::kUint32, f, in, a, path);
    case FieldKind::kInt64Value:
      return read_scalar_kind(FieldKind::kInt64, f, in, a, path);
    case FieldKind::kUInt64Value:
      return read_scalar_kind(FieldKind::kUint64, f, in, a, path);
    case FieldKind::kDoubleValue:
      return read_scalar_kind(FieldKind::kDouble, f, in, a, path);
    case FieldKind::kFloatValue:
      return read_scalar_kind(FieldKind::kFloat, f, in, a, path);
    case FieldKind::kStringValue:
    case FieldKind::kBytesValue:
      return read_scalar_kind(FieldKind::kString, f, in, a, path);
    case FieldKind::kStruct:
      if (!in.IsObject()) return error_at(path, "expected a mapping (Struct), got " + describe(in));
      return Value(in, a);
    case FieldKind::kValue:
      return Value(in, a);
    case FieldKind::kListValue:
      if (!in.IsArray()) return error_at(path, "expected a list (ListValue), got " + describe(in));
      return Value(in, a);
    case FieldKind::kAny:
      if (!in.IsObject() || api::find_member(in, "@type") == nullptr)
        return error_at(path, "Any JSON doesn't have '@type'");
      return Value(in, a);
    case FieldKind::kEmpty:
      if (!in.IsObject()) return error_at(path, "expected a mapping, got " + describe(in));
      return Value(rapidjson::kObjectType);
    default:
      return read_scalar_kind(f.kind, f, in, a, path);
  }
}

// Whether a canonical singular value counts as populated (protoreflect's Has).
bool populated(const FieldDescriptor& f, const Value& v) {
  if (f.explicit_presence || f.oneof >= 0) return true;
  switch (f.kind) {
    case FieldKind::kString:
    case FieldKind::kBytes:
      return v.GetStringLength() != 0;
    case FieldKind::kBool:
      return v.GetBool();
    case FieldKind::kInt64:
    case FieldKind::kUint64:
      return !(v.IsString() && api::string_view_of(v) == "0");
    case FieldKind::kInt32:
    case FieldKind::kUint32:
    case FieldKind::kDouble:
    case FieldKind::kFloat:
      if (v.IsString()) return true;  // NaN, Infinity
      return v.GetDouble() != 0 || std::signbit(v.GetDouble());
    case FieldKind::kEnum: {
      if (v.IsNumber()) return v.GetInt() != 0;
      const EnumValue* ev = f.enum_type->find(api::string_view_of(v));
      return ev == nullptr || ev->number != 0;
    }
    default:
      return true;  // messages and well-known types: present means set
  }
}

api::Result<Value> read_field(const FieldDescriptor& f, const Value& in, Allocator& a,
                              std::string_view path, const ApplyOptions& options) {
  if (f.repeated()) {
    if (!in.IsArray()) return error_at(path, "expected a list, got " + describe(in));
    Value out(rapidjson::kArrayType);
    for (rapidjson::SizeType i = 0; i < in.Size(); ++i) {
      std::string p = index_path(path, i);
      if (in[i].IsNull() && f.kind != FieldKind::kValue) {
        out.PushBack(zero_value(f, a), a);
        continue;
      }
      auto v = read_singular(f, in[i], a, p, options);
      if (!v.ok()) return v.error();
      out.PushBack(std::move(*v), a);
    }
    return out;
  }
  if (f.is_map()) {
    if (!in.IsObject()) return error_at(path, "expected a mapping, got " + describe(in));
    Value out(rapidjson::kObjectType);
    for (auto it = in.MemberBegin(); it != in.MemberEnd(); ++it) {
      std::string p = join_path(path, api::string_view_of(it->name));
      Value v;
      if (it->value.IsNull() && f.kind != FieldKind::kValue) {
        v = zero_value(f, a);
      } else {
        auto r = read_singular(f, it->value, a, p, options);
        if (!r.ok()) return r.error();
        v = std::move(*r);
      }
      if (Value* existing = api::find_member(out, api::string_view_of(it->name))) {
        *existing = std::move(v);
      } else {
        out.AddMember(Value(it->name, a), std::move(v), a);
      }
    }
    return out;
  }
  return read_singular(f, in, a, path, options);
}

bool field_set(const FieldDescriptor& f, const Value& v) {
  if (f.repeated()) return !v.Empty();
  if (f.is_map()) return v.MemberCount() != 0;
  return populated(f, v);
}

void write_string(std::string& out, std::string_view s) {
  Value v(rapidjson::StringRef(s.data(), static_cast<rapidjson::SizeType>(s.size())));
  api::append_json(out, v);
}

// Struct values: jsonpb writes objects with sorted keys (they are Go maps) and numbers as
// float64.
void write_sorted(std::string& out, const Value& v) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
      members.push_back(&*it);
    std::sort(members.begin(), members.end(), [](const auto* x, const auto* y) {
      return api::string_view_of(x->name) < api::string_view_of(y->name);
    });
    out += '{';
    bool first = true;
    for (const auto* m : members) {
      if (!first) out += ',';
      first = false;
      write_string(out, api::string_view_of(m->name));
      out += ':';
      write_sorted(out, m->value);
    }
    out += '}';
    return;
  }
  if (v.IsArray()) {
    out += '[';
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i != 0) out += ',';
      write_sorted(out, v[i]);
    }
    out += ']';
    return;
  }
  if (v.IsNumber() && !v.IsDouble()) {
    api::append_json(out, Value(v.GetDouble()));
    return;
  }
  api::append_json(out, v);
}

void write_singular(std::string& out, const FieldDescriptor& f, const Value& v) {
  switch (f.kind) {
    case FieldKind::kMessage:
      append_jsonpb(out, *f.message, v);
      return;
    case FieldKind::kStruct:
    case FieldKind::kValue:
    case FieldKind::kListValue:
    case FieldKind::kAny:
      write_sorted(out, v);
      return;
    default:
      api::append_json(out, v);
      return;
  }
}

}  // namespace

const api::Value* get_field(const api::Value& msg, const FieldDescriptor& field) {
  return api::find_member(msg, field.json_name);
}

void set_field(api::Value& msg, const FieldDescriptor& field, api::Value value,
               api::Allocator& allocator) {
  if (Value* existing = api::find_member(msg, field.json_name)) {
    *existing = std::move(value);
    return;
  }
  msg.AddMember(api::make_string(field.json_name, allocator), std::move(value), allocator);
}

api::Result<api::Value> read_leaf(const FieldDescriptor& field, const api::Value& in,
                                  api::Allocator& allocator, std::string_view path) {
  if (field.kind == FieldKind::kMessage)
    return error_at(path, "internal: read_leaf of a message field");
  return read_singular(field, in, allocator, path, {});
}

void clear_field(api::Value& msg, const FieldDescriptor& field) {
  msg.RemoveMember(rapidjson::StringRef(field.json_name.data(),
                                        static_cast<rapidjson::SizeType>(field.json_name.size())));
}

api::Status apply_json(const MessageDescriptor& type, const api::Value& in, api::Value& msg,
                       api::Allocator& allocator, std::string_view path,
                       const ApplyOptions& options) {
  if (in.IsNull()) return api::ok_status();
  if (!in.IsObject())
    return error_at(
        path, "expected a mapping (" + std::string(type.full_name) + "), got " + describe(in));
  if (!msg.IsObject()) msg.SetObject();
  std::vector<bool> consumed(in.MemberCount(), false);
  auto member_index = [&in](std::string_view name) -> int {
    int i = 0;
    for (auto it = in.MemberBegin(); it != in.MemberEnd(); ++it, ++i)
      if (api::string_view_of(it->name) == name) return i;
    return -1;
  };
  for (const FieldDescriptor& f : type.fields) {
    // The proto name first, then the JSON name, which wins (as in jsonpb).
    const Value* raw = nullptr;
    std::string_view used;
    for (std::string_view name : {f.proto_name, f.json_name}) {
      int i = member_index(name);
      if (i < 0) continue;
      consumed[static_cast<std::size_t>(i)] = true;
      raw = &in.MemberBegin()[i].value;
      used = name;
    }
    if (raw == nullptr || (raw->IsNull() && !(f.kind == FieldKind::kValue && f.singular())))
      continue;
    std::string p = join_path(path, used);
    auto v = read_field(f, *raw, allocator, p, options);
    if (!v.ok()) return v.error();
    if (f.oneof >= 0) {
      for (const FieldDescriptor& other : type.fields)
        if (other.oneof == f.oneof && &other != &f) clear_field(msg, other);
    }
    if (field_set(f, *v)) {
      set_field(msg, f, std::move(*v), allocator);
    } else {
      clear_field(msg, f);
    }
  }
  if (options.unknown_fields != nullptr) {
    std::size_t i = 0;
    for (auto it = in.MemberBegin(); it != in.MemberEnd(); ++it, ++i)
      if (!consumed[i])
        options.unknown_fields->push_back(join_path(path, api::string_view_of(it->name)));
  }
  return api::ok_status();
}

void append_jsonpb(std::string& out, const MessageDescriptor& type, const api::Value& msg) {
  out += '{';
  bool first = true;
  for (const FieldDescriptor& f : type.fields) {
    const Value* v = msg.IsObject() ? get_field(msg, f) : nullptr;
    if (v == nullptr) continue;
    if (!first) out += ',';
    first = false;
    write_string(out, f.json_name);
    out += ':';
    if (f.repeated()) {
      out += '[';
      for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        if (i != 0) out += ',';
        write_singular(out, f, (*v)[i]);
      }
      out += ']';
    } else if (f.is_map()) {
      std::vector<const Value::Member*> entries;
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        entries.push_back(&*it);
      std::sort(entries.begin(), entries.end(), [](const auto* x, const auto* y) {
        return api::string_view_of(x->name) < api::string_view_of(y->name);
      });
      out += '{';
      bool first_entry = true;
      for (const auto* e : entries) {
        if (!first_entry) out += ',';
        first_entry = false;
        write_string(out, api::string_view_of(e->name));
        out += ':';
        write_singular(out, f, e->value);
      }
      out += '}';
    } else {
      write_singular(out, f, *v);
    }
  }
  out += '}';
}

std::string to_jsonpb(const MessageDescriptor& type, const api::Value& msg) {
  std::string out;
  append_jsonpb(out, type, msg);
  return out;
}

}  // namespace meshop::inject::proto
