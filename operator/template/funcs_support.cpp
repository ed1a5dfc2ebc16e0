#include "operator/template/funcs_support.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <rapidjson/document.h>

#include "api/json.hpp"
#include "api/utf8.hpp"

namespace meshop::template_engine::funcs {

Rune decode_rune(std::string_view s, std::size_t i) {
  api::Rune r = api::decode_rune(s, i);
  return {r.r, r.width};
}

void append_rune(std::string& out, char32_t r) {
  api::append_rune(out, r);
}

bool is_space_rune(char32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic: the scripts
// label values and names realistically contain. Other runes map to themselves (Go maps
// every Unicode letter; documented gap).
char32_t to_upper_rune(char32_t r) {
  if (r >= 'a' && r <= 'z') return r - 32;
  if (r < 0x80) return r;
  // Latin digraphs: DŽ Dž dž, LJ Lj lj, NJ Nj nj, DZ Dz dz.
  if (r >= 0x1C4 && r <= 0x1CC) return r - (r - 0x1C4) % 3;
  if (r >= 0x1F1 && r <= 0x1F3) return 0x1F1;
  if (r == 0xB5) return 0x39C;
  if ((r >= 0xE0 && r <= 0xFE && r != 0xF7)) return r - 32;
  if (r == 0xFF) return 0x178;
  if (r >= 0x100 && r <= 0x17F) {
    if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r % 2 == 0) ? r - 1 : r;
    if (r == 0x131) return 'I';
    if (r == 0x17F) return 'S';
    if (r == 0x138 || r == 0x149) return r;
    return (r % 2 == 1) ? r - 1 : r;
  }
  if (r >= 0x3B1 && r <= 0x3C9 && r != 0x3C2) return r - 32;
  if (r == 0x3C2) return 0x3A3;
  if (r >= 0x430 && r <= 0x44F) return r - 32;
  if (r >= 0x450 && r <= 0x45F) return r - 80;
  return r;
}

char32_t to_lower_rune(char32_t r) {
  if (r >= 'A' && r <= 'Z') return r + 32;
  if (r < 0x80) return r;
  if (r >= 0x1C4 && r <= 0x1CC) return r - (r - 0x1C4) % 3 + 2;
  if (r >= 0x1F1 && r <= 0x1F3) return 0x1F3;
  if (r >= 0xC0 && r <= 0xDE && r != 0xD7) return r + 32;
  if (r == 0x178) return 0xFF;
  if (r >= 0x100 && r <= 0x17F) {
    if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r % 2 == 1) ? r + 1 : r;
    if (r == 0x130) return 'i';
    if (r == 0x138 || r == 0x149 || r == 0x17F || r == 0x131) return r;
    return (r % 2 == 0) ? r + 1 : r;
  }
  if (r >= 0x391 && r <= 0x3A9 && r != 0x3A2) return r + 32;
  if (r >= 0x410 && r <= 0x42F) return r + 32;
  if (r >= 0x400 && r <= 0x40F) return r + 80;
  return r;
}

namespace {

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

template <class F>
std::string map_runes(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    Rune r = decode_rune(s, i);
    append_rune(out, f(r.r));
    i += r.width;
  }
  return out;
}

// strings.Title's separator rule.
bool is_title_separator(char32_t r) {
  if (r <= 0x7F) {
    if ((r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '_')
      return false;
    return true;
  }
  // Letters and digits are not separators; Go also treats symbols/punctuation outside
  // ASCII as non-separators, and spaces as separators.
  return is_space_rune(r);
}

}  // namespace

std::string go_to_upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    return out;
  }
  return map_runes(s, to_upper_rune);
}

std::string go_to_lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
  }
  return map_runes(s, to_lower_rune);
}

std::string go_title(std::string_view s) {
  // strings.Title maps with unicode.ToTitle, which for the covered scripts equals ToUpper;
  // unlike ToUpper it keeps invalid bytes as they are only when unchanged... it uses Map,
  // so invalid bytes become U+FFFD as well.
  char32_t prev = ' ';
  auto to_title = [](char32_t r) -> char32_t {
    if (r >= 0x1C4 && r <= 0x1CC) return r - (r - 0x1C4) % 3 + 1;
    if (r >= 0x1F1 && r <= 0x1F3) return 0x1F2;
    return to_upper_rune(r);
  };
  return map_runes(s, [&](char32_t r) {
    char32_t out = is_title_separator(prev) ? to_title(r) : r;
    prev = r;
    return out;
  });
}

std::string_view go_trim_space(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size()) {
    Rune r = decode_rune(s, b);
    if (!is_space_rune(r.r) || (r.r == 0xFFFD && r.width == 1)) break;
    b += r.width;
  }
  std::size_t e = s.size();
  while (e > b) {
    // Step back to the start of the last rune.
    std::size_t start = e - 1;
    while (start > b && e - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
      --start;
    Rune r = decode_rune(s, start);
    if (start + r.width != e) {
      start = e - 1;
      r = {0xFFFD, 1};
    }
    if (!is_space_rune(r.r)) break;
    e = start;
  }
  return s.substr(b, e - b);
}

std::string_view go_trim(std::string_view s, std::string_view cutset) {
  if (s.empty() || cutset.empty()) return s;
  // An ASCII cutset (the usual case, e.g. trimAll "-_."), as Go's asciiSet: a byte at or
  // above 0x80 starts or continues a rune that is not in it.
  if (std::all_of(cutset.begin(), cutset.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::uint64_t set[2] = {0, 0};
    for (char c : cutset)
      set[static_cast<unsigned char>(c) / 64] |= std::uint64_t{1} << (c % 64);
    auto in = [&set](char c) {
      auto u = static_cast<unsigned char>(c);
      return u < 0x80 && (set[u / 64] >> (u % 64) & 1) != 0;
    };
    std::size_t b = 0, e = s.size();
    while (b < e && in(s[b]))
      ++b;
    while (e > b && in(s[e - 1]))
      --e;
    return s.substr(b, e - b);
  }
  std::vector<char32_t> cut;
  for (std::size_t i = 0; i < cutset.size();) {
    Rune r = decode_rune(cutset, i);
    cut.push_back(r.r);
    i += r.width;
  }
  auto in_cut = [&](char32_t r) {
    for (char32_t c : cut)
      if (c == r) return true;
    return false;
  };
  std::size_t b = 0;
  while (b < s.size()) {
    Rune r = decode_rune(s, b);
    if (!in_cut(r.r)) break;
    b += r.width;
  }
  std::size_t e = s.size();
  while (e > b) {
    std::size_t start = e - 1;
    while (start > b && e - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
      --start;
    Rune r = decode_rune(s, start);
    if (start + r.width != e) {
      start = e - 1;
      r = {0xFFFD, 1};
    }
    if (!in_cut(r.r)) break;
    e = start;
  }
  return s.substr(b, e - b);
}

std::string go_replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  if (from.empty()) {
    // Go inserts `to` before every rune and at the end.
    for (std::size_t i = 0; i < s.size();) {
      out += to;
      Rune r = decode_rune(s, i);
      out.append(s.substr(i, r.width));
      i += r.width;
    }
    out += to;
    return out;
  }
  std::size_t pos = 0;
  while (true) {
    std::size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out += to;
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::string strval(const Value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.kind() == Kind::kObject) {
    if (auto m = v.as_object()->method("String")) {
      auto r = m->call({});
      if (r.ok() && r->is_string()) return std::string(r->as_string());
    }
  }
  return sprint_value(v);
}

bool sprig_empty(const Value& v) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      return true;
    case Kind::kBool:
      return !v.as_bool();
    case Kind::kString:
    case Kind::kList:
    case Kind::kMap:
    case Kind::kStringMap:
      return length(v).value_or(0) == 0;
    case Kind::kFloat64:
      return v.as_float() == 0;
    case Kind::kComplex128:
      return v.as_complex_real() == 0 && v.as_complex_imag() == 0;
    case Kind::kObject: {
      const Object* o = v.as_object();
      if (o->is_nil()) return true;
      if (auto i = o->int_value()) return *i == 0;
      return false;
    }
    default:
      return v.int_value() == 0;
  }
}

bool deep_equal(const Value& a, const Value& b) {
  // reflect.DeepEqual(nil, nil) is true; kInvalid reaches functions as nil.
  if (a.is_nil_or_invalid() || b.is_nil_or_invalid())
    return a.is_nil_or_invalid() && b.is_nil_or_invalid();
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kFloat64:
      return a.as_float() == b.as_float();
    case Kind::kComplex128:
      return a.as_complex_real() == b.as_complex_real() &&
             a.as_complex_imag() == b.as_complex_imag();
    case Kind::kList: {
      const List* x = a.as_list();
      const List* y = b.as_list();
      if ((x == nullptr) != (y == nullptr)) return false;
      if (x == nullptr) return true;
      if (x->elem_type != y->elem_type || x->items.size() != y->items.size()) return false;
      for (std::size_t i = 0; i < x->items.size(); ++i)
        if (!deep_equal(x->items[i], y->items[i])) return false;
      return true;
    }
    case Kind::kMap: {
      const Map* x = a.as_map();
      const Map* y = b.as_map();
      if ((x == nullptr) != (y == nullptr)) return false;
      if (x == nullptr) return true;
      if (x->size() != y->size()) return false;
      for (std::size_t i = 0; i < x->size(); ++i) {
        if (x->entries()[i].first != y->entries()[i].first) return false;
        if (!deep_equal(x->entries()[i].second, y->entries()[i].second)) return false;
      }
      return true;
    }
    case Kind::kStringMap: {
      const StringMap* x = a.as_string_map();
      const StringMap* y = b.as_string_map();
      if ((x == nullptr) != (y == nullptr)) return false;
      return x == nullptr || x->entries() == y->entries();
    }
    case Kind::kObject:
      return a.as_object() == b.as_object();
    default:
      return a.is_unsigned() ? a.as_uint() == b.as_uint() : a.as_int() == b.as_int();
  }
}

std::int64_t go_float_to_int64(double d) {
  // amd64 CVTTSD2SI: NaN and out-of-range give the "integer indefinite" value.
  if (std::isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}

namespace {

// strconv's underscoreOK: underscores only between digits (or after a base prefix).
bool underscore_ok(std::string_view s) {
  char saw = '^';
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  auto lower = [](char c) { return static_cast<char>(c | 0x20); };
  if (s.size() >= 2 && s[0] == '0' &&
      (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = lower(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    if ((c >= '0' && c <= '9') || (hex && lower(c) >= 'a' && lower(c) <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

}  // namespace

std::optional<std::int64_t> go_parse_int(std::string_view s, bool base_prefixes) {
  if (s.empty()) return std::nullopt;
  std::string_view orig = s;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (base_prefixes && !s.empty() && s[0] == '0') {
    char c1 = s.size() >= 2 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (c1 == 'x') {
      base = 16;
      s.remove_prefix(2);
    } else if (c1 == 'o') {
      base = 8;
      s.remove_prefix(2);
    } else if (c1 == 'b') {
      base = 2;
      s.remove_prefix(2);
    } else if (s.size() >= 2) {
      base = 8;
      s.remove_prefix(1);
    }
  }
  std::string digits;
  bool underscores = false;
  for (char c : s) {
    if (c == '_' && base_prefixes) {
      underscores = true;
      continue;
    }
    digits += c;
  }
  if (underscores && !underscore_ok(orig)) return std::nullopt;
  if (digits.empty() || digits[0] == '+' || digits[0] == '-') return std::nullopt;
  std::uint64_t u = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  if (neg) {
    if (u > 9223372036854775808ULL) return std::nullopt;
    return static_cast<std::int64_t>(0 - u);
  }
  if (u > 9223372036854775807ULL) return std::nullopt;
  return static_cast<std::int64_t>(u);
}

std::optional<double> go_parse_float(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string_view body = s;
  bool neg = false;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  auto ieq = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    return true;
  };
  if (ieq(body, "inf") || ieq(body, "infinity"))
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (ieq(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.'))
    return std::nullopt;
  std::string stripped;
  if (body.find('_') != std::string_view::npos) {
    // Go accepts underscores between digits (the Go literal syntax), in any base.
    if (!underscore_ok(body)) return std::nullopt;
    for (char c : body)
      if (c != '_') stripped += c;
    body = stripped;
  }
  if (body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    std::string hex(body.substr(2));
    double d = 0;
    auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), d, std::chars_format::hex);
    if (ec != std::errc() || p != hex.data() + hex.size() ||
        hex.find_first_of("pP") == std::string::npos)
      return std::nullopt;
    return neg ? -d : d;
  }
  double d = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
  if (p != body.data() + body.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return std::nullopt;  // Go: ErrRange
  if (ec != std::errc()) return std::nullopt;
  return neg ? -d : d;
}

namespace {

// cast's trimZeroDecimal: "12.000" -> "12" (only zeros after the point).
std::string_view trim_zero_decimal(std::string_view s) {
  bool found_zero = false;
  for (std::size_t i = s.size(); i > 0; --i) {
    char c = s[i - 1];
    if (c == '.') return found_zero ? s.substr(0, i - 1) : s;
    if (c == '0')
      found_zero = true;
    else
      return s;
  }
  return s;
}

}  // namespace

std::int64_t cast_to_int64(const Value& v) {
  switch (v.kind()) {
    case Kind::kBool:
      return v.as_bool() ? 1 : 0;
    case Kind::kFloat64:
      return go_float_to_int64(v.as_float());
    case Kind::kString:
      return go_parse_int(trim_zero_decimal(v.as_string()), true).value_or(0);
    default:
      if (v.is_integer()) return v.int_value();
      return 0;
  }
}

double cast_to_float64(const Value& v) {
  switch (v.kind()) {
    case Kind::kBool:
      return v.as_bool() ? 1 : 0;
    case Kind::kFloat64:
      return v.as_float();
    case Kind::kString:
      return go_parse_float(v.as_string()).value_or(0);
    default:
      if (v.is_unsigned()) return static_cast<double>(v.as_uint());
      if (v.is_integer()) return static_cast<double>(v.as_int());
      return 0;
  }
}

void append_json_string(std::string& out, std::string_view s, bool escape_html) {
  api::append_json_string(out, s, escape_html);
}

namespace {

void newline(std::string& out, const JsonOptions& o, int depth) {
  if (o.indent == 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(depth * o.indent), ' ');
}

bool append_json_float(std::string& out, double d) {
  if (!std::isfinite(d)) return false;
  double a = std::fabs(d);
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    std::string e = format_float(d, 'e', -1);
    // "1e-07" -> "1e-7"
    std::size_t n = e.size();
    if (n >= 4 && e[n - 4] == 'e' && e[n - 3] == '-' && e[n - 2] == '0') {
      e[n - 2] = e[n - 1];
      e.pop_back();
    }
    out += e;
  } else {
    out += format_float(d, 'f', -1);
  }
  return true;
}

}  // namespace

bool append_json(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      out += "null";
      return true;
    case Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return true;
    case Kind::kString:
      append_json_string(out, v.as_string(), o.escape_html);
      return true;
    case Kind::kFloat64:
      return append_json_float(out, v.as_float());
    case Kind::kComplex128:
      return false;  // encoding/json: "unsupported type: complex128"
    case Kind::kList: {
      const List* l = v.as_list();
      if (l == nullptr) {
        out += "null";
        return true;
      }
      if (l->items.empty()) {
        out += "[]";
        return true;
      }
      out += '[';
      bool first = true;
      for (const Value& e : l->items) {
        if (!first) out += ',';
        first = false;
        newline(out, o, depth + 1);
        if (!append_json(out, e, o, depth + 1)) return false;
      }
      newline(out, o, depth);
      out += ']';
      return true;
    }
    case Kind::kMap: {
      const Map* m = v.as_map();
      if (m == nullptr) {
        out += "null";
        return true;
      }
      if (m->empty()) {
        out += "{}";
        return true;
      }
      out += '{';
      bool first = true;
      for (const auto& [k, e] : m->entries()) {
        if (!first) out += ',';
        first = false;
        newline(out, o, depth + 1);
        append_json_string(out, k, o.escape_html);
        out += o.indent ? ": " : ":";
        if (!append_json(out, e, o, depth + 1)) return false;
      }
      newline(out, o, depth);
      out += '}';
      return true;
    }
    case Kind::kStringMap: {
      const StringMap* m = v.as_string_map();
      if (m == nullptr) {
        out += "null";
        return true;
      }
      if (m->empty()) {
        out += "{}";
        return true;
      }
      out += '{';
      bool first = true;
      for (const auto& [k, e] : m->entries()) {
        if (!first) out += ',';
        first = false;
        newline(out, o, depth + 1);
        append_json_string(out, k, o.escape_html);
        out += o.indent ? ": " : ":";
        append_json_string(out, e, o.escape_html);
      }
      newline(out, o, depth);
      out += '}';
      return true;
    }
    case Kind::kObject: {
      // Typed objects supply their encoding/json form through a MarshalJSON method (as Go
      // types do); without one they cannot be encoded here.
      if (v.as_object()->is_nil()) {
        out += "null";
        return true;
      }
      auto m = v.as_object()->method("MarshalJSON");
      if (!m) return false;
      auto r = m->call({});
      if (!r.ok() || !r->is_string()) return false;
      out += r->as_string();
      return true;
    }
    default:
      if (v.is_unsigned())
        out += std::to_string(v.as_uint());
      else
        out += std::to_string(v.as_int());
      return true;
  }
}

namespace {

// The first value, in encoding order, that json.Marshal refuses.
std::optional<std::string> find_unsupported(const Value& v, int depth) {
  if (depth > 1000) return std::nullopt;
  switch (v.kind()) {
    case Kind::kComplex128:
      return "json: unsupported type: complex128";
    case Kind::kFloat64:
      if (std::isfinite(v.as_float())) return std::nullopt;
      return "json: unsupported value: " + format_float(v.as_float(), 'g', -1);
    case Kind::kList:
      if (v.as_list() != nullptr)
        for (const Value& e : v.as_list()->items)
          if (auto m = find_unsupported(e, depth + 1)) return m;
      return std::nullopt;
    case Kind::kMap:
      if (v.as_map() != nullptr)
        for (const auto& [k, e] : v.as_map()->entries())
          if (auto m = find_unsupported(e, depth + 1)) return m;
      return std::nullopt;
    case Kind::kObject: {
      std::string ignored;
      if (append_json(ignored, v, {})) return std::nullopt;
      return "json: unsupported type: " + std::string(v.as_object()->go_type());
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string json_marshal_error(const Value& v) {
  return find_unsupported(v, 0).value_or("json: unsupported value");
}

Value from_rapidjson(const rapidjson::Value& j) {
  switch (j.GetType()) {
    case rapidjson::kNullType:
      return Value::nil();
    case rapidjson::kFalseType:
      return Value::boolean(false);
    case rapidjson::kTrueType:
      return Value::boolean(true);
    case rapidjson::kStringType:
      return Value::string(std::string(j.GetString(), j.GetStringLength()));
    case rapidjson::kNumberType:
      return Value::float64(j.GetDouble());
    case rapidjson::kArrayType: {
      auto l = std::make_shared<List>();
      l->items.reserve(j.Size());
      for (const auto& e : j.GetArray())
        l->items.push_back(from_rapidjson(e));
      return Value::list(std::move(l));
    }
    case rapidjson::kObjectType: {
      auto m = std::make_shared<Map>();
      for (const auto& member : j.GetObject())
        m->set(std::string_view(member.name.GetString(), member.name.GetStringLength()),
               from_rapidjson(member.value));
      return Value::map(std::move(m));
    }
  }
  return Value::nil();
}

namespace {

// A small recursive-descent JSON reader with encoding/json's decoding into interface{}:
// numbers float64, last duplicate key wins, invalid UTF-8 and lone surrogates become U+FFFD.
// (RapidJSON's reader is not used here: its internal stack does pointer arithmetic on null
// that UBSan reports, and fromJson runs on template-controlled text.)
class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}

  Result<Value> parse() {
    auto v = value(0);
    if (!v) return v;
    skip_ws();
    if (pos_ != s_.size()) return error("after top-level value");
    return v;
  }

 private:
  Failure error(std::string_view context) {
    if (pos_ >= s_.size()) return fail("unexpected end of JSON input");
    std::string c;
    append_rune(c, decode_rune(s_, pos_).r);
    return fail("invalid character '" + c + "' " + std::string(context));
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Result<Value> value(int depth) {
    if (depth > 10000) return fail("exceeded max depth");
    skip_ws();
    if (pos_ >= s_.size()) return fail("unexpected end of JSON input");
    char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      auto str = string();
      if (!str) return fail(str.error());
      return Value::string(std::move(*str));
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return Value::boolean(true);
    if (literal("false")) return Value::boolean(false);
    if (literal("null")) return Value::nil();
    return error("looking for beginning of value");
  }

  Result<Value> number() {
    std::size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      std::size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
        ++pos_;
      return pos_ - b;
    };
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return error("in numeric literal");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return error("after decimal point in numeric literal");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return error("in exponent of numeric literal");
    }
    auto d = go_parse_float(s_.substr(start, pos_ - start));
    if (!d)
      return fail("json: cannot unmarshal number " + std::string(s_.substr(start, pos_ - start)) +
                  " into Go value of type float64");
    return Value::float64(*d);
  }

  Result<std::string> string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) return fail("unexpected end of JSON input");
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) return error("in string literal");
      if (c == '\\') {
        if (++pos_ >= s_.size()) return fail("unexpected end of JSON input");
        char e = s_[pos_++];
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            auto r = hex4();
            if (!r) return fail("invalid character in \\u hexadecimal character escape");
            char32_t cp = *r;
            if (cp >= 0xD800 && cp < 0xDC00) {
              // A high surrogate needs a following \uDC00-\uDFFF; otherwise it is U+FFFD.
              std::size_t save = pos_;
              if (s_.substr(pos_, 2) == "\\u") {
                pos_ += 2;
                auto lo = hex4();
                if (lo && *lo >= 0xDC00 && *lo < 0xE000) {
                  cp = 0x10000 + ((cp - 0xD800) << 10) + (*lo - 0xDC00);
                } else {
                  pos_ = save;
                  cp = 0xFFFD;
                }
              } else {
                cp = 0xFFFD;
              }
            } else if (cp >= 0xDC00 && cp < 0xE000) {
              cp = 0xFFFD;
            }
            append_rune(out, cp);
            break;
          }
          default:
            --pos_;
            return error("in string escape code");
        }
        continue;
      }
      Rune r = decode_rune(s_, pos_);
      if (r.r == 0xFFFD && r.width == 1)
        append_rune(out, 0xFFFD);
      else
        out.append(s_.substr(pos_, static_cast<std::size_t>(r.width)));
      pos_ += static_cast<std::size_t>(r.width);
    }
  }

  std::optional<char32_t> hex4() {
    if (pos_ + 4 > s_.size()) return std::nullopt;
    char32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + static_cast<std::size_t>(i)];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<char32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<char32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<char32_t>(c - 'A' + 10);
      else
        return std::nullopt;
    }
    pos_ += 4;
    return v;
  }

  Result<Value> array(int depth) {
    ++pos_;
    auto l = std::make_shared<List>();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Value::list(std::move(l));
    }
    while (true) {
      auto v = value(depth + 1);
      if (!v) return v;
      l->items.push_back(std::move(*v));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return Value::list(std::move(l));
      }
      return error("after array element");
    }
  }

  Result<Value> object(int depth) {
    ++pos_;
    auto m = std::make_shared<Map>();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Value::map(std::move(m));
    }
    while (true) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"')
        return error("looking for beginning of object key string");
      auto key = string();
      if (!key) return fail(key.error());
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return error("after object key");
      ++pos_;
      auto v = value(depth + 1);
      if (!v) return v;
      m->set(*key, std::move(*v));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return Value::map(std::move(m));
      }
      return error("after object key:value pair");
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<Value> parse_json_value(std::string_view text) {
  return JsonReader(text).parse();
}

Value deep_copy(const Value& v) {
  switch (v.kind()) {
    case Kind::kList: {
      if (v.as_list() == nullptr) return v;
      auto l = std::make_shared<List>();
      l->elem_type = v.as_list()->elem_type;
      for (const Value& e : v.as_list()->items)
        l->items.push_back(deep_copy(e));
      return Value::list(std::move(l));
    }
    case Kind::kMap: {
      if (v.as_map() == nullptr) return v;
      auto m = std::make_shared<Map>();
      for (const auto& [k, e] : v.as_map()->entries())
        m->append_sorted(k, deep_copy(e));
      return Value::map(std::move(m));
    }
    case Kind::kStringMap: {
      if (v.as_string_map() == nullptr) return v;
      return Value::string_map(std::make_shared<StringMap>(*v.as_string_map()));
    }
    default:
      return v;
  }
}

Result<Value> as_string_map(const Value& v) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      return Value::typed_nil(Kind::kStringMap);
    case Kind::kStringMap:
      return v;
    case Kind::kMap: {
      auto out = std::make_shared<StringMap>();
      if (v.as_map() != nullptr) {
        for (const auto& [k, e] : v.as_map()->entries()) {
          if (!e.is_string())
            return fail("wrong type for value; expected map[string]string; got " + go_type_name(v));
          out->set(k, std::string(e.as_string()));
        }
      }
      return Value::string_map(std::move(out));
    }
    default:
      return fail("wrong type for value; expected map[string]string; got " + go_type_name(v));
  }
}

Value member(const Value& v, std::string_view name) {
  if (v.kind() == Kind::kMap && v.as_map() != nullptr) {
    const Value* e = v.as_map()->find(name);
    return e ? *e : Value();
  }
  if (v.kind() == Kind::kStringMap && v.as_string_map() != nullptr) {
    const std::string* e = v.as_string_map()->find(name);
    return e ? Value::string(*e) : Value();
  }
  if (v.kind() == Kind::kObject && !v.as_object()->is_nil()) {
    if (auto f = v.as_object()->field(name)) return *f;
  }
  return Value();
}

Value make_string_list(std::vector<std::string> items) {
  auto l = std::make_shared<List>();
  l->elem_type = "string";
  l->items.reserve(items.size());
  for (auto& s : items)
    l->items.push_back(Value::string(std::move(s)));
  return Value::list(std::move(l));
}

}  // namespace meshop::template_engine::funcs
