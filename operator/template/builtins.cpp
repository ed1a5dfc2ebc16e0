// Go text/template builtins on Values, following funcs.go: the comparison rules of
// basicKind, index/slice/len with Go's errors (including the reflect panics Go turns into
// errors), print/printf/println through the Go fmt emulation, and the escapers.
#include "operator/template/builtins.hpp"

#include "operator/template/fmt_internal.hpp"

namespace meshop::template_engine::detail {
namespace {

enum class BasicKind { kInvalid, kBool, kComplex, kInt, kFloat, kString, kUint };

// indirectInterface: the concrete value inside an interface; nil interface -> invalid.
Value indirect_interface(const Value& v) {
  if (v.is_nil()) return Value();
  Value r = v;
  r.set_boxed(false);
  return r;
}

BasicKind basic_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::kBool:
      return BasicKind::kBool;
    case Kind::kInt:
    case Kind::kInt32:
    case Kind::kInt64:
      return BasicKind::kInt;
    case Kind::kUint:
    case Kind::kUint8:
    case Kind::kUint32:
    case Kind::kUint64:
      return BasicKind::kUint;
    case Kind::kFloat64:
      return BasicKind::kFloat;
    case Kind::kComplex128:
      return BasicKind::kComplex;
    case Kind::kString:
      return BasicKind::kString;
    case Kind::kObject:
      return v.as_object()->int_value() ? BasicKind::kInt : BasicKind::kInvalid;
    default:
      return BasicKind::kInvalid;
  }
}

std::int64_t int_of(const Value& v) {
  if (v.kind() == Kind::kObject) return *v.as_object()->int_value();
  return v.as_int();
}

// reflect.Kind identity for canCompare.
int reflect_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::kMap:
    case Kind::kStringMap:
      return 100;
    case Kind::kObject:
      return 200;
    default:
      return static_cast<int>(v.kind());
  }
}

bool is_nil_value(const Value& v) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      return true;
    case Kind::kList:
      return v.as_list() == nullptr;
    case Kind::kMap:
      return v.as_map() == nullptr;
    case Kind::kStringMap:
      return v.as_string_map() == nullptr;
    case Kind::kObject:
      return v.as_object()->is_nil();
    default:
      return false;
  }
}

std::string fmt1(std::string_view format, const Value& v) {
  return sprintf(format, std::span<const Value>(&v, 1));
}

std::string incompatible(const Value& a, const Value& b) {
  return "incompatible types for comparison: " + go_type_name(a) + " and " + go_type_name(b);
}

Result<Value> eq(Args args) {
  Value a1 = indirect_interface(args[0]);
  if (args.size() < 2) return fail("missing argument for comparison");
  BasicKind k1 = basic_kind(a1);
  for (std::size_t i = 1; i < args.size(); ++i) {
    Value a = indirect_interface(args[i]);
    BasicKind k2 = basic_kind(a);
    bool t = false;
    if (k1 != k2) {
      if (k1 == BasicKind::kInt && k2 == BasicKind::kUint) {
        t = int_of(a1) >= 0 && static_cast<std::uint64_t>(int_of(a1)) == a.as_uint();
      } else if (k1 == BasicKind::kUint && k2 == BasicKind::kInt) {
        t = int_of(a) >= 0 && a1.as_uint() == static_cast<std::uint64_t>(int_of(a));
      } else if (!a1.is_invalid() && !a.is_invalid()) {
        return fail(incompatible(a1, a));
      }
    } else {
      switch (k1) {
        case BasicKind::kBool:
          t = a1.as_bool() == a.as_bool();
          break;
        case BasicKind::kFloat:
          t = a1.as_float() == a.as_float();
          break;
        case BasicKind::kComplex:
          t = a1.as_complex_real() == a.as_complex_real() &&
              a1.as_complex_imag() == a.as_complex_imag();
          break;
        case BasicKind::kInt:
          t = int_of(a1) == int_of(a);
          break;
        case BasicKind::kString:
          t = a1.as_string() == a.as_string();
          break;
        case BasicKind::kUint:
          t = a1.as_uint() == a.as_uint();
          break;
        default: {
          bool can_compare =
              reflect_kind(a1) == reflect_kind(a) || a1.is_invalid() || a.is_invalid();
          if (!can_compare)
            return fail("non-comparable types " + fmt1("%s", a1) + ": " + go_type_name(a1) + ", " +
                        go_type_name(a) + ": " + fmt1("%v", a));
          if (is_nil_value(a1) || is_nil_value(a)) {
            t = is_nil_value(a) == is_nil_value(a1);
          } else {
            if (a.kind() != Kind::kObject)
              return fail("non-comparable type " + fmt1("%s", a) + ": " + go_type_name(a));
            t = a.as_object() == a1.as_object();
          }
        }
      }
    }
    if (t) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Result<bool> lt(const Value& x, const Value& y) {
  Value a1 = indirect_interface(x);
  BasicKind k1 = basic_kind(a1);
  if (k1 == BasicKind::kInvalid) return fail("invalid type for comparison");
  Value a2 = indirect_interface(y);
  BasicKind k2 = basic_kind(a2);
  if (k2 == BasicKind::kInvalid) return fail("invalid type for comparison");
  if (k1 != k2) {
    if (k1 == BasicKind::kInt && k2 == BasicKind::kUint)
      return int_of(a1) < 0 || static_cast<std::uint64_t>(int_of(a1)) < a2.as_uint();
    if (k1 == BasicKind::kUint && k2 == BasicKind::kInt)
      return int_of(a2) >= 0 && a1.as_uint() < static_cast<std::uint64_t>(int_of(a2));
    return fail(incompatible(a1, a2));
  }
  switch (k1) {
    case BasicKind::kBool:
    case BasicKind::kComplex:
      return fail("invalid type for comparison");
    case BasicKind::kFloat:
      return a1.as_float() < a2.as_float();
    case BasicKind::kInt:
      return int_of(a1) < int_of(a2);
    case BasicKind::kString:
      return a1.as_string() < a2.as_string();
    case BasicKind::kUint:
      return a1.as_uint() < a2.as_uint();
    default:
      return fail("invalid type for comparison");
  }
}

Result<bool> le(const Value& a, const Value& b) {
  Result<bool> l = lt(a, b);
  if (!l.ok() || *l) return l;
  Value pair[2] = {a, b};
  Result<Value> e = eq(pair);
  if (!e.ok()) return fail(e.error());
  return e->as_bool();
}

Result<Value> from_bool(Result<bool> r) {
  if (!r.ok()) return fail(r.error());
  return Value::boolean(*r);
}

// indirect(): for a nil interface/pointer reports nil.
bool indirect_is_nil(const Value& v) {
  return v.is_nil() || (v.kind() == Kind::kObject && v.as_object()->is_nil());
}

Result<int> index_arg(const Value& index, std::size_t cap) {
  std::int64_t x;
  if (index.is_signed()) {
    x = index.as_int();
  } else if (index.is_unsigned()) {
    x = static_cast<std::int64_t>(index.as_uint());
  } else if (index.kind() == Kind::kObject && index.as_object()->int_value()) {
    x = *index.as_object()->int_value();
  } else if (index.is_invalid()) {
    return fail("cannot index slice/array with nil");
  } else {
    return fail("cannot index slice/array with type " + go_type_name(index));
  }
  if (x < 0 || static_cast<std::uint64_t>(x) > cap)
    return fail("index out of range: " + std::to_string(x));
  return static_cast<int>(x);
}

Result<Value> index(Args args) {
  Value item = indirect_interface(args[0]);
  if (item.is_invalid()) return fail("index of untyped nil");
  for (std::size_t i = 1; i < args.size(); ++i) {
    Value idx = indirect_interface(args[i]);
    if (indirect_is_nil(item)) return fail("index of nil pointer");
    switch (item.kind()) {
      case Kind::kList: {
        const List* l = item.as_list();
        std::size_t n = l != nullptr ? l->items.size() : 0;
        Result<int> x = index_arg(idx, n);
        if (!x.ok()) return fail(x.error());
        if (static_cast<std::size_t>(*x) == n) return fail("reflect: slice index out of range");
        bool boxed = l->elem_type.empty();
        item = l->items[static_cast<std::size_t>(*x)];
        item.set_boxed(boxed);
        if (item.is_nil()) item = Value::nil();
        break;
      }
      case Kind::kString: {
        std::string_view s = item.as_string();
        Result<int> x = index_arg(idx, s.size());
        if (!x.ok()) return fail(x.error());
        if (static_cast<std::size_t>(*x) == s.size())
          return fail("reflect: string index out of range");
        item = Value::unsigned_integer(static_cast<unsigned char>(s[static_cast<std::size_t>(*x)]),
                                       Kind::kUint8);
        break;
      }
      case Kind::kMap:
      case Kind::kStringMap: {
        if (idx.is_invalid()) return fail("value is nil; should be of type string");
        if (idx.kind() != Kind::kString)
          return fail("value has type " + go_type_name(idx) + "; should be string");
        if (item.kind() == Kind::kMap) {
          const Map* m = item.as_map();
          const Value* v = m != nullptr ? m->find(idx.as_string()) : nullptr;
          if (v != nullptr) {
            item = *v;
            item.set_boxed(true);
          } else {
            item = Value::nil();
          }
        } else {
          const StringMap* m = item.as_string_map();
          const std::string* v = m != nullptr ? m->find(idx.as_string()) : nullptr;
          item =
              v != nullptr ? Value::string_ref(*v, item.owner()) : Value::string_ref("", nullptr);
        }
        break;
      }
      default:
        return fail("can't index item of type " + go_type_name(item));
    }
  }
  return item;
}

Result<Value> slice(Args args) {
  Value item = indirect_interface(args[0]);
  if (item.is_invalid()) return fail("slice of untyped nil");
  if (indirect_is_nil(item)) return fail("slice of nil pointer");
  std::size_t nidx = args.size() - 1;
  if (nidx > 3) return fail("too many slice indexes: " + std::to_string(nidx));
  std::size_t cap;
  if (item.kind() == Kind::kString) {
    if (nidx == 3) return fail("cannot 3-index slice a string");
    cap = item.as_string().size();
  } else if (item.kind() == Kind::kList) {
    cap = item.as_list() != nullptr ? item.as_list()->items.size() : 0;
  } else {
    return fail("can't slice item of type " + go_type_name(item));
  }
  int idx[3] = {0, static_cast<int>(cap), 0};
  for (std::size_t i = 0; i < nidx; ++i) {
    Result<int> x = index_arg(indirect_interface(args[i + 1]), cap);
    if (!x.ok()) return fail(x.error());
    idx[i] = *x;
  }
  if (idx[0] > idx[1])
    return fail("invalid slice index: " + std::to_string(idx[0]) + " > " + std::to_string(idx[1]));
  if (nidx == 3 && idx[1] > idx[2])
    return fail("invalid slice index: " + std::to_string(idx[1]) + " > " + std::to_string(idx[2]));
  if (item.kind() == Kind::kString)
    return Value::string_ref(item.as_string().substr(static_cast<std::size_t>(idx[0]),
                                                     static_cast<std::size_t>(idx[1] - idx[0])),
                             item.owner());
  const List* l = item.as_list();
  if (l == nullptr) return item;
  auto out = std::make_shared<List>();
  out->elem_type = l->elem_type;
  out->items.assign(l->items.begin() + idx[0], l->items.begin() + idx[1]);
  return Value::list(std::move(out));
}

Result<Value> len(const Value& v) {
  if (indirect_is_nil(v)) return fail("len of nil pointer");
  if (v.is_invalid()) return fail("reflect: call of reflect.Value.Type on zero Value");
  if (auto n = length(v)) return Value::integer(*n);
  return fail("len of type " + go_type_name(v));
}

// evalArgs of funcs.go: fmt.Sprint with each argument made printable ("<no value>" for nil).
std::string eval_args(Args args) {
  if (args.size() == 1 && args[0].kind() == Kind::kString) return std::string(args[0].as_string());
  std::vector<Value> printable(args.begin(), args.end());
  for (Value& v : printable)
    if (v.is_nil_or_invalid()) v = Value::string_ref("<no value>", nullptr);
  return sprint(printable);
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\0':
        out += "\xEF\xBF\xBD";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string js_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\':
          out += "\\\\";
          break;
        case '\'':
          out += "\\'";
          break;
        case '"':
          out += "\\\"";
          break;
        case '<':
          out += "\\u003C";
          break;
        case '>':
          out += "\\u003E";
          break;
        case '&':
          out += "\\u0026";
          break;
        case '=':
          out += "\\u003D";
          break;
        default:
          if (c < ' ') {
            out += "\\u00";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    auto [r, w] = decode_rune(s.substr(i));
    if (is_print(r)) {
      out.append(s.substr(i, static_cast<std::size_t>(w)));
    } else {
      Value v = Value::integer(static_cast<std::int64_t>(r), Kind::kInt32);
      out += sprintf("\\u%04X", std::span<const Value>(&v, 1));
    }
    i += static_cast<std::size_t>(w);
  }
  return out;
}

std::string url_query_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
  return out;
}

Result<Value> call_builtin(Builtin b, Args args) {
  switch (b) {
    case Builtin::kNot:
      return Value::boolean(!truth(args[0]));
    case Builtin::kEq:
      return eq(args);
    case Builtin::kNe: {
      Result<Value> e = eq(args);
      if (!e.ok()) return e;
      return Value::boolean(!e->as_bool());
    }
    case Builtin::kLt:
      return from_bool(lt(args[0], args[1]));
    case Builtin::kLe:
      return from_bool(le(args[0], args[1]));
    case Builtin::kGt: {
      Result<bool> r = le(args[0], args[1]);
      if (!r.ok()) return fail(r.error());
      return Value::boolean(!*r);
    }
    case Builtin::kGe: {
      Result<bool> r = lt(args[0], args[1]);
      if (!r.ok()) return fail(r.error());
      return Value::boolean(!*r);
    }
    case Builtin::kLen:
      return len(args[0]);
    case Builtin::kIndex:
      return index(args);
    case Builtin::kSlice:
      return slice(args);
    case Builtin::kPrint:
      return Value::string(sprint(args));
    case Builtin::kPrintln:
      return Value::string(sprintln(args));
    case Builtin::kPrintf: {
      std::string out;
      append_sprintf(out, args[0].as_string(), args.subspan(1));
      return Value::string(std::move(out));
    }
    case Builtin::kHtml:
      return Value::string(html_escape(eval_args(args)));
    case Builtin::kJs:
      return Value::string(js_escape(eval_args(args)));
    case Builtin::kUrlquery:
      return Value::string(url_query_escape(eval_args(args)));
    default:
      return fail("unknown builtin");
  }
}

Result<Value> builtin_call(const std::string& callee, Args args) {
  Value fn = indirect_interface(args[0]);
  if (fn.is_invalid()) return fail("call of nil");
  return fail("non-function " + callee + " of type " + go_type_name(fn));
}

}  // namespace meshop::template_engine::detail
