// The dynamic values a template works on, modelled on the Go types that appear when a
// text/template executes over data decoded into `map[string]any` (encoding/json,
// sigs.k8s.io/yaml) plus typed Go objects (ProxyConfig, ObjectMeta, ...).
//
// A Value is a small tagged handle. Scalars are stored inline; strings, lists, maps and
// objects are referenced and kept alive by a shared owner, so copying a Value never copies
// the payload. Lists and maps have Go *reference* semantics: functions such as sprig's
// `set` mutate the map every holder of the Value sees, as in Go.
//
// Kinds and the Go types they stand for:
//   kInvalid    no value: a missing map key, an unset result (Go's invalid reflect.Value).
//               Printed by an action as `<no value>`; passed to an `any` parameter as nil.
//   kNil        the untyped nil interface (JSON null, the `nil` constant, a nil `any`
//               result). Printed by fmt as `<nil>`.
//   kBool       bool
//   kString     string
//   kInt        int (constants, len, range indexes, sprig `int`, `atoi`)
//   kInt32 / kInt64 / kUint / kUint8 / kUint32 / kUint64   the Go integer types of that name
//   kFloat64    float64 (every number decoded from JSON/YAML data)
//   kComplex128 complex128 (only from complex constants such as `1i` or `1+2i`)
//   kList       a slice: []interface {} by default, or []T when List::elem_type names T
//   kMap        map[string]interface {}, iterated in sorted key order
//   kStringMap  map[string]string (a missing key indexes to "" rather than nil)
//   kObject     typed Go data (structs, pointers to protobuf messages, enums) seen through
//               the Object interface below.
// A kList/kMap/kStringMap Value whose payload pointer is null is Go's typed nil slice/map:
// length 0, prints `[]` / `map[]`, but still has its Go type.
//
// Thread safety: a Value and everything it references may be read from many threads at
// once. Mutation (Map::set and friends, only done by mutating template functions) is not
// synchronised, exactly like Go maps: data shared between concurrent executions must not be
// mutated by the templates that run over it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/result.hpp"

namespace meshop::template_engine {

enum class Kind : std::uint8_t {
  kInvalid,
  kNil,
  kBool,
  kString,
  kInt,
  kInt32,
  kInt64,
  kUint,
  kUint8,
  kUint32,
  kUint64,
  kFloat64,
  kComplex128,
  kList,
  kMap,
  kStringMap,
  kObject,
};

class Value;
class List;
class Map;
class StringMap;
class Object;

// The outcome of a template function or method: a value, or an error whose message has no
// "error calling f: " prefix (the executor adds it as Go does). meshop's one Result type.
template <class T>
using Result = api::Result<T>;

// Shorthand for `return fail("...")` (or `fail(other.error())`) inside functions returning
// Result<T> for any T.
struct Failure {
  api::Error error;
  template <class T>
  operator Result<T>() && {  // NOLINT: implicit by design
    return std::move(error);
  }
};
inline Failure fail(std::string message) {
  return Failure{api::Error{std::move(message)}};
}
inline Failure fail(api::Error error) {
  return Failure{std::move(error)};
}

class Value {
 public:
  Value() = default;  // kInvalid

  static Value invalid() { return Value(); }
  static Value nil() { return Value(Kind::kNil); }
  static Value boolean(bool b) {
    Value v(Kind::kBool);
    v.b_ = b;
    return v;
  }
  // An owned copy of `s`.
  static Value string(std::string s);
  // A string whose bytes live elsewhere: `owner` keeps them alive (may be null when the
  // caller guarantees the bytes outlive every copy of the Value, e.g. template literals).
  static Value string_ref(std::string_view s, std::shared_ptr<const void> owner) {
    Value v(Kind::kString);
    v.ptr_ = s.data();
    v.n_ = s.size();
    v.owner_ = std::move(owner);
    return v;
  }
  // Go int (kInt) by default; `k` may be any of the signed integer kinds.
  static Value integer(std::int64_t i, Kind k = Kind::kInt) {
    Value v(k);
    v.i_ = i;
    return v;
  }
  // `k` is one of kUint, kUint8, kUint32, kUint64.
  static Value unsigned_integer(std::uint64_t u, Kind k = Kind::kUint64) {
    Value v(k);
    v.u_ = u;
    return v;
  }
  static Value float64(double f) {
    Value v(Kind::kFloat64);
    v.f_ = f;
    return v;
  }
  // complex128; the pair lives on the heap (complex values are rare: only constants).
  static Value complex128(double real, double imag);
  static Value list(std::shared_ptr<List> l);
  static Value map(std::shared_ptr<Map> m);
  static Value string_map(std::shared_ptr<StringMap> m);
  static Value object(std::shared_ptr<const Object> o);
  // Typed nil slice / map of the given kind (kList, kMap, kStringMap).
  static Value typed_nil(Kind k) { return Value(k); }

  Kind kind() const { return kind_; }
  bool is_invalid() const { return kind_ == Kind::kInvalid; }
  bool is_nil() const { return kind_ == Kind::kNil; }
  // True for kInvalid and kNil: the cases Go hands to an `any` parameter as nil.
  bool is_nil_or_invalid() const { return kind_ == Kind::kInvalid || kind_ == Kind::kNil; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_signed() const {
    return kind_ == Kind::kInt || kind_ == Kind::kInt32 || kind_ == Kind::kInt64;
  }
  bool is_unsigned() const {
    return kind_ == Kind::kUint || kind_ == Kind::kUint8 || kind_ == Kind::kUint32 ||
           kind_ == Kind::kUint64;
  }
  bool is_integer() const { return is_signed() || is_unsigned(); }
  bool is_number() const { return is_integer() || kind_ == Kind::kFloat64; }

  // Accessors; each requires the matching kind (checked only by assertions).
  bool as_bool() const { return b_; }
  std::string_view as_string() const {
    return {static_cast<const char*>(ptr_), static_cast<std::size_t>(n_)};
  }
  std::int64_t as_int() const { return i_; }
  std::uint64_t as_uint() const { return u_; }
  double as_float() const { return f_; }
  double as_complex_real() const { return static_cast<const double*>(ptr_)[0]; }
  double as_complex_imag() const { return static_cast<const double*>(ptr_)[1]; }
  // Null for a typed nil slice/map. Mutable because Go slices/maps are references.
  List* as_list() const { return static_cast<List*>(const_cast<void*>(ptr_)); }
  Map* as_map() const { return static_cast<Map*>(const_cast<void*>(ptr_)); }
  StringMap* as_string_map() const { return static_cast<StringMap*>(const_cast<void*>(ptr_)); }
  const Object* as_object() const { return static_cast<const Object*>(ptr_); }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // Any integer kind as int64 (uint64 values above INT64_MAX wrap, as a Go conversion).
  std::int64_t int_value() const { return is_unsigned() ? static_cast<std::int64_t>(u_) : i_; }

  // Executor detail: the value was read out of an `interface {}` slot (an element of
  // map[string]interface {} or []interface {}); Go's static type is then `interface {}`,
  // which shows in some error messages. Functions can ignore it.
  bool boxed() const { return boxed_; }
  void set_boxed(bool b) { boxed_ = b; }

 private:
  explicit Value(Kind k) : kind_(k) {}

  Kind kind_ = Kind::kInvalid;
  bool boxed_ = false;
  union {
    std::uint64_t u_ = 0;
    bool b_;
    std::int64_t i_;
    double f_;
    std::uint64_t n_;  // string length
  };
  const void* ptr_ = nullptr;
  std::shared_ptr<const void> owner_;
};

// A Go slice. `elem_type` is the Go element type name for %T/typeOf ("" = interface {},
// "string" for []string, "v1.Container" for []corev1.Container ...).
class List {
 public:
  List() = default;
  explicit List(std::vector<Value> items, std::string elem_type = {})
      : items(std::move(items)), elem_type(std::move(elem_type)) {}
  std::vector<Value> items;
  std::string elem_type;
};

// map[string]interface {}: entries kept sorted by key (Go prints and ranges in that order).
class Map {
 public:
  using Entry = std::pair<std::string, Value>;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Null when absent.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Inserts or replaces.
  void set(std::string_view key, Value v);
  bool erase(std::string_view key);
  const std::vector<Entry>& entries() const { return entries_; }
  // Appending in strictly increasing key order is O(1); used by loaders. Falls back to
  // set() when the order is not increasing.
  void append_sorted(std::string key, Value v);

 private:
  std::vector<Entry> entries_;
};

// map[string]string.
class StringMap {
 public:
  using Entry = std::pair<std::string, std::string>;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::string* find(std::string_view key) const;
  void set(std::string_view key, std::string v);
  bool erase(std::string_view key);
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

class Function;

// Typed Go data (structs, pointers to protobuf messages, enums, wrappers) as templates see
// it through reflection. Implementations must be immutable and thread-safe.
//
// Field/method lookup follows Go: `.Name` first looks for a method, then an exported field.
// A nil pointer (an absent message) still has its methods, so `.X.GetValue` on an absent
// `*wrapperspb.BoolValue` gives false; field access on it is the executor's error
// "nil pointer evaluating *T.Name".
class Object {
 public:
  virtual ~Object() = default;
  // Go type as printed by %T, e.g. "*v1alpha1.ProxyConfig", "v1.ObjectMeta".
  virtual std::string_view go_type() const = 0;
  // reflect.Kind name for kindIs/kindOf: "ptr", "struct", "int32", ...
  virtual std::string_view go_kind() const = 0;
  // A nil pointer: falsy, `<nil>` when printed, fields unavailable.
  virtual bool is_nil() const { return false; }
  // The method `name` (receiver already bound), or nullopt when the type has none.
  virtual std::optional<Function> method(std::string_view name) const;
  // The exported field `name`, or nullopt when the type has none.
  virtual std::optional<Value> field(std::string_view name) const;
  // fmt's %v (plus: %+v, sharp: %#v) of the object's value: its String() when it has one
  // (is_stringer), else the struct form "{a b}" without the "&" of a pointer, which the
  // printer adds where Go's fmt does (print/printf of a pointer; an action derefs first).
  // Not called for nil pointers.
  virtual void format(std::string& out, bool plus, bool sharp) const = 0;
  // The type (or its pointer) has a String() method that fmt uses.
  virtual bool is_stringer() const { return false; }
  // An integer-kind object (an enum) reports its number here so eq/lt can compare it.
  virtual std::optional<std::int64_t> int_value() const { return std::nullopt; }
};

// Elements that list functions (sprig append/push/prepend) copied from an argument list into
// a new one, on this thread, since it started. For tests: building a list element by element
// (`$l = append $l x` in a range) must copy O(n) elements in all, not O(n^2).
std::uint64_t& list_elements_copied();

// Go's truth rule (text/template `truth`): false, 0, "", nil, empty slice/map, nil pointer
// are false; invalid is false.
bool truth(const Value& v);

// Go type name as printed by %T and sprig typeOf: "float64", "map[string]interface {}",
// "[]interface {}", "<nil>" for nil and invalid.
std::string go_type_name(const Value& v);

// reflect.Kind name as sprig kindOf/kindIs use: "string", "float64", "map", "slice",
// "bool", "int", "ptr", "struct", "invalid" for nil/invalid.
std::string_view go_kind_name(const Value& v);

// Length as Go's len (strings in bytes); nullopt for kinds without a length.
std::optional<std::int64_t> length(const Value& v);

}  // namespace meshop::template_engine
