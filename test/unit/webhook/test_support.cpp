#include "test_support.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <rapidjson/pointer.h>

#include "api/json.hpp"

namespace meshop::webhook::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

std::string bio_string(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

void add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) throw std::runtime_error("X509V3_EXT_conf_nid failed");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace

TestCert make_self_signed(const std::string& common_name, bool rsa) {
  EVP_PKEY* key = rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
  if (!key) throw std::runtime_error("EVP_EC_gen failed");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert, name);
  add_ext(cert, NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert, NID_key_usage, "critical,digitalSignature,keyCertSign");
  add_ext(cert, NID_ext_key_usage, "serverAuth");
  add_ext(cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  if (X509_sign(cert, key, EVP_sha256()) == 0) throw std::runtime_error("X509_sign failed");

  TestCert out;
  BIO* cb = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cb, cert);
  out.cert_pem = bio_string(cb);
  BIO_free(cb);
  BIO* kb = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(kb, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key_pem = bio_string(kb);
  BIO_free(kb);
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  // Write then rename, as a Secret/ConfigMap volume update does: readers never see half a file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::filesystem::rename(tmp, path);
}

std::string make_temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string base = ::testing::TempDir() + "meshop-webhook-" + std::to_string(::getpid()) + "-" +
                     (info ? std::string(info->test_suite_name()) + "." + info->name() : "x") +
                     "-" + name;
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  return base;
}

struct TlsClient::Impl {
  asio::io_context ioc;
  ssl::context ctx{ssl::context::tls_client};
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream;
  beast::flat_buffer buffer;
  bool open = false;
  std::chrono::milliseconds timeout{30'000};
};

TlsClient::TlsClient(unsigned short port, const std::vector<std::string>& trusted,
                     int max_tls_version, const std::string& tls12_ciphers)
    : impl_(std::make_unique<Impl>()) {
  auto& ctx = impl_->ctx;
  for (const auto& pem : trusted)
    ctx.add_certificate_authority(asio::buffer(pem));
  ctx.set_verify_mode(ssl::verify_peer);
  if (max_tls_version) SSL_CTX_set_max_proto_version(ctx.native_handle(), max_tls_version);
  if (!tls12_ciphers.empty() &&
      SSL_CTX_set_cipher_list(ctx.native_handle(), tls12_ciphers.c_str()) != 1)
    throw std::runtime_error("bad cipher list " + tls12_ciphers);
  impl_->stream = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(impl_->ioc, ctx);
  auto& s = *impl_->stream;
  beast::get_lowest_layer(s).expires_after(std::chrono::seconds(30));
  beast::get_lowest_layer(s).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  // Verify the IP SAN, as the apiserver does for url: https://127.0.0.1:PORT/inject.
  X509_VERIFY_PARAM* param = SSL_get0_param(s.native_handle());
  X509_VERIFY_PARAM_set1_ip_asc(param, "127.0.0.1");
  s.handshake(ssl::stream_base::client);
  impl_->open = true;
}

TlsClient::~TlsClient() {
  if (!impl_->open) return;
  beast::error_code ec;
  beast::get_lowest_layer(*impl_->stream).socket().shutdown(tcp::socket::shutdown_both, ec);
}

bool TlsClient::open() const {
  return impl_->open;
}

static ClientResponse exchange(TlsClient::Impl& impl, http::request<http::string_body>& req) {
  auto& s = *impl.stream;
  beast::get_lowest_layer(s).expires_after(impl.timeout);
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(true);
  req.prepare_payload();
  http::write(s, req);
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(s, impl.buffer, parser);
  auto& res = parser.get();
  ClientResponse out;
  out.status = res.result_int();
  out.content_type = std::string(res[http::field::content_type]);
  out.body = res.body();
  out.keep_alive = res.keep_alive();
  if (!out.keep_alive) impl.open = false;
  return out;
}

ClientResponse TlsClient::post(const std::string& target, const std::string& content_type,
                               const std::string& body) {
  http::request<http::string_body> req{http::verb::post, target, 11};
  if (!content_type.empty()) req.set(http::field::content_type, content_type);
  req.body() = body;
  return exchange(*impl_, req);
}

ClientResponse TlsClient::get(const std::string& target) {
  http::request<http::string_body> req{http::verb::get, target, 11};
  return exchange(*impl_, req);
}

ClientResponse TlsClient::get_with_headers(
    const std::string& target, const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req{http::verb::get, target, 11};
  for (const auto& [name, value] : headers)
    req.insert(name, value);
  return exchange(*impl_, req);
}

void TlsClient::send_raw(const std::string& bytes) {
  beast::get_lowest_layer(*impl_->stream).expires_after(impl_->timeout);
  asio::write(*impl_->stream, asio::buffer(bytes));
}

void TlsClient::shutdown_send() {
  beast::error_code ec;
  beast::get_lowest_layer(*impl_->stream).socket().shutdown(tcp::socket::shutdown_send, ec);
}

std::string TlsClient::how_closed_within(std::chrono::milliseconds limit) {
  // Asynchronously, so that the limit holds (tcp_stream's timer does not cover blocking reads).
  auto& s = *impl_->stream;
  auto& ioc = impl_->ioc;
  auto deadline = std::chrono::steady_clock::now() + limit;
  char buf[256];
  for (;;) {
    bool done = false;
    beast::error_code result;
    s.async_read_some(asio::buffer(buf), [&](const beast::error_code& ec, std::size_t) {
      done = true;
      result = ec;
    });
    ioc.restart();
    ioc.run_until(deadline);
    if (!done) {
      beast::get_lowest_layer(s).cancel();
      ioc.restart();
      ioc.run();
      return "open";
    }
    if (result) {
      impl_->open = false;
      if (result == asio::error::eof) return "close_notify";  // SSL_ERROR_ZERO_RETURN
      if (result == ssl::error::stream_truncated) return "fin";
      if (result == asio::error::connection_reset) return "reset";
      return "error: " + result.message();
    }
  }
}

bool TlsClient::closed_by_server_within(std::chrono::milliseconds limit) {
  return how_closed_within(limit) != "open";
}

ClientResponse TlsClient::read_response() {
  auto& s = *impl_->stream;
  beast::get_lowest_layer(s).expires_after(impl_->timeout);
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(s, impl_->buffer, parser);
  auto& res = parser.get();
  ClientResponse out;
  out.status = res.result_int();
  out.content_type = std::string(res[http::field::content_type]);
  out.body = res.body();
  out.keep_alive = res.keep_alive();
  if (!out.keep_alive) impl_->open = false;
  return out;
}

void TlsClient::set_timeout(std::chrono::milliseconds t) {
  impl_->timeout = t;
}

std::string TlsClient::peer_common_name() const {
  X509* cert = SSL_get1_peer_certificate(impl_->stream->native_handle());
  if (!cert) return {};
  char buf[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  X509_free(cert);
  return buf;
}

Engine fake_engine() {
  Engine e;
  e.build = [](const inject::SnapshotSources& sources)
      -> api::Result<std::shared_ptr<const inject::Snapshot>> {
    if (sources.config.find("bad") != std::string::npos)
      return api::Error{"config: bad on purpose"};
    return std::shared_ptr<const inject::Snapshot>();
  };
  e.inject = [](const RevisionConfig& config, const inject::PodRequest& request) {
    inject::InjectResult r;
    std::string mode;
    const auto& pod = *request.pod;
    if (auto* v = rapidjson::Pointer("/metadata/labels/mode").Get(pod); v && v->IsString())
      mode = v->GetString();
    if (mode == "skip") {
      r.outcome = inject::Outcome::kSkipped;
      r.decision.reason = inject::Reason::kLabelFalse;
      return r;
    }
    if (mode == "fail") {
      r.outcome = inject::Outcome::kFailed;
      r.failure_type = "template_render";
      r.message = "template: sidecar: boom";
      return r;
    }
    std::string envs;
    for (const auto& [k, v] : request.proxy_envs)
      envs += (envs.empty() ? "" : ",") + k + "=" + v;
    bool managed = rapidjson::Pointer("/metadata/managedFields").Get(pod) != nullptr;
    r.outcome = inject::Outcome::kInjected;
    r.decision.reason = inject::Reason::kPolicyEnabled;
    r.patch = "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"generation\":\"" +
              std::to_string(config.generation) + "\",\"envs\":\"" + envs + "\",\"revision\":\"" +
              config.revision + "\",\"ns\":\"" + request.ns + "\",\"managedFields\":\"" +
              (managed ? "present" : "absent") + "\"}}]";
    return r;
  };
  e.reason_name = [](inject::Reason r) -> std::string_view {
    return r == inject::Reason::kLabelFalse ? "label_false" : "other";
  };
  return e;
}

std::string review_body(const std::string& api_version, const std::string& uid,
                        const std::string& mode) {
  return R"({"kind":"AdmissionReview","apiVersion":")" + api_version + R"(","request":{"uid":")" +
         uid +
         R"(","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"ns","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"app-","labels":{"mode":")" +
         mode +
         R"("},"managedFields":[{"manager":"kubectl"}]},"spec":{"containers":[{"name":"app","image":"app:1"}]}}}})";
}

}  // namespace meshop::webhook::testing
