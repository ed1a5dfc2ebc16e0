#include "operator/webhook/server.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "operator/log/log.hpp"

namespace meshop::webhook {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::uint64_t kDrainLimit = 16 * 1024 * 1024;

struct Connection {
  Connection(tcp::socket socket, std::shared_ptr<ssl::context> context)
      : tls(std::move(context)), stream(std::move(socket), *tls) {}
  std::shared_ptr<ssl::context> tls;  // kept for the connection's lifetime (cert reloads)
  beast::ssl_stream<beast::tcp_stream> stream;
  bool idle = true;  // waiting for the next request; only touched on the connection's strand
};

}  // namespace

api::Result<std::pair<std::string, unsigned short>> split_host_port(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return api::Error{"address \"" + address + "\" has no :port"};
  std::string host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  unsigned long port = 0;
  size_t used = 0;
  try {
    port = std::stoul(port_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (port_text.empty() || used != port_text.size() || port > 65535)
    return api::Error{"address \"" + address + "\": bad port \"" + port_text + "\""};
  return std::pair{host, static_cast<unsigned short>(port)};
}

struct WebhookServer::Impl {
  Impl(ServerOptions o, const RevisionStore& s, const ServingCertificate& c, Engine e,
       WebhookMetrics* m)
      : options(std::move(o)),
        store(s),
        certificate(c),
        engine(std::move(e)),
        ctx{store, engine, m, options.default_revision} {}

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> session(std::shared_ptr<Connection> conn);
  void track(const std::shared_ptr<Connection>& conn);
  void untrack(const Connection* conn);

  ServerOptions options;
  const RevisionStore& store;
  const ServingCertificate& certificate;
  Engine engine;
  AdmissionContext ctx;
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  unsigned short port = 0;

  std::mutex mu;
  std::condition_variable drained;
  std::unordered_set<std::shared_ptr<Connection>> connections;
};

void WebhookServer::Impl::track(const std::shared_ptr<Connection>& conn) {
  std::lock_guard lock(mu);
  connections.insert(conn);
}

void WebhookServer::Impl::untrack(const Connection* conn) {
  std::lock_guard lock(mu);
  for (auto it = connections.begin(); it != connections.end(); ++it) {
    if (it->get() == conn) {
      connections.erase(it);
      break;
    }
  }
  if (connections.empty()) drained.notify_all();
}

asio::awaitable<void> WebhookServer::Impl::accept_loop() {
  while (!stopping) {
    auto [ec, socket] = co_await acceptor->async_accept(asio::make_strand(*ioc), kUse);
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      log::warn("webhook accept failed", {{"error", ec.message()}});
      continue;
    }
    auto tls = certificate.current();
    auto conn = std::make_shared<Connection>(std::move(socket), std::move(tls));
    track(conn);
    asio::co_spawn(conn->stream.get_executor(), session(conn), asio::detached);
  }
}

asio::awaitable<void> WebhookServer::Impl::session(std::shared_ptr<Connection> conn) {
  // Untracks on every exit, including the frame's destruction when stop() gave up waiting.
  struct Untrack {
    Impl* impl;
    const Connection* conn;
    ~Untrack() { impl->untrack(conn); }
  } untrack_guard{this, conn.get()};

  auto& stream = conn->stream;
  auto& tcp_layer = beast::get_lowest_layer(stream);
  tcp_layer.expires_after(std::chrono::seconds(10));
  auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, kUse);
  if (hec) co_return;

  beast::flat_buffer buffer;
  for (;;) {
    if (stopping) break;
    conn->idle = true;
    tcp_layer.expires_after(options.idle_timeout);
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(boost::none);  // checked below, so that an oversized body gets its 400
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kUse);
    conn->idle = false;
    if (ec) break;

    bool too_large = false;
    std::uint64_t declared = parser.content_length().value_or(0);
    if (declared > kMaxRequestBodyBytes) {
      too_large = true;
    } else if (!parser.is_done()) {
      parser.body_limit(kMaxRequestBodyBytes);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, kUse);
      if (bec == http::error::body_limit) {
        too_large = true;
      } else if (bec) {
        break;
      }
    }

    const auto& req = parser.get();
    HttpRequest request;
    request.method = req.method_string();
    request.target = req.target();
    if (auto ct = req.find(http::field::content_type); ct != req.end())
      request.content_type = ct->value();
    if (!too_large) request.body = req.body();
    request.body_too_large = too_large;
    HttpReply reply = serve(ctx, request);

    bool keep_alive = req.keep_alive() && !too_large && !stopping;
    http::response<http::string_body> res{static_cast<http::status>(reply.status), req.version()};
    res.set(http::field::content_type, reply.content_type);
    if (reply.status != 200) res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(keep_alive);
    res.body() = std::move(reply.body);
    res.prepare_payload();

    if (too_large && declared > 0) {
      // Discard what the client is still sending (bounded), so it gets to read the 400
      // instead of a reset on a half-read connection.
      std::uint64_t left = std::min(declared, kDrainLimit);
      left -= std::min<std::uint64_t>(left, buffer.size());
      buffer.consume(buffer.size());
      std::vector<char> scratch(64 * 1024);
      tcp_layer.expires_after(std::chrono::seconds(10));
      while (left > 0) {
        auto [rec, got] = co_await stream.async_read_some(
            asio::buffer(scratch.data(), std::min<std::uint64_t>(left, scratch.size())), kUse);
        if (rec) break;
        left -= got;
      }
    }

    tcp_layer.expires_after(std::chrono::seconds(30));
    auto [wec, wn] = co_await http::async_write(stream, res, kUse);
    if (wec || !keep_alive) break;
  }
  if (stopping) {
    // No TLS close_notify exchange on the way out: a client that does not answer it would
    // hold up stop() for the whole timeout.
    tcp_layer.close();
    co_return;
  }
  tcp_layer.expires_after(std::chrono::seconds(2));
  co_await stream.async_shutdown(kUse);
}

WebhookServer::WebhookServer(ServerOptions options, const RevisionStore& store,
                             const ServingCertificate& certificate, Engine engine,
                             WebhookMetrics* metrics)
    : impl_(std::make_shared<Impl>(std::move(options), store, certificate, std::move(engine),
                                   metrics)) {}

WebhookServer::~WebhookServer() {
  stop();
}

std::optional<std::string> WebhookServer::start() {
  auto& impl = *impl_;
  if (impl.ioc) return "webhook server already started";
  if (!impl.certificate.current()) return "webhook server has no serving certificate";
  auto hp = split_host_port(impl.options.address);
  if (!hp.ok()) return hp.message();
  beast::error_code ec;
  auto ip = asio::ip::make_address(hp->first, ec);
  if (ec) return "address \"" + impl.options.address + "\": bad host \"" + hp->first + "\"";

  unsigned n = impl.options.threads;
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  impl.ioc = std::make_unique<asio::io_context>(static_cast<int>(n));
  impl.acceptor = std::make_unique<tcp::acceptor>(asio::make_strand(*impl.ioc));
  tcp::endpoint ep(ip, hp->second);
  auto& acc = *impl.acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl.acceptor.reset();
    impl.ioc.reset();
    return "listen on " + impl.options.address + ": " + ec.message();
  }
  impl.port = acc.local_endpoint().port();
  impl.stopping = false;
  asio::co_spawn(acc.get_executor(), impl.accept_loop(), asio::detached);
  for (unsigned i = 0; i < n; ++i)
    impl.threads.emplace_back([&impl] { impl.ioc->run(); });
  log::info("webhook server listening", {{"address", impl.options.address},
                                         {"port", static_cast<int>(impl.port)},
                                         {"threads", static_cast<int>(n)}});
  return std::nullopt;
}

unsigned short WebhookServer::port() const {
  return impl_->port;
}

unsigned WebhookServer::threads() const {
  return static_cast<unsigned>(impl_->threads.size());
}

void WebhookServer::stop() {
  auto& impl = *impl_;
  if (!impl.ioc) return;
  impl.stopping = true;
  asio::post(impl.acceptor->get_executor(), [&impl] {
    beast::error_code ec;
    impl.acceptor->close(ec);
  });
  {
    std::unique_lock lock(impl.mu);
    for (const auto& conn : impl.connections) {
      asio::post(conn->stream.get_executor(), [conn] {
        if (conn->idle) beast::get_lowest_layer(conn->stream).cancel();
      });
    }
    impl.drained.wait_for(lock, impl.options.shutdown_grace,
                          [&impl] { return impl.connections.empty(); });
    if (!impl.connections.empty())
      log::warn("webhook server stopping with requests still in progress",
                {{"connections", static_cast<int>(impl.connections.size())}});
  }
  impl.ioc->stop();
  for (auto& t : impl.threads)
    t.join();
  impl.threads.clear();
  // Destroys what is left (coroutine frames of connections that outlived the grace period)
  // while the rest of Impl is still alive.
  impl.acceptor.reset();
  impl.ioc.reset();
  log::info("webhook server stopped", {});
}

}  // namespace meshop::webhook
