#include "api/base64.hpp"

#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace meshop::api {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of each 12-bit value: a webhook answer's patch (a few KiB) is encoded
// with two table reads per 3 bytes instead of four.
struct PairTable {
  char pair[4096][2];
};

constexpr PairTable make_pairs() {
  PairTable t{};
  for (int i = 0; i < 4096; ++i) {
    t.pair[i][0] = kAlphabet[i >> 6];
    t.pair[i][1] = kAlphabet[i & 63];
  }
  return t;
}

constexpr PairTable kPairs = make_pairs();

inline void put_pair(char* o, std::uint64_t twelve_bits) {
  std::memcpy(o, kPairs.pair[twelve_bits & 0xFFF], 2);
}

// The 8 bytes at `p` as a big-endian number.
inline std::uint64_t load_be64(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
  return w;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MESHOP_BASE64_SSSE3 1
// 12 bytes to 16 characters per step with SSSE3 (W. Muła's vectorized base64: byte shuffle,
// two 16-bit multiplies to spread the four 6-bit values of each 3-byte group into bytes, and a
// 16-entry shuffle table that maps each value's range to the offset of its character). Reads 16
// bytes for each 12 used: the caller leaves 4 bytes of slack. Returns the bytes consumed.
__attribute__((target("ssse3"))) std::size_t encode_ssse3(const unsigned char* in, std::size_t n,
                                                          char* out) {
  const __m128i shuffle = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
  const __m128i offsets =
      _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                    '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 12, out += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    v = _mm_shuffle_epi8(v, shuffle);
    const __m128i hi =
        _mm_mulhi_epu16(_mm_and_si128(v, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
    const __m128i lo =
        _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
    const __m128i sixes = _mm_or_si128(hi, lo);  // one 6-bit value per byte
    // 0..25 -> 13 ('A'), 26..51 -> 0 ('a' - 26), 52..61 -> 1..10, 62 -> 11, 63 -> 12.
    __m128i range = _mm_subs_epu8(sixes, _mm_set1_epi8(51));
    const __m128i upper = _mm_cmpgt_epi8(_mm_set1_epi8(26), sixes);
    range = _mm_or_si128(range, _mm_and_si128(upper, _mm_set1_epi8(13)));
    const __m128i chars = _mm_add_epi8(_mm_shuffle_epi8(offsets, range), sixes);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chars);
  }
  return i;
}

bool have_ssse3() {
  static const bool have = __builtin_cpu_supports("ssse3");
  return have;
}
#endif

}  // namespace

std::string base64_encode(std::string_view data) {
  // Written through a pointer into a string sized once (a push_back per character, a size and
  // capacity check each, was 39% of a review's cost).
  std::string out((data.size() + 2) / 3 * 4, '\0');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t n = data.size();
  std::size_t i = 0;
#ifdef MESHOP_BASE64_SSSE3
  if (n >= 16 && have_ssse3()) {
    i = encode_ssse3(in, n, o);
    o += i / 3 * 4;
  }
#endif
  // 6 bytes (48 bits, four 12-bit pairs) per 8-byte load while 8 bytes can be read.
  for (; i + 8 <= n; i += 6, o += 8) {
    std::uint64_t w = load_be64(in + i);
    put_pair(o, w >> 52);
    put_pair(o + 2, w >> 40);
    put_pair(o + 4, w >> 28);
    put_pair(o + 6, w >> 16);
  }
  for (; i + 3 <= n; i += 3, o += 4) {
    std::uint32_t v = std::uint32_t(in[i]) << 16 | std::uint32_t(in[i + 1]) << 8 | in[i + 2];
    put_pair(o, v >> 12);
    put_pair(o + 2, v);
  }
  if (std::size_t rest = n - i; rest > 0) {
    std::uint32_t v = std::uint32_t(in[i]) << 16;
    if (rest == 2) v |= std::uint32_t(in[i + 1]) << 8;
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
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
