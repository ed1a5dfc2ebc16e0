// Template functions: how a function is declared and registered, and the helpers a
// function implementation needs (Go fmt printing, type names).
//
// A Function is declared with Go-like parameter types. Before the body runs, the executor
// converts every argument as Go's text/template does for a func of that signature, with
// Go's error messages:
//   - an `any` parameter accepts everything; a missing value (kInvalid) arrives as nil;
//   - a typed parameter (string, int, map[string]interface {}, ...) accepts only that type:
//     "wrong type for value; expected string; got float64", "invalid value; expected int";
//   - number constants in the template take the parameter's type (`trunc 63` passes int 63
//     to an int parameter, a float64 to a float64 one); for `any` they become int or float64.
// So a body can rely on its arguments' kinds: a kString parameter always holds a kString.
// The body returns a Value, or fail("message"); the executor reports
// `error calling NAME: message` with the template position, and aborts execution as Go
// does for a func returning (T, error) with a non-nil error.
//
// Registration (h3's sprig/Istio libraries use this):
//
//   FunctionMap fm;
//   fm.add("upper", {{ParamType::string()}}, [](Args a) -> Result<Value> {
//     std::string s(a[0].as_string());
//     for (char& c : s) c = toupper(c);
//     return Value::string(std::move(s));
//   });
//   fm.add("list", {{}, ParamType::any()} /* variadic ...any */, ...);  // see Signature
//
// Maps are immutable once a Template has been parsed with them (they are shared by every
// execution). Later add() calls with the same name replace earlier ones, like Go's Funcs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "operator/template/value.hpp"

namespace meshop::template_engine {

using Args = std::span<const Value>;

// A Go parameter type.
struct ParamType {
  // kInvalid means `interface {}` (any). Otherwise the kind the argument must have.
  Kind kind = Kind::kInvalid;
  // For kList: the element type name ("" = []interface {}, "string" = []string). For
  // kObject: the required Object::go_type(), or "" to accept any object.
  std::string_view type_name = {};

  static constexpr ParamType any() { return {}; }
  static constexpr ParamType boolean() { return {Kind::kBool}; }
  static constexpr ParamType string() { return {Kind::kString}; }
  static constexpr ParamType int_() { return {Kind::kInt}; }
  static constexpr ParamType int64() { return {Kind::kInt64}; }
  static constexpr ParamType float64() { return {Kind::kFloat64}; }
  static constexpr ParamType list(std::string_view elem = {}) { return {Kind::kList, elem}; }
  static constexpr ParamType map() { return {Kind::kMap}; }
  static constexpr ParamType string_map() { return {Kind::kStringMap}; }
  static constexpr ParamType object(std::string_view go_type) { return {Kind::kObject, go_type}; }
  // Go spelling for error messages: "interface {}", "string", "map[string]string", ...
  std::string go_name() const;
};

struct Signature {
  Signature() = default;
  // Implicit so that `{{ParamType::string()}}` and `{{}, ParamType::any()}` read naturally.
  Signature(std::vector<ParamType> p, std::optional<ParamType> v = std::nullopt)  // NOLINT
      : params(std::move(p)), variadic(v) {}
  std::vector<ParamType> params;
  // When set, the function is variadic: after `params`, any number of arguments of this
  // type (Go's `...T`).
  std::optional<ParamType> variadic;
};

using FunctionBody = std::function<Result<Value>(Args)>;

class Function {
 public:
  Function() = default;
  Function(Signature sig, FunctionBody body) : sig_(std::move(sig)), body_(std::move(body)) {}
  const Signature& signature() const { return sig_; }
  // Runs the body on already-converted arguments.
  Result<Value> call(Args args) const { return body_(args); }
  explicit operator bool() const { return static_cast<bool>(body_); }

 private:
  Signature sig_;
  FunctionBody body_;
};

class FunctionMap {
 public:
  void add(std::string name, Signature sig, FunctionBody body) {
    fns_[std::move(name)] = Function(std::move(sig), std::move(body));
  }
  void add(std::string name, Function fn) { fns_[std::move(name)] = std::move(fn); }
  // Adds every function of `other`, replacing same-named ones (Go: Funcs(a).Funcs(b)).
  void merge(const FunctionMap& other) {
    for (const auto& [n, f] : other.fns_)
      fns_[n] = f;
  }
  // Removes `name` (Helm deletes sprig's env and expandenv this way).
  void erase(std::string_view name) { fns_.erase(std::string(name)); }
  const Function* find(std::string_view name) const {
    auto it = fns_.find(std::string(name));
    return it == fns_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return fns_.size(); }

 private:
  std::unordered_map<std::string, Function> fns_;
};

// The function library templates get by default: sprig's TxtFuncMap overlaid with Istio's
// InjectionFuncmap (Istio wins: indent, contains, env, omit). Built once, then shared.
// Defined in default_functions.cpp (owned by the sprig/Istio function work).
const FunctionMap& default_functions();

// --- Go fmt, for function bodies ------------------------------------------------------

// fmt.Sprint(v): %v formatting of one value (kInvalid prints "<nil>", as a nil interface).
std::string sprint_value(const Value& v);
void append_value(std::string& out, const Value& v);
// fmt.Sprint(args...): spaces between operands when neither is a string.
std::string sprint(Args args);
// fmt.Sprintln(args...): spaces always, newline at the end.
std::string sprintln(Args args);
// fmt.Sprintf(format, args...) with Go's verbs, flags and %!verb(type=value) errors.
std::string sprintf(std::string_view format, Args args);
// strconv.Quote(s).
std::string go_quote(std::string_view s);
// strconv.FormatFloat(f, fmt, prec, 64), e.g. ('g', -1) is the shortest repr.
std::string format_float(double f, char fmt, int prec);

}  // namespace meshop::template_engine
