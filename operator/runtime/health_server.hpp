// The process's plain-HTTP endpoint for probes and scraping (controller-runtime's health
// probe and metrics servers in one):
//
//   GET /healthz  200 "ok" while the process runs
//   GET /readyz   200 "ok" once ready() is true (all informers synced), else 503 with why
//   GET /metrics  200, Content-Type: text/plain; version=0.0.4, body from metrics()
//   anything else 404; methods other than GET/HEAD 405
//
// HTTP/1.1 with keep-alive, on the executor it is given (the control loop's: handlers read
// informer state without locks). Requests are small and bounded (8 KiB header, no body).
//
//   HealthServer server(executor, {.ready = ..., .metrics = ...});
//   if (auto err = server.listen("127.0.0.1:0")) ...;   // port 0: any free port
//   co_spawn(executor, server.run(), detached);  ...  server.stop();
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace meshop::runtime {

class HealthServer {
 public:
  struct Handlers {
    // Empty string when ready, else the reason (served with 503).
    std::function<std::string()> not_ready_reason;
    std::function<std::string()> metrics;
  };

  HealthServer(boost::asio::any_io_executor executor, Handlers handlers);
  ~HealthServer();

  // Binds "host:port" ("[::1]:8081", ":8081" = all interfaces). An error message on failure.
  std::optional<std::string> listen(const std::string& address);
  unsigned short port() const;
  // Accepts connections until stop().
  boost::asio::awaitable<void> run();
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The response of the server for one request, without I/O; exposed for tests.
struct HealthResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};
HealthResponse health_respond(const std::string& method, const std::string& target,
                              const HealthServer::Handlers& handlers);

}  // namespace meshop::runtime
