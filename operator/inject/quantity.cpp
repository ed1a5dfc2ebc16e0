#include "operator/inject/quantity.hpp"

#include <array>
#include <utility>

namespace meshop::inject {

namespace {

__extension__ typedef __int128 Int128;

constexpr Int128 kLimit = static_cast<Int128>(1) << 120;  // stay well inside 128 bits

std::string to_string(Int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string out;
  while (v > 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  if (neg) out.insert(out.begin(), '-');
  return out;
}

enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

std::string_view decimal_suffix(int exponent) {
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 0:
      return "";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "?";
  }
}

// AsCanonicalBytes: trailing zeros removed, then the exponent moved to a multiple of 3.
std::string decimal_form(Int128 mantissa, int exponent, Format format) {
  if (mantissa == 0) return "0";
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  int rem = ((exponent % 3) + 3) % 3;
  for (int i = 0; i < rem; ++i) {
    mantissa *= 10;
    --exponent;
  }
  std::string out = to_string(mantissa);
  if (format == Format::kDecimalExponent) {
    if (exponent != 0) out += "e" + std::to_string(exponent);
    return out;
  }
  std::string_view suffix = decimal_suffix(exponent);
  if (suffix == "?") return out + "e" + std::to_string(exponent);
  out += suffix;
  return out;
}

}  // namespace

std::optional<std::string> canonical_quantity(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  Int128 mantissa = 0;
  int exponent = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (mantissa > kLimit) return std::nullopt;
    mantissa = mantissa * 10 + (text[i] - '0');
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (mantissa > kLimit) return std::nullopt;
      mantissa = mantissa * 10 + (text[i] - '0');
      --exponent;
      digits = true;
    }
  }
  if (!digits) return std::nullopt;
  std::string_view suffix = text.substr(i);
  Format format = Format::kDecimalSI;
  int binary_power = 0;
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary = {
      {{"Ki", 1}, {"Mi", 2}, {"Gi", 3}, {"Ti", 4}, {"Pi", 5}, {"Ei", 6}}};
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {{{"n", -9},
                                                                                 {"u", -6},
                                                                                 {"m", -3},
                                                                                 {"", 0},
                                                                                 {"k", 3},
                                                                                 {"M", 6},
                                                                                 {"G", 9},
                                                                                 {"T", 12},
                                                                                 {"P", 15},
                                                                                 {"E", 18}}};
  bool known = false;
  for (const auto& [s, p] : kBinary)
    if (suffix == s) {
      format = Format::kBinarySI;
      binary_power = p;
      known = true;
    }
  for (const auto& [s, e] : kDecimal)
    if (suffix == s) {
      exponent += e;
      known = true;
    }
  if (!known) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
    std::size_t j = 1;
    bool neg_exp = false;
    if (suffix[j] == '+' || suffix[j] == '-') {
      neg_exp = suffix[j] == '-';
      ++j;
    }
    if (j >= suffix.size()) return std::nullopt;
    int e = 0;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9' || e > 1000) return std::nullopt;
      e = e * 10 + (suffix[j] - '0');
    }
    exponent += neg_exp ? -e : e;
    format = Format::kDecimalExponent;
  }
  if (exponent < -30 || exponent > 30) return std::nullopt;
  for (int k = 0; k < binary_power; ++k) {
    if (mantissa > kLimit / 1024) return std::nullopt;
    mantissa *= 1024;
  }
  if (negative) mantissa = -mantissa;

  if (format == Format::kBinarySI) {
    // Whole bytes (exact at scale 0) of at least 1024 in magnitude keep the binary form.
    Int128 whole = mantissa;
    bool exact = true;
    int e = exponent;
    for (; e < 0; ++e) {
      if (whole % 10 != 0) {
        exact = false;
        break;
      }
      whole /= 10;
    }
    for (; exact && e > 0; --e) {
      if (whole > kLimit / 10 || whole < -kLimit / 10) return std::nullopt;
      whole *= 10;
    }
    if (!exact || (whole > -1024 && whole < 1024))
      return decimal_form(mantissa, exponent, Format::kDecimalSI);
    int power = 0;
    while (power < 6 && whole != 0 && whole % 1024 == 0) {
      whole /= 1024;
      ++power;
    }
    static constexpr std::array<std::string_view, 7> kSuffix = {"",   "Ki", "Mi", "Gi",
                                                                "Ti", "Pi", "Ei"};
    return to_string(whole) + std::string(kSuffix[static_cast<std::size_t>(power)]);
  }
  return decimal_form(mantissa, exponent, format);
}

}  // namespace meshop::inject
