#include "operator/runtime/manager.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "fake_source.hpp"
#include "operator/log/log.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/metrics.hpp"
#include "operator/runtime/store.hpp"

namespace meshop::runtime {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Answer {
  int status = 0;  // 0: no answer within the deadline
  std::string body;
};

// GET http://127.0.0.1:port<target> with Connection: close, waiting at most `limit` for the
// whole answer. Plain sockets: the client must not depend on any io_context of the test.
Answer http_get(unsigned short port, const std::string& target,
                std::chrono::milliseconds limit = 10s) {
  Answer a;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return a;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return a;
  }
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return a;
  }
  std::string got;
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      // The server closed after its answer (Connection: close): parse what came.
      auto sp = got.find(' ');
      auto hdr_end = got.find("\r\n\r\n");
      if (got.rfind("HTTP/1.1 ", 0) == 0 && sp != std::string::npos &&
          hdr_end != std::string::npos) {
        a.status = std::stoi(got.substr(sp + 1, 3));
        a.body = got.substr(hdr_end + 4);
      }
      break;
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return a;
}

// A ListWatch whose list never answers: its informer never syncs.
class SilentSource final : public ListWatch {
 public:
  explicit SilentSource(asio::any_io_executor ex) : timer_(std::move(ex)) {}
  void cancel() { timer_.cancel(); }
  asio::awaitable<api::Result<ListResult>> list(std::string, const ItemPreparer&) override {
    timer_.expires_at(asio::steady_timer::time_point::max());
    co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return api::Error{"stopped"};
  }
  asio::awaitable<api::Result<std::unique_ptr<WatchStream>>> watch(std::string, int) override {
    co_return api::Error{"not scripted"};
  }

 private:
  asio::steady_timer timer_;
};

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::set_sink([](std::string_view) {});
  }
  void TearDown() override {
    if (runner.joinable()) {
      manager->request_shutdown();
      runner.join();
    }
    log::set_sink(nullptr);
  }
  // Runs the manager on a thread of its own (its control loop); waits until it listens.
  void run(ManagerOptions o = {}) {
    o.health_address = "127.0.0.1:0";
    o.handle_signals = false;
    manager = std::make_unique<Manager>(ioc, clock, m, std::move(o));
    for (Informer* i : informers)
      manager->add_informer(*i);
    runner = std::thread([this] { exit_code = manager->run(); });
    for (int i = 0; i < 1000 && manager->health_port() == 0; ++i)
      std::this_thread::sleep_for(5ms);
    ASSERT_NE(manager->health_port(), 0);
  }
  // Blocks the control loop with a handler that waits for the returned promise.
  std::promise<void> block_control_loop() {
    std::promise<void> release;
    auto entered = std::make_shared<std::promise<void>>();
    auto released = release.get_future().share();
    asio::post(ioc, [released, entered] {
      entered->set_value();
      released.wait();
    });
    entered->get_future().wait();
    return release;
  }
  // After run() returned: lets the coroutines it left (informers told to stop) finish, while
  // the objects they use are alive.
  void finish() {
    if (runner.joinable()) runner.join();
    ioc.restart();
    ioc.poll();
  }

  asio::io_context ioc;
  SteadyClock clock;
  metrics::Registry registry;
  RuntimeMetrics m{registry};
  metrics::Counter& ticks = registry.counter("test_ticks_total", "Ticks").get();
  std::vector<Informer*> informers;
  std::unique_ptr<Manager> manager;
  std::thread runner;
  int exit_code = -1;
};

// Issue 17: /readyz was answered on the control loop's thread; a busy loop (a pod storm)
// made it take seconds and HAProxy marked a healthy replica down.
TEST_F(ManagerTest, ProbesAreAnsweredWhileTheControlLoopIsBlocked) {
  testing::FakeSource source(clock, ioc.get_executor());
  source.script_list("1", {});
  source.script_watch();
  Store store;
  Informer informer("configmaps", ioc.get_executor(), clock, source, store);
  informers.push_back(&informer);
  run();
  Answer ready;
  for (int i = 0; i < 200 && ready.status != 200; ++i) {
    ready = http_get(manager->health_port(), "/readyz");
    if (ready.status != 200) std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(ready.status, 200) << ready.body;

  std::promise<void> release = block_control_loop();
  // Until the release, nothing runs on the control loop: the answers come from elsewhere.
  Answer during = http_get(manager->health_port(), "/readyz");
  EXPECT_EQ(during.status, 200) << "no answer while the control loop is blocked";
  EXPECT_EQ(during.body, "ok");
  EXPECT_EQ(http_get(manager->health_port(), "/healthz").status, 200);
  Answer metrics = http_get(manager->health_port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("test_ticks_total 0"), std::string::npos)
      << metrics.body.substr(0, 300);
  // A shutdown turns readiness at once, without waiting for the control loop.
  manager->request_shutdown();
  Answer draining = http_get(manager->health_port(), "/readyz");
  EXPECT_EQ(draining.status, 503);
  EXPECT_EQ(draining.body, "shutting down\n");

  release.set_value();
  finish();
  EXPECT_EQ(exit_code, 0);
}

TEST_F(ManagerTest, ReadyzNamesTheInformersThatHaveNotSynced) {
  SilentSource silent(ioc.get_executor());
  testing::FakeSource source(clock, ioc.get_executor());
  source.script_list("1", {});
  source.script_watch();
  Store pods_store, cms_store;
  Informer pods("pods", ioc.get_executor(), clock, silent, pods_store);
  Informer cms("configmaps", ioc.get_executor(), clock, source, cms_store);
  informers = {&pods, &cms};
  std::string extra;
  std::mutex extra_mu;
  ManagerOptions o;
  o.not_ready = [&] {
    std::lock_guard lock(extra_mu);
    return extra;
  };
  run(o);
  Answer a;
  for (int i = 0; i < 200 && a.body != "not synced: pods\n"; ++i) {
    a = http_get(manager->health_port(), "/readyz");
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.body, "not synced: pods\n") << "only the informer that has not synced";
  manager->request_shutdown();
  runner.join();
  EXPECT_EQ(exit_code, 0);
  silent.cancel();
  finish();
}

TEST_F(ManagerTest, ExtraReadinessIsAskedOnceInformersHaveSynced) {
  std::string extra = "every webhook thread (2) is stuck";
  std::mutex extra_mu;
  ManagerOptions o;
  o.not_ready = [&] {
    std::lock_guard lock(extra_mu);
    return extra;
  };
  bool shutdown_hook = false;
  o.on_shutdown = [&] { shutdown_hook = true; };
  run(o);
  Answer a;
  for (int i = 0; i < 200 && a.body != extra + "\n"; ++i) {  // 503 "starting" until published
    a = http_get(manager->health_port(), "/readyz");
    if (a.body != extra + "\n") std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.body, extra + "\n");
  {
    std::lock_guard lock(extra_mu);
    extra.clear();
  }
  EXPECT_EQ(http_get(manager->health_port(), "/readyz").status, 200);
  manager->request_shutdown();
  EXPECT_TRUE(shutdown_hook) << "on_shutdown runs on the thread that began the shutdown";
  finish();
}

}  // namespace
}  // namespace meshop::runtime
