// Test helpers for the webhook: a throwaway certificate made with OpenSSL, a TLS HTTP/1.1 client
// (Beast, synchronous, keep-alive) and a fake injection engine.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "operator/webhook/engine.hpp"

namespace meshop::webhook::testing {

struct TestCert {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed certificate for `common_name` with SANs IP:127.0.0.1 and DNS:localhost, valid
// for a day. Clients trust it directly (it is its own CA).
// `rsa`: an RSA-2048 key instead of ECDSA P-256 (for tests of RSA key exchange suites).
TestCert make_self_signed(const std::string& common_name, bool rsa = false);

void write_file(const std::string& path, const std::string& text);
// A fresh directory under the test's temporary directory.
std::string make_temp_dir(const std::string& name);

struct ClientResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  bool keep_alive = false;
};

// One TLS connection to 127.0.0.1:port, verifying the server against `trusted` (PEM
// certificates). Throws on connection and protocol errors (tests want them loud).
class TlsClient {
 public:
  TlsClient(unsigned short port, const std::vector<std::string>& trusted,
            int max_tls_version = 0,  // e.g. TLS1_1_VERSION to test refusal; 0 = default
            const std::string& tls12_ciphers = "");  // OpenSSL cipher list; "" = default
  ~TlsClient();
  ClientResponse post(const std::string& target, const std::string& content_type,
                      const std::string& body);
  ClientResponse get(const std::string& target);
  // GET with extra headers.
  ClientResponse get_with_headers(const std::string& target,
                                  const std::vector<std::pair<std::string, std::string>>& headers);
  // Writes raw bytes through TLS (a request in pieces).
  void send_raw(const std::string& bytes);
  // Half-closes the TCP connection (no TLS close_notify): the client sends nothing more, the
  // server reads the end of its input after whatever was sent.
  void shutdown_send();
  // Reads until the server closes the connection, at most `limit`; true when it did.
  bool closed_by_server_within(std::chrono::milliseconds limit);
  // Reads until the server closes the connection, at most `limit`: "open" (it did not),
  // "close_notify" (TLS close_notify), "fin" (TCP end without close_notify), "reset", or
  // "error: ..." (anything else).
  std::string how_closed_within(std::chrono::milliseconds limit);
  // Reads one response (after send_raw()).
  ClientResponse read_response();
  // Deadline of each later exchange (default 30 s).
  void set_timeout(std::chrono::milliseconds t);
  // The CN of the certificate the server presented.
  std::string peer_common_name() const;
  bool open() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Fake engine:
//   build: a config text containing "bad" fails with "config: bad on purpose"; anything else
//          succeeds with a null snapshot.
//   inject: pod label "mode"="skip" → skipped (reason kLabelFalse), "fail" → failed with
//           type "template_render" and message "template: sidecar: boom"; otherwise injected
//           with a patch adding label "generation" = the RevisionConfig's generation and
//           annotation "envs" = the proxy envs ("K=V,...") and "revision".
Engine fake_engine();

// An AdmissionReview body with a pod in namespace "ns" carrying label mode=<mode>.
std::string review_body(const std::string& api_version, const std::string& uid,
                        const std::string& mode = "inject");

}  // namespace meshop::webhook::testing
