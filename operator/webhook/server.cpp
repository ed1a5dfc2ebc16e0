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
#include <boost/asio/steady_timer.hpp>
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
using clock = std::chrono::steady_clock;
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::uint64_t kDrainLimit = 16 * 1024 * 1024;

// One accepted connection. Until its first byte arrives only the socket exists: the TLS
// stream (OpenSSL's state and buffers, most of a connection's memory) is made when there is
// something to read, so idle connections that never start TLS cost little.
struct Connection {
  explicit Connection(tcp::socket s) : socket(std::move(s)) {}
  tcp::socket socket;                 // until start_tls()
  std::shared_ptr<ssl::context> tls;  // kept for the connection's lifetime (cert reloads)
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream;
  // No request under way: before the first byte, or between requests (a shutdown closes
  // it). Only touched on the connection's strand.
  bool idle = true;

  void start_tls(std::shared_ptr<ssl::context> context) {
    tls = std::move(context);
    stream = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(
        beast::tcp_stream(std::move(socket)), *tls);
  }
  tcp::socket& raw() { return stream ? beast::get_lowest_layer(*stream).socket() : socket; }
  // On the connection's strand.
  void cancel() {
    beast::error_code ec;
    if (stream)
      beast::get_lowest_layer(*stream).cancel();
    else
      socket.cancel(ec);
  }
};

// A deadline for operations that beast::tcp_stream's own timer does not cover (waits on the
// raw socket): cancels the connection when it fires.
class Watchdog {
 public:
  Watchdog(const std::shared_ptr<Connection>& conn, asio::any_io_executor ex)
      : conn_(conn), timer_(std::move(ex)) {}
  void arm(std::chrono::steady_clock::duration d) {
    timer_.expires_after(d);
    timer_.async_wait([weak = std::weak_ptr<Connection>(conn_)](const beast::error_code& ec) {
      if (ec) return;
      if (auto c = weak.lock()) c->cancel();
    });
  }
  void disarm() { timer_.cancel(); }

 private:
  std::shared_ptr<Connection> conn_;
  asio::steady_timer timer_;
};

// Waits until the socket, before TLS, has bytes to read, at most `d`. False on timeout,
// cancellation or error.
asio::awaitable<bool> wait_readable(std::shared_ptr<Connection> conn, Watchdog& dog,
                                    std::chrono::steady_clock::duration d) {
  dog.arm(d);
  auto [ec] = co_await conn->raw().async_wait(tcp::socket::wait_read, kUse);
  dog.disarm();
  co_return !ec;
}

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
        cache(options.injection_cache),
        ctx{store, engine, m, options.default_revision, &cache} {}

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> session(std::shared_ptr<Connection> conn);
  // True when it ended after writing an answer that said Connection: close.
  asio::awaitable<bool> serve_requests(std::shared_ptr<Connection> conn);
  bool track(const std::shared_ptr<Connection>& conn);  // false when at max_connections
  void untrack(const Connection* conn);
  HttpReply timed_serve(const HttpRequest& request);
  void begin_shutdown(std::chrono::milliseconds delay);  // any thread
  void close_listener();                                 // on the acceptor's strand
  bool drained_locked() const;                           // with mu held

  ServerOptions options;
  const RevisionStore& store;
  const ServingCertificate& certificate;
  Engine engine;
  InjectionCache cache;
  AdmissionContext ctx;
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::unique_ptr<asio::steady_timer> drain_timer;  // on the acceptor's strand
  // Shutdown, in order: draining (answers carry Connection: close), then stopping (the listener
  // is closed, idle connections are closed, no new request is awaited).
  std::atomic<bool> draining{false};
  std::atomic<bool> stopping{false};
  unsigned short port = 0;

  std::mutex mu;
  std::condition_variable drained;
  std::unordered_set<std::shared_ptr<Connection>> connections;
  clock::time_point drain_deadline;  // set when draining begins

  // Per server thread: when its current request started (steady_clock ticks), 0 when idle.
  std::unique_ptr<std::atomic<std::int64_t>[]> busy_since;
  std::atomic<unsigned> busy_slots{0};  // published (release) once busy_since is set up

  // start(), stop() and shutdown() against each other (shutdown() comes from other threads).
  std::mutex life_mu;
  bool shutdown_called = false;
  std::atomic<unsigned> threads_running{0};
};

namespace {
thread_local int worker_index = -1;  // this thread's slot in busy_since, -1 off the server
}  // namespace

bool WebhookServer::Impl::track(const std::shared_ptr<Connection>& conn) {
  std::lock_guard lock(mu);
  if (connections.size() >= options.max_connections) return false;
  connections.insert(conn);
  return true;
}

HttpReply WebhookServer::Impl::timed_serve(const HttpRequest& request) {
  std::atomic<std::int64_t>* slot = nullptr;
  if (worker_index >= 0 && static_cast<unsigned>(worker_index) < busy_slots.load())
    slot = &busy_since[static_cast<unsigned>(worker_index)];
  if (slot) slot->store(std::max<std::int64_t>(1, clock::now().time_since_epoch().count()));
  struct Idle {
    std::atomic<std::int64_t>* slot;
    ~Idle() {
      if (slot) slot->store(0);
    }
  } idle{slot};
  return serve(ctx, request);
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
  // Go's net/http Serve: on a temporary accept error (EMFILE...) sleep 5 ms, doubling up to
  // 1 s, instead of retrying at once (the listening socket stays readable: a busy loop).
  constexpr auto kMinBackoff = std::chrono::milliseconds(5);
  constexpr auto kMaxBackoff = std::chrono::seconds(1);
  constexpr auto kLogEvery = std::chrono::seconds(10);
  std::chrono::steady_clock::duration backoff{0};
  asio::steady_timer pause(acceptor->get_executor());
  std::optional<clock::time_point> last_log;
  std::uint64_t errors_since_log = 0, refused_since_log = 0;
  std::optional<clock::time_point> last_refused_log;
  while (!stopping) {
    auto [ec, socket] = co_await acceptor->async_accept(asio::make_strand(*ioc), kUse);
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      ++errors_since_log;
      if (!last_log || clock::now() - *last_log >= kLogEvery) {
        log::warn(
            "webhook accept failed; retrying with backoff",
            {{"error", ec.message()}, {"errors", static_cast<std::int64_t>(errors_since_log)}});
        last_log = clock::now();
        errors_since_log = 0;
      }
      backoff = backoff.count() == 0
                    ? std::chrono::steady_clock::duration(kMinBackoff)
                    : std::min<std::chrono::steady_clock::duration>(backoff * 2, kMaxBackoff);
      pause.expires_after(backoff);
      auto [pec] = co_await pause.async_wait(kUse);
      if (pec) break;
      continue;
    }
    backoff = {};
    auto conn = std::make_shared<Connection>(std::move(socket));
    if (!track(conn)) {
      // Over the cap: closed at once (see server.hpp); counted in a rate-limited log line.
      beast::error_code ignored;
      conn->socket.set_option(asio::socket_base::linger(true, 0), ignored);
      conn->socket.close(ignored);
      ++refused_since_log;
      if (!last_refused_log || clock::now() - *last_refused_log >= kLogEvery) {
        log::warn("webhook connection refused: too many open connections",
                  {{"max_connections", static_cast<std::int64_t>(options.max_connections)},
                   {"refused", static_cast<std::int64_t>(refused_since_log)}});
        last_refused_log = clock::now();
        refused_since_log = 0;
      }
      continue;
    }
    // An answer is written as several TLS records: without TCP_NODELAY, Nagle holds the last
    // one back until the client ACKs the first, which a client with delayed ACKs does ~40 ms
    // later (issue 16: first answers on fresh connections took ≈ 45 ms).
    beast::error_code nodelay_ec;
    conn->socket.set_option(tcp::no_delay(true), nodelay_ec);
    auto ex = conn->socket.get_executor();
    asio::co_spawn(ex, session(conn), asio::detached);
  }
}

asio::awaitable<void> WebhookServer::Impl::session(std::shared_ptr<Connection> conn) {
  // Untracks on every exit, including the frame's destruction when stop() gave up waiting.
  struct Untrack {
    Impl* impl;
    const Connection* conn;
    ~Untrack() { impl->untrack(conn); }
  } untrack_guard{this, conn.get()};

  Watchdog dog(conn, conn->socket.get_executor());
  auto accepted = clock::now();
  // Nothing is allocated for TLS until the client sends its first byte.
  bool readable = co_await wait_readable(conn, dog, options.handshake_timeout);
  if (!readable) co_return;
  {
    // Readable may mean closed: a client that leaves without a byte costs no TLS state either.
    char first = 0;
    beast::error_code peek_ec;
    conn->socket.non_blocking(true, peek_ec);
    std::size_t n =
        conn->socket.receive(asio::buffer(&first, 1), tcp::socket::message_peek, peek_ec);
    if (peek_ec || n == 0) {
      if (peek_ec != asio::error::would_block) co_return;
    }
  }
  conn->idle = false;  // the client has begun its handshake: a shutdown lets it finish
  auto tls = certificate.current();
  conn->start_tls(std::move(tls));
  auto& stream = *conn->stream;
  auto& tcp_layer = beast::get_lowest_layer(stream);
  tcp_layer.expires_at(accepted + options.handshake_timeout);
  auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, kUse);
  if (hec) co_return;

  bool answered_last = co_await serve_requests(conn);
  if (!answered_last) {
    // Cut (a timeout, an error, an idle connection closed by a shutdown): no TLS close_notify
    // exchange, the TCP close is the end.
    tcp_layer.close();
    co_return;
  }
  // The last answer said Connection: close. close_notify, then wait (bounded) for the
  // client's end before closing: closing with its bytes unread would send a reset, which can
  // destroy the answer before the client has read it.
  auto limit = clock::now() + std::chrono::seconds(2);
  if (draining) {
    std::lock_guard lock(mu);
    limit = std::min(limit, drain_deadline);
  }
  tcp_layer.expires_at(limit);
  co_await stream.async_shutdown(kUse);
  tcp_layer.close();
}

asio::awaitable<bool> WebhookServer::Impl::serve_requests(std::shared_ptr<Connection> conn) {
  auto& stream = *conn->stream;
  auto& tcp_layer = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  bool first = true;
  for (;;) {
    if (buffer.size() == 0) {
      // Between requests: wait for the next one's first bytes (through TLS: records may be
      // buffered below it) for at most idle_timeout. A shutdown closes connections waiting
      // here. One whose handshake ended after that (it was accepted before the listener
      // closed and is about to send its first request) gets a second for it.
      conn->idle = true;
      if (stopping && !first) co_return false;
      tcp_layer.expires_after(stopping ? std::min<std::chrono::steady_clock::duration>(
                                             options.idle_timeout, std::chrono::seconds(1))
                                       : std::chrono::steady_clock::duration(options.idle_timeout));
      auto [rec, got] = co_await stream.async_read_some(buffer.prepare(4096), kUse);
      if (rec) co_return false;
      buffer.commit(got);  // bytes that arrived: answered, even in a shutdown
    }
    first = false;
    conn->idle = false;
    // The request's clock starts at its first byte.
    auto started = clock::now();
    auto request_deadline = started + options.request_timeout;
    tcp_layer.expires_at(std::min(request_deadline, started + options.header_timeout));
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(boost::none);  // checked below, so that an oversized body gets its 400
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kUse);
    if (ec == http::error::header_limit) {
      // Go's net/http answers the same, then closes.
      http::response<http::string_body> res{http::status::request_header_fields_too_large, 11};
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.set(http::field::connection, "close");
      res.body() = "431 Request Header Fields Too Large";
      res.prepare_payload();
      tcp_layer.expires_at(request_deadline);
      auto written = co_await http::async_write(stream, res, kUse);
      co_return !std::get<0>(written);
    }
    if (ec) co_return false;

    bool too_large = false;
    std::uint64_t declared = parser.content_length().value_or(0);
    tcp_layer.expires_at(request_deadline);
    if (declared > kMaxRequestBodyBytes) {
      too_large = true;
    } else if (!parser.is_done()) {
      parser.body_limit(kMaxRequestBodyBytes);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, kUse);
      if (bec == http::error::body_limit) {
        too_large = true;
      } else if (bec) {
        co_return false;
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
    HttpReply reply = timed_serve(request);

    // From the start of a shutdown every answer closes its connection (Connection: close),
    // so the client opens its next one elsewhere instead of meeting a closed one.
    bool keep_alive = req.keep_alive() && !too_large && !draining;
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
      while (left > 0) {
        auto [rec, got] = co_await stream.async_read_some(
            asio::buffer(scratch.data(), std::min<std::uint64_t>(left, scratch.size())), kUse);
        if (rec) break;
        left -= got;
      }
    }

    // The answer goes out within the request's deadline, or at least a second to write it
    // when the engine took the time (the client may still be waiting for it).
    tcp_layer.expires_at(std::max(request_deadline, clock::now() + std::chrono::seconds(1)));
    auto [wec, wn] = co_await http::async_write(stream, res, kUse);
    if (wec) co_return false;
    if (!keep_alive) co_return true;
  }
}

WebhookServer::WebhookServer(ServerOptions options, const RevisionStore& store,
                             const ServingCertificate& certificate, Engine engine,
                             WebhookMetrics* metrics)
    : impl_(std::make_shared<Impl>(std::move(options), store, certificate, std::move(engine),
                                   metrics)) {}

WebhookServer::~WebhookServer() {
  stop();
}

api::Status WebhookServer::start() {
  auto& impl = *impl_;
  std::lock_guard life(impl.life_mu);
  if (impl.ioc) return api::Error{"webhook server already started"};
  if (impl.shutdown_called) return api::Error{"webhook server is shutting down"};
  if (!impl.certificate.current()) return api::Error{"webhook server has no serving certificate"};
  auto hp = split_host_port(impl.options.address);
  if (!hp.ok()) return api::Error{hp.message()};
  beast::error_code ec;
  auto ip = asio::ip::make_address(hp->first, ec);
  if (ec)
    return api::Error{"address \"" + impl.options.address + "\": bad host \"" + hp->first + "\""};

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
    return api::Error{"listen on " + impl.options.address + ": " + ec.message()};
  }
  impl.port = acc.local_endpoint().port();
  impl.drain_timer = std::make_unique<asio::steady_timer>(acc.get_executor());
  impl.draining = false;
  impl.stopping = false;
  impl.busy_since = std::make_unique<std::atomic<std::int64_t>[]>(n);
  for (unsigned i = 0; i < n; ++i)
    impl.busy_since[i].store(0);
  impl.busy_slots.store(n, std::memory_order_release);
  asio::co_spawn(acc.get_executor(), impl.accept_loop(), asio::detached);
  for (unsigned i = 0; i < n; ++i) {
    // The thread holds the Impl: a thread abandoned by stop() still finds it alive.
    impl.threads.emplace_back([self = impl_, i, ioc = impl.ioc.get()] {
      worker_index = static_cast<int>(i);
      ++self->threads_running;
      ioc->run();
      --self->threads_running;
      std::lock_guard lock(self->mu);
      self->drained.notify_all();
    });
  }
  log::info("webhook server listening", {{"address", impl.options.address},
                                         {"port", static_cast<int>(impl.port)},
                                         {"threads", static_cast<int>(n)}});
  return api::ok_status();
}

unsigned short WebhookServer::port() const {
  return impl_->port;
}

unsigned WebhookServer::threads() const {
  return static_cast<unsigned>(impl_->threads.size());
}

std::string WebhookServer::stuck_reason() const {
  const auto& impl = *impl_;
  unsigned slots = impl.busy_slots.load(std::memory_order_acquire);
  if (slots == 0) return {};
  auto now = clock::now().time_since_epoch().count();
  auto limit = std::chrono::duration_cast<clock::duration>(impl.options.stuck_after).count();
  std::int64_t shortest = -1;
  for (unsigned i = 0; i < slots; ++i) {
    std::int64_t since = impl.busy_since[i].load();
    if (since == 0 || now - since <= limit) return {};
    shortest = shortest < 0 ? now - since : std::min(shortest, now - since);
  }
  auto seconds = std::chrono::duration_cast<std::chrono::milliseconds>(clock::duration(shortest));
  return "every webhook thread (" + std::to_string(slots) +
         ") has been inside one request for at least " + std::to_string(seconds.count()) +
         " ms (stuck_after " + std::to_string(impl.options.stuck_after.count()) + " ms)";
}

void WebhookServer::Impl::begin_shutdown(std::chrono::milliseconds delay) {
  {
    std::lock_guard lock(mu);
    if (draining) return;
    drain_deadline = clock::now() + options.drain_timeout;
    draining = true;
  }
  log::info("webhook server draining: answers say Connection: close",
            {{"listener_closes_in_ms", static_cast<std::int64_t>(delay.count())},
             {"drain_timeout_ms", static_cast<std::int64_t>(options.drain_timeout.count())}});
  asio::post(acceptor->get_executor(), [this, delay] {
    if (delay.count() <= 0) {
      close_listener();
      return;
    }
    drain_timer->expires_after(delay);
    drain_timer->async_wait([this](const beast::error_code& ec) {
      if (!ec) close_listener();
    });
  });
}

void WebhookServer::Impl::close_listener() {
  if (stopping) return;
  beast::error_code ec;
  acceptor->close(ec);
  std::lock_guard lock(mu);
  stopping = true;
  for (const auto& conn : connections) {
    asio::post(conn->socket.get_executor(), [conn] {
      if (conn->idle) conn->cancel();
    });
  }
  log::info("webhook server stopped accepting; closing idle connections",
            {{"open_connections", static_cast<std::int64_t>(connections.size())}});
  drained.notify_all();
}

bool WebhookServer::Impl::drained_locked() const {
  return draining && ((stopping && connections.empty()) || clock::now() >= drain_deadline);
}

void WebhookServer::shutdown() {
  std::lock_guard life(impl_->life_mu);
  impl_->shutdown_called = true;  // a start() after this refuses
  if (impl_->ioc) impl_->begin_shutdown(impl_->options.drain_delay);
}

bool WebhookServer::draining() const {
  return impl_->draining;
}

bool WebhookServer::drained() const {
  {
    std::lock_guard life(impl_->life_mu);
    if (!impl_->ioc) return impl_->shutdown_called;  // never started, or stopped
  }
  std::lock_guard lock(impl_->mu);
  return impl_->drained_locked();
}

bool WebhookServer::stop() {
  auto& impl = *impl_;
  {
    std::lock_guard life(impl.life_mu);
    impl.shutdown_called = true;
    if (!impl.ioc) return true;
    impl.begin_shutdown(std::chrono::milliseconds(0));  // a shutdown() under way keeps its delay
  }
  {
    std::unique_lock lock(impl.mu);
    impl.drained.wait_until(lock, impl.drain_deadline, [&impl] { return impl.drained_locked(); });
    if (!impl.connections.empty())
      log::warn("webhook server stopping with requests still in progress",
                {{"connections", static_cast<int>(impl.connections.size())}});
  }
  // shutdown() from another thread waits here rather than touch an io_context going away.
  std::lock_guard life(impl.life_mu);
  impl.ioc->stop();
  // Threads leave run() as soon as their handler returns; one inside a request that does not
  // return is given one more second, then abandoned.
  bool all_joined = true;
  {
    std::unique_lock lock(impl.mu);
    all_joined = impl.drained.wait_for(lock, std::chrono::seconds(1),
                                       [&impl] { return impl.threads_running.load() == 0; });
  }
  for (auto& t : impl.threads) {
    if (all_joined)
      t.join();
    else
      t.detach();
  }
  impl.threads.clear();
  if (!all_joined) {
    // A detached thread is still inside a handler of this io_context: neither it nor the
    // coroutine frames it owns may be destroyed. The process is shutting down; leak them.
    log::error(
        "webhook server stopped with a request stuck; its thread is abandoned",
        {{"drain_timeout_ms", static_cast<std::int64_t>(impl.options.drain_timeout.count())}});
    (void)impl.drain_timer.release();
    (void)impl.acceptor.release();
    (void)impl.ioc.release();
    return false;
  }
  // Destroys what is left (coroutine frames of connections that outlived the grace period)
  // while the rest of Impl is still alive.
  impl.drain_timer.reset();
  impl.acceptor.reset();
  impl.ioc.reset();
  log::info("webhook server stopped", {});
  return true;
}

}  // namespace meshop::webhook
