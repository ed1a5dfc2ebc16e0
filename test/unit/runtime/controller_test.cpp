#include "operator/runtime/controller.hpp"

#include <map>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "operator/log/log.hpp"
#include "test/unit/runtime/test_util.hpp"

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;
using testing::run_ready;
using testing::spawn;
namespace asio = boost::asio;

struct ControllerTest : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  metrics::Registry registry;
  RuntimeMetrics m{registry};
  WorkQueue queue{"ctl", ioc.get_executor(), clock, nullptr, &m};
  std::map<std::string, int> runs;
  std::vector<Action> script;  // actions returned in order
  std::unique_ptr<Controller> controller;
  bool finished = false;
  std::vector<std::string> log_lines;

  void SetUp() override {
    log::set_sink([this](std::string_view line) { log_lines.emplace_back(line); });
  }
  void TearDown() override { log::set_sink(nullptr); }

  void start(Reconciler r, int workers = 1) {
    controller = std::make_unique<Controller>("ctl", queue, std::move(r),
                                              Controller::Options{.workers = workers}, clock, &m);
    spawn(ioc, [this]() -> asio::awaitable<void> {
      co_await controller->run();
      finished = true;
    });
    run_ready(ioc);
  }
  void start_scripted() {
    start([this](const std::string& key) -> asio::awaitable<Action> {
      int n = runs[key]++;
      co_return n < static_cast<int>(script.size()) ? script[n] : Action::done();
    });
  }
  double total(const std::string& result) {
    return m.reconcile_total.with({"ctl", result}).Value();
  }
};

TEST_F(ControllerTest, ErrorRequeuesWithPerKeyBackoffAndDoneForgetsIt) {
  script = {Action::error("boom"), Action::error("boom"), Action::done()};
  start_scripted();
  queue.add("ns/a");
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 1);
  EXPECT_EQ(queue.num_requeues("ns/a"), 1);
  clock.advance(4ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 1) << "retried before the 5 ms backoff";
  clock.advance(1ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 2);
  clock.advance(9ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 2) << "the second retry must wait 10 ms";
  clock.advance(1ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 3);
  EXPECT_EQ(queue.num_requeues("ns/a"), 0) << "success must forget the backoff";
  EXPECT_EQ(total("error"), 2);
  EXPECT_EQ(total("success"), 1);
  EXPECT_EQ(m.reconcile_errors.with({"ctl"}).Value(), 2);
  EXPECT_EQ(metrics::sample_count(m.reconcile_time.with({"ctl"})), 3u);
  controller->stop();
  run_ready(ioc);
  EXPECT_TRUE(finished);
}

TEST_F(ControllerTest, RequeueAfterRunsAgainAfterTheDelayAndResetsBackoff) {
  script = {Action::error("x"), Action::requeue_after(30s)};
  start_scripted();
  queue.add("k");
  run_ready(ioc);
  clock.advance(5ms);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 2);
  EXPECT_EQ(queue.num_requeues("k"), 0);
  clock.advance(29s);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 2);
  clock.advance(1s);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 3);
  EXPECT_EQ(total("requeue_after"), 1);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, RequeueUsesTheRateLimiter) {
  script = {Action::requeue()};
  start_scripted();
  queue.add("k");
  run_ready(ioc);
  EXPECT_EQ(queue.num_requeues("k"), 1);
  clock.advance(5ms);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 2);
  EXPECT_EQ(total("requeue"), 1);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, ConflictIsRetriedSoonLoggedAtInfoAndNotCountedAsAnError) {
  script = {Action::conflict("patch x: the object has been modified (Conflict, 409)")};
  start_scripted();
  queue.add("ns/a");
  run_ready(ioc);
  clock.advance(5ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/a"], 2);
  EXPECT_EQ(total("conflict"), 1);
  EXPECT_EQ(total("error"), 0);
  EXPECT_EQ(m.reconcile_errors.with({"ctl"}).Value(), 0);
  bool logged = false;
  for (const auto& line : log_lines) {
    if (line.find("object changed during reconcile") != std::string::npos) {
      logged = true;
      EXPECT_NE(line.find(R"("level":"info")"), std::string::npos) << line;
      EXPECT_NE(line.find("ns/a"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(logged);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, RetryAfterWaitsWhatTheServerAskedAndCountsAnError) {
  script = {Action::retry_after(7s, "list pods: too many requests (TooManyRequests, 429)")};
  start_scripted();
  queue.add("k");
  run_ready(ioc);
  clock.advance(6s);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 1) << "retried before the server's Retry-After";
  clock.advance(1s);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 2);
  EXPECT_EQ(total("error"), 1);
  EXPECT_EQ(m.reconcile_errors.with({"ctl"}).Value(), 1);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, ForbiddenRetriesSlowlyDoublingFromOneSecondAndCountsErrors) {
  script =
      std::vector<Action>(12, Action::forbidden("list resourcequotas: forbidden (Forbidden, 403)"));
  start_scripted();
  queue.add("k");
  run_ready(ioc);
  // Retry n (counting from 0) comes 2^n s after the failure before it, capped at 5 min.
  for (int n = 0; n < 10; ++n) {
    const Duration expected = std::min<Duration>(std::chrono::seconds(1 << n), 5min);
    clock.advance(expected - 1ms);
    run_ready(ioc);
    ASSERT_EQ(runs["k"], n + 1) << "retry " << n << " came before " << expected.count();
    clock.advance(1ms);
    run_ready(ioc);
    ASSERT_EQ(runs["k"], n + 2) << "retry " << n << " did not come after " << expected.count();
  }
  EXPECT_EQ(total("error"), 11);
  bool logged = false;
  for (const auto& line : log_lines) {
    if (line.find("reconcile forbidden by RBAC; retrying slowly") != std::string::npos) {
      logged = true;
      EXPECT_NE(line.find(R"("level":"error")"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(logged);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, TerminalErrorIsNotRetried) {
  script = {Action::terminal_error("spec.revision: invalid")};
  start_scripted();
  queue.add("k");
  run_ready(ioc);
  clock.advance(1h);
  run_ready(ioc);
  EXPECT_EQ(runs["k"], 1);
  EXPECT_EQ(queue.num_delayed(), 0u);
  EXPECT_EQ(total("error"), 1);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, ExceptionIsCaughtLoggedWithTheKeyAndRetried) {
  start([this](const std::string& key) -> asio::awaitable<Action> {
    if (runs[key]++ == 0) throw std::runtime_error("nil map");
    co_return Action::done();
  });
  queue.add("ns/boom");
  run_ready(ioc);
  bool logged = false;
  for (const auto& l : log_lines) {
    if (l.find("ns/boom") != std::string::npos && l.find("nil map") != std::string::npos) {
      logged = true;
    }
  }
  EXPECT_TRUE(logged);
  clock.advance(5ms);
  run_ready(ioc);
  EXPECT_EQ(runs["ns/boom"], 2);
  controller->stop();
  run_ready(ioc);
  EXPECT_TRUE(finished);
}

TEST_F(ControllerTest, EventsDuringAReconcileCauseExactlyOneMoreRunNeverAConcurrentOne) {
  int concurrent = 0;
  int max_concurrent = 0;
  start(
      [&](const std::string& key) -> asio::awaitable<Action> {
        ++runs[key];
        max_concurrent = std::max(max_concurrent, ++concurrent);
        auto t = clock.make_timer(ioc.get_executor());
        t->expires_at(clock.now() + 1s);
        co_await t->wait();
        --concurrent;
        co_return Action::done();
      },
      4);
  queue.add("k");
  run_ready(ioc);
  queue.add("k");
  queue.add("k");
  run_ready(ioc);
  EXPECT_EQ(max_concurrent, 1);
  testing::advance_through(clock, ioc, 10s);
  EXPECT_EQ(runs["k"], 2);
  EXPECT_EQ(max_concurrent, 1);
  controller->stop();
  run_ready(ioc);
}

TEST_F(ControllerTest, StopWaitsForInFlightReconcilesAndSkipsQueuedKeys) {
  bool reconcile_finished = false;
  start(
      [&](const std::string& key) -> asio::awaitable<Action> {
        ++runs[key];
        auto t = clock.make_timer(ioc.get_executor());
        t->expires_at(clock.now() + 5s);
        co_await t->wait();
        reconcile_finished = true;
        co_return Action::done();
      },
      1);
  queue.add("slow");
  run_ready(ioc);
  queue.add("queued");
  controller->stop();
  run_ready(ioc);
  EXPECT_FALSE(finished) << "run() returned while a reconcile was in flight";
  testing::advance_through(clock, ioc, 5s);
  EXPECT_TRUE(reconcile_finished);
  EXPECT_TRUE(finished);
  EXPECT_EQ(runs.count("queued"), 0u);
}

}  // namespace
}  // namespace meshop::runtime
