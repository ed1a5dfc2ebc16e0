#include "api/yaml_resolve.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace meshop::api::yaml_detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

struct MapEntry {
  std::string_view text;
  Resolved::Kind kind;
  bool boolean;
  double float_value;
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// go-yaml's resolveMap: the fixed spellings of booleans, nulls and special floats.
constexpr MapEntry kSpellings[] = {
    {"y", Resolved::kBool, true, 0},           {"Y", Resolved::kBool, true, 0},
    {"yes", Resolved::kBool, true, 0},         {"Yes", Resolved::kBool, true, 0},
    {"YES", Resolved::kBool, true, 0},         {"true", Resolved::kBool, true, 0},
    {"True", Resolved::kBool, true, 0},        {"TRUE", Resolved::kBool, true, 0},
    {"on", Resolved::kBool, true, 0},          {"On", Resolved::kBool, true, 0},
    {"ON", Resolved::kBool, true, 0},          {"n", Resolved::kBool, false, 0},
    {"N", Resolved::kBool, false, 0},          {"no", Resolved::kBool, false, 0},
    {"No", Resolved::kBool, false, 0},         {"NO", Resolved::kBool, false, 0},
    {"false", Resolved::kBool, false, 0},      {"False", Resolved::kBool, false, 0},
    {"FALSE", Resolved::kBool, false, 0},      {"off", Resolved::kBool, false, 0},
    {"Off", Resolved::kBool, false, 0},        {"OFF", Resolved::kBool, false, 0},
    {"", Resolved::kNull, false, 0},           {"~", Resolved::kNull, false, 0},
    {"null", Resolved::kNull, false, 0},       {"Null", Resolved::kNull, false, 0},
    {"NULL", Resolved::kNull, false, 0},       {".nan", Resolved::kFloat, false, kNaN},
    {".NaN", Resolved::kFloat, false, kNaN},   {".NAN", Resolved::kFloat, false, kNaN},
    {".inf", Resolved::kFloat, false, kInf},   {".Inf", Resolved::kFloat, false, kInf},
    {".INF", Resolved::kFloat, false, kInf},   {"+.inf", Resolved::kFloat, false, kInf},
    {"+.Inf", Resolved::kFloat, false, kInf},  {"+.INF", Resolved::kFloat, false, kInf},
    {"-.inf", Resolved::kFloat, false, -kInf}, {"-.Inf", Resolved::kFloat, false, -kInf},
    {"-.INF", Resolved::kFloat, false, -kInf},
};

// The first-character hint of go-yaml's resolveTable: 'S' sign, 'D' digit, 'M' may be in the
// spelling map, '.' float, 0 plain string.
char hint_of(std::string_view s) {
  if (s.empty()) return 'N';
  char c = s[0];
  if (c == '+' || c == '-') return 'S';
  if (is_digit(c)) return 'D';
  if (c == '.') return '.';
  switch (c) {
    case 'y':
    case 'Y':
    case 'n':
    case 'N':
    case 't':
    case 'T':
    case 'f':
    case 'F':
    case 'o':
    case 'O':
    case '~':
      return 'M';
    default:
      return 0;
  }
}

// strconv.ParseInt/ParseUint(s, 0, 64) on a string without underscores. Returns false when
// the syntax is not an integer; sets `overflow` when it is but does not fit 64 bits.
struct ParsedInt {
  bool negative = false;
  bool has_sign = false;
  std::uint64_t magnitude = 0;
  bool overflow = false;
};

bool parse_go_int(std::string_view s, ParsedInt& out) {
  if (s.empty()) return false;
  if (s[0] == '+' || s[0] == '-') {
    out.has_sign = true;
    out.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int base = 10;
  if (s[0] == '0') {
    if (s.size() >= 3 && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && (s[1] == 'o' || s[1] == 'O')) {
      base = 8;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && (s[1] == 'b' || s[1] == 'B')) {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
      if (s.empty()) return true;  // "0"
    }
  }
  for (char c : s) {
    int d;
    if (is_digit(c)) {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    auto ub = static_cast<std::uint64_t>(base);
    auto ud = static_cast<std::uint64_t>(d);
    if (out.overflow || out.magnitude > (kMax - ud) / ub) {
      out.overflow = true;
    } else {
      out.magnitude = out.magnitude * ub + ud;
    }
  }
  return true;
}

// yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool yaml_style_float(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]))
      ++i;
    if (i == start) return false;
  } else {
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]))
      ++i;
    if (i == start) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && is_digit(s[i]))
        ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]))
      ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

// strconv.ParseFloat(s, 64) for decimal syntax already checked by the caller; false when the
// value overflows (Go returns ErrRange and go-yaml keeps the string).
bool parse_float(std::string_view s, double& out) {
  std::string copy(s);
  errno = 0;
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return false;
  return !std::isinf(out);
}

// Go's underscoreOK for a decimal literal: each '_' sits between two digits.
bool underscores_ok(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') continue;
    if (i == 0 || i + 1 >= s.size() || !is_digit(s[i - 1]) || !is_digit(s[i + 1])) return false;
  }
  return true;
}

std::string without_underscores(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

bool read_number(std::string_view s, std::size_t& i, std::size_t min_digits, std::size_t max_digits,
                 int& value) {
  std::size_t start = i;
  value = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < max_digits)
    value = value * 10 + (s[i++] - '0');
  return i - start >= min_digits;
}

int days_in_month(int month, int year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

bool is_timestamp(std::string_view s) {
  std::size_t i = 0;
  int year, month, day;
  if (!read_number(s, i, 4, 4, year) || i >= s.size() || s[i] != '-') return false;
  ++i;
  if (!read_number(s, i, 1, 2, month) || i >= s.size() || s[i] != '-') return false;
  ++i;
  if (!read_number(s, i, 1, 2, day)) return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(month, year)) return false;
  if (i == s.size()) return true;
  char sep = s[i];
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  ++i;
  int hour, minute, second;
  if (!read_number(s, i, 1, 2, hour) || i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!read_number(s, i, 1, 2, minute) || i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!read_number(s, i, 1, 2, second)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (i < s.size() && s[i] == '.' && i + 1 < s.size() && is_digit(s[i + 1])) {
    ++i;
    while (i < s.size() && is_digit(s[i]))
      ++i;
  }
  if (sep == ' ') return i == s.size();
  if (i < s.size() && s[i] == 'Z') return i + 1 == s.size();
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    ++i;
    int zh, zm;
    if (!read_number(s, i, 2, 2, zh) || i >= s.size() || s[i] != ':') return false;
    ++i;
    if (!read_number(s, i, 2, 2, zm)) return false;
    return i == s.size() && zh <= 24 && zm <= 59;
  }
  return false;
}

bool is_base60_float(std::string_view s) {
  // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i >= s.size() || !is_digit(s[i])) return false;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '_'))
    ++i;
  int groups = 0;
  while (i < s.size() && s[i] == ':') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]) && i - start < 2)
      ++i;
    std::size_t n = i - start;
    if (n == 0) return false;
    if (n == 2 && s[start] > '5') return false;
    ++groups;
  }
  if (groups == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (is_digit(s[i]) || s[i] == '_'))
      ++i;
  }
  return i == s.size();
}

Resolved resolve_plain(std::string_view s) {
  Resolved r;
  char hint = hint_of(s);
  if (hint == 0) return r;
  for (const auto& e : kSpellings) {
    if (e.text == s) {
      r.kind = e.kind;
      r.boolean = e.boolean;
      r.float_value = e.float_value;
      return r;
    }
  }
  if (hint == '.') {
    double f;
    if (underscores_ok(s)) {
      std::string plain = without_underscores(s);
      if (yaml_style_float(plain) && parse_float(plain, f)) {
        r.kind = Resolved::kFloat;
        r.float_value = f;
      }
    }
    return r;
  }
  if (hint == 'D' || hint == 'S') {
    if (is_timestamp(s)) {
      r.kind = Resolved::kTimestamp;
      return r;
    }
    std::string plain = without_underscores(s);
    ParsedInt p;
    if (parse_go_int(plain, p) && !p.overflow) {
      constexpr auto kMaxInt = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      if (p.negative && p.magnitude <= kMaxInt + 1) {
        r.kind = Resolved::kInt;
        r.int_value = p.magnitude == kMaxInt + 1 ? std::numeric_limits<std::int64_t>::min()
                                                 : -static_cast<std::int64_t>(p.magnitude);
        return r;
      }
      if (!p.negative && p.magnitude <= kMaxInt) {
        r.kind = Resolved::kInt;
        r.int_value = static_cast<std::int64_t>(p.magnitude);
        return r;
      }
      if (!p.has_sign) {
        r.kind = Resolved::kUint;
        r.uint_value = static_cast<std::uint64_t>(p.magnitude);
        return r;
      }
    }
    double f;
    if (yaml_style_float(plain) && parse_float(plain, f)) {
      r.kind = Resolved::kFloat;
      r.float_value = f;
    }
    return r;
  }
  return r;  // 'M' or 'N' not in the spelling map: a string
}

}  // namespace meshop::api::yaml_detail
