// Webhook certificates: a self-signed CA and serving certificates it signs, ECDSA P-256,
// PEM-encoded, plus the facts the certificates reconciler needs to decide on renewal and on
// the caBundle it publishes.
//
// Contract:
//   - Every function is pure apart from reading the system's random source: time is passed
//     in (`now`), nothing is read from or written to disk, so tests control the clock.
//   - Malformed PEM, a key that does not match its certificate, or a chain that does not
//     verify is an error value whose message says which input and why; nothing throws.
//   - Thread-safe: no shared state (OpenSSL 3 objects are created per call).
//
// Renewal policy (issue 6): a certificate is renewed when 2/3 of its lifetime has passed;
// while a new CA takes over, the caBundle holds both the old and the new CA so that
// apiservers with either bundle accept either serving certificate.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "api/result.hpp"

namespace meshop::certs {

using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8 "PRIVATE KEY"
};

struct CertInfo {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // textual, e.g. "127.0.0.1"
  TimePoint not_before;
  TimePoint not_after;
  bool is_ca = false;
  std::string serial_hex;
  std::string sha256_fingerprint_hex;  // of the DER certificate

  std::chrono::seconds lifetime() const {
    return std::chrono::duration_cast<std::chrono::seconds>(not_after - not_before);
  }
  // not_before + 2/3 of the lifetime.
  TimePoint renew_at() const;
};

struct CaOptions {
  std::string common_name = "meshop-webhook-ca";
  std::string organization = "meshop";
  std::chrono::seconds lifetime = std::chrono::hours(24 * 365);
};

struct ServingOptions {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  std::chrono::seconds lifetime = std::chrono::hours(24 * 90);
};

// Certificates are backdated by this much so clocks slightly behind ours accept them.
inline constexpr std::chrono::minutes kBackdate{5};

api::Result<KeyPair> create_ca(const CaOptions& options, TimePoint now);

// A serving certificate signed by `ca` (extended key usage serverAuth, SANs from options).
// Its lifetime is capped at the CA's remaining lifetime.
api::Result<KeyPair> issue_serving(const KeyPair& ca, const ServingOptions& options, TimePoint now);

// The first certificate of `pem`.
api::Result<CertInfo> inspect(std::string_view pem);
// Every certificate of a bundle, in order. An empty bundle is an error.
api::Result<std::vector<CertInfo>> inspect_bundle(std::string_view pem);

// The private key matches the certificate's public key.
api::Status check_key_pair(const KeyPair& pair);

// `leaf_pem` verifies against one of the CAs of `ca_bundle_pem` at time `now`.
api::Status verify(std::string_view leaf_pem, std::string_view ca_bundle_pem, TimePoint now);

// The caBundle to publish: `current_ca_pem` first, then the certificates of `previous_bundle`
// that are still valid at `now` and differ from it (the overlap while a new CA takes over).
// Invalid PEM in `previous_bundle` is dropped; the result is never empty.
std::string merge_bundle(std::string_view current_ca_pem, std::string_view previous_bundle,
                         TimePoint now);

}  // namespace meshop::certs
