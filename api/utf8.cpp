#include "api/utf8.hpp"

namespace meshop::api {

Rune decode_rune(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1};
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]) & 0x3F; };
  if (b0 >= 0xC2 && b0 <= 0xDF && cont(1))
    return {static_cast<char32_t>((b0 & 0x1F) << 6 | at(1)), 2};
  if (b0 >= 0xE0 && b0 <= 0xEF && cont(1) && cont(2)) {
    char32_t r = (b0 & 0x0F) << 12 | at(1) << 6 | at(2);
    if (r >= 0x800 && (r < 0xD800 || r > 0xDFFF)) return {r, 3};
  }
  if (b0 >= 0xF0 && b0 <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    char32_t r = (b0 & 0x07) << 18 | at(1) << 12 | at(2) << 6 | at(3);
    if (r >= 0x10000 && r <= 0x10FFFF) return {r, 4};
  }
  return {0xFFFD, 1};
}

void append_rune(std::string& out, char32_t r) {
  if (r < 0x80) {
    out += static_cast<char>(r);
  } else if (r < 0x800) {
    out += static_cast<char>(0xC0 | (r >> 6));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else if (r < 0x10000) {
    out += static_cast<char>(0xE0 | (r >> 12));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (r >> 18));
    out += static_cast<char>(0x80 | ((r >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  }
}

namespace {

// The length of the valid prefix of s.
std::size_t valid_prefix(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    Rune r = decode_rune(s, i);
    if (r.r == 0xFFFD && r.width == 1) break;
    i += static_cast<std::size_t>(r.width);
  }
  return i;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  return valid_prefix(s) == s.size();
}

std::string coerce_utf8(std::string_view s) {
  std::size_t i = valid_prefix(s);
  std::string out(s.substr(0, i));
  out.reserve(s.size() + 8);
  while (i < s.size()) {
    Rune r = decode_rune(s, i);
    if (r.r == 0xFFFD && r.width == 1)
      out += "\xEF\xBF\xBD";
    else
      out.append(s.substr(i, static_cast<std::size_t>(r.width)));
    i += static_cast<std::size_t>(r.width);
  }
  return out;
}

}  // namespace meshop::api
