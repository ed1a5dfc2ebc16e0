// sprig v3.3.0's hash and random functions that funcs_sprig.cpp does not define:
// sha1sum, sha512sum (OpenSSL), adler32sum, and randBytes, uuidv4, randAlpha,
// randAlphaNum, randAscii, randNumeric, randInt, shuffle. Every random value comes from
// OpenSSL's CSPRNG (RAND_bytes) — where sprig uses math/rand (randInt, shuffle) meshop is
// stronger, never weaker. Lengths and alphabets are sprig's: randAscii draws from the
// printable ASCII characters ' '..'~', randAlpha from [A-Za-z], randAlphaNum from
// [0-9A-Za-z], randNumeric from [0-9]; a negative count gives "" as in sprig.
#include <cstdint>
#include <string>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine::sprig {

namespace {

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

Result<Value> digest(const EVP_MD* md, std::string_view in) {
  unsigned char buf[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(in.data(), in.size(), buf, &n, md, nullptr) != 1) return fail("digest failed");
  return str(hex(buf, n));
}

std::uint32_t adler32(std::string_view in) {
  std::uint32_t a = 1, b = 0;
  for (unsigned char c : in) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return b << 16 | a;
}

// Uniform in [0, n) without modulo bias.
Result<std::uint64_t> random_below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    std::uint64_t x = 0;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&x), sizeof x) != 1)
      return fail("the system's random number generator failed");
    if (x < limit) return x % n;
  }
}

Result<Value> random_string(std::int64_t count, std::string_view alphabet) {
  if (count <= 0) return str("");
  if (count > 64 * 1024 * 1024) return fail("random string too long");
  std::string out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    auto k = random_below(alphabet.size());
    if (!k) return fail(k.error());
    out += alphabet[*k];
  }
  return str(std::move(out));
}

std::string alphabet(bool letters, bool digits, bool ascii) {
  std::string a;
  for (int c = ' '; c <= '~'; ++c) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    if (ascii || (letters && letter) || (digits && digit)) a += static_cast<char>(c);
  }
  return a;
}

}  // namespace

void add_sprig_crypto_functions(FunctionMap& fm) {
  fm.add("sha1sum", fixed({kStr}),
         [](Args a) -> Result<Value> { return digest(EVP_sha1(), a[0].as_string()); });
  fm.add("sha512sum", fixed({kStr}),
         [](Args a) -> Result<Value> { return digest(EVP_sha512(), a[0].as_string()); });
  fm.add("adler32sum", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(std::to_string(adler32(a[0].as_string()))); });
}

void add_sprig_random_functions(FunctionMap& fm) {
  fm.add("randAlphaNum", fixed({kInt}), [](Args a) -> Result<Value> {
    static const std::string kSet = alphabet(true, true, false);
    return random_string(a[0].as_int(), kSet);
  });
  fm.add("randAlpha", fixed({kInt}), [](Args a) -> Result<Value> {
    static const std::string kSet = alphabet(true, false, false);
    return random_string(a[0].as_int(), kSet);
  });
  fm.add("randAscii", fixed({kInt}), [](Args a) -> Result<Value> {
    static const std::string kSet = alphabet(false, false, true);
    return random_string(a[0].as_int(), kSet);
  });
  fm.add("randNumeric", fixed({kInt}),
         [](Args a) -> Result<Value> { return random_string(a[0].as_int(), "0123456789"); });
  fm.add("randBytes", fixed({kInt}), [](Args a) -> Result<Value> {
    std::int64_t n = a[0].as_int();
    if (n < 0) return fail("runtime error: makeslice: len out of range");
    if (n > 64 * 1024 * 1024) return fail("randBytes: count too large");
    std::string buf(static_cast<std::size_t>(n), '\0');
    if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(n)) != 1)
      return fail("the system's random number generator failed");
    // base64.StdEncoding through OpenSSL's encoder (no newlines with EVP_EncodeBlock).
    std::string out(4 * ((buf.size() + 2) / 3) + 1, '\0');
    int len =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                        reinterpret_cast<const unsigned char*>(buf.data()), static_cast<int>(n));
    out.resize(static_cast<std::size_t>(len));
    return str(std::move(out));
  });
  fm.add("uuidv4", fixed({}), [](Args) -> Result<Value> {
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) return fail("the system's random number generator failed");
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
    std::string h = hex(b, 16);
    return str(h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
               h.substr(16, 4) + "-" + h.substr(20));
  });
  fm.add("randInt", fixed({kInt, kInt}), [](Args a) -> Result<Value> {
    std::int64_t lo = a[0].as_int(), hi = a[1].as_int();
    std::int64_t span = 0;
    if (__builtin_sub_overflow(hi, lo, &span) || span <= 0) return fail("invalid argument to Intn");
    auto k = random_below(static_cast<std::uint64_t>(span));
    if (!k) return fail(k.error());
    return Value::integer(lo + static_cast<std::int64_t>(*k));
  });
  fm.add("shuffle", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view s = a[0].as_string();
    std::vector<std::string_view> runes;
    for (std::size_t i = 0; i < s.size();) {
      auto r = funcs::decode_rune(s, i);
      runes.push_back(s.substr(i, static_cast<std::size_t>(r.width)));
      i += static_cast<std::size_t>(r.width);
    }
    for (std::size_t i = runes.size(); i > 1; --i) {  // Fisher-Yates
      auto k = random_below(i);
      if (!k) return fail(k.error());
      std::swap(runes[i - 1], runes[*k]);
    }
    std::string out;
    for (auto r : runes)
      out.append(r);
    return str(std::move(out));
  });
}

}  // namespace meshop::template_engine::sprig
