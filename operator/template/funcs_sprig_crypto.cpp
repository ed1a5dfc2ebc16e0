// sprig v3.3.0's hash and random functions that funcs_sprig.cpp does not define:
// sha1sum, sha512sum (OpenSSL), adler32sum, and randBytes, uuidv4, randAlpha,
// randAlphaNum, randAscii, randNumeric, randInt, shuffle. Every random value comes from
// OpenSSL's CSPRNG (RAND_bytes) — where sprig uses math/rand (randInt, shuffle) meshop is
// stronger, never weaker. Lengths and alphabets are sprig's: randAscii draws from the
// printable ASCII characters ' '..'~', randAlpha from [A-Za-z], randAlphaNum from
// [0-9A-Za-z], randNumeric from [0-9]; a negative count gives "" as in sprig.
//
// Also the secret functions: encryptAES/decryptAES (AES-256-CBC as sprig: the password
// zero-padded or cut to 32 bytes is the key, a random IV in front, PKCS#7 padding, base64;
// decryptAES fails where sprig panics, with the panic's text, and like sprig does not check
// the padding), derivePassword (sprig's Master Password algorithm: scrypt N=32768 r=8 p=2
// over the user, HMAC-SHA256 over the site and counter, sprig's templates), and bcrypt /
// htpasswd (cost 10, "$2a$" as Go's x/crypto/bcrypt writes it; hashed by libxcrypt's
// "$2b$", which is the same algorithm without the historical 8-bit bug handling).
#include <algorithm>
#include <array>
#include <crypt.h>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
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

constexpr const char* kRandFailed = "the system's random number generator failed";

// AES-256-CBC over whole blocks, no padding (the caller pads). False on an OpenSSL failure.
bool aes_cbc(bool encrypt, const std::array<unsigned char, 32>& key, const unsigned char* iv,
             const unsigned char* in, std::size_t n, unsigned char* out) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return false;
  int len = 0, fin = 0;
  bool ok = EVP_CipherInit_ex(ctx, EVP_aes_256_cbc(), nullptr, key.data(), iv, encrypt) == 1 &&
            EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
            EVP_CipherUpdate(ctx, out, &len, in, static_cast<int>(n)) == 1 &&
            EVP_CipherFinal_ex(ctx, out + len, &fin) == 1 &&
            static_cast<std::size_t>(len + fin) == n;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

std::array<unsigned char, 32> aes_key(std::string_view password) {
  std::array<unsigned char, 32> key{};
  std::memcpy(key.data(), password.data(), std::min(password.size(), key.size()));
  return key;
}

Result<Value> encrypt_aes(std::string_view password, std::string_view plaintext) {
  if (plaintext.empty()) return str("");
  if (plaintext.size() > 256 * 1024 * 1024) return fail("encryptAES: plaintext too long");
  std::size_t pad = 16 - plaintext.size() % 16;
  std::string content(plaintext);
  content.append(pad, static_cast<char>(pad));
  std::string out(16 + content.size(), '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(o, 16) != 1) return fail(kRandFailed);
  if (!aes_cbc(true, aes_key(password), o, reinterpret_cast<const unsigned char*>(content.data()),
               content.size(), o + 16))
    return fail("encryptAES: AES-256-CBC failed");
  return str(base64_std_encode(out));
}

Result<Value> decrypt_aes(std::string_view password, std::string_view crypt64) {
  if (crypt64.empty()) return str("");
  auto crypt = base64_std_decode(crypt64);
  if (!crypt) return fail(crypt.error());
  const std::string& c = *crypt;
  // Go slices the IV off a buffer of base64's DecodedLen: its capacity shows in the panic.
  if (c.size() < 16)
    return fail("runtime error: slice bounds out of range [:16] with capacity " +
                std::to_string(crypt64.size() / 4 * 3));
  std::size_t n = c.size() - 16;
  if (n % 16 != 0) return fail("crypto/cipher: input not full blocks");
  if (n == 0) return fail("runtime error: index out of range [-1]");
  std::string plain(n, '\0');
  const auto* in = reinterpret_cast<const unsigned char*>(c.data());
  if (!aes_cbc(false, aes_key(password), in, in + 16, n,
               reinterpret_cast<unsigned char*>(plain.data())))
    return fail("decryptAES: AES-256-CBC failed");
  auto pad = static_cast<unsigned char>(plain.back());
  if (pad > n)
    return fail("runtime error: slice bounds out of range [:" +
                std::to_string(static_cast<std::int64_t>(n) - pad) + "]");
  plain.resize(n - pad);
  return str(std::move(plain));
}

// sprig's derivePassword templates and their character classes.
const std::vector<std::string_view>* password_templates(std::string_view type) {
  static const std::vector<std::string_view> kMaximum = {"anoxxxxxxxxxxxxxxxxx",
                                                         "axxxxxxxxxxxxxxxxxno"};
  static const std::vector<std::string_view> kLong = {
      "CvcvnoCvcvCvcv", "CvcvCvcvnoCvcv", "CvcvCvcvCvcvno", "CvccnoCvcvCvcv", "CvccCvcvnoCvcv",
      "CvccCvcvCvcvno", "CvcvnoCvccCvcv", "CvcvCvccnoCvcv", "CvcvCvccCvcvno", "CvcvnoCvcvCvcc",
      "CvcvCvcvnoCvcc", "CvcvCvcvCvccno", "CvccnoCvccCvcv", "CvccCvccnoCvcv", "CvccCvccCvcvno",
      "CvcvnoCvccCvcc", "CvcvCvccnoCvcc", "CvcvCvccCvccno", "CvccnoCvcvCvcc", "CvccCvcvnoCvcc",
      "CvccCvcvCvccno"};
  static const std::vector<std::string_view> kMedium = {"CvcnoCvc", "CvcCvcno"};
  static const std::vector<std::string_view> kShort = {"Cvcn"};
  static const std::vector<std::string_view> kBasic = {"aaanaaan", "aannaaan", "aaannaaa"};
  static const std::vector<std::string_view> kPin = {"nnnn"};
  if (type == "maximum") return &kMaximum;
  if (type == "long") return &kLong;
  if (type == "medium") return &kMedium;
  if (type == "short") return &kShort;
  if (type == "basic") return &kBasic;
  if (type == "pin") return &kPin;
  return nullptr;
}

std::string_view template_characters(char c) {
  switch (c) {
    case 'V':
      return "AEIOU";
    case 'C':
      return "BCDFGHJKLMNPQRSTVWXYZ";
    case 'v':
      return "aeiou";
    case 'c':
      return "bcdfghjklmnpqrstvwxyz";
    case 'A':
      return "AEIOUBCDFGHJKLMNPQRSTVWXYZ";
    case 'a':
      return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz";
    case 'n':
      return "0123456789";
    case 'o':
      return "@&%?,=[]_:-+*$#!'^~;()/.";
    default:
      return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()";
  }
}

void append_be32(std::string& out, std::uint32_t n) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out += static_cast<char>((n >> shift) & 0xFF);
}

Result<Value> derive_password(std::uint32_t counter, std::string_view type,
                              std::string_view password, std::string_view user,
                              std::string_view site) {
  const auto* templates = password_templates(type);
  if (templates == nullptr) return str("cannot find password template " + std::string(type));
  constexpr std::string_view kSeed = "com.lyndir.masterpassword";
  std::string salt(kSeed);
  append_be32(salt, static_cast<std::uint32_t>(user.size()));
  salt += user;
  std::array<unsigned char, 64> key{};
  // N=32768, r=8, p=2 needs 128*r*(N+p) bytes, above OpenSSL's 32 MiB default limit.
  if (EVP_PBE_scrypt(password.data(), password.size(),
                     reinterpret_cast<const unsigned char*>(salt.data()), salt.size(), 32768, 8, 2,
                     64ULL * 1024 * 1024, key.data(), key.size()) != 1)
    return str("failed to derive password: scrypt failed");
  std::string msg(kSeed);
  append_be32(msg, static_cast<std::uint32_t>(site.size()));
  msg += site;
  append_be32(msg, counter);
  unsigned char seed[EVP_MAX_MD_SIZE];
  unsigned int seed_len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), seed,
           &seed_len) == nullptr)
    return fail("derivePassword: HMAC-SHA256 failed");
  std::string_view tmpl = (*templates)[seed[0] % templates->size()];
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    std::string_view chars = template_characters(tmpl[i]);
    out += chars[seed[i + 1] % chars.size()];
  }
  return str(std::move(out));
}

// x/crypto/bcrypt's GenerateFromPassword at DefaultCost (10), as sprig's bcrypt: failures are
// the returned text, not an error.
std::string bcrypt_hash(std::string_view password) {
  if (password.size() > 72)
    return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes";
  // libxcrypt hashes a C string; Go's bcrypt hashes the bytes (a NUL inside included).
  if (password.find('\0') != std::string_view::npos)
    return "failed to encrypt string with bcrypt: meshop cannot hash a password containing a "
           "NUL byte";
  unsigned char rbytes[16];
  if (RAND_bytes(rbytes, sizeof rbytes) != 1)
    return std::string("failed to encrypt string with bcrypt: ") + kRandFailed;
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 10, reinterpret_cast<const char*>(rbytes), sizeof rbytes, setting,
                       sizeof setting) == nullptr)
    return "failed to encrypt string with bcrypt: crypt_gensalt failed";
  std::string pw(password);
  crypt_data data{};
  const char* h = crypt_rn(pw.c_str(), setting, &data, sizeof data);
  OPENSSL_cleanse(pw.data(), pw.size());
  if (h == nullptr || h[0] != '$') {
    OPENSSL_cleanse(&data, sizeof data);
    return "failed to encrypt string with bcrypt: crypt failed";
  }
  std::string out(h);
  OPENSSL_cleanse(&data, sizeof data);
  out[2] = 'a';  // "$2b$" -> "$2a$": the same hash, in the version Go writes
  return out;
}

}  // namespace

void add_sprig_crypto_functions(FunctionMap& fm) {
  fm.add("encryptAES", fixed({kStr, kStr}),
         [](Args a) -> Result<Value> { return encrypt_aes(a[0].as_string(), a[1].as_string()); });
  fm.add("decryptAES", fixed({kStr, kStr}),
         [](Args a) -> Result<Value> { return decrypt_aes(a[0].as_string(), a[1].as_string()); });
  fm.add("derivePassword", fixed({ParamType{Kind::kUint32}, kStr, kStr, kStr, kStr}),
         [](Args a) -> Result<Value> {
           return derive_password(static_cast<std::uint32_t>(a[0].as_uint()), a[1].as_string(),
                                  a[2].as_string(), a[3].as_string(), a[4].as_string());
         });
  fm.add("bcrypt", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(bcrypt_hash(a[0].as_string())); });
  fm.add("htpasswd", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    std::string_view user = a[0].as_string();
    if (user.find(':') != std::string_view::npos)
      return str("invalid username: " + std::string(user));
    return str(std::string(user) + ":" + bcrypt_hash(a[1].as_string()));
  });
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
