// sprig v3.3.0's key and certificate functions (crypto.go) on OpenSSL: genPrivateKey,
// genCA, genCAWithKey, genSelfSignedCert, genSelfSignedCertWithKey, genSignedCert,
// genSignedCertWithKey and buildCustomCert.
//
// What Go's x509.CreateCertificate writes for sprig's templates: X.509 v3, a serial drawn
// uniformly below 2^128 from the CSPRNG, subject (and for self-signed certificates issuer)
// CN=cn (PrintableString when Go would choose it, else UTF8String), NotBefore now and
// NotAfter now + daysValid*24h, critical keyUsage digitalSignature+keyEncipherment
// (+keyCertSign for a CA), extKeyUsage serverAuth+clientAuth, critical basicConstraints
// (CA:TRUE for genCA*), subjectKeyIdentifier for a CA (the leftmost 160 bits of SHA-256 of
// the public key, Go 1.26's default), authorityKeyIdentifier from the issuer's, and the
// DNS and IP subject alternative names in the order given. Signatures are SHA-256 with
// RSA PKCS#1 v1.5 or ECDSA, or pure Ed25519. Fresh keys are RSA 2048 for the certificate
// functions and RSA 4096 / DSA L2048N256 / ECDSA P-256 / Ed25519 for genPrivateKey, encoded
// as sprig does (PKCS#1, the OpenSSL DSA form, SEC 1, PKCS#8). As in Go, DSA keys cannot
// sign or be certified. The result is sprig's `certificate` struct, fields Cert and Key.
#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/dsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"

namespace meshop::template_engine::sprig {

namespace {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using PKeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

constexpr std::string_view kCertType = "sprig.certificate";

class CertificateObject final : public Object {
 public:
  CertificateObject(std::string cert, std::string key)
      : cert_(std::move(cert)), key_(std::move(key)) {}
  std::string_view go_type() const override { return kCertType; }
  std::string_view go_kind() const override { return "struct"; }
  std::optional<Value> field(std::string_view name) const override {
    if (name == "Cert") return str(cert_);
    if (name == "Key") return str(key_);
    return std::nullopt;
  }
  void format(std::string& out, bool plus, bool sharp) const override {
    if (sharp) {
      out += "sprig.certificate{Cert:" + go_quote(cert_) + ", Key:" + go_quote(key_) + "}";
      return;
    }
    out += plus ? "{Cert:" : "{";
    out += cert_;
    out += plus ? " Key:" : " ";
    out += key_;
    out += "}";
  }
  const std::string& cert() const { return cert_; }
  const std::string& key() const { return key_; }

 private:
  std::string cert_, key_;
};

std::string bio_text(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

// pemBlockForKey: PKCS#1 for RSA, the OpenSSL/sprig DSA form, SEC 1 for ECDSA, else PKCS#8.
std::optional<std::string> key_pem(EVP_PKEY* k) {
  Bio b(BIO_new(BIO_s_mem()));
  if (!b) return std::nullopt;
  int id = EVP_PKEY_get_base_id(k);
  int ok =
      id == EVP_PKEY_RSA || id == EVP_PKEY_DSA || id == EVP_PKEY_EC
          ? PEM_write_bio_PrivateKey_traditional(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr)
          : PEM_write_bio_PrivateKey(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
  if (ok != 1) return std::nullopt;
  return bio_text(b.get());
}

PKey generate(std::string_view type) {
  if (type == "rsa4096") return PKey(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{4096}));
  if (type == "rsa2048") return PKey(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}));
  if (type == "ecdsa") return PKey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (type == "ed25519") return PKey(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (type == "dsa") {
    PKeyCtx pctx(EVP_PKEY_CTX_new_from_name(nullptr, "DSA", nullptr));
    EVP_PKEY* params = nullptr;
    if (!pctx || EVP_PKEY_paramgen_init(pctx.get()) != 1 ||
        EVP_PKEY_CTX_set_dsa_paramgen_bits(pctx.get(), 2048) != 1 ||
        EVP_PKEY_CTX_set_dsa_paramgen_q_bits(pctx.get(), 256) != 1 ||
        EVP_PKEY_paramgen(pctx.get(), &params) != 1)
      return nullptr;
    PKey p(params);
    PKeyCtx kctx(EVP_PKEY_CTX_new_from_pkey(nullptr, p.get(), nullptr));
    EVP_PKEY* key = nullptr;
    if (!kctx || EVP_PKEY_keygen_init(kctx.get()) != 1 || EVP_PKEY_keygen(kctx.get(), &key) != 1)
      return nullptr;
    return PKey(key);
  }
  return nullptr;
}

// The first PEM block of `text` (pem.Decode skips what comes before it).
struct PemBlock {
  std::string type;
  std::string der;
};
std::optional<PemBlock> pem_decode(std::string_view text) {
  Bio b(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  char *name = nullptr, *header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  if (!b || PEM_read_bio(b.get(), &name, &header, &data, &len) != 1) return std::nullopt;
  PemBlock blk{name, std::string(reinterpret_cast<char*>(data), static_cast<std::size_t>(len))};
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  return blk;
}

// sprig's parsePrivateKeyPEM.
Result<PKey> parse_private_key(std::string_view text) {
  auto blk = pem_decode(text);
  if (!blk) return fail("no PEM data in input");
  const auto* p = reinterpret_cast<const unsigned char*>(blk->der.data());
  long n = static_cast<long>(blk->der.size());
  if (blk->type == "PRIVATE KEY") {
    PKey k(d2i_AutoPrivateKey(nullptr, &p, n));
    if (!k) return fail("decoding PEM as PKCS#8: x509: failed to parse private key");
    return k;
  }
  constexpr std::string_view kSuffix = " PRIVATE KEY";
  if (blk->type.size() < kSuffix.size() ||
      blk->type.compare(blk->type.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return fail("no private key data in PEM block of type " + blk->type);
  std::string kind = blk->type.substr(0, blk->type.size() - kSuffix.size());
  int id = kind == "RSA"   ? EVP_PKEY_RSA
           : kind == "EC"  ? EVP_PKEY_EC
           : kind == "DSA" ? EVP_PKEY_DSA
                           : 0;
  if (id == 0) return fail("invalid private key type " + blk->type);
  PKey k(d2i_PrivateKey(id, nullptr, &p, n));
  if (!k) {
    if (id == EVP_PKEY_RSA)
      return fail("parsing RSA private key from PEM: x509: failed to parse RSA private key");
    if (id == EVP_PKEY_EC)
      return fail("parsing EC private key from PEM: x509: failed to parse EC private key");
    return fail("parsing DSA private key from PEM: asn1: structure error");
  }
  return k;
}

bool go_printable(std::string_view s) {
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == ' ' || c == '\'' || c == '(' || c == ')' || c == '+' ||
          c == ',' || c == '-' || c == '.' || c == '/' || c == ':' || c == '=' || c == '?' ||
          c == '*'))
      return false;
  return true;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
    i += static_cast<std::size_t>(n);
  }
  return true;
}

// getNetIPs: net.ParseIP; an IPv4 (or IPv4-mapped IPv6) address is written as 4 bytes.
Result<std::vector<std::string>> net_ips(const Value& ips) {
  std::vector<std::string> out;
  if (ips.kind() != Kind::kList || ips.as_list() == nullptr) return out;
  for (const Value& ip : ips.as_list()->items) {
    if (!ip.is_string()) return fail("error parsing ip: " + sprint_value(ip) + " is not a string");
    std::string s(ip.as_string());
    unsigned char buf[16];
    if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
      out.emplace_back(reinterpret_cast<char*>(buf), 4);
    } else if (s.find(':') != std::string::npos && inet_pton(AF_INET6, s.c_str(), buf) == 1) {
      static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
      if (std::equal(buf, buf + 12, kMapped))
        out.emplace_back(reinterpret_cast<char*>(buf + 12), 4);
      else
        out.emplace_back(reinterpret_cast<char*>(buf), 16);
    } else {
      return fail("error parsing ip: " + s);
    }
  }
  return out;
}

Result<std::vector<std::string>> dns_names(const Value& names) {
  std::vector<std::string> out;
  if (names.kind() != Kind::kList || names.as_list() == nullptr) return out;
  for (const Value& n : names.as_list()->items) {
    if (!n.is_string())
      return fail("error processing alternate dns name: " + sprint_value(n) + " is not a string");
    out.emplace_back(n.as_string());
  }
  return out;
}

struct Template {
  std::string cn;
  std::vector<std::string> ips, dns;
  std::int64_t days = 0;
  bool is_ca = false;
};

bool add_ext(X509* x, int nid, void* value, bool critical) {
  return X509_add1_ext_i2d(x, nid, value, critical ? 1 : 0, X509V3_ADD_DEFAULT) == 1;
}

// x509.CreateCertificate(template, parent, signee public key, signing key), PEM.
Result<std::string> create_certificate(const Template& t, EVP_PKEY* signee, X509* parent,
                                       EVP_PKEY* signer) {
  auto failed = [](std::string what) { return "error creating certificate: " + what; };
  if (EVP_PKEY_get_base_id(signer) == EVP_PKEY_DSA)
    return fail(failed("x509: certificate private key does not implement crypto.Signer"));
  if (EVP_PKEY_get_base_id(signee) == EVP_PKEY_DSA)
    return fail(failed("x509: unsupported public key type: *dsa.PublicKey"));
  if (!valid_utf8(t.cn)) return fail(failed("asn1: string not valid UTF-8"));
  for (const std::string& d : t.dns)
    for (unsigned char c : d)
      if (c > 0x7F)
        return fail(failed("x509: " + go_quote(d) + " cannot be encoded as an IA5String"));
  if (parent != nullptr && EVP_PKEY_eq(X509_get0_pubkey(parent), signer) != 1)
    return fail(failed("x509: provided PrivateKey doesn't match parent's PublicKey"));
  const std::string internal = failed("OpenSSL could not build the certificate");

  Cert x(X509_new());
  if (!x || X509_set_version(x.get(), X509_VERSION_3) != 1) return fail(internal);
  // Serial: uniform in [0, 2^128), as rand.Int(rand.Reader, 1<<128).
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1)
    return fail("the system's random number generator failed");
  Bignum bn(BN_bin2bn(serial, sizeof serial, nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(x.get())) == nullptr)
    return fail(internal);

  X509_NAME* subject = X509_get_subject_name(x.get());
  if (!t.cn.empty() &&
      X509_NAME_add_entry_by_NID(subject, NID_commonName,
                                 go_printable(t.cn) ? V_ASN1_PRINTABLESTRING : V_ASN1_UTF8STRING,
                                 reinterpret_cast<const unsigned char*>(t.cn.data()),
                                 static_cast<int>(t.cn.size()), -1, 0) != 1)
    return fail(internal);
  X509_NAME* issuer_name = parent != nullptr ? X509_get_subject_name(parent) : subject;
  if (X509_set_issuer_name(x.get(), issuer_name) != 1) return fail(internal);

  std::time_t now = std::time(nullptr);
  if (ASN1_TIME_set(X509_getm_notBefore(x.get()), now) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(x.get()), now + static_cast<std::time_t>(t.days) * 86400) ==
          nullptr)
    return fail(internal);
  if (X509_set_pubkey(x.get(), signee) != 1) return fail(internal);

  // keyUsage (critical): digitalSignature(0), keyEncipherment(2), keyCertSign(5) for a CA.
  ASN1_BIT_STRING* ku = ASN1_BIT_STRING_new();
  bool ok = ku != nullptr && ASN1_BIT_STRING_set_bit(ku, 0, 1) == 1 &&
            ASN1_BIT_STRING_set_bit(ku, 2, 1) == 1 &&
            (!t.is_ca || ASN1_BIT_STRING_set_bit(ku, 5, 1) == 1) &&
            add_ext(x.get(), NID_key_usage, ku, true);
  ASN1_BIT_STRING_free(ku);
  if (!ok) return fail(internal);

  EXTENDED_KEY_USAGE* eku = sk_ASN1_OBJECT_new_null();
  ok = eku != nullptr && sk_ASN1_OBJECT_push(eku, OBJ_nid2obj(NID_server_auth)) > 0 &&
       sk_ASN1_OBJECT_push(eku, OBJ_nid2obj(NID_client_auth)) > 0 &&
       add_ext(x.get(), NID_ext_key_usage, eku, false);
  sk_ASN1_OBJECT_free(eku);  // the OIDs are OpenSSL's static objects
  if (!ok) return fail(internal);

  BASIC_CONSTRAINTS* bc = BASIC_CONSTRAINTS_new();
  ok = bc != nullptr;
  if (ok) {
    bc->ca = t.is_ca ? 0xFF : 0;
    ok = add_ext(x.get(), NID_basic_constraints, bc, true);
  }
  BASIC_CONSTRAINTS_free(bc);
  if (!ok) return fail(internal);

  if (t.is_ca) {
    // Go 1.26: the leftmost 160 bits of SHA-256 over the subjectPublicKey BIT STRING's bytes.
    const ASN1_BIT_STRING* pub = X509_get0_pubkey_bitstr(x.get());
    unsigned char h[32];
    unsigned int hn = 0;
    ASN1_OCTET_STRING* skid = ASN1_OCTET_STRING_new();
    ok = pub != nullptr && skid != nullptr &&
         EVP_Digest(pub->data, static_cast<std::size_t>(pub->length), h, &hn, EVP_sha256(),
                    nullptr) == 1 &&
         ASN1_OCTET_STRING_set(skid, h, 20) == 1 &&
         add_ext(x.get(), NID_subject_key_identifier, skid, false);
    ASN1_OCTET_STRING_free(skid);
    if (!ok) return fail(internal);
  }
  if (parent != nullptr && X509_NAME_cmp(issuer_name, subject) != 0) {
    if (const ASN1_OCTET_STRING* pskid = X509_get0_subject_key_id(parent)) {
      AUTHORITY_KEYID* akid = AUTHORITY_KEYID_new();
      ok = akid != nullptr && (akid->keyid = ASN1_OCTET_STRING_dup(pskid)) != nullptr &&
           add_ext(x.get(), NID_authority_key_identifier, akid, false);
      AUTHORITY_KEYID_free(akid);
      if (!ok) return fail(internal);
    }
  }
  if (!t.dns.empty() || !t.ips.empty()) {
    GENERAL_NAMES* gens = sk_GENERAL_NAME_new_null();
    ok = gens != nullptr;
    auto push = [&](int type, const std::string& bytes) {
      GENERAL_NAME* gn = GENERAL_NAME_new();
      ASN1_STRING* s =
          ASN1_STRING_type_new(type == GEN_DNS ? V_ASN1_IA5STRING : V_ASN1_OCTET_STRING);
      if (gn == nullptr || s == nullptr ||
          ASN1_STRING_set(s, bytes.data(), static_cast<int>(bytes.size())) != 1) {
        GENERAL_NAME_free(gn);
        ASN1_STRING_free(s);
        return false;
      }
      GENERAL_NAME_set0_value(gn, type, s);
      if (sk_GENERAL_NAME_push(gens, gn) <= 0) {
        GENERAL_NAME_free(gn);
        return false;
      }
      return true;
    };
    for (const std::string& d : t.dns)
      ok = ok && push(GEN_DNS, d);
    for (const std::string& ip : t.ips)
      ok = ok && push(GEN_IPADD, ip);
    // Critical when the subject is empty (RFC 5280 4.2.1.6), as Go marks it.
    ok = ok && add_ext(x.get(), NID_subject_alt_name, gens, t.cn.empty());
    GENERAL_NAMES_free(gens);
    if (!ok) return fail(internal);
  }

  int sid = EVP_PKEY_get_base_id(signer);
  const EVP_MD* md = sid == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  if (sid != EVP_PKEY_RSA && sid != EVP_PKEY_EC && sid != EVP_PKEY_ED25519)
    return fail(failed("x509: only RSA, ECDSA and Ed25519 keys supported"));
  if (X509_sign(x.get(), signer, md) <= 0) return fail(internal);
  Bio b(BIO_new(BIO_s_mem()));
  if (!b || PEM_write_bio_X509(b.get(), x.get()) != 1) return fail(internal);
  return bio_text(b.get());
}

// getCertAndKey: the certificate and the signee's key, as sprig's certificate struct.
Result<Value> cert_and_key(const Template& t, EVP_PKEY* signee, X509* parent, EVP_PKEY* signer) {
  auto cert = create_certificate(t, signee, parent, signer);
  if (!cert) return fail(cert.error());
  auto key = key_pem(signee);
  if (!key) return fail("error pem-encoding key: OpenSSL could not encode the key");
  return Value::object(std::make_shared<CertificateObject>(*cert, *key));
}

Result<Template> base_template(std::string_view cn, const Value& ips, const Value& dns,
                               std::int64_t days) {
  Template t;
  t.cn = std::string(cn);
  auto i = net_ips(ips);
  if (!i) return fail(i.error());
  auto d = dns_names(dns);
  if (!d) return fail(d.error());
  t.ips = *i;
  t.dns = *d;
  t.days = days;
  return t;
}

Result<PKey> rsa2048() {
  PKey k = generate("rsa2048");
  if (!k) return fail("error generating rsa key: OpenSSL key generation failed");
  return k;
}

Result<PKey> pem_key(std::string_view text) {
  auto k = parse_private_key(text);
  if (!k) return fail("parsing private key: " + k.message());
  return k;
}

Result<Value> ca(std::string_view cn, std::int64_t days, EVP_PKEY* key) {
  Template t;
  t.cn = std::string(cn);
  t.days = days;
  t.is_ca = true;
  return cert_and_key(t, key, nullptr, key);
}

Result<Value> self_signed(std::string_view cn, const Value& ips, const Value& dns,
                          std::int64_t days, EVP_PKEY* key) {
  auto t = base_template(cn, ips, dns, days);
  if (!t) return fail(t.error());
  return cert_and_key(*t, key, nullptr, key);
}

Result<Value> signed_by(std::string_view cn, const Value& ips, const Value& dns, std::int64_t days,
                        const Value& ca_value, EVP_PKEY* key) {
  const auto* cao = dynamic_cast<const CertificateObject*>(ca_value.as_object());
  if (cao == nullptr) return fail("unable to decode certificate");
  auto blk = pem_decode(cao->cert());
  if (!blk) return fail("unable to decode certificate");
  const auto* p = reinterpret_cast<const unsigned char*>(blk->der.data());
  Cert signer_cert(d2i_X509(nullptr, &p, static_cast<long>(blk->der.size())));
  if (!signer_cert)
    return fail("error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate");
  auto signer_key = parse_private_key(cao->key());
  if (!signer_key) return fail("error parsing private key: " + signer_key.message());
  auto t = base_template(cn, ips, dns, days);
  if (!t) return fail(t.error());
  return cert_and_key(*t, key, signer_cert.get(), signer_key->get());
}

}  // namespace

void add_sprig_cert_functions(FunctionMap& fm) {
  const ParamType list = ParamType::list();
  const ParamType cert = ParamType::object(kCertType);
  fm.add("genPrivateKey", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view type = a[0].as_string();
    std::string which = type.empty() || type == "rsa" ? "rsa4096" : std::string(type);
    if (which != "rsa4096" && which != "dsa" && which != "ecdsa" && which != "ed25519")
      return str("Unknown type " + std::string(type));
    PKey k = generate(which);
    if (!k)
      return str(which == "dsa"
                     ? "failed to generate dsa params: OpenSSL parameter generation failed"
                     : "failed to generate private key: OpenSSL key generation failed");
    auto pem = key_pem(k.get());
    if (!pem) return str("failed to generate private key: OpenSSL could not encode the key");
    return str(*pem);
  });
  fm.add("genCA", fixed({kStr, kInt}), [](Args a) -> Result<Value> {
    auto k = rsa2048();
    if (!k) return fail(k.error());
    return ca(a[0].as_string(), a[1].as_int(), k->get());
  });
  fm.add("genCAWithKey", fixed({kStr, kInt, kStr}), [](Args a) -> Result<Value> {
    auto k = pem_key(a[2].as_string());
    if (!k) return fail(k.error());
    return ca(a[0].as_string(), a[1].as_int(), k->get());
  });
  fm.add("genSelfSignedCert", fixed({kStr, list, list, kInt}), [](Args a) -> Result<Value> {
    auto k = rsa2048();
    if (!k) return fail(k.error());
    return self_signed(a[0].as_string(), a[1], a[2], a[3].as_int(), k->get());
  });
  fm.add("genSelfSignedCertWithKey", fixed({kStr, list, list, kInt, kStr}),
         [](Args a) -> Result<Value> {
           auto k = pem_key(a[4].as_string());
           if (!k) return fail(k.error());
           return self_signed(a[0].as_string(), a[1], a[2], a[3].as_int(), k->get());
         });
  fm.add("genSignedCert", fixed({kStr, list, list, kInt, cert}), [](Args a) -> Result<Value> {
    auto k = rsa2048();
    if (!k) return fail(k.error());
    return signed_by(a[0].as_string(), a[1], a[2], a[3].as_int(), a[4], k->get());
  });
  fm.add("genSignedCertWithKey", fixed({kStr, list, list, kInt, cert, kStr}),
         [](Args a) -> Result<Value> {
           auto k = pem_key(a[5].as_string());
           if (!k) return fail(k.error());
           return signed_by(a[0].as_string(), a[1], a[2], a[3].as_int(), a[4], k->get());
         });
  fm.add("buildCustomCert", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    auto cert_text = base64_std_decode(a[0].as_string());
    if (!cert_text) return fail("unable to decode base64 certificate");
    auto key_text = base64_std_decode(a[1].as_string());
    if (!key_text) return fail("unable to decode base64 private key");
    auto blk = pem_decode(*cert_text);
    if (!blk) return fail("unable to decode certificate");
    const auto* p = reinterpret_cast<const unsigned char*>(blk->der.data());
    Cert c(d2i_X509(nullptr, &p, static_cast<long>(blk->der.size())));
    if (!c)
      return fail("error parsing certificate: decodedCert.Bytes: x509: malformed certificate");
    auto k = parse_private_key(*key_text);
    if (!k) return fail("error parsing private key: " + k.message());
    return Value::object(std::make_shared<CertificateObject>(*cert_text, *key_text));
  });
}

}  // namespace meshop::template_engine::sprig
