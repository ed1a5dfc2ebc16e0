#include "operator/certs/certs.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <ctime>
#include <memory>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace meshop::certs {
namespace {

// Owning handles for the OpenSSL objects used here.
template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

// The oldest queued OpenSSL error as text (and the queue cleared), for messages.
std::string openssl_error() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

api::Error fail(std::string what) {
  return api::Error{std::move(what) + ": " + openssl_error()};
}

std::string bio_to_string(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

api::Result<std::string> cert_to_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return fail("encoding certificate");
  return bio_to_string(bio.get());
}

api::Result<std::string> key_to_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return fail("encoding private key");
  return bio_to_string(bio.get());
}

api::Result<X509Ptr> read_cert(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return fail(std::string(what) + ": no PEM certificate");
  return cert;
}

api::Result<std::vector<X509Ptr>> read_certs(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<X509Ptr> out;
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    out.push_back(std::move(cert));
  }
  // Reading stops with a "no start line" error at the end of the input; that is the normal end.
  ERR_clear_error();
  if (out.empty()) return api::Error{std::string(what) + ": no PEM certificate"};
  return out;
}

api::Result<PkeyPtr> read_key(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return fail(std::string(what) + ": no PEM private key");
  return key;
}

api::Result<PkeyPtr> new_p256_key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return fail("generating an ECDSA P-256 key");
  return key;
}

TimePoint from_asn1(const ASN1_TIME* t) {
  std::tm tm{};
  ASN1_TIME_to_tm(t, &tm);
  return Clock::from_time_t(timegm(&tm));
}

bool set_validity(X509* cert, TimePoint from, TimePoint to) {
  std::time_t start = Clock::to_time_t(from);
  std::time_t end = Clock::to_time_t(to);
  return X509_time_adj_ex(X509_getm_notBefore(cert), 0, 0, &start) != nullptr &&
         X509_time_adj_ex(X509_getm_notAfter(cert), 0, 0, &end) != nullptr;
}

bool set_random_serial(X509* cert) {
  BnPtr bn(BN_new());
  // 127 random bits: positive and at most 16 bytes DER, as RFC 5280 asks.
  if (!bn || BN_rand(bn.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) return false;
  return BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr;
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool set_name(X509_NAME* name, std::string_view cn, std::string_view org) {
  auto add = [&](const char* field, std::string_view v) {
    return v.empty() || X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                                   reinterpret_cast<const unsigned char*>(v.data()),
                                                   static_cast<int>(v.size()), -1, 0) == 1;
  };
  return add("O", org) && add("CN", cn);
}

bool valid_dns_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '*';
  });
}

}  // namespace

TimePoint CertInfo::renew_at() const {
  return not_before + (not_after - not_before) * 2 / 3;
}

api::Result<KeyPair> create_ca(const CaOptions& options, TimePoint now) {
  if (options.lifetime <= std::chrono::seconds(0))
    return api::Error{"CA lifetime must be positive"};
  auto key = new_p256_key();
  if (!key) return key.error();
  X509Ptr cert(X509_new());
  if (!cert) return fail("allocating certificate");
  X509_NAME* name = X509_get_subject_name(cert.get());
  bool ok = X509_set_version(cert.get(), 2) == 1 && set_random_serial(cert.get()) &&
            set_validity(cert.get(), now - kBackdate, now + options.lifetime) &&
            set_name(name, options.common_name, options.organization) &&
            X509_set_issuer_name(cert.get(), name) == 1 &&
            X509_set_pubkey(cert.get(), key->get()) == 1 &&
            add_ext(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") &&
            add_ext(cert.get(), cert.get(), NID_key_usage,
                    "critical,keyCertSign,cRLSign,digitalSignature") &&
            add_ext(cert.get(), cert.get(), NID_subject_key_identifier, "hash") &&
            X509_sign(cert.get(), key->get(), EVP_sha256()) > 0;
  if (!ok) return fail("creating CA certificate " + options.common_name);
  auto cert_pem = cert_to_pem(cert.get());
  if (!cert_pem) return cert_pem.error();
  auto key_pem = key_to_pem(key->get());
  if (!key_pem) return key_pem.error();
  return KeyPair{std::move(*cert_pem), std::move(*key_pem)};
}

api::Result<KeyPair> issue_serving(const KeyPair& ca, const ServingOptions& options,
                                   TimePoint now) {
  if (options.dns_names.empty() && options.ip_addresses.empty())
    return api::Error{"serving certificate needs at least one DNS name or IP address"};
  if (options.lifetime <= std::chrono::seconds(0))
    return api::Error{"serving certificate lifetime must be positive"};
  std::string san;
  for (const std::string& d : options.dns_names) {
    if (!valid_dns_name(d)) return api::Error{"invalid DNS name \"" + d + "\""};
    san += (san.empty() ? "DNS:" : ",DNS:") + d;
  }
  for (const std::string& ip : options.ip_addresses) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, ip.c_str(), buf) != 1 && inet_pton(AF_INET6, ip.c_str(), buf) != 1)
      return api::Error{"invalid IP address \"" + ip + "\""};
    san += (san.empty() ? "IP:" : ",IP:") + ip;
  }
  auto ca_cert = read_cert(ca.cert_pem, "CA certificate");
  if (!ca_cert) return ca_cert.error();
  auto ca_key = read_key(ca.key_pem, "CA key");
  if (!ca_key) return ca_key.error();
  if (X509_check_private_key(ca_cert->get(), ca_key->get()) != 1)
    return fail("CA key does not match the CA certificate");
  auto key = new_p256_key();
  if (!key) return key.error();

  TimePoint not_after = now + options.lifetime;
  TimePoint ca_not_after = from_asn1(X509_get0_notAfter(ca_cert->get()));
  if (ca_not_after <= now) return api::Error{"CA certificate has expired"};
  not_after = std::min(not_after, ca_not_after);

  X509Ptr cert(X509_new());
  if (!cert) return fail("allocating certificate");
  std::string cn =
      options.common_name.empty()
          ? (options.dns_names.empty() ? options.ip_addresses.front() : options.dns_names.front())
          : options.common_name;
  bool ok = X509_set_version(cert.get(), 2) == 1 && set_random_serial(cert.get()) &&
            set_validity(cert.get(), now - kBackdate, not_after) &&
            set_name(X509_get_subject_name(cert.get()), cn, "") &&
            X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert->get())) == 1 &&
            X509_set_pubkey(cert.get(), key->get()) == 1 &&
            add_ext(cert.get(), ca_cert->get(), NID_basic_constraints, "critical,CA:FALSE") &&
            add_ext(cert.get(), ca_cert->get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment") &&
            add_ext(cert.get(), ca_cert->get(), NID_ext_key_usage, "serverAuth") &&
            add_ext(cert.get(), ca_cert->get(), NID_subject_alt_name, san) &&
            add_ext(cert.get(), ca_cert->get(), NID_authority_key_identifier, "keyid:always") &&
            X509_sign(cert.get(), ca_key->get(), EVP_sha256()) > 0;
  if (!ok) return fail("issuing serving certificate for " + cn);
  auto cert_pem = cert_to_pem(cert.get());
  if (!cert_pem) return cert_pem.error();
  auto key_pem = key_to_pem(key->get());
  if (!key_pem) return key_pem.error();
  return KeyPair{std::move(*cert_pem), std::move(*key_pem)};
}

namespace {

CertInfo describe(X509* cert) {
  CertInfo info;
  X509_NAME* subject = X509_get_subject_name(cert);
  int idx = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (idx >= 0) {
    ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
    info.common_name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                            static_cast<std::size_t>(ASN1_STRING_length(s)));
  }
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    if (gn->type == GEN_DNS) {
      const ASN1_STRING* s = gn->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                  static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (gn->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = gn->d.iPAddress;
      const unsigned char* b = ASN1_STRING_get0_data(s);
      char buf[INET6_ADDRSTRLEN] = {};
      int family = ASN1_STRING_length(s) == 4 ? AF_INET : AF_INET6;
      if ((ASN1_STRING_length(s) == 4 || ASN1_STRING_length(s) == 16) &&
          inet_ntop(family, b, buf, sizeof buf) != nullptr)
        info.ip_addresses.emplace_back(buf);
    }
  }
  info.not_before = from_asn1(X509_get0_notBefore(cert));
  info.not_after = from_asn1(X509_get0_notAfter(cert));
  info.is_ca = X509_check_ca(cert) != 0;
  BnPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (serial) {
    char* hex = BN_bn2hex(serial.get());
    info.serial_hex = hex;
    OPENSSL_free(hex);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) == 1) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < n; ++i) {
      info.sha256_fingerprint_hex += kHex[md[i] >> 4];
      info.sha256_fingerprint_hex += kHex[md[i] & 15];
    }
  }
  return info;
}

}  // namespace

api::Result<CertInfo> inspect(std::string_view pem) {
  auto cert = read_cert(pem, "certificate");
  if (!cert) return cert.error();
  return describe(cert->get());
}

api::Result<std::vector<CertInfo>> inspect_bundle(std::string_view pem) {
  auto certs = read_certs(pem, "CA bundle");
  if (!certs) return certs.error();
  std::vector<CertInfo> out;
  for (const X509Ptr& c : *certs)
    out.push_back(describe(c.get()));
  return out;
}

api::Status check_key_pair(const KeyPair& pair) {
  auto cert = read_cert(pair.cert_pem, "certificate");
  if (!cert) return cert.error();
  auto key = read_key(pair.key_pem, "private key");
  if (!key) return key.error();
  if (X509_check_private_key(cert->get(), key->get()) != 1)
    return fail("private key does not match the certificate");
  return api::ok_status();
}

api::Status verify(std::string_view leaf_pem, std::string_view ca_bundle_pem, TimePoint now) {
  auto leaf = read_cert(leaf_pem, "certificate");
  if (!leaf) return leaf.error();
  auto cas = read_certs(ca_bundle_pem, "CA bundle");
  if (!cas) return cas.error();
  StorePtr store(X509_STORE_new());
  for (const X509Ptr& ca : *cas)
    X509_STORE_add_cert(store.get(), ca.get());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf->get(), nullptr) != 1)
    return fail("preparing verification");
  X509_STORE_CTX_set_time(ctx.get(), 0, Clock::to_time_t(now));
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return api::Error{std::string("certificate does not verify against the CA bundle: ") +
                      X509_verify_cert_error_string(err)};
  }
  return api::ok_status();
}

std::string merge_bundle(std::string_view current_ca_pem, std::string_view previous_bundle,
                         TimePoint now) {
  std::string out(current_ca_pem);
  if (!out.empty() && out.back() != '\n') out += '\n';
  auto current = inspect(current_ca_pem);
  auto previous = read_certs(previous_bundle, "previous bundle");
  if (!previous) return out;
  for (const X509Ptr& c : *previous) {
    CertInfo info = describe(c.get());
    if (info.not_after <= now) continue;
    if (current && info.sha256_fingerprint_hex == current->sha256_fingerprint_hex) continue;
    auto pem = cert_to_pem(c.get());
    if (!pem || out.find(*pem) != std::string::npos) continue;
    out += *pem;
  }
  return out;
}

}  // namespace meshop::certs
