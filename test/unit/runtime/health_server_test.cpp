#include "operator/runtime/health_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

namespace meshop::runtime {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

HealthServer::Handlers handlers(std::string* not_ready) {
  return {.not_ready_reason = [not_ready] { return *not_ready; },
          .metrics = [] { return std::string("workqueue_depth{name=\"x\"} 0\n"); }};
}

TEST(HealthRespond, ReadyzFollowsTheReadinessReason) {
  std::string reason = "not synced: configmaps";
  auto h = handlers(&reason);
  HealthResponse r = health_respond("GET", "/readyz", h);
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("configmaps"), std::string::npos);
  reason.clear();
  EXPECT_EQ(health_respond("GET", "/readyz", h).status, 200);
  EXPECT_EQ(health_respond("GET", "/readyz?verbose", h).status, 200);
}

TEST(HealthRespond, HealthzMetricsAndErrors) {
  std::string reason = "not synced";
  auto h = handlers(&reason);
  EXPECT_EQ(health_respond("GET", "/healthz", h).status, 200) << "liveness ignores readiness";
  HealthResponse m = health_respond("GET", "/metrics", h);
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.content_type.rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_EQ(m.body, "workqueue_depth{name=\"x\"} 0\n");
  EXPECT_EQ(health_respond("GET", "/nope", h).status, 404);
  EXPECT_EQ(health_respond("POST", "/healthz", h).status, 405);
}

TEST(HealthServer, RejectsBadAddresses) {
  asio::io_context ioc;
  std::string reason;
  HealthServer s(ioc.get_executor(), handlers(&reason));
  EXPECT_FALSE(s.listen("nonsense").ok());
  EXPECT_FALSE(s.listen("127.0.0.1:http").ok());
  EXPECT_FALSE(s.listen("not-an-ip:80").ok());
}

// A real request over loopback (port 0), two requests on one keep-alive connection.
TEST(HealthServer, ServesOverHttpWithKeepAlive) {
  asio::io_context ioc;
  std::string reason = "not synced: pods";
  HealthServer server(ioc.get_executor(), handlers(&reason));
  auto listening = server.listen("127.0.0.1:0");
  ASSERT_TRUE(listening.ok()) << listening.message();
  ASSERT_NE(server.port(), 0);
  asio::co_spawn(ioc, server.run(), asio::detached);
  std::vector<std::pair<int, std::string>> got;
  bool done = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        beast::tcp_stream stream(ioc);
        co_await stream.async_connect(
            asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()),
            asio::use_awaitable);
        beast::flat_buffer buf;
        for (const char* target : {"/readyz", "/metrics"}) {
          http::request<http::empty_body> req{http::verb::get, target, 11};
          req.set(http::field::host, "localhost");
          co_await http::async_write(stream, req, asio::use_awaitable);
          http::response<http::string_body> res;
          co_await http::async_read(stream, buf, res, asio::use_awaitable);
          got.emplace_back(res.result_int(), res.body());
        }
        done = true;
        server.stop();
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  while (!done && ioc.run_one() > 0) {
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, 503);
  EXPECT_EQ(got[1].first, 200);
  EXPECT_EQ(got[1].second, "workqueue_depth{name=\"x\"} 0\n");
}

}  // namespace
}  // namespace meshop::runtime
