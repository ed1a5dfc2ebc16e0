// Go's fmt package, as far as template values need it: Sprint, Sprintln, Sprintf with the
// verbs, flags, widths and precisions of fmt, and its error notations (%!d(string=x),
// %!s(MISSING), %!(EXTRA ...), %!(NOVERB), %!(BADWIDTH), %!(BADPREC), %!v(BADINDEX)).
// The structure follows fmt's print.go/format.go so the corner cases line up.
#include <charconv>
#include <cmath>
#include <cstring>

#include "api/utf8.hpp"
#include "operator/template/fmt_internal.hpp"
#include "operator/template/functions.hpp"

namespace meshop::template_engine {
namespace {

constexpr std::string_view kLowerDigits = "0123456789abcdefx";
constexpr std::string_view kUpperDigits = "0123456789ABCDEFX";

void append_rune(std::string& out, char32_t r) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

}  // namespace

// utf8.DecodeRuneInString: invalid encodings decode as (U+FFFD, 1).
std::pair<char32_t, int> decode_rune(std::string_view s) {
  if (s.empty()) return {0xFFFD, 0};
  api::Rune r = api::decode_rune(s, 0);
  return {r.r, r.width};
}

std::size_t rune_count(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n)
    i += static_cast<std::size_t>(decode_rune(s.substr(i)).second);
  return n;
}

// unicode.IsPrint, approximated outside ASCII: Go's tables are not reproduced; the
// non-printable ranges that matter in practice (C1 controls, separators, format
// characters, private use, noncharacters) are.
bool is_print(char32_t r) {
  if (r < 0x80) return r >= 0x20 && r < 0x7F;
  if (r < 0xA0 || r == 0xAD) return false;
  if (r == 0xA0 || (r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) ||
      (r >= 0x205F && r <= 0x206F) || r == 0x3000 || r == 0xFEFF || r == 0x1680)
    return false;
  if (r >= 0xD800 && r <= 0xDFFF) return false;
  if (r >= 0xE000 && r <= 0xF8FF) return false;
  if (r >= 0xFFF0 && r <= 0xFFFB) return false;
  if ((r & 0xFFFE) == 0xFFFE) return false;
  if (r >= 0xF0000) return false;
  if (r >= 0xE0000 && r <= 0xE0FFF) return false;
  return r <= 0x10FFFF;
}

namespace {

void append_quoted_rune_escape(std::string& out, char32_t r, char quote, bool ascii_only) {
  if (r == static_cast<char32_t>(quote) || r == '\\') {
    out.push_back('\\');
    out.push_back(static_cast<char>(r));
    return;
  }
  if (ascii_only ? (r < 0x80 && is_print(r)) : is_print(r)) {
    append_rune(out, r);
    return;
  }
  static constexpr char hex[] = "0123456789abcdef";
  switch (r) {
    case '\a':
      out += "\\a";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\v':
      out += "\\v";
      return;
    default:
      break;
  }
  if (r < ' ' || r == 0x7F) {
    out += "\\x";
    out.push_back(hex[(r >> 4) & 0xF]);
    out.push_back(hex[r & 0xF]);
    return;
  }
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  if (r < 0x10000) {
    out += "\\u";
    for (int s = 12; s >= 0; s -= 4)
      out.push_back(hex[(r >> s) & 0xF]);
  } else {
    out += "\\U";
    for (int s = 28; s >= 0; s -= 4)
      out.push_back(hex[(r >> s) & 0xF]);
  }
}

void append_quoted(std::string& out, std::string_view s, char quote, bool ascii_only) {
  out.push_back(quote);
  for (std::size_t i = 0; i < s.size();) {
    auto [r, w] = decode_rune(s.substr(i));
    if (w == 1 && r == 0xFFFD) {
      static constexpr char hex[] = "0123456789abcdef";
      auto b = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out.push_back(hex[b >> 4]);
      out.push_back(hex[b & 0xF]);
      ++i;
      continue;
    }
    append_quoted_rune_escape(out, r, quote, ascii_only);
    i += static_cast<std::size_t>(w);
  }
  out.push_back(quote);
}

bool can_backquote(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto [r, w] = decode_rune(s.substr(i));
    i += static_cast<std::size_t>(w);
    if (w > 1) {
      if (r == 0xFEFF) return false;
      continue;
    }
    if (r == 0xFFFD) return false;
    if ((r < ' ' && r != '\t') || r == '`' || r == 0x7F) return false;
  }
  return true;
}

// Decimal digits of |f| and the decimal point position, as strconv's decimalSlice:
// value = 0.d1d2d3... * 10^dp. nd == 0 for zero.
struct Digits {
  char d[800];
  int nd = 0;
  int dp = 0;
};

// Shortest digits (prec < 0) or `sig` significant digits (scientific rounding).
void digits_sig(double f, int sig, Digits& out) {
  f = std::fabs(f);
  char buf[512];
  std::to_chars_result r =
      sig < 0 ? std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific)
              : std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific,
                              sig > 0 ? sig - 1 : 0);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  auto e = s.find('e');
  std::string_view mant = s.substr(0, e);
  int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  out.nd = 0;
  for (char c : mant)
    if (c != '.') out.d[out.nd++] = c;
  // Trim trailing zeros as strconv's decimal does.
  while (out.nd > 0 && out.d[out.nd - 1] == '0')
    --out.nd;
  out.dp = out.nd == 0 ? 0 : exp + 1;
}

// Digits rounded to `prec` places after the decimal point.
void digits_fixed(double f, int prec, Digits& out) {
  f = std::fabs(f);
  std::string buf(400 + static_cast<std::size_t>(prec), '\0');
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), f, std::chars_format::fixed, prec);
  std::string_view s(buf.data(), static_cast<std::size_t>(r.ptr - buf.data()));
  auto dot = s.find('.');
  std::string_view ip = s.substr(0, dot);
  std::string_view fp = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  std::string all = std::string(ip) + std::string(fp);
  std::size_t lead = 0;
  while (lead < all.size() && all[lead] == '0')
    ++lead;
  int dp = static_cast<int>(ip.size()) - static_cast<int>(lead);
  out.nd = 0;
  for (std::size_t i = lead; i < all.size() && out.nd < static_cast<int>(sizeof out.d); ++i)
    out.d[out.nd++] = all[i];
  while (out.nd > 0 && out.d[out.nd - 1] == '0')
    --out.nd;
  out.dp = out.nd == 0 ? 0 : dp;
}

void fmt_e(std::string& dst, bool neg, const Digits& d, int prec, char fmt) {
  if (neg) dst.push_back('-');
  dst.push_back(d.nd != 0 ? d.d[0] : '0');
  if (prec > 0) {
    dst.push_back('.');
    int i = 1;
    int m = std::min(d.nd, prec + 1);
    if (i < m) {
      dst.append(d.d + i, static_cast<std::size_t>(m - i));
      i = m;
    }
    for (; i <= prec; ++i)
      dst.push_back('0');
  }
  dst.push_back(fmt);
  int exp = d.nd == 0 ? 0 : d.dp - 1;
  dst.push_back(exp < 0 ? '-' : '+');
  if (exp < 0) exp = -exp;
  if (exp < 10) {
    dst.push_back('0');
    dst.push_back(static_cast<char>('0' + exp));
  } else if (exp < 100) {
    dst.push_back(static_cast<char>('0' + exp / 10));
    dst.push_back(static_cast<char>('0' + exp % 10));
  } else {
    dst.push_back(static_cast<char>('0' + exp / 100));
    dst.push_back(static_cast<char>('0' + (exp / 10) % 10));
    dst.push_back(static_cast<char>('0' + exp % 10));
  }
}

void fmt_f(std::string& dst, bool neg, const Digits& d, int prec) {
  if (neg) dst.push_back('-');
  if (d.dp > 0) {
    int m = std::min(d.nd, d.dp);
    dst.append(d.d, static_cast<std::size_t>(m));
    for (; m < d.dp; ++m)
      dst.push_back('0');
  } else {
    dst.push_back('0');
  }
  if (prec > 0) {
    dst.push_back('.');
    for (int i = 1; i <= prec; ++i) {
      char ch = '0';
      int j = d.dp + i - 1;
      if (0 <= j && j < d.nd) ch = d.d[j];
      dst.push_back(ch);
    }
  }
}

void fmt_b(std::string& dst, double f) {
  std::uint64_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bool neg = bits >> 63;
  std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  int exp = static_cast<int>((bits >> 52) & 0x7FF);
  if (exp == 0)
    ++exp;
  else
    mant |= std::uint64_t{1} << 52;
  exp += -1023 - 52;
  if (neg) dst.push_back('-');
  dst += std::to_string(mant);
  dst.push_back('p');
  if (exp >= 0) dst.push_back('+');
  dst += std::to_string(exp);
}

void fmt_x(std::string& dst, double f, int prec, char fmt) {
  // %x of a float: 0x1.8p+01 style, exponent at least two digits.
  bool neg = std::signbit(f);
  f = std::fabs(f);
  char buf[128];
  auto r = prec < 0 ? std::to_chars(buf, buf + sizeof buf, f, std::chars_format::hex)
                    : std::to_chars(buf, buf + sizeof buf, f, std::chars_format::hex, prec);
  std::string s(buf, r.ptr);
  auto p = s.find('p');
  std::string mant = s.substr(0, p);
  std::string exps = s.substr(p + 1);
  int exp = std::atoi(exps.c_str());
  if (f == 0) {
    mant = "0";
    if (prec > 0) mant += "." + std::string(static_cast<std::size_t>(prec), '0');
    exp = 0;
  }
  if (neg) dst.push_back('-');
  dst += fmt == 'X' ? "0X" : "0x";
  for (char c : mant)
    dst.push_back(fmt == 'X' ? static_cast<char>(std::toupper(c)) : c);
  dst.push_back(fmt == 'X' ? 'P' : 'p');
  dst.push_back(exp < 0 ? '-' : '+');
  if (exp < 0) exp = -exp;
  if (exp < 10) dst.push_back('0');
  dst += std::to_string(exp);
}

}  // namespace

// strconv.AppendFloat(dst, f, fmt, prec, 64).
void append_float(std::string& dst, double f, char fmt, int prec) {
  if (std::isnan(f)) {
    dst += "NaN";
    return;
  }
  if (std::isinf(f)) {
    dst += f > 0 ? "+Inf" : "-Inf";
    return;
  }
  bool neg = std::signbit(f);
  Digits d;
  switch (fmt) {
    case 'b':
      fmt_b(dst, f);
      return;
    case 'x':
    case 'X':
      fmt_x(dst, f, prec, fmt);
      return;
    case 'e':
    case 'E':
      digits_sig(f, prec < 0 ? -1 : prec + 1, d);
      fmt_e(dst, neg, d, prec < 0 ? std::max(d.nd - 1, 0) : prec, fmt);
      return;
    case 'f':
      if (prec < 0) {
        digits_sig(f, -1, d);
        fmt_f(dst, neg, d, std::max(d.nd - d.dp, 0));
      } else {
        digits_fixed(f, prec, d);
        fmt_f(dst, neg, d, prec);
      }
      return;
    case 'g':
    case 'G': {
      bool shortest = prec < 0;
      if (shortest) {
        digits_sig(f, -1, d);
        prec = d.nd;
      } else {
        if (prec == 0) prec = 1;
        digits_sig(f, prec, d);
      }
      int eprec = prec;
      if (eprec > d.nd && d.nd >= d.dp) eprec = d.nd;
      if (shortest) eprec = 6;
      int exp = d.dp - 1;
      if (d.nd == 0) exp = 0;
      if (exp < -4 || exp >= eprec) {
        if (prec > d.nd) prec = d.nd;
        fmt_e(dst, neg, d, prec - 1, fmt == 'g' ? 'e' : 'E');
        return;
      }
      if (prec > d.dp) prec = d.nd;
      fmt_f(dst, neg, d, std::max(prec - d.dp, 0));
      return;
    }
    default:
      dst.push_back('%');
      dst.push_back(fmt);
      return;
  }
}

std::string format_float(double f, char fmt, int prec) {
  std::string s;
  append_float(s, f, fmt, prec);
  return s;
}

std::string go_quote(std::string_view s) {
  std::string out;
  append_quoted(out, s, '"', false);
  return out;
}

std::string go_quote_ascii(std::string_view s) {
  std::string out;
  append_quoted(out, s, '"', true);
  return out;
}

// ---------------------------------------------------------------------------------------
// The printer (fmt's pp + fmt structs).

namespace {

constexpr int kMaxPrintDepth = 1000;  // guards against cyclic maps built by set

class Printer {
 public:
  explicit Printer(std::string& buf) : buf_(buf) {}

  void clear_flags() { f_ = Flags{}; }

  void print_arg(const Value& arg, char32_t verb) {
    arg_ = &arg;
    if (arg.is_nil_or_invalid()) {
      if (verb == 'T' || verb == 'v')
        pad_string("<nil>");
      else
        bad_verb(verb, nullptr);
      return;
    }
    if (verb == 'T') {
      fmt_s(go_type_name(arg));
      return;
    }
    print_value(arg, verb, 0);
  }

  void print_value(const Value& v, char32_t verb, int depth) {
    if (depth > kMaxPrintDepth) {
      buf_ += "...";
      return;
    }
    switch (v.kind()) {
      case Kind::kInvalid:
      case Kind::kNil:
        // A nil element of an interface slot prints as <nil> whatever the verb (Go's
        // printValue, reflect.Interface case).
        if (depth == 0 && v.is_invalid())
          buf_ += "<invalid reflect.Value>";
        else if (f_.sharp_v)
          buf_ += "interface {}(nil)";
        else
          buf_ += "<nil>";
        return;
      case Kind::kBool:
        if (verb == 't' || verb == 'v')
          pad_string(v.as_bool() ? "true" : "false");
        else
          bad_verb(verb, &v);
        return;
      case Kind::kString:
        fmt_string(v.as_string(), verb, &v);
        return;
      case Kind::kInt:
      case Kind::kInt32:
      case Kind::kInt64:
        fmt_integer(static_cast<std::uint64_t>(v.as_int()), true, verb, &v);
        return;
      case Kind::kUint:
      case Kind::kUint8:
      case Kind::kUint32:
      case Kind::kUint64:
        fmt_integer(v.as_uint(), false, verb, &v);
        return;
      case Kind::kFloat64:
        fmt_float_verb(v.as_float(), verb, &v);
        return;
      case Kind::kComplex128:
        fmt_complex(v, verb);
        return;
      case Kind::kMap: {
        const Map* m = v.as_map();
        if (f_.sharp_v) {
          buf_ += "map[string]interface {}";
          if (m == nullptr) {
            buf_ += "(nil)";
            return;
          }
          buf_.push_back('{');
        } else {
          buf_ += "map[";
        }
        if (m != nullptr) {
          bool first = true;
          for (const auto& [k, val] : m->entries()) {
            if (!first) buf_ += f_.sharp_v ? ", " : " ";
            first = false;
            Value key = Value::string_ref(k, nullptr);
            print_value(key, verb, depth + 1);
            buf_.push_back(':');
            print_value(val, verb, depth + 1);
          }
        }
        buf_.push_back(f_.sharp_v ? '}' : ']');
        return;
      }
      case Kind::kStringMap: {
        const StringMap* m = v.as_string_map();
        if (f_.sharp_v) {
          buf_ += "map[string]string";
          if (m == nullptr) {
            buf_ += "(nil)";
            return;
          }
          buf_.push_back('{');
        } else {
          buf_ += "map[";
        }
        if (m != nullptr) {
          bool first = true;
          for (const auto& [k, val] : m->entries()) {
            if (!first) buf_ += f_.sharp_v ? ", " : " ";
            first = false;
            Value key = Value::string_ref(k, nullptr);
            print_value(key, verb, depth + 1);
            buf_.push_back(':');
            Value sv = Value::string_ref(val, nullptr);
            print_value(sv, verb, depth + 1);
          }
        }
        buf_.push_back(f_.sharp_v ? '}' : ']');
        return;
      }
      case Kind::kList: {
        const List* l = v.as_list();
        if (f_.sharp_v) {
          buf_ += go_type_name(v);
          if (l == nullptr) {
            buf_ += "(nil)";
            return;
          }
          buf_.push_back('{');
          for (std::size_t i = 0; l != nullptr && i < l->items.size(); ++i) {
            if (i > 0) buf_ += ", ";
            print_value(l->items[i], verb, depth + 1);
          }
          buf_.push_back('}');
        } else {
          buf_.push_back('[');
          for (std::size_t i = 0; l != nullptr && i < l->items.size(); ++i) {
            if (i > 0) buf_.push_back(' ');
            print_value(l->items[i], verb, depth + 1);
          }
          buf_.push_back(']');
        }
        return;
      }
      case Kind::kObject: {
        const Object* o = v.as_object();
        if (o->is_nil() && !(verb == 'v' || verb == 's')) {
          bad_verb(verb, &v);
          return;
        }
        if (auto i = o->int_value(); i && verb != 'v' && verb != 's' && verb != 'q') {
          fmt_integer(static_cast<std::uint64_t>(*i), true, verb, &v);
          return;
        }
        std::string text;
        if (o->is_nil()) {
          text = "<nil>";
        } else {
          if (!action_ && !o->is_stringer() && o->go_kind() == "ptr") text = "&";
          o->format(text, f_.plus_v, f_.sharp_v);
        }
        if (verb == 'v' || verb == 's' || verb == 'q' || verb == 'x' || verb == 'X') {
          bool sv = f_.sharp_v;
          f_.sharp_v = false;
          fmt_string(text, verb == 'v' ? 's' : verb, &v);
          f_.sharp_v = sv;
        } else {
          bad_verb(verb, &v);
        }
        return;
      }
    }
  }

  struct Flags {
    bool plus = false, minus = false, sharp = false, space = false, zero = false;
    bool plus_v = false, sharp_v = false;
    bool wid_present = false, prec_present = false;
    int wid = 0, prec = 0;
  };
  Flags f_;
  const Value* arg_ = nullptr;
  bool erroring_ = false;
  bool action_ = false;  // printing an action's value: pointers are dereferenced first

 private:
  void write_padding(int n) {
    if (n <= 0) return;
    buf_.append(static_cast<std::size_t>(n), f_.zero && !f_.minus ? '0' : ' ');
  }

  void pad(std::string_view s) {
    if (!f_.wid_present || f_.wid == 0) {
      buf_ += s;
      return;
    }
    int width = f_.wid - static_cast<int>(rune_count(s));
    if (!f_.minus) {
      write_padding(width);
      buf_ += s;
    } else {
      buf_ += s;
      write_padding(width);
    }
  }
  void pad_string(std::string_view s) { pad(s); }

  std::string_view truncate(std::string_view s) const {
    if (f_.prec_present) {
      int n = f_.prec;
      for (std::size_t i = 0; i < s.size();) {
        if (--n < 0) return s.substr(0, i);
        i += static_cast<std::size_t>(decode_rune(s.substr(i)).second);
      }
    }
    return s;
  }

  void fmt_s(std::string_view s) { pad_string(truncate(s)); }

  void fmt_q(std::string_view s) {
    s = truncate(s);
    std::string q;
    if (f_.sharp && can_backquote(s)) {
      q.push_back('`');
      q += s;
      q.push_back('`');
    } else {
      append_quoted(q, s, '"', f_.plus);
    }
    pad_string(q);
  }

  void fmt_sx(std::string_view s, std::string_view digits) {
    int length = static_cast<int>(s.size());
    if (f_.prec_present && f_.prec < length) length = f_.prec;
    int width = 2 * length;
    if (width > 0) {
      if (f_.space) {
        if (f_.sharp) width *= 2;
        width += length - 1;
      } else if (f_.sharp) {
        width += 2;
      }
    } else {
      if (f_.wid_present) write_padding(f_.wid);
      return;
    }
    if (f_.wid_present && f_.wid > width && !f_.minus) write_padding(f_.wid - width);
    if (f_.sharp) {
      buf_.push_back('0');
      buf_.push_back(digits[16]);
    }
    for (int i = 0; i < length; ++i) {
      if (f_.space && i > 0) {
        buf_.push_back(' ');
        if (f_.sharp) {
          buf_.push_back('0');
          buf_.push_back(digits[16]);
        }
      }
      auto c = static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
      buf_.push_back(digits[c >> 4]);
      buf_.push_back(digits[c & 0xF]);
    }
    if (f_.wid_present && f_.wid > width && f_.minus) write_padding(f_.wid - width);
  }

  void fmt_string(std::string_view s, char32_t verb, const Value* v) {
    switch (verb) {
      case 'v':
        if (f_.sharp_v)
          fmt_q(s);
        else
          fmt_s(s);
        return;
      case 's':
        fmt_s(s);
        return;
      case 'x':
        fmt_sx(s, kLowerDigits);
        return;
      case 'X':
        fmt_sx(s, kUpperDigits);
        return;
      case 'q':
        fmt_q(s);
        return;
      default:
        bad_verb(verb, v);
    }
  }

  void fmt_unsigned_digits(std::uint64_t u, bool is_signed, int base, char32_t verb,
                           std::string_view digits) {
    bool negative = is_signed && static_cast<std::int64_t>(u) < 0;
    if (negative) u = -u;
    int prec = 0;
    if (f_.prec_present) {
      prec = f_.prec;
      if (prec == 0 && u == 0) {
        bool old = f_.zero;
        f_.zero = false;
        write_padding(f_.wid);
        f_.zero = old;
        return;
      }
    } else if (f_.zero && !f_.minus && f_.wid_present) {
      prec = f_.wid;
      if (negative || f_.plus || f_.space) --prec;
    }
    std::string tmp;  // built right to left
    if (u == 0) tmp.push_back('0');
    while (u > 0) {
      tmp.push_back(digits[u % static_cast<unsigned>(base)]);
      u /= static_cast<unsigned>(base);
    }
    while (static_cast<int>(tmp.size()) < prec)
      tmp.push_back('0');
    if (f_.sharp) {
      switch (base) {
        case 2:
          tmp.push_back('b');
          tmp.push_back('0');
          break;
        case 8:
          if (tmp.back() != '0') tmp.push_back('0');
          break;
        case 16:
          tmp.push_back(digits[16]);
          tmp.push_back('0');
          break;
        default:
          break;
      }
    }
    if (verb == 'O') {
      tmp.push_back('o');
      tmp.push_back('0');
    }
    if (negative)
      tmp.push_back('-');
    else if (f_.plus)
      tmp.push_back('+');
    else if (f_.space)
      tmp.push_back(' ');
    std::string s(tmp.rbegin(), tmp.rend());
    bool old = f_.zero;
    f_.zero = false;
    pad(s);
    f_.zero = old;
  }

  void fmt_integer(std::uint64_t u, bool is_signed, char32_t verb, const Value* v) {
    switch (verb) {
      case 'v':
        if (f_.sharp_v && !is_signed) {
          bool old = f_.sharp;
          f_.sharp = true;
          fmt_unsigned_digits(u, false, 16, 'v', kLowerDigits);
          f_.sharp = old;
        } else {
          fmt_unsigned_digits(u, is_signed, 10, verb, kLowerDigits);
        }
        return;
      case 'd':
        fmt_unsigned_digits(u, is_signed, 10, verb, kLowerDigits);
        return;
      case 'b':
        fmt_unsigned_digits(u, is_signed, 2, verb, kLowerDigits);
        return;
      case 'o':
      case 'O':
        fmt_unsigned_digits(u, is_signed, 8, verb, kLowerDigits);
        return;
      case 'x':
        fmt_unsigned_digits(u, is_signed, 16, verb, kLowerDigits);
        return;
      case 'X':
        fmt_unsigned_digits(u, is_signed, 16, verb, kUpperDigits);
        return;
      case 'c': {
        std::string s;
        append_rune(s, u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u));
        pad(s);
        return;
      }
      case 'q': {
        char32_t r = u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u);
        if (r >= 0xD800 && r <= 0xDFFF) r = 0xFFFD;
        std::string s = "'";
        append_quoted_rune_escape(s, r, '\'', f_.plus);
        s.push_back('\'');
        pad(s);
        return;
      }
      case 'U': {
        std::string hex;
        std::uint64_t x = u;
        if (x == 0) hex = "0";
        while (x > 0) {
          hex.insert(hex.begin(), kUpperDigits[x % 16]);
          x /= 16;
        }
        int prec = f_.prec_present && f_.prec > 4 ? f_.prec : 4;
        while (static_cast<int>(hex.size()) < prec)
          hex.insert(hex.begin(), '0');
        std::string s = "U+" + hex;
        if (f_.sharp && u <= 0x10FFFF && is_print(static_cast<char32_t>(u))) {
          s += " '";
          append_rune(s, static_cast<char32_t>(u));
          s += "'";
        }
        bool old = f_.zero;
        f_.zero = false;
        pad(s);
        f_.zero = old;
        return;
      }
      default:
        bad_verb(verb, v);
    }
  }

  void fmt_float(double v, char verb, int prec) {
    if (f_.prec_present) prec = f_.prec;
    std::string num = "+";
    append_float(num, v, verb, prec);
    if (num[1] == '-' || num[1] == '+')
      num.erase(0, 1);
    else
      num[0] = '+';
    if (f_.space && num[0] == '+' && !f_.plus) num[0] = ' ';
    if (num[1] == 'I' || num[1] == 'N') {
      bool old = f_.zero;
      f_.zero = false;
      if (num[1] == 'N' && !f_.space && !f_.plus) num.erase(0, 1);
      pad(num);
      f_.zero = old;
      return;
    }
    if (f_.sharp && verb != 'b') {
      int digits = 0;
      if (verb == 'v' || verb == 'g' || verb == 'G' || verb == 'x') {
        digits = prec;
        if (digits == -1) digits = 6;
      }
      std::string tail;
      bool has_point = false, saw_nonzero = false;
      for (std::size_t i = 1; i < num.size(); ++i) {
        char c = num[i];
        if (c == '.') {
          has_point = true;
        } else if (c == 'p' || c == 'P' || ((c == 'e' || c == 'E') && verb != 'x' && verb != 'X')) {
          tail = num.substr(i);
          num.resize(i);
          break;
        } else {
          if (c != '0') saw_nonzero = true;
          if (saw_nonzero) --digits;
        }
      }
      if (!has_point) {
        if (num.size() == 2 && num[1] == '0') --digits;
        num.push_back('.');
      }
      while (digits-- > 0)
        num.push_back('0');
      num += tail;
    }
    if (f_.plus || num[0] != '+') {
      if (f_.zero && !f_.minus && f_.wid_present && f_.wid > static_cast<int>(num.size())) {
        buf_.push_back(num[0]);
        write_padding(f_.wid - static_cast<int>(num.size()));
        buf_.append(num, 1);
        return;
      }
      pad(num);
      return;
    }
    pad(std::string_view(num).substr(1));
  }

  // fmt's fmtComplex: "(re+imi)", each part as the float verb would print it, the imaginary
  // part always signed.
  void fmt_complex(const Value& v, char32_t verb) {
    switch (verb) {
      case 'v':
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
      case 'f':
      case 'F':
      case 'e':
      case 'E': {
        bool old_plus = f_.plus;
        buf_.push_back('(');
        fmt_float_verb(v.as_complex_real(), verb, &v);
        f_.plus = true;
        fmt_float_verb(v.as_complex_imag(), verb, &v);
        buf_ += "i)";
        f_.plus = old_plus;
        return;
      }
      default:
        bad_verb(verb, &v);
    }
  }

  void fmt_float_verb(double v, char32_t verb, const Value* val) {
    switch (verb) {
      case 'v':
        fmt_float(v, 'g', -1);
        return;
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
        fmt_float(v, static_cast<char>(verb), -1);
        return;
      case 'f':
      case 'e':
      case 'E':
        fmt_float(v, static_cast<char>(verb), 6);
        return;
      case 'F':
        fmt_float(v, 'f', 6);
        return;
      default:
        bad_verb(verb, val);
    }
  }

 public:
  void bad_verb(char32_t verb, const Value* v) {
    erroring_ = true;
    buf_ += "%!";
    append_rune(buf_, verb);
    buf_.push_back('(');
    if (v != nullptr && !v->is_nil_or_invalid()) {
      buf_ += go_type_name(*v);
      buf_.push_back('=');
      print_value(*v, 'v', 0);
    } else {
      buf_ += "<nil>";
    }
    buf_.push_back(')');
    erroring_ = false;
  }

 private:
  std::string& buf_;
};

bool is_string_arg(const Value& v) {
  return v.kind() == Kind::kString;
}

bool too_large(long long x) {
  return x > 1000000 || x < -1000000;
}

// parsenum from fmt.
bool parse_num(std::string_view s, std::size_t& i, std::size_t end, int& num) {
  num = 0;
  bool isnum = false;
  if (i >= end) return false;
  for (; i < end && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (too_large(num)) {
      i = end;
      num = 0;
      return false;
    }
    num = num * 10 + (s[i] - '0');
    isnum = true;
  }
  return isnum;
}

bool int_from_arg(Args a, std::size_t& arg_num, int& num) {
  bool is_int = false;
  num = 0;
  if (arg_num < a.size()) {
    const Value& v = a[arg_num];
    if (v.is_signed()) {
      num = static_cast<int>(v.as_int());
      is_int = static_cast<std::int64_t>(num) == v.as_int();
    } else if (v.is_unsigned()) {
      std::uint64_t u = v.as_uint();
      if (u <= 0x7FFFFFFFu) {
        num = static_cast<int>(u);
        is_int = true;
      }
    }
    ++arg_num;
    if (too_large(num)) {
      num = 0;
      is_int = false;
    }
  }
  return is_int;
}

}  // namespace

void append_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      out += v.as_string();
      return;
    case Kind::kInvalid:
    case Kind::kNil:
      out += "<nil>";
      return;
    default: {
      Printer p(out);
      p.print_arg(v, 'v');
    }
  }
}

void append_action_value(std::string& out, const Value& v) {
  if (v.kind() != Kind::kObject) {
    append_value(out, v);
    return;
  }
  Printer p(out);
  p.action_ = true;
  p.print_arg(v, 'v');
}

std::string sprint_value(const Value& v) {
  std::string s;
  append_value(s, v);
  return s;
}

void append_sprint(std::string& out, Args args) {
  bool prev_string = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    bool is_string = is_string_arg(args[i]);
    if (i > 0 && !is_string && !prev_string) out.push_back(' ');
    append_value(out, args[i]);
    prev_string = is_string;
  }
}

std::string sprint(Args args) {
  std::string s;
  append_sprint(s, args);
  return s;
}

std::string sprintln(Args args) {
  std::string s;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0) s.push_back(' ');
    append_value(s, args[i]);
  }
  s.push_back('\n');
  return s;
}

void append_sprintf(std::string& out, std::string_view format, Args a) {
  Printer p(out);
  std::size_t end = format.size();
  std::size_t arg_num = 0;
  bool after_index = false;
  bool reordered = false;
  bool good_arg_num = true;

  auto arg_number = [&](std::size_t i, bool& found) -> std::size_t {
    found = false;
    if (format.size() <= i || format[i] != '[') return i;
    reordered = true;
    // parseArgNumber
    std::string_view f = format.substr(i);
    std::size_t wid = 1;
    bool ok = false;
    int index = 0;
    if (f.size() >= 3) {
      for (std::size_t j = 1; j < f.size(); ++j) {
        if (f[j] == ']') {
          std::size_t k = 1;
          int width = 0;
          bool isnum = parse_num(f, k, j, width);
          if (!isnum || k != j) {
            wid = j + 1;
            ok = false;
          } else {
            index = width - 1;
            wid = j + 1;
            ok = true;
          }
          break;
        }
      }
    }
    if (ok && index >= 0 && static_cast<std::size_t>(index) < a.size()) {
      arg_num = static_cast<std::size_t>(index);
      found = true;
      return i + wid;
    }
    good_arg_num = false;
    found = ok;
    return i + wid;
  };

  for (std::size_t i = 0; i < end;) {
    good_arg_num = true;
    std::size_t lasti = i;
    while (i < end && format[i] != '%')
      ++i;
    if (i > lasti) out.append(format.substr(lasti, i - lasti));
    if (i >= end) break;
    ++i;
    p.clear_flags();
    bool simple_done = false;
    for (; i < end; ++i) {
      char c = format[i];
      if (c == '#') {
        p.f_.sharp = true;
      } else if (c == '0') {
        p.f_.zero = true;
      } else if (c == '+') {
        p.f_.plus = true;
      } else if (c == '-') {
        p.f_.minus = true;
      } else if (c == ' ') {
        p.f_.space = true;
      } else {
        if (c >= 'a' && c <= 'z' && arg_num < a.size()) {
          if (c == 'v') {
            p.f_.sharp_v = p.f_.sharp;
            p.f_.sharp = false;
            p.f_.plus_v = p.f_.plus;
            p.f_.plus = false;
          }
          if (c == 'w') {
            p.bad_verb('w', &a[arg_num]);
          } else {
            p.print_arg(a[arg_num], static_cast<char32_t>(c));
          }
          ++arg_num;
          ++i;
          simple_done = true;
        }
        break;
      }
    }
    if (simple_done) continue;

    i = arg_number(i, after_index);

    if (i < end && format[i] == '*') {
      ++i;
      p.f_.wid_present = int_from_arg(a, arg_num, p.f_.wid);
      if (!p.f_.wid_present) out += "%!(BADWIDTH)";
      if (p.f_.wid < 0) {
        p.f_.wid = -p.f_.wid;
        p.f_.minus = true;
        p.f_.zero = false;
      }
      after_index = false;
    } else {
      p.f_.wid_present = parse_num(format, i, end, p.f_.wid);
      if (after_index && p.f_.wid_present) good_arg_num = false;
    }

    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg_num = false;
      i = arg_number(i, after_index);
      if (i < end && format[i] == '*') {
        ++i;
        p.f_.prec_present = int_from_arg(a, arg_num, p.f_.prec);
        if (p.f_.prec < 0) {
          p.f_.prec = 0;
          p.f_.prec_present = false;
        }
        if (!p.f_.prec_present) out += "%!(BADPREC)";
        after_index = false;
      } else {
        p.f_.prec_present = parse_num(format, i, end, p.f_.prec);
        if (!p.f_.prec_present) {
          p.f_.prec = 0;
          p.f_.prec_present = true;
        }
      }
    }

    if (!after_index) i = arg_number(i, after_index);

    if (i >= end) {
      out += "%!(NOVERB)";
      break;
    }
    auto [verb, size] = decode_rune(format.substr(i));
    if (static_cast<unsigned char>(format[i]) < 0x80) {
      verb = static_cast<unsigned char>(format[i]);
      size = 1;
    }
    i += static_cast<std::size_t>(size);

    if (verb == '%') {
      out.push_back('%');
    } else if (!good_arg_num) {
      out += "%!";
      append_rune(out, verb);
      out += "(BADINDEX)";
    } else if (arg_num >= a.size()) {
      out += "%!";
      append_rune(out, verb);
      out += "(MISSING)";
    } else if (verb == 'w') {
      p.bad_verb('w', &a[arg_num]);
      ++arg_num;
    } else {
      if (verb == 'v') {
        p.f_.sharp_v = p.f_.sharp;
        p.f_.sharp = false;
        p.f_.plus_v = p.f_.plus;
        p.f_.plus = false;
      }
      p.print_arg(a[arg_num], verb);
      ++arg_num;
    }
  }

  if (!reordered && arg_num < a.size()) {
    p.clear_flags();
    out += "%!(EXTRA ";
    for (std::size_t i = arg_num; i < a.size(); ++i) {
      if (i > arg_num) out += ", ";
      if (a[i].is_nil_or_invalid()) {
        out += "<nil>";
      } else {
        out += go_type_name(a[i]);
        out.push_back('=');
        p.print_arg(a[i], 'v');
      }
    }
    out.push_back(')');
  }
}

std::string sprintf(std::string_view format, Args args) {
  std::string s;
  append_sprintf(s, format, args);
  return s;
}

}  // namespace meshop::template_engine
