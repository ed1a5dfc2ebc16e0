#include "operator/inject/mesh/proto_object.hpp"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "operator/inject/mesh/go_duration.hpp"
#include "operator/inject/mesh/proto_json.hpp"
#include "operator/template/functions.hpp"

namespace meshop::inject::proto {
namespace {

using template_engine::Function;
using template_engine::Kind;
using template_engine::Object;
using template_engine::Value;
using JsonValue = api::Value;

std::int64_t parse_int64(const JsonValue& v) {
  if (v.IsNumber()) return v.IsInt64() ? v.GetInt64() : static_cast<std::int64_t>(v.GetDouble());
  std::int64_t out = 0;
  std::string_view s = api::string_view_of(v);
  std::from_chars(s.data(), s.data() + s.size(), out);
  return out;
}

std::uint64_t parse_uint64(const JsonValue& v) {
  if (v.IsNumber()) return v.IsUint64() ? v.GetUint64() : static_cast<std::uint64_t>(v.GetDouble());
  std::uint64_t out = 0;
  std::string_view s = api::string_view_of(v);
  std::from_chars(s.data(), s.data() + s.size(), out);
  return out;
}

double parse_double(const JsonValue& v) {
  if (v.IsNumber()) return v.GetDouble();
  std::string_view s = api::string_view_of(v);
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  return 0;
}

std::int32_t enum_number(const EnumDescriptor& e, const JsonValue* v) {
  if (v == nullptr) return 0;
  if (v->IsNumber()) return v->GetInt();
  const EnumValue* ev = e.find(api::string_view_of(*v));
  return ev != nullptr ? ev->number : 0;
}

// Go's time.Duration: an int64 that prints as "1m30s".
class GoDurationObject final : public Object {
 public:
  explicit GoDurationObject(std::int64_t nanos) : nanos_(nanos) {}
  std::string_view go_type() const override { return "time.Duration"; }
  std::string_view go_kind() const override { return "int64"; }
  bool is_stringer() const override { return true; }
  std::optional<std::int64_t> int_value() const override { return nanos_; }
  void format(std::string& out, bool, bool) const override { out += format_go_duration(nanos_); }
  std::optional<Function> method(std::string_view name) const override {
    std::int64_t n = nanos_;
    if (name == "String")
      return Function({}, [n](template_engine::Args) -> template_engine::Result<Value> {
        return Value::string(format_go_duration(n));
      });
    if (name == "Seconds")
      return Function({}, [n](template_engine::Args) -> template_engine::Result<Value> {
        return Value::float64(static_cast<double>(n / 1000000000) +
                              static_cast<double>(n % 1000000000) / 1e9);
      });
    if (name == "Milliseconds")
      return Function({}, [n](template_engine::Args) -> template_engine::Result<Value> {
        return Value::integer(n / 1000000, Kind::kInt64);
      });
    if (name == "Nanoseconds")
      return Function({}, [n](template_engine::Args) -> template_engine::Result<Value> {
        return Value::integer(n, Kind::kInt64);
      });
    return std::nullopt;
  }
  std::int64_t nanos() const { return nanos_; }

 private:
  std::int64_t nanos_;
};

class EnumObject final : public Object {
 public:
  EnumObject(const EnumDescriptor& type, std::int32_t number) : type_(&type), number_(number) {}
  std::string_view go_type() const override { return type_->go_type; }
  std::string_view go_kind() const override { return "int32"; }
  bool is_stringer() const override { return true; }
  std::optional<std::int64_t> int_value() const override { return number_; }
  void format(std::string& out, bool, bool) const override { out += name(); }
  std::optional<Function> method(std::string_view name) const override {
    if (name == "String") {
      std::string s = this->name();
      return Function({}, [s](template_engine::Args) -> template_engine::Result<Value> {
        return Value::string(s);
      });
    }
    if (name == "Number") {
      std::int32_t n = number_;
      return Function({}, [n](template_engine::Args) -> template_engine::Result<Value> {
        return Value::integer(n, Kind::kInt32);
      });
    }
    return std::nullopt;
  }

 private:
  // protobuf-go prints an enum number the schema does not name as the number.
  std::string name() const {
    const EnumValue* v = type_->find(number_);
    return v != nullptr ? std::string(v->name) : std::to_string(number_);
  }
  const EnumDescriptor* type_;
  std::int32_t number_;
};

Value element_value(const FieldDescriptor& f, const JsonValue* v,
                    const std::shared_ptr<const void>& owner);

// google.protobuf.Struct/Value/ListValue in protobuf text format (fields sorted by key).
void value_text(std::string& out, const JsonValue& v);

void struct_text(std::string& out, const JsonValue& v) {
  std::vector<const JsonValue::Member*> members;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
    members.push_back(&*it);
  std::sort(members.begin(), members.end(), [](const auto* x, const auto* y) {
    return api::string_view_of(x->name) < api::string_view_of(y->name);
  });
  bool first = true;
  for (const auto* m : members) {
    if (!first) out += ' ';
    first = false;
    out += "fields:{key:" + template_engine::go_quote(api::string_view_of(m->name)) + " value:{";
    value_text(out, m->value);
    out += "}}";
  }
}

void list_text(std::string& out, const JsonValue& v) {
  bool first = true;
  for (const auto& e : v.GetArray()) {
    if (!first) out += ' ';
    first = false;
    out += "values:{";
    value_text(out, e);
    out += '}';
  }
}

void value_text(std::string& out, const JsonValue& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "null_value:NULL_VALUE";
      return;
    case rapidjson::kFalseType:
      out += "bool_value:false";
      return;
    case rapidjson::kTrueType:
      out += "bool_value:true";
      return;
    case rapidjson::kStringType:
      out += "string_value:" + template_engine::go_quote(api::string_view_of(v));
      return;
    case rapidjson::kNumberType:
      out += "number_value:" + template_engine::format_float(v.GetDouble(), 'g', -1);
      return;
    case rapidjson::kObjectType:
      out += "struct_value:{";
      struct_text(out, v);
      out += '}';
      return;
    case rapidjson::kArrayType:
      out += "list_value:{";
      list_text(out, v);
      out += '}';
      return;
  }
}

// Wrappers (BoolValue, ...), Duration, Timestamp, Struct, Value, ListValue, Any, Empty.
class WellKnownObject final : public Object {
 public:
  WellKnownObject(const FieldDescriptor& field, const JsonValue* v,
                  std::shared_ptr<const void> owner)
      : field_(&field), v_(v), owner_(std::move(owner)) {}
  std::string_view go_type() const override { return go_element_type(*field_); }
  std::string_view go_kind() const override { return "ptr"; }
  bool is_nil() const override { return v_ == nullptr; }
  bool is_stringer() const override { return true; }
  void format(std::string& out, bool, bool) const override { out += text(); }

  std::optional<Value> field(std::string_view name) const override {
    switch (field_->kind) {
      case FieldKind::kDuration:
      case FieldKind::kTimestamp:
        if (name == "Seconds") return Value::integer(seconds(), Kind::kInt64);
        if (name == "Nanos") return Value::integer(nanos(), Kind::kInt32);
        return std::nullopt;
      case FieldKind::kStruct:
      case FieldKind::kValue:
      case FieldKind::kListValue:
      case FieldKind::kAny:
      case FieldKind::kEmpty:
        return std::nullopt;
      default:
        if (name == "Value") return wrapped();
        return std::nullopt;
    }
  }

  std::optional<Function> method(std::string_view name) const override {
    auto self = std::make_shared<WellKnownObject>(*this);
    auto fn = [](auto body) {
      return Function(
          {}, [body](template_engine::Args) -> template_engine::Result<Value> { return body(); });
    };
    if (name == "String") return fn([self] { return Value::string(self->text()); });
    switch (field_->kind) {
      case FieldKind::kDuration:
        if (name == "GetSeconds")
          return fn([self] { return Value::integer(self->seconds(), Kind::kInt64); });
        if (name == "GetNanos")
          return fn([self] { return Value::integer(self->nanos(), Kind::kInt32); });
        if (name == "AsDuration")
          return fn([self] {
            return Value::object(std::make_shared<GoDurationObject>(self->duration_nanos()));
          });
        if (name == "IsValid") return fn([self] { return Value::boolean(self->v_ != nullptr); });
        return std::nullopt;
      case FieldKind::kStruct:
      case FieldKind::kValue:
      case FieldKind::kListValue:
        if (name == "AsMap" || name == "AsSlice" || name == "AsInterface")
          return fn([self] { return self->as_interface(); });
        return std::nullopt;
      case FieldKind::kTimestamp:
      case FieldKind::kAny:
      case FieldKind::kEmpty:
        return std::nullopt;
      default:
        if (name == "GetValue") return fn([self] { return self->wrapped(); });
        return std::nullopt;
    }
  }

  std::int64_t duration_nanos() const { return seconds() * 1000000000 + nanos(); }
  FieldKind kind() const { return field_->kind; }

 private:
  std::int64_t seconds() const {
    std::int64_t s = 0;
    std::int32_t n = 0;
    if (v_ != nullptr && v_->IsString()) parse_proto_duration(api::string_view_of(*v_), s, n);
    return s;
  }
  std::int32_t nanos() const {
    std::int64_t s = 0;
    std::int32_t n = 0;
    if (v_ != nullptr && v_->IsString()) parse_proto_duration(api::string_view_of(*v_), s, n);
    return n;
  }

  Value wrapped() const {
    const JsonValue* v = v_;
    switch (field_->kind) {
      case FieldKind::kBoolValue:
        return Value::boolean(v != nullptr && v->GetBool());
      case FieldKind::kInt32Value:
        return Value::integer(v != nullptr ? v->GetInt() : 0, Kind::kInt32);
      case FieldKind::kUInt32Value:
        return Value::unsigned_integer(v != nullptr ? v->GetUint() : 0, Kind::kUint32);
      case FieldKind::kInt64Value:
        return Value::integer(v != nullptr ? parse_int64(*v) : 0, Kind::kInt64);
      case FieldKind::kUInt64Value:
        return Value::unsigned_integer(v != nullptr ? parse_uint64(*v) : 0, Kind::kUint64);
      case FieldKind::kDoubleValue:
      case FieldKind::kFloatValue:
        return Value::float64(v != nullptr ? parse_double(*v) : 0);
      case FieldKind::kStringValue:
      case FieldKind::kBytesValue:
        return v != nullptr ? Value::string_ref(api::string_view_of(*v), owner_)
                            : Value::string("");
      default:
        return Value();
    }
  }

  Value as_interface() const;

  // Protobuf text of the well-known message.
  std::string text() const {
    if (v_ == nullptr) return "<nil>";
    std::string out;
    switch (field_->kind) {
      case FieldKind::kDuration: {
        if (seconds() != 0) out += "seconds:" + std::to_string(seconds());
        if (nanos() != 0)
          out += std::string(out.empty() ? "" : " ") + "nanos:" + std::to_string(nanos());
        return out;
      }
      case FieldKind::kStruct:
        struct_text(out, *v_);
        return out;
      case FieldKind::kValue:
        value_text(out, *v_);
        return out;
      case FieldKind::kListValue:
        list_text(out, *v_);
        return out;
      case FieldKind::kAny:
      case FieldKind::kTimestamp:
        return api::to_json(*v_);
      case FieldKind::kEmpty:
        return "";
      default: {
        Value w = wrapped();
        if (!template_engine::truth(w)) return "";
        if (w.is_string()) return "value:" + template_engine::go_quote(w.as_string());
        return "value:" + template_engine::sprint_value(w);
      }
    }
  }

  const FieldDescriptor* field_;
  const JsonValue* v_;
  std::shared_ptr<const void> owner_;
};

Value json_to_template(const JsonValue& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return Value::nil();
    case rapidjson::kFalseType:
      return Value::boolean(false);
    case rapidjson::kTrueType:
      return Value::boolean(true);
    case rapidjson::kStringType:
      return Value::string(std::string(api::string_view_of(v)));
    case rapidjson::kNumberType:
      return Value::float64(v.GetDouble());
    case rapidjson::kArrayType: {
      auto l = std::make_shared<template_engine::List>();
      for (const auto& e : v.GetArray())
        l->items.push_back(json_to_template(e));
      return Value::list(std::move(l));
    }
    case rapidjson::kObjectType: {
      auto m = std::make_shared<template_engine::Map>();
      for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
        m->set(api::string_view_of(it->name), json_to_template(it->value));
      return Value::map(std::move(m));
    }
  }
  return Value();
}

Value WellKnownObject::as_interface() const {
  if (v_ == nullptr) {
    if (field_->kind == FieldKind::kStruct) return Value::typed_nil(Kind::kMap);
    if (field_->kind == FieldKind::kListValue) return Value::typed_nil(Kind::kList);
    return Value::nil();
  }
  return json_to_template(*v_);
}

// The generated wrapper struct a oneof interface holds, e.g. *v1alpha1.ProxyConfig_ServiceCluster.
class OneofWrapperObject final : public Object {
 public:
  OneofWrapperObject(const MessageDescriptor& owner_type, const FieldDescriptor& member,
                     const JsonValue* v, std::shared_ptr<const void> owner)
      : go_type_("*" + std::string(owner_type.go_type.substr(1, owner_type.go_type.find('.'))) +
                 std::string(member.oneof_wrapper)),
        member_(&member),
        v_(v),
        owner_(std::move(owner)) {}
  std::string_view go_type() const override { return go_type_; }
  std::string_view go_kind() const override { return "ptr"; }
  std::optional<Value> field(std::string_view name) const override {
    if (name == member_->go_name) return element_value(*member_, v_, owner_);
    return std::nullopt;
  }
  // The value always sits in an interface field, which an action prints without
  // dereferencing, so Go shows the "&" in every context: add it here and keep the printer from
  // adding another (is_stringer only steers that choice).
  bool is_stringer() const override { return true; }
  void format(std::string& out, bool plus, bool) const override {
    out += "&{";
    if (plus) {
      out += member_->go_name;
      out += ':';
    }
    template_engine::append_value(out, element_value(*member_, v_, owner_));
    out += '}';
  }

 private:
  std::string go_type_;
  const FieldDescriptor* member_;
  const JsonValue* v_;
  std::shared_ptr<const void> owner_;
};

class MessageObject final : public Object {
 public:
  MessageObject(const MessageDescriptor& type, const JsonValue* msg,
                std::shared_ptr<const void> owner)
      : type_(&type), msg_(msg), owner_(std::move(owner)) {}
  std::string_view go_type() const override { return type_->go_type; }
  std::string_view go_kind() const override { return "ptr"; }
  bool is_nil() const override { return msg_ == nullptr; }
  bool is_stringer() const override { return true; }
  void format(std::string& out, bool, bool) const override {
    if (msg_ != nullptr) out += text_format(*type_, *msg_);
  }

  std::optional<Value> field(std::string_view name) const override {
    if (const FieldDescriptor* f = type_->find_go_field(name); f != nullptr && f->oneof < 0)
      return field_value(*f);
    for (std::size_t i = 0; i < type_->oneofs.size(); ++i)
      if (type_->oneofs[i].go_name == name) return oneof_value(static_cast<int>(i));
    return std::nullopt;
  }

  std::optional<Function> method(std::string_view name) const override {
    auto self = std::make_shared<MessageObject>(*this);
    auto fn = [](auto body) {
      return Function(
          {}, [body](template_engine::Args) -> template_engine::Result<Value> { return body(); });
    };
    if (name.starts_with("Get")) {
      std::string_view rest = name.substr(3);
      if (const FieldDescriptor* f = type_->find_go_field(rest))
        return fn([self, f] { return self->field_value(*f); });
      for (std::size_t i = 0; i < type_->oneofs.size(); ++i)
        if (type_->oneofs[i].go_name == rest)
          return fn([self, i] { return self->oneof_value(static_cast<int>(i)); });
      return std::nullopt;
    }
    if (name == "String")
      return fn([self] {
        return Value::string(self->msg_ ? text_format(*self->type_, *self->msg_) : "<nil>");
      });
    if (name == "MarshalJSON")
      return fn([self] {
        return Value::string(self->msg_ ? to_jsonpb(*self->type_, *self->msg_) : "null");
      });
    if (name == "ProtoToJSON")
      return fn([self] {
        if (self->msg_ == nullptr) return Value::string("{}");
        if (self->type_ == &proxy_config_descriptor()) {
          api::Document clean = clean_proxy_config(*self->msg_);
          return Value::string(to_jsonpb(*self->type_, clean));
        }
        return Value::string(to_jsonpb(*self->type_, *self->msg_));
      });
    return std::nullopt;
  }

  Value field_value(const FieldDescriptor& f) const {
    const JsonValue* v = msg_ != nullptr ? get_field(*msg_, f) : nullptr;
    if (f.repeated()) {
      auto list = std::make_shared<template_engine::List>();
      list->elem_type = std::string(go_element_type(f));
      if (v != nullptr && v->IsArray())
        for (const auto& e : v->GetArray())
          list->items.push_back(element_value(f, &e, owner_));
      return Value::list(std::move(list));
    }
    if (f.is_map()) {
      if (f.kind == FieldKind::kString) {
        if (v == nullptr) return Value::typed_nil(Kind::kStringMap);
        auto m = std::make_shared<template_engine::StringMap>();
        for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
          m->set(api::string_view_of(it->name), std::string(api::string_view_of(it->value)));
        return Value::string_map(std::move(m));
      }
      if (v == nullptr) return Value::typed_nil(Kind::kMap);
      auto m = std::make_shared<template_engine::Map>();
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        m->set(api::string_view_of(it->name), element_value(f, &it->value, owner_));
      return Value::map(std::move(m));
    }
    return element_value(f, v, owner_);
  }

  // The oneof interface: nil when no member is set, else the wrapper struct.
  Value oneof_value(int oneof) const {
    if (msg_ != nullptr) {
      for (const FieldDescriptor& f : type_->fields) {
        if (f.oneof != oneof) continue;
        if (const JsonValue* v = get_field(*msg_, f))
          return Value::object(std::make_shared<OneofWrapperObject>(*type_, f, v, owner_));
      }
    }
    return Value::nil();
  }

  const MessageDescriptor* type() const { return type_; }
  const JsonValue* msg() const { return msg_; }

 private:
  const MessageDescriptor* type_;
  const JsonValue* msg_;
  std::shared_ptr<const void> owner_;
};

Value element_value(const FieldDescriptor& f, const JsonValue* v,
                    const std::shared_ptr<const void>& owner) {
  switch (f.kind) {
    case FieldKind::kString:
    case FieldKind::kBytes:
      return v != nullptr ? Value::string_ref(api::string_view_of(*v), owner) : Value::string("");
    case FieldKind::kBool:
      return Value::boolean(v != nullptr && v->GetBool());
    case FieldKind::kInt32:
      return Value::integer(v != nullptr ? v->GetInt() : 0, Kind::kInt32);
    case FieldKind::kUint32:
      return Value::unsigned_integer(v != nullptr ? v->GetUint() : 0, Kind::kUint32);
    case FieldKind::kInt64:
      return Value::integer(v != nullptr ? parse_int64(*v) : 0, Kind::kInt64);
    case FieldKind::kUint64:
      return Value::unsigned_integer(v != nullptr ? parse_uint64(*v) : 0, Kind::kUint64);
    case FieldKind::kDouble:
    case FieldKind::kFloat:
      return Value::float64(v != nullptr ? parse_double(*v) : 0);
    case FieldKind::kEnum:
      return Value::object(
          std::make_shared<EnumObject>(*f.enum_type, enum_number(*f.enum_type, v)));
    case FieldKind::kMessage:
      return message_value(*f.message, v, owner);
    default:
      return Value::object(std::make_shared<WellKnownObject>(f, v, owner));
  }
}

// --- protobuf text format ------------------------------------------------------------------

void text_string(std::string& out, std::string_view s) {
  // prototext quotes like Go's strconv.Quote for printable UTF-8 text.
  out += template_engine::go_quote(s);
}

void text_value(std::string& out, const FieldDescriptor& f, const JsonValue& v);

void text_message(std::string& out, const MessageDescriptor& type, const JsonValue& msg) {
  bool first = true;
  auto sep = [&] {
    if (!first) out += ' ';
    first = false;
  };
  for (const FieldDescriptor& f : type.fields) {
    const JsonValue* v = get_field(msg, f);
    if (v == nullptr) continue;
    if (f.repeated()) {
      for (const auto& e : v->GetArray()) {
        sep();
        out += f.proto_name;
        out += ':';
        text_value(out, f, e);
      }
    } else if (f.is_map()) {
      std::vector<const JsonValue::Member*> entries;
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        entries.push_back(&*it);
      std::sort(entries.begin(), entries.end(), [](const auto* x, const auto* y) {
        return api::string_view_of(x->name) < api::string_view_of(y->name);
      });
      for (const auto* e : entries) {
        sep();
        out += f.proto_name;
        out += ":{key:";
        text_string(out, api::string_view_of(e->name));
        out += " value:";
        text_value(out, f, e->value);
        out += '}';
      }
    } else {
      sep();
      out += f.proto_name;
      out += ':';
      text_value(out, f, *v);
    }
  }
}

void text_value(std::string& out, const FieldDescriptor& f, const JsonValue& v) {
  switch (f.kind) {
    case FieldKind::kMessage:
      out += '{';
      text_message(out, *f.message, v);
      out += '}';
      return;
    case FieldKind::kString:
    case FieldKind::kBytes:
      text_string(out, api::string_view_of(v));
      return;
    case FieldKind::kEnum:
      if (v.IsString()) {
        out += api::string_view_of(v);
      } else {
        out += std::to_string(v.GetInt());
      }
      return;
    case FieldKind::kDouble:
    case FieldKind::kFloat:
      if (v.IsString()) {
        // prototext spells the non-finite values nan, inf, -inf.
        std::string_view s = api::string_view_of(v);
        out += s == "NaN" ? "nan" : s == "Infinity" ? "inf" : "-inf";
        return;
      }
      out += template_engine::format_float(v.GetDouble(), 'g', -1);
      return;
    case FieldKind::kBool:
    case FieldKind::kInt32:
    case FieldKind::kUint32:
      out += api::to_json(v);
      return;
    case FieldKind::kInt64:
    case FieldKind::kUint64:
      out += v.IsString() ? std::string(api::string_view_of(v)) : api::to_json(v);
      return;
    default: {
      out += '{';
      WellKnownObject o(f, &v, nullptr);
      o.format(out, false, false);
      out += '}';
      return;
    }
  }
}

}  // namespace

template_engine::Value message_value(const MessageDescriptor& type, const api::Value* msg,
                                     std::shared_ptr<const void> owner) {
  return Value::object(std::make_shared<MessageObject>(type, msg, std::move(owner)));
}

std::optional<MessageRef> as_message(const template_engine::Value& v) {
  if (v.kind() != Kind::kObject) return std::nullopt;
  const auto* m = dynamic_cast<const MessageObject*>(v.as_object());
  if (m == nullptr) return std::nullopt;
  return MessageRef{m->type(), m->msg()};
}

std::optional<std::int64_t> as_duration_nanos(const template_engine::Value& v) {
  if (v.kind() != Kind::kObject) return std::nullopt;
  if (const auto* d = dynamic_cast<const GoDurationObject*>(v.as_object())) return d->nanos();
  const auto* w = dynamic_cast<const WellKnownObject*>(v.as_object());
  if (w == nullptr || w->kind() != FieldKind::kDuration) return std::nullopt;
  return w->duration_nanos();
}

bool is_nil_duration(const template_engine::Value& v) {
  if (v.kind() != Kind::kObject) return false;
  const auto* w = dynamic_cast<const WellKnownObject*>(v.as_object());
  return w != nullptr && w->kind() == FieldKind::kDuration && w->is_nil();
}

api::Document clean_proxy_config(const api::Value& proxy_config) {
  api::Document out;
  out.CopyFrom(proxy_config, out.GetAllocator());
  const MessageDescriptor& pc = proxy_config_descriptor();
  // Each field is dropped when it equals mesh.DefaultProxyConfig()'s value. Unset fields and
  // default-valued ones both end up absent, which is what jsonpb prints for a zero value.
  struct Default {
    std::string_view json_name;
    std::string_view string_value;  // for strings, enums and durations
    int int_value;                  // for int32 fields
  };
  static constexpr Default kDefaults[] = {
      {"configPath", "./etc/istio/proxy", 0},
      {"binaryPath", "/usr/local/bin/envoy", 0},
      {"controlPlaneAuthPolicy", "MUTUAL_TLS", 0},
      {"serviceCluster", "istio-proxy", 0},
      {"drainDuration", "45s", 0},
      {"terminationDrainDuration", "5s", 0},
      {"discoveryAddress", "istiod.istio-system.svc:15012", 0},
      {"proxyAdminPort", {}, 15000},
      {"statNameLength", {}, 189},
      {"statusPort", {}, 15020},
  };
  for (const Default& d : kDefaults) {
    const FieldDescriptor* f = pc.find_field(d.json_name);
    const api::Value* v = get_field(out, *f);
    if (v == nullptr) continue;
    bool equal = d.string_value.empty()
                     ? (v->IsInt() && v->GetInt() == d.int_value)
                     : (v->IsString() && api::string_view_of(*v) == d.string_value);
    if (equal) clear_field(out, *f);
  }
  // envoyMetricsService, envoyAccessLogService, tracing and concurrency are compared with
  // defaults that are nil, so only an unset value is "equal": nothing to drop. An empty
  // proxyMetadata map is already absent in canonical form.
  return out;
}

std::string text_format(const MessageDescriptor& type, const api::Value& msg) {
  std::string out;
  text_message(out, type, msg);
  return out;
}

}  // namespace meshop::inject::proto
