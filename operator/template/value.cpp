#include "operator/template/value.hpp"

#include <algorithm>
#include <array>

#include "operator/template/functions.hpp"

namespace meshop::template_engine {

Value Value::string(std::string s) {
  auto owned = std::make_shared<const std::string>(std::move(s));
  std::string_view view(*owned);
  return string_ref(view, std::move(owned));
}

Value Value::complex128(double real, double imag) {
  auto parts = std::make_shared<const std::array<double, 2>>(std::array<double, 2>{real, imag});
  Value v(Kind::kComplex128);
  v.ptr_ = parts->data();
  v.owner_ = std::move(parts);
  return v;
}

std::uint64_t& list_elements_copied() {
  thread_local std::uint64_t copied = 0;
  return copied;
}

Value Value::list(std::shared_ptr<List> l) {
  Value v(Kind::kList);
  v.ptr_ = l.get();
  v.owner_ = std::move(l);
  return v;
}

Value Value::map(std::shared_ptr<Map> m) {
  Value v(Kind::kMap);
  v.ptr_ = m.get();
  v.owner_ = std::move(m);
  return v;
}

Value Value::string_map(std::shared_ptr<StringMap> m) {
  Value v(Kind::kStringMap);
  v.ptr_ = m.get();
  v.owner_ = std::move(m);
  return v;
}

Value Value::object(std::shared_ptr<const Object> o) {
  Value v(Kind::kObject);
  v.ptr_ = o.get();
  v.owner_ = std::move(o);
  return v;
}

namespace {

template <class Entries>
auto lower(Entries& entries, std::string_view key) {
  return std::lower_bound(entries.begin(), entries.end(), key,
                          [](const auto& e, std::string_view k) { return e.first < k; });
}

}  // namespace

const Value* Map::find(std::string_view key) const {
  auto it = lower(entries_, key);
  return it != entries_.end() && it->first == key ? &it->second : nullptr;
}

Value* Map::find(std::string_view key) {
  auto it = lower(entries_, key);
  return it != entries_.end() && it->first == key ? &it->second : nullptr;
}

void Map::set(std::string_view key, Value v) {
  auto it = lower(entries_, key);
  if (it != entries_.end() && it->first == key)
    it->second = std::move(v);
  else
    entries_.emplace(it, std::string(key), std::move(v));
}

bool Map::erase(std::string_view key) {
  auto it = lower(entries_, key);
  if (it == entries_.end() || it->first != key) return false;
  entries_.erase(it);
  return true;
}

void Map::append_sorted(std::string key, Value v) {
  if (entries_.empty() || entries_.back().first < key)
    entries_.emplace_back(std::move(key), std::move(v));
  else
    set(key, std::move(v));
}

const std::string* StringMap::find(std::string_view key) const {
  auto it = lower(entries_, key);
  return it != entries_.end() && it->first == key ? &it->second : nullptr;
}

void StringMap::set(std::string_view key, std::string v) {
  auto it = lower(entries_, key);
  if (it != entries_.end() && it->first == key)
    it->second = std::move(v);
  else
    entries_.emplace(it, std::string(key), std::move(v));
}

bool StringMap::erase(std::string_view key) {
  auto it = lower(entries_, key);
  if (it == entries_.end() || it->first != key) return false;
  entries_.erase(it);
  return true;
}

std::optional<Function> Object::method(std::string_view) const {
  return std::nullopt;
}
std::optional<Value> Object::field(std::string_view) const {
  return std::nullopt;
}

bool truth(const Value& v) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      return false;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kString:
      return !v.as_string().empty();
    case Kind::kInt:
    case Kind::kInt32:
    case Kind::kInt64:
      return v.as_int() != 0;
    case Kind::kUint:
    case Kind::kUint8:
    case Kind::kUint32:
    case Kind::kUint64:
      return v.as_uint() != 0;
    case Kind::kFloat64:
      return v.as_float() != 0;
    case Kind::kComplex128:
      return v.as_complex_real() != 0 || v.as_complex_imag() != 0;
    case Kind::kList:
      return v.as_list() != nullptr && !v.as_list()->items.empty();
    case Kind::kMap:
      return v.as_map() != nullptr && !v.as_map()->empty();
    case Kind::kStringMap:
      return v.as_string_map() != nullptr && !v.as_string_map()->empty();
    case Kind::kObject: {
      const Object* o = v.as_object();
      if (o->is_nil()) return false;
      if (auto i = o->int_value()) return *i != 0;
      return true;
    }
  }
  return false;
}

namespace {

std::string_view basic_type_name(Kind k) {
  switch (k) {
    case Kind::kInvalid:
    case Kind::kNil:
      return "<nil>";
    case Kind::kBool:
      return "bool";
    case Kind::kString:
      return "string";
    case Kind::kInt:
      return "int";
    case Kind::kInt32:
      return "int32";
    case Kind::kInt64:
      return "int64";
    case Kind::kUint:
      return "uint";
    case Kind::kUint8:
      return "uint8";
    case Kind::kUint32:
      return "uint32";
    case Kind::kUint64:
      return "uint64";
    case Kind::kFloat64:
      return "float64";
    case Kind::kComplex128:
      return "complex128";
    case Kind::kList:
      return "[]interface {}";
    case Kind::kMap:
      return "map[string]interface {}";
    case Kind::kStringMap:
      return "map[string]string";
    case Kind::kObject:
      return "object";
  }
  return "?";
}

}  // namespace

std::string go_type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kList: {
      const List* l = v.as_list();
      if (l == nullptr || l->elem_type.empty()) return "[]interface {}";
      return "[]" + l->elem_type;
    }
    case Kind::kObject:
      return std::string(v.as_object()->go_type());
    default:
      return std::string(basic_type_name(v.kind()));
  }
}

std::string_view go_kind_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      return "invalid";
    case Kind::kList:
      return "slice";
    case Kind::kMap:
    case Kind::kStringMap:
      return "map";
    case Kind::kObject:
      return v.as_object()->go_kind();
    default:
      return basic_type_name(v.kind());
  }
}

std::optional<std::int64_t> length(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return static_cast<std::int64_t>(v.as_string().size());
    case Kind::kList:
      return v.as_list() ? static_cast<std::int64_t>(v.as_list()->items.size()) : 0;
    case Kind::kMap:
      return v.as_map() ? static_cast<std::int64_t>(v.as_map()->size()) : 0;
    case Kind::kStringMap:
      return v.as_string_map() ? static_cast<std::int64_t>(v.as_string_map()->size()) : 0;
    default:
      return std::nullopt;
  }
}

}  // namespace meshop::template_engine

namespace meshop::template_engine {

std::string ParamType::go_name() const {
  switch (kind) {
    case Kind::kInvalid:
      return "interface {}";
    case Kind::kList:
      return type_name.empty() ? "[]interface {}" : "[]" + std::string(type_name);
    case Kind::kObject:
      return std::string(type_name);
    default:
      return std::string(basic_type_name(kind));
  }
}

}  // namespace meshop::template_engine
