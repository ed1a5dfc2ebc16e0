#include "operator/webhook/tls.hpp"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "operator/log/log.hpp"
#include "operator/webhook/metrics.hpp"

namespace meshop::webhook {
namespace ssl = boost::asio::ssl;

namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string file_signature(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ":missing";
  return path + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

api::Result<std::shared_ptr<ssl::context>> make_server_tls_context(const std::string& cert_pem,
                                                                   const std::string& key_pem) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  // TLS 1.2: ECDHE key exchange with AEAD ciphers only (forward secrecy; Go's and Istio's
  // secure defaults); TLS 1.3 suites are all of that kind and OpenSSL's defaults stay. The
  // server's order wins: 1.3 is chosen when the client offers it, AES-GCM before ChaCha20.
  if (SSL_CTX_set_cipher_list(ctx->native_handle(),
                              "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                              "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                              "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305") != 1) {
    ERR_clear_error();
    return api::Error{"TLS: no usable cipher suite"};
  }
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(cert_pem), ec);
  if (ec) return api::Error{"certificate: " + ec.message()};
  ctx->use_private_key(boost::asio::buffer(key_pem), ssl::context::pem, ec);
  if (ec) return api::Error{"private key: " + ec.message()};
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return api::Error{"private key does not match the certificate"};
  }
  return ctx;
}

ServingCertificate::ServingCertificate(std::string cert_file, std::string key_file,
                                       WebhookMetrics* metrics)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), metrics_(metrics) {}

std::string ServingCertificate::signature() const {
  return file_signature(cert_file_) + "|" + file_signature(key_file_);
}

void ServingCertificate::install(std::shared_ptr<ssl::context> ctx) {
  std::lock_guard lock(mu_);
  current_ = std::move(ctx);
  ++generation_;
}

api::Status ServingCertificate::load() {
  last_signature_ = signature();
  std::string cert, key;
  if (!read_file(cert_file_, cert)) return api::Error{"cannot read certificate file " + cert_file_};
  if (!read_file(key_file_, key)) return api::Error{"cannot read key file " + key_file_};
  auto ctx = make_server_tls_context(cert, key);
  if (!ctx.ok()) return api::Error{cert_file_ + ", " + key_file_ + ": " + ctx.message()};
  install(std::move(*ctx));
  return api::ok_status();
}

bool ServingCertificate::reload_if_changed() {
  if (cert_file_.empty()) return false;
  if (signature() == last_signature_) return false;
  if (auto loaded = load(); !loaded) {
    log::warn(
        "webhook certificate not reloaded; serving with the previous one until the files change "
        "again",
        {{"error", loaded.message()}});
    if (metrics_) metrics_->certificate_reloads.with({"error"}).Increment();
    return false;
  }
  log::info("webhook certificate reloaded", {{"cert", cert_file_}, {"key", key_file_}});
  if (metrics_) metrics_->certificate_reloads.with({"success"}).Increment();
  return true;
}

api::Status ServingCertificate::install_pem(const std::string& cert_pem, const std::string& key_pem,
                                            const std::string& origin) {
  auto ctx = make_server_tls_context(cert_pem, key_pem);
  if (!ctx.ok()) {
    if (metrics_) metrics_->certificate_reloads.with({"error"}).Increment();
    return api::Error{origin + ": " + ctx.message()};
  }
  if (metrics_) metrics_->certificate_reloads.with({"success"}).Increment();
  install(std::move(*ctx));
  return api::ok_status();
}

std::shared_ptr<ssl::context> ServingCertificate::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::uint64_t ServingCertificate::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace meshop::webhook
