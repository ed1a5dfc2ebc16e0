#include "api/go_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace meshop::api {
namespace {

// Shortest round-trip decimal digits of |value| and the position of the decimal point
// (value = 0.d1d2d3... * 10^point), as strconv's decimal representation.
struct Digits {
  std::string digits;
  int point = 0;
  bool negative = false;
};

template <class F>
Digits shortest_digits(F value) {
  Digits d;
  d.negative = std::signbit(value);
  if (value == 0) {
    d.digits = "0";
    d.point = 1;
    return d;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  auto e = s.find('e');
  std::string_view mant = s.substr(0, e);
  int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  for (char c : mant) {
    if (c != '.') d.digits.push_back(c);
  }
  while (d.digits.size() > 1 && d.digits.back() == '0')
    d.digits.pop_back();
  d.point = exp + 1;
  return d;
}

void append_e(std::string& out, const Digits& d) {
  if (d.negative) out.push_back('-');
  out.push_back(d.digits[0]);
  if (d.digits.size() > 1) {
    out.push_back('.');
    out.append(d.digits, 1, std::string::npos);
  }
  out.push_back('e');
  int exp = d.digits == "0" ? 0 : d.point - 1;
  out.push_back(exp < 0 ? '-' : '+');
  exp = std::abs(exp);
  if (exp < 10) out.push_back('0');
  out += std::to_string(exp);
}

void append_f(std::string& out, const Digits& d) {
  if (d.negative) out.push_back('-');
  if (d.point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-d.point), '0');
    out += d.digits;
    return;
  }
  auto n = static_cast<int>(d.digits.size());
  if (d.point >= n) {
    out += d.digits;
    out.append(static_cast<std::size_t>(d.point - n), '0');
    return;
  }
  out.append(d.digits, 0, static_cast<std::size_t>(d.point));
  out.push_back('.');
  out.append(d.digits, static_cast<std::size_t>(d.point), std::string::npos);
}

template <class F>
std::string format_g(F value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  Digits d = shortest_digits(value);
  int exp = d.point - 1;
  std::string out;
  // Go decides between %e and %f with precision 6 when the shortest form is requested.
  if (exp < -4 || exp >= 6) {
    append_e(out, d);
    return out;
  }
  append_f(out, d);
  return out;
}

}  // namespace

std::string go_format_float_g(double value) {
  return format_g(value);
}

std::string go_format_float32_g(double value) {
  return format_g(static_cast<float>(value));
}

void append_go_json_float(std::string& out, double value) {
  Digits d = shortest_digits(value);
  double abs = std::fabs(value);
  if (abs != 0 && (abs < 1e-6 || abs >= 1e21)) {
    std::size_t start = out.size();
    append_e(out, d);
    // "1e-07" -> "1e-7", as encoding/json does.
    std::size_t n = out.size() - start;
    if (n >= 4 && out[out.size() - 4] == 'e' && out[out.size() - 3] == '-' &&
        out[out.size() - 2] == '0') {
      out.erase(out.size() - 2, 1);
    }
    return;
  }
  append_f(out, d);
}

}  // namespace meshop::api
