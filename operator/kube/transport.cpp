#include "operator/kube/transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <openssl/ssl.h>

namespace meshop::kube {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
constexpr auto kTok = net::as_tuple(net::use_awaitable);

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

Result<std::shared_ptr<ssl::context>> build_tls(const Config& cfg, const std::string& cert_pem,
                                                const std::string& key_pem) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (cfg.insecure_skip_tls_verify) {
    ctx->set_verify_mode(ssl::verify_none);
  } else {
    ctx->set_verify_mode(ssl::verify_peer);
    if (!cfg.ca_pem.empty()) {
      ctx->add_certificate_authority(net::buffer(cfg.ca_pem), ec);
      if (ec) {
        return make_error(ErrorKind::kConfig,
                          "certificate-authority" +
                              (cfg.ca_file.empty() ? std::string("-data") : " " + cfg.ca_file) +
                              ": not a usable PEM CA certificate: " + ec.message());
      }
    } else {
      ctx->set_default_verify_paths(ec);
    }
  }
  if (!cert_pem.empty()) {
    ctx->use_certificate_chain(net::buffer(cert_pem), ec);
    if (ec) {
      return make_error(ErrorKind::kConfig,
                        "client-certificate: not a usable PEM certificate: " + ec.message());
    }
    ctx->use_private_key(net::buffer(key_pem), ssl::context::pem, ec);
    if (ec) {
      return make_error(ErrorKind::kConfig,
                        "client-key: not a usable PEM private key: " + ec.message());
    }
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return make_error(ErrorKind::kConfig, "client-key does not match client-certificate");
    }
  }
  return ctx;
}

bool is_stale_connection_error(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

}  // namespace

struct Transport::Attempt {
  int status = 0;
  HttpResponse response;
  StreamingResponse stream;
  std::string retry_after;
  bool connect_failed = false;
  bool transport_failed = false;
  bool stale = false;  // a reused keep-alive connection was already closed by the server
  Error error;
};

Transport::Transport(net::any_io_executor executor, Config config, ClientOptions options)
    : executor_(std::move(executor)),
      config_(config),
      options_(options),
      limiter_(options.qps, options.burst),
      credentials_(std::move(config)) {
  retry_.max_retries = options.max_retries;
}

Result<std::unique_ptr<Transport>> Transport::create(net::any_io_executor executor, Config config,
                                                     ClientOptions options) {
  auto t = std::make_unique<Transport>(std::move(executor), std::move(config), options);
  // https://host[:port][/base]
  std::string_view url = t->config_.server;
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return make_error(ErrorKind::kConfig, "server \"" + t->config_.server + "\" is not https://");
  }
  url.remove_prefix(kScheme.size());
  std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    t->base_path_ = std::string(url.substr(slash));
    while (!t->base_path_.empty() && t->base_path_.back() == '/')
      t->base_path_.pop_back();
  }
  t->host_header_ = std::string(authority);
  std::string_view host = authority, port = "443";
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return make_error(ErrorKind::kConfig, "server \"" + t->config_.server + "\": bad IPv6 host");
    }
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port = authority.substr(close + 2);
    }
  } else if (std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || port.empty()) {
    return make_error(ErrorKind::kConfig, "server \"" + t->config_.server + "\": no host or port");
  }
  t->host_ = std::string(host);
  t->port_ = std::string(port);
  t->verify_name_ = t->config_.tls_server_name.empty() ? t->host_ : t->config_.tls_server_name;
  auto tls = build_tls(t->config_, t->config_.client_cert_pem, t->config_.client_key_pem);
  if (!tls) return Error(tls.error());
  t->tls_ = std::move(*tls);
  t->tls_cert_pem_ = t->config_.client_cert_pem;
  return t;
}

Status Transport::refresh_tls(const Credential& cred) {
  if (cred.client_cert_pem == tls_cert_pem_) return Ok{};
  // An exec plugin handed out a new client certificate: new connections use a new context.
  auto tls = build_tls(config_, cred.client_cert_pem, cred.client_key_pem);
  if (!tls) return Error(tls.error());
  tls_ = std::move(*tls);
  tls_cert_pem_ = cred.client_cert_pem;
  ++tls_generation_;
  idle_.clear();
  return Ok{};
}

Task<void> Transport::sleep(std::chrono::steady_clock::duration d) {
  net::steady_timer timer(executor_);
  timer.expires_after(d);
  co_await timer.async_wait(kTok);
}

void Transport::release(std::unique_ptr<Connection> c) {
  if (c->tls_generation != tls_generation_ || idle_.size() >= options_.max_idle_connections) {
    return;  // dropped: closes the socket
  }
  c->buffer.consume(c->buffer.size());
  idle_.push_back(std::move(c));
}

Task<Result<std::unique_ptr<Connection>>> Transport::acquire(bool& connect_failed) {
  while (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    if (c->tls_generation == tls_generation_ &&
        beast::get_lowest_layer(c->stream).socket().is_open()) {
      c->reused = true;
      co_return c;
    }
  }
  auto c = std::make_unique<Connection>(executor_, tls_);
  c->tls_generation = tls_generation_;
  const std::string where = "connect to " + config_.server;
  if (!is_ip_literal(verify_name_)) {
    // SNI must not carry IP literals (RFC 6066).
    SSL_set_tlsext_host_name(c->stream.native_handle(), verify_name_.c_str());
  }
  if (!config_.insecure_skip_tls_verify) {
    c->stream.set_verify_callback(ssl::host_name_verification(verify_name_));
  }
  net::ip::tcp::resolver resolver(executor_);
  auto [rec, results] = co_await resolver.async_resolve(host_, port_, kTok);
  if (rec) {
    connect_failed = true;
    co_return make_error(ErrorKind::kTransport,
                         where + ": resolve " + host_ + ": " + rec.message());
  }
  auto& tcp = beast::get_lowest_layer(c->stream);
  tcp.expires_after(options_.connect_timeout);
  auto [cec, ep] = co_await tcp.async_connect(results, kTok);
  if (cec) {
    connect_failed = true;
    co_return make_error(ErrorKind::kTransport, where + ": " + cec.message());
  }
  boost::system::error_code nd;
  tcp.socket().set_option(net::ip::tcp::no_delay(true), nd);  // small requests go out at once
  auto [hec] = co_await c->stream.async_handshake(ssl::stream_base::client, kTok);
  if (hec) {
    // A TLS failure (bad CA, name mismatch, rejected client cert) is not retried.
    if (hec == beast::error::timeout) connect_failed = true;
    std::string detail = hec.message();
    if (long v = SSL_get_verify_result(c->stream.native_handle()); v != X509_V_OK) {
      detail += std::string(" (") + X509_verify_cert_error_string(v) + ")";
    }
    co_return make_error(ErrorKind::kTransport, where + ": TLS handshake: " + detail);
  }
  tcp.expires_never();
  ++stats_.connections_opened;
  co_return c;
}

Task<Transport::Attempt> Transport::attempt_once(const HttpRequest& req, bool streaming,
                                                 const Credential& cred) {
  Attempt a;
  bool connect_failed = false;
  auto conn_r = co_await acquire(connect_failed);
  if (!conn_r) {
    a.connect_failed = connect_failed;
    a.error = std::move(conn_r).error();
    a.error.message = req.what + ": " + a.error.message;
    co_return a;
  }
  std::unique_ptr<Connection> conn = std::move(*conn_r);

  http::request<http::string_body> hr;
  hr.method_string(req.method);
  hr.target(base_path_ + req.target);
  hr.version(11);
  hr.set(http::field::host, host_header_);
  hr.set(http::field::user_agent, options_.user_agent);
  hr.set(http::field::accept, req.accept);
  if (!cred.token.empty()) hr.set(http::field::authorization, "Bearer " + cred.token);
  if (!req.content_type.empty()) hr.set(http::field::content_type, req.content_type);
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    hr.body() = req.body;
  }
  hr.prepare_payload();

  auto& tcp = beast::get_lowest_layer(conn->stream);
  auto fail = [&](const boost::system::error_code& ec, const char* stage, bool got_bytes) {
    a.transport_failed = true;
    a.stale = conn->reused && !got_bytes && is_stale_connection_error(ec);
    std::string detail = ec == beast::error::timeout ? std::string("timed out") : ec.message();
    a.error = make_error(
        ec == net::error::operation_aborted ? ErrorKind::kCancelled : ErrorKind::kTransport,
        req.what + ": " + stage + ": " + detail);
  };
  tcp.expires_after(options_.request_timeout);
  auto [wec, wn] = co_await http::async_write(conn->stream, hr, kTok);
  if (wec) {
    fail(wec, "sending request", false);
    co_return a;
  }
  if (!streaming) {
    http::response_parser<http::string_body> p;
    p.body_limit(boost::none);  // lists can be large; the request timeout bounds them
    p.header_limit(64 * 1024);
    auto [rec, rn] = co_await http::async_read(conn->stream, conn->buffer, p, kTok);
    if (rec) {
      fail(rec, "reading response", p.got_some());
      co_return a;
    }
    tcp.expires_never();
    auto& res = p.get();
    a.status = static_cast<int>(res.result_int());
    a.response.status = a.status;
    a.response.content_type = std::string(res[http::field::content_type]);
    a.retry_after = std::string(res[http::field::retry_after]);
    a.response.body = std::move(res.body());
    stats_.bytes_received += a.response.body.size();
    if (res.keep_alive()) release(std::move(conn));
    co_return a;
  }
  auto p = std::make_unique<http::response_parser<http::buffer_body>>();
  p->body_limit(boost::none);  // a watch body has no length limit (Beast's 8 MiB default)
  p->header_limit(64 * 1024);
  auto [hec, hn] = co_await http::async_read_header(conn->stream, conn->buffer, *p, kTok);
  if (hec) {
    fail(hec, "reading response header", p->got_some());
    co_return a;
  }
  a.status = static_cast<int>(p->get().result_int());
  a.retry_after = std::string(p->get()[http::field::retry_after]);
  a.response.status = a.status;
  a.response.content_type = std::string(p->get()[http::field::content_type]);
  if (a.status / 100 == 2) {
    tcp.expires_never();
    a.stream.connection = std::move(conn);
    a.stream.parser = std::move(p);
    co_return a;
  }
  // An error answer to a watch: read its (small) Status body, then drop the connection.
  char buf[8192];
  while (!p->is_done() && a.response.body.size() < 1024 * 1024) {
    p->get().body().data = buf;
    p->get().body().size = sizeof buf;
    auto [bec, bn] = co_await http::async_read_some(conn->stream, conn->buffer, *p, kTok);
    a.response.body.append(buf, sizeof buf - p->get().body().size);
    if (bec && bec != http::error::need_buffer) break;
  }
  co_return a;
}

Task<Result<Transport::Attempt>> Transport::run(const HttpRequest& req, bool streaming) {
  bool auth_retried = false;
  int stale_retries = 0;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int attempt = 0;;) {
    auto wait = limiter_.reserve(std::chrono::steady_clock::now());
    if (wait > std::chrono::steady_clock::duration::zero()) co_await sleep(wait);
    auto cred = credentials_.get();
    if (!cred) {
      Error e = std::move(cred).error();
      e.message = req.what + ": credentials: " + e.message;
      co_return e;
    }
    if (auto st = refresh_tls(*cred); !st) co_return st.error();
    ++stats_.requests;
    Attempt a = co_await attempt_once(req, streaming, *cred);
    if (a.stale && stale_retries < 2) {
      ++stale_retries;  // the server closed an idle keep-alive connection: not a real failure
      continue;
    }
    if (observer_)
      observer_(Client::RequestRecord{req.verb, req.resource, req.method, host_header_, a.status});
    if (a.status / 100 == 2) co_return a;
    if (a.status == 401 && !auth_retried && (config_.exec || !config_.token_file.empty())) {
      auth_retried = true;  // the token may have rotated or expired: get a fresh one
      credentials_.invalidate();
      continue;
    }
    Error err = a.status != 0
                    ? error_from_response(req.what, a.status, a.response.body, a.retry_after)
                    : std::move(a.error);
    if (err.kind == ErrorKind::kCancelled) co_return err;
    if (a.status == 429 && !req.retry_too_many_requests) co_return err;
    AttemptOutcome outcome{a.status, a.connect_failed, a.transport_failed, err.retry_after};
    auto delay = retry_delay(retry_, req.method, attempt, outcome, uniform(rng_));
    if (!delay) co_return err;
    ++attempt;
    ++stats_.retries;
    co_await sleep(*delay);
  }
}

Task<Result<HttpResponse>> Transport::send(HttpRequest request) {
  auto r = co_await run(request, false);
  if (!r) co_return std::move(r).error();
  co_return std::move(r->response);
}

Task<Result<StreamingResponse>> Transport::open_stream(HttpRequest request) {
  auto r = co_await run(request, true);
  if (!r) co_return std::move(r).error();
  co_return std::move(r->stream);
}

}  // namespace meshop::kube
