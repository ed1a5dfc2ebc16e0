#include "operator/runtime/health_server.hpp"

#include <atomic>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "operator/log/log.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HealthResponse health_respond(const std::string& method, const std::string& target,
                              const HealthServer::Handlers& handlers) {
  std::string path = target.substr(0, target.find('?'));
  if (path != "/healthz" && path != "/readyz" && path != "/metrics" && path != "/livez") {
    return {404, "text/plain; charset=utf-8", "404 page not found\n"};
  }
  if (method != "GET" && method != "HEAD") {
    return {405, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8",
            handlers.metrics ? handlers.metrics() : std::string()};
  }
  if (path == "/readyz" && handlers.not_ready_reason) {
    std::string reason = handlers.not_ready_reason();
    if (!reason.empty()) return {503, "text/plain; charset=utf-8", reason + "\n"};
  }
  return {200, "text/plain; charset=utf-8", "ok"};
}

struct HealthServer::Impl : std::enable_shared_from_this<HealthServer::Impl> {
  Impl(asio::any_io_executor ex, Handlers h) : executor(ex), handlers(std::move(h)), acceptor(ex) {}

  asio::awaitable<void> session(tcp::socket socket) {
    auto self = shared_from_this();  // the session outlives a stopped server
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::empty_body> parser;
      parser.header_limit(8 * 1024);
      parser.body_limit(0);
      stream.expires_after(std::chrono::seconds(30));
      auto [ec, n] =
          co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      auto& req = parser.get();
      HealthResponse r =
          health_respond(std::string(req.method_string()), std::string(req.target()), handlers);
      http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
      res.set(http::field::content_type, r.content_type);
      res.keep_alive(req.keep_alive());
      if (req.method() != http::verb::head) res.body() = std::move(r.body);
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
      if (wec || !res.keep_alive()) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::any_io_executor executor;
  Handlers handlers;
  tcp::acceptor acceptor;  // on the executor only, once run() started
  std::atomic<bool> stopped{false};
  std::atomic<unsigned short> port{0};
};

HealthServer::HealthServer(asio::any_io_executor executor, Handlers handlers)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(handlers))) {}

HealthServer::~HealthServer() {
  stop();
}

api::Status HealthServer::listen(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos)
    return api::Error{"listen address \"" + address + "\" has no :port"};
  std::string host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  unsigned long port = 0;
  try {
    size_t used = 0;
    port = std::stoul(port_text, &used);
    if (used != port_text.size() || port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return api::Error{"listen address \"" + address + "\": bad port \"" + port_text + "\""};
  }
  beast::error_code ec;
  auto ip = asio::ip::make_address(host, ec);
  if (ec) return api::Error{"listen address \"" + address + "\": bad host \"" + host + "\""};
  tcp::endpoint ep(ip, static_cast<unsigned short>(port));
  auto& acc = impl_->acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return api::Error{"listen on " + address + ": " + ec.message()};
  auto bound = acc.local_endpoint(ec);
  impl_->port = ec ? 0 : bound.port();
  return api::ok_status();
}

unsigned short HealthServer::port() const {
  return impl_->port;
}

asio::awaitable<void> HealthServer::run() {
  auto impl = impl_;
  while (!impl->stopped && impl->acceptor.is_open()) {
    auto [ec, socket] = co_await impl->acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) {
      if (impl->stopped || ec == asio::error::operation_aborted) break;
      log::warn("health server accept failed", {{"error", ec.message()}});
      continue;
    }
    asio::co_spawn(impl->executor, impl->session(std::move(socket)), asio::detached);
  }
}

void HealthServer::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  // The acceptor belongs to the executor's thread, where run() may be waiting in accept.
  asio::post(impl_->executor, [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
}

}  // namespace meshop::runtime
