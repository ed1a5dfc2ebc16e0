// The webhook's serving certificate: PEM files (or PEM text, e.g. from a Secret) turned into an
// OpenSSL server context, swapped whole when the files change.
//
// Every new connection takes current() and keeps that context for its lifetime, so a reload
// never touches a connection in flight and no request is dropped; only connections accepted
// after the swap present the new certificate. A bad or half-written pair (unparsable PEM, key
// not matching the certificate) is refused: the previous context stays, the error is logged
// and counted (meshop_webhook_certificate_reloads_total{result="error"}), and the files are
// tried again as soon as they change once more.
//
// TLS 1.2 and later only (as istiod's webhook server); TLS 1.2 only with ECDHE + AES-GCM or
// ChaCha20-Poly1305 suites (forward secret AEAD: no static-RSA key exchange, no CBC). Thread-safe:
// current() may be called from any thread while another reloads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/result.hpp"

namespace boost::asio::ssl {
class context;
}

namespace meshop::webhook {

struct WebhookMetrics;

api::Result<std::shared_ptr<boost::asio::ssl::context>> make_server_tls_context(
    const std::string& cert_pem, const std::string& key_pem);

class ServingCertificate {
 public:
  // Files to load and watch; both empty when the PEM comes from install_pem() only.
  ServingCertificate(std::string cert_file, std::string key_file, WebhookMetrics* metrics);

  // Loads the files now. An error when they are missing or bad.
  api::Status load();
  // Reloads if either file changed (inode, size or mtime) since the last attempt. True when a
  // new context was installed.
  bool reload_if_changed();
  // Installs a pair given as text (a Secret's tls.crt / tls.key); same rules as the files.
  api::Status install_pem(const std::string& cert_pem, const std::string& key_pem,
                          const std::string& origin);

  // nullptr until a pair was loaded.
  std::shared_ptr<boost::asio::ssl::context> current() const;
  std::uint64_t generation() const;

 private:
  std::string signature() const;
  void install(std::shared_ptr<boost::asio::ssl::context> ctx);

  std::string cert_file_, key_file_;
  WebhookMetrics* metrics_;
  std::string last_signature_;  // of the files at the last load attempt
  mutable std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> current_;
  std::uint64_t generation_ = 0;
};

}  // namespace meshop::webhook
