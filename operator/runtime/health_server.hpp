// The process's plain-HTTP endpoint for probes and scraping (controller-runtime's health
// probe and metrics servers in one):
//
//   GET /healthz  200 "ok" while the process runs
//   GET /readyz   200 "ok" once ready() is true (all informers synced), else 503 with why
//   GET /metrics  200, Content-Type: text/plain; version=0.0.4, body from metrics()
//   anything else 404; methods other than GET/HEAD 405
//
// HTTP/1.1 with keep-alive, on the executor it is given. Requests are small and bounded (8 KiB
// header, no body).
//
//   HealthServer server(health_executor, {.not_ready_reason = ..., .metrics = ...});
//   if (auto st = server.listen("127.0.0.1:0"); !st) ...;  // port 0: any free port
//   co_spawn(health_executor, server.run(), detached);  ...  server.stop();
//
// Give it an executor of its own, not the control loop's: probes must be answered while the
// control loop is busy (a pod storm queues seconds of handlers there, and a load balancer's
// health check that waits that long marks a healthy replica down). The handlers then run on
// that executor's thread, concurrently with everything else: they read state published for
// them (atomics, a mutex-protected snapshot, prometheus-cpp's thread-safe registry), never the
// control loop's. The executor's io_context must outlive the server.
// Thread affinity: listen() before run(); port() and stop() from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "api/result.hpp"

namespace meshop::runtime {

class HealthServer {
 public:
  struct Handlers {
    // Empty string when ready, else the reason (served with 503). Called on the server's
    // executor, like metrics.
    std::function<std::string()> not_ready_reason;
    std::function<std::string()> metrics;
  };

  HealthServer(boost::asio::any_io_executor executor, Handlers handlers);
  ~HealthServer();

  // Binds "host:port" ("[::1]:8081", ":8081" = all interfaces). An error on failure.
  api::Status listen(const std::string& address);
  // The bound port (0 before listen()).
  unsigned short port() const;
  // Accepts connections until stop().
  boost::asio::awaitable<void> run();
  // Stops accepting (the listening socket is closed on the server's executor); connections
  // already open end at their next request or keep-alive timeout, or with the io_context.
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
