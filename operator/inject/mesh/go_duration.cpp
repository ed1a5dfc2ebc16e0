#include "operator/inject/mesh/go_duration.hpp"

#include <cstdint>
#include <utility>

#include "operator/template/functions.hpp"

namespace meshop::inject {
namespace {

constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;

struct Unit {
  std::string_view name;
  std::uint64_t nanos;
};
// "µs" is U+00B5 (micro sign) or U+03BC (Greek mu), both accepted by Go.
constexpr Unit kUnits[] = {
    {"ns", 1},       {"us", 1000},      {"\xC2\xB5s", 1000},       {"\xCE\xBCs", 1000},
    {"ms", 1000000}, {"s", 1000000000}, {"m", 60ULL * 1000000000}, {"h", 3600ULL * 1000000000},
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

api::Error invalid(std::string_view orig) {
  return api::Error{"time: invalid duration " + template_engine::go_quote(orig)};
}

}  // namespace

api::Result<std::int64_t> parse_go_duration(std::string_view text) {
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::int64_t{0};
  if (s.empty()) return invalid(text);
  std::uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || is_digit(s[0]))) return invalid(text);
    // Integer part; overflowing it is an error, as in Go.
    std::uint64_t v = 0;
    std::size_t i = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (v > kMaxMagnitude / 10) return invalid(text);
      v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (v > kMaxMagnitude) return invalid(text);
    }
    bool pre = i > 0;
    s.remove_prefix(i);
    // Fraction; digits beyond what fits are dropped, as in Go.
    std::uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      std::size_t j = 0;
      bool overflow = false;
      for (; j < s.size() && is_digit(s[j]); ++j) {
        if (overflow) continue;
        if (f > (kMaxMagnitude - 1) / 10) {
          overflow = true;
          continue;
        }
        std::uint64_t y = f * 10 + static_cast<std::uint64_t>(s[j] - '0');
        if (y > kMaxMagnitude) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return invalid(text);
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && !is_digit(s[u]))
      ++u;
    if (u == 0)
      return api::Error{"time: missing unit in duration " + template_engine::go_quote(text)};
    std::string_view unit_name = s.substr(0, u);
    s.remove_prefix(u);
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits)
      if (candidate.name == unit_name) unit = &candidate;
    if (unit == nullptr) {
      return api::Error{"time: unknown unit " + template_engine::go_quote(unit_name) +
                        " in duration " + template_engine::go_quote(text)};
    }
    if (v > kMaxMagnitude / unit->nanos) return invalid(text);
    v *= unit->nanos;
    if (f > 0) {
      v += static_cast<std::uint64_t>(static_cast<double>(f) *
                                      (static_cast<double>(unit->nanos) / scale));
      if (v > kMaxMagnitude) return invalid(text);
    }
    total += v;
    if (total > kMaxMagnitude) return invalid(text);
  }
  if (neg) return static_cast<std::int64_t>(0 - total);
  if (total > kMaxMagnitude - 1) return invalid(text);
  return static_cast<std::int64_t>(total);
}

std::string format_go_duration(std::int64_t nanos) {
  // Built right to left, as Go does.
  std::string out;
  std::uint64_t u = static_cast<std::uint64_t>(nanos);
  bool neg = nanos < 0;
  if (neg) u = 0 - u;
  auto frac = [&out](std::uint64_t v, int prec) {
    bool print = false;
    for (int i = 0; i < prec; ++i) {
      std::uint64_t digit = v % 10;
      print = print || digit != 0;
      if (print) out.push_back(static_cast<char>('0' + digit));
      v /= 10;
    }
    if (print) out.push_back('.');
    return v;
  };
  auto integer = [&out](std::uint64_t v) {
    if (v == 0) {
      out.push_back('0');
      return;
    }
    while (v > 0) {
      out.push_back(static_cast<char>('0' + v % 10));
      v /= 10;
    }
  };
  if (u < 1000000000) {
    out.push_back('s');
    if (u == 0) {
      out.push_back('0');
      return {out.rbegin(), out.rend()};
    }
    int prec = 0;
    if (u < 1000) {
      out.push_back('n');
    } else if (u < 1000000) {
      prec = 3;
      out += "\xB5\xC2";  // "µ" reversed
    } else {
      prec = 6;
      out.push_back('m');
    }
    integer(frac(u, prec));
  } else {
    out.push_back('s');
    u = frac(u, 9);
    integer(u % 60);
    u /= 60;
    if (u > 0) {
      out.push_back('m');
      integer(u % 60);
      u /= 60;
      if (u > 0) {
        out.push_back('h');
        integer(u);
      }
    }
  }
  if (neg) out.push_back('-');
  return {out.rbegin(), out.rend()};
}

std::string format_proto_duration(std::int64_t seconds, std::int32_t nanos) {
  std::string sign;
  std::uint64_t s = static_cast<std::uint64_t>(seconds);
  std::uint32_t ns = static_cast<std::uint32_t>(nanos);
  if (seconds < 0 || nanos < 0) {
    sign = "-";
    s = 0 - s;
    ns = 0 - ns;
  }
  std::string digits = std::to_string(ns);
  std::string frac = std::string(9 - digits.size(), '0') + digits;
  // Trim to 6, 3 or 0 digits when the dropped ones are zeros.
  if (frac.ends_with("000")) frac.resize(6);
  if (frac.size() == 6 && frac.ends_with("000")) frac.resize(3);
  if (frac == "000") frac.clear();
  std::string out = sign + std::to_string(s);
  if (!frac.empty()) out += "." + frac;
  out += "s";
  return out;
}

bool parse_proto_duration(std::string_view text, std::int64_t& seconds, std::int32_t& nanos) {
  if (!text.ends_with('s')) return false;
  text.remove_suffix(1);
  bool neg = !text.empty() && text[0] == '-';
  if (neg) text.remove_prefix(1);
  std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || frac.size() > 9) return false;
  std::uint64_t s = 0;
  for (char c : whole) {
    if (!is_digit(c) || s > (kMaxMagnitude - 10) / 10) return false;
    s = s * 10 + static_cast<std::uint64_t>(c - '0');
  }
  std::int64_t ns = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    char c = i < frac.size() ? frac[i] : '0';
    if (!is_digit(c)) return false;
    ns = ns * 10 + (c - '0');
  }
  seconds = neg ? -static_cast<std::int64_t>(s) : static_cast<std::int64_t>(s);
  nanos = static_cast<std::int32_t>(neg ? -ns : ns);
  return true;
}

}  // namespace meshop::inject
