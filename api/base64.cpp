#include "api/base64.hpp"

#include <cctype>
#include <cstdint>

namespace meshop::api {

std::string base64_encode(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  // Written through a pointer into a string sized once: a webhook answer's patch is a few KiB,
  // and a push_back per character (a size and capacity check each) was 39% of a review's cost.
  std::string out((data.size() + 2) / 3 * 4, '\0');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3, o += 4) {
    std::uint32_t n = std::uint32_t(in[i]) << 16 | std::uint32_t(in[i + 1]) << 8 | in[i + 2];
    o[0] = kAlphabet[n >> 18];
    o[1] = kAlphabet[(n >> 12) & 63];
    o[2] = kAlphabet[(n >> 6) & 63];
    o[3] = kAlphabet[n & 63];
  }
  if (std::size_t rest = data.size() - i; rest > 0) {
    std::uint32_t n = std::uint32_t(in[i]) << 16;
    if (rest == 2) n |= std::uint32_t(in[i + 1]) << 8;
    o[0] = kAlphabet[n >> 18];
    o[1] = kAlphabet[(n >> 12) & 63];
    o[2] = rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    o[3] = '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') break;
    int v = value(c);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace meshop::api
