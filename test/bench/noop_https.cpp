// A no-op HTTPS server built the way meshop's webhook server is (operator/webhook/server.cpp),
// as the machine's limit for hack/bench-webhook.sh (issue 16: "≥ 50% of a no-op HTTPS server
// built the same way"):
//   - Boost.Beast over Asio coroutines, one io_context run by N threads, a strand per
//     connection;
//   - meshop's own TLS context (webhook::make_server_tls_context: TLS 1.2+, the same suites and
//     server preference), TCP_NODELAY on every accepted socket, HTTP/1.1 keep-alive;
//   - every request is read whole (Beast's request_parser<string_body>), and answered 200 with
//     a fixed body, Content-Type application/json: the body is a file (--body), meshop's own
//     answer to the same review, so the bytes on the wire are the same size.
// What it leaves out is everything the webhook does between reading and writing: the review's
// JSON, the injection engine (or its memo), the patch, base64, the answer's JSON, and the
// server's bookkeeping (connection cap, idle/header/request deadlines, busy slots).
//
//   meshop_noop_https --cert CRT --key KEY --body FILE [--addr 127.0.0.1:0] [--threads N]
//
// Prints "listening on PORT" on stdout once it accepts; runs until SIGINT/SIGTERM.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "operator/webhook/server.hpp"
#include "operator/webhook/tls.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

asio::awaitable<void> session(tcp::socket socket, std::shared_ptr<ssl::context> tls,
                              std::shared_ptr<const std::string> body) {
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
  auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, kUse);
  if (hec) co_return;
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(16 * 1024 * 1024);
    auto [rec, rn] = co_await http::async_read(stream, buffer, parser, kUse);
    if (rec) break;
    const auto& req = parser.get();
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.body() = *body;
    res.prepare_payload();
    auto [wec, wn] = co_await http::async_write(stream, res, kUse);
    if (wec || !req.keep_alive()) break;
  }
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> accept_loop(asio::io_context& ioc, tcp::acceptor& acceptor,
                                  std::shared_ptr<ssl::context> tls,
                                  std::shared_ptr<const std::string> body) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc), kUse);
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      continue;
    }
    beast::error_code nodelay_ec;
    socket.set_option(tcp::no_delay(true), nodelay_ec);
    auto ex = socket.get_executor();
    asio::co_spawn(ex, session(std::move(socket), tls, body), asio::detached);
  }
}

int usage() {
  std::cerr << "usage: meshop_noop_https --cert CRT --key KEY --body FILE [--addr HOST:PORT] "
               "[--threads N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cert_file, key_file, body_file, address = "127.0.0.1:0";
  unsigned threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    std::string v = argv[++i];
    if (a == "--cert")
      cert_file = v;
    else if (a == "--key")
      key_file = v;
    else if (a == "--body")
      body_file = v;
    else if (a == "--addr")
      address = v;
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::strtoul(v.c_str(), nullptr, 10));
    else
      return usage();
  }
  if (cert_file.empty() || key_file.empty() || body_file.empty()) return usage();
  std::string cert_pem, key_pem, body;
  if (!read_file(cert_file, cert_pem) || !read_file(key_file, key_pem) ||
      !read_file(body_file, body)) {
    std::cerr << "meshop_noop_https: cannot read --cert, --key or --body\n";
    return 1;
  }
  auto tls = meshop::webhook::make_server_tls_context(cert_pem, key_pem);
  if (!tls.ok()) {
    std::cerr << "meshop_noop_https: " << tls.message() << "\n";
    return 1;
  }
  auto hp = meshop::webhook::split_host_port(address);
  if (!hp.ok()) {
    std::cerr << "meshop_noop_https: " << hp.message() << "\n";
    return 2;
  }
  // The webhook's default: one thread per core.
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());

  asio::io_context ioc(static_cast<int>(threads));
  tcp::acceptor acceptor(asio::make_strand(ioc));
  tcp::endpoint ep(asio::ip::make_address(hp->first), hp->second);
  acceptor.open(ep.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(ep);
  acceptor.listen(asio::socket_base::max_listen_connections);
  std::cout << "listening on " << acceptor.local_endpoint().port() << std::endl;

  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const beast::error_code&, int) { ioc.stop(); });
  asio::co_spawn(acceptor.get_executor(),
                 accept_loop(ioc, acceptor, *tls, std::make_shared<const std::string>(body)),
                 asio::detached);
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&ioc] { ioc.run(); });
  for (auto& t : pool)
    t.join();
  return 0;
}
