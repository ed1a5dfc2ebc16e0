// A scripted HTTPS server on 127.0.0.1:0 (Beast) standing in for kube-apiserver in unit tests:
// each request is recorded and answered with what `handler` returns (raw bytes in pieces), over
// a self-signed certificate for 127.0.0.1 made once per test binary with the openssl CLI. Run
// it on the io_context the client under test uses.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace meshop::kube::fake {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
inline constexpr auto kTok = net::as_tuple(net::use_awaitable);

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A self-signed certificate for 127.0.0.1, made once per test binary with the openssl CLI.
struct TestCert {
  std::string dir, cert, key;
  static const TestCert& get() {
    static TestCert c = [] {
      TestCert t;
      std::string tmpl =
          (std::filesystem::temp_directory_path() / "meshop-kube-cert-XXXXXX").string();
      t.dir = mkdtemp(tmpl.data());
      std::string cmd =
          "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
          "-nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
          "-keyout " +
          t.dir + "/key.pem -out " + t.dir + "/cert.pem 2>/dev/null";
      if (std::system(cmd.c_str()) != 0) std::abort();
      t.cert = read_text(t.dir + "/cert.pem");
      t.key = read_text(t.dir + "/key.pem");
      return t;
    }();
    return c;
  }
};

struct Exchange {
  std::string method, target, authorization, accept, body;
};

// What the server writes for one request: raw bytes in pieces (each written separately, so
// each becomes its own TLS record(s)), then optionally closes the connection.
struct Script {
  std::vector<std::string> pieces;
  bool close_after = false;
};

inline std::string response(int code, const std::string& body,
                            const std::string& extra_headers = {}) {
  return "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
}

class FakeApiServer {
 public:
  explicit FakeApiServer(net::io_context& io)
      : io_(io), acceptor_(io, {net::ip::make_address("127.0.0.1"), 0}) {
    ctx_ = std::make_shared<ssl::context>(ssl::context::tls_server);
    ctx_->use_certificate_chain(net::buffer(TestCert::get().cert));
    ctx_->use_private_key(net::buffer(TestCert::get().key), ssl::context::pem);
    net::co_spawn(io_, accept_loop(), net::detached);
  }
  ~FakeApiServer() {
    boost::system::error_code ec;
    acceptor_.close(ec);
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }

  std::function<Script(const Exchange&)> handler;
  std::vector<Exchange> seen;
  int connections = 0;

 private:
  net::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(kTok);
      if (ec) co_return;
      ++connections;
      socket.set_option(net::ip::tcp::no_delay(true));  // each piece goes out at once
      net::co_spawn(io_, session(std::move(socket), ctx_), net::detached);
    }
  }
  net::awaitable<void> session(net::ip::tcp::socket socket, std::shared_ptr<ssl::context> ctx) {
    ssl::stream<net::ip::tcp::socket> stream(std::move(socket), *ctx);
    auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, kTok);
    if (hec) co_return;
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      auto [rec, rn] = co_await http::async_read(stream, buffer, req, kTok);
      if (rec) co_return;
      Exchange ex{std::string(req.method_string()), std::string(req.target()),
                  std::string(req[http::field::authorization]),
                  std::string(req[http::field::accept]), req.body()};
      seen.push_back(ex);
      Script script = handler(ex);
      for (const auto& piece : script.pieces) {
        auto [wec, wn] = co_await net::async_write(stream, net::buffer(piece), kTok);
        if (wec) co_return;
      }
      if (script.close_after) {
        stream.next_layer().close();
        co_return;
      }
    }
  }

  net::io_context& io_;
  net::ip::tcp::acceptor acceptor_;
  std::shared_ptr<ssl::context> ctx_;
};

}  // namespace meshop::kube::fake
