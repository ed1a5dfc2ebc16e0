#include "operator/runtime/work_queue.hpp"

#include <random>
#include <set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "test/unit/runtime/test_util.hpp"

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;
using testing::run_ready;
using testing::spawn;
namespace asio = boost::asio;

// Named after the class so test names read WorkQueue.<Behaviour>; the queue type itself is
// spelled meshop::runtime::WorkQueue inside this file.
struct WorkQueue : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  meshop::runtime::WorkQueue q{"test", ioc.get_executor(), clock};
};

TEST_F(WorkQueue, ReAddDuringProcessingRunsOnceMore) {
  q.add("a");
  ASSERT_EQ(q.try_get(), "a");
  q.add("a");
  q.add("a");
  q.add("a");
  EXPECT_EQ(q.try_get(), std::nullopt) << "a is being processed: must not be handed out again";
  q.done("a");
  EXPECT_EQ(q.try_get(), "a") << "the adds during processing must cause one more run";
  q.done("a");
  EXPECT_EQ(q.try_get(), std::nullopt) << "three adds coalesce into exactly one more run";
}

TEST_F(WorkQueue, AddsOfAWaitingKeyCoalesceAndKeepFifoOrder) {
  q.add("a");
  q.add("b");
  q.add("a");
  EXPECT_EQ(q.len(), 2u);
  EXPECT_EQ(q.try_get(), "a");
  EXPECT_EQ(q.try_get(), "b");
  EXPECT_EQ(q.try_get(), std::nullopt);
}

TEST_F(WorkQueue, DoneWithoutReAddDoesNotRequeue) {
  q.add("a");
  ASSERT_EQ(q.try_get(), "a");
  q.done("a");
  EXPECT_EQ(q.len(), 0u);
  EXPECT_EQ(q.num_processing(), 0u);
}

TEST_F(WorkQueue, DelayedAddsBecomeReadyInDeadlineOrder) {
  q.add_after("c", 3s);
  q.add_after("a", 1s);
  q.add_after("b", 2s);
  q.add_after("d", 2s);  // same deadline as b, added later: after b
  EXPECT_EQ(q.try_get(), std::nullopt);
  clock.advance(999ms);
  EXPECT_EQ(q.try_get(), std::nullopt);
  clock.advance(1ms);
  EXPECT_EQ(q.try_get(), "a");
  clock.advance(5s);
  EXPECT_EQ(q.try_get(), "b");
  EXPECT_EQ(q.try_get(), "d");
  EXPECT_EQ(q.try_get(), "c");
}

TEST_F(WorkQueue, ASecondDelayedAddKeepsTheEarlierDeadline) {
  q.add_after("a", 5s);
  q.add_after("a", 1s);   // earlier: replaces
  q.add_after("a", 10s);  // later: ignored
  EXPECT_EQ(q.num_delayed(), 1u);
  clock.advance(1s);
  EXPECT_EQ(q.try_get(), "a");
  q.done("a");
  clock.advance(20s);
  EXPECT_EQ(q.try_get(), std::nullopt);
}

TEST_F(WorkQueue, ZeroDelayIsAPlainAdd) {
  q.add_after("a", 0s);
  EXPECT_EQ(q.try_get(), "a");
}

TEST_F(WorkQueue, RateLimitedAddsBackOffPerKeyAndForgetResets) {
  q.add_rate_limited("a");  // 5 ms
  clock.advance(4ms);
  EXPECT_EQ(q.try_get(), std::nullopt);
  clock.advance(1ms);
  ASSERT_EQ(q.try_get(), "a");
  q.done("a");
  q.add_rate_limited("a");  // 10 ms
  clock.advance(9ms);
  EXPECT_EQ(q.try_get(), std::nullopt);
  clock.advance(1ms);
  ASSERT_EQ(q.try_get(), "a");
  q.done("a");
  EXPECT_EQ(q.num_requeues("a"), 2);
  q.forget("a");
  EXPECT_EQ(q.num_requeues("a"), 0);
  q.add_rate_limited("a");
  clock.advance(5ms);
  EXPECT_EQ(q.try_get(), "a");
}

TEST_F(WorkQueue, GetWaitsForAnAddAndForADelayedDeadline) {
  std::vector<std::string> got;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 2; ++i) {
      auto key = co_await q.get();
      got.push_back(key.value_or("<none>"));
      q.done(*key);
    }
  });
  run_ready(ioc);
  EXPECT_TRUE(got.empty());
  q.add("now");
  run_ready(ioc);
  ASSERT_EQ(got.size(), 1u);
  q.add_after("later", 2s);
  run_ready(ioc);
  EXPECT_EQ(got.size(), 1u);
  clock.advance(1s);
  run_ready(ioc);
  EXPECT_EQ(got.size(), 1u);
  clock.advance(1s);
  run_ready(ioc);
  EXPECT_EQ(got, (std::vector<std::string>{"now", "later"}));
}

TEST_F(WorkQueue, ShutDownHandsOutQueuedKeysThenNullopt) {
  q.add("a");
  q.add_after("delayed", 1s);
  q.shut_down();
  q.add("ignored");
  std::vector<std::optional<std::string>> got;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 2; ++i) {
      auto key = co_await q.get();
      got.push_back(key);
    }
  });
  run_ready(ioc);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "a");
  EXPECT_EQ(got[1], std::nullopt);
}

TEST_F(WorkQueue, ShutDownWakesBlockedGetters) {
  int finished = 0;
  for (int i = 0; i < 3; ++i) {
    spawn(ioc, [&]() -> asio::awaitable<void> {
      auto key = co_await q.get();
      EXPECT_EQ(key, std::nullopt);
      ++finished;
    });
  }
  run_ready(ioc);
  EXPECT_EQ(finished, 0);
  q.shut_down();
  run_ready(ioc);
  EXPECT_EQ(finished, 3);
}

TEST_F(WorkQueue, ShutDownWithDrainWaitsForInFlightKeys) {
  q.add("a");
  q.add("b");
  ASSERT_EQ(q.try_get(), "a");
  ASSERT_EQ(q.try_get(), "b");
  bool drained = false;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    co_await q.shut_down_with_drain();
    drained = true;
  });
  run_ready(ioc);
  EXPECT_FALSE(drained);
  EXPECT_TRUE(q.shutting_down());
  q.done("a");
  run_ready(ioc);
  EXPECT_FALSE(drained);
  q.done("b");
  run_ready(ioc);
  EXPECT_TRUE(drained);
}

// Several workers pull random keys with random work durations; the keys handed out at any
// moment must be distinct, and every add must be followed by a run that starts after it.
TEST_F(WorkQueue, NoKeyIsProcessedByTwoWorkersAtOnce) {
  std::mt19937 rng(42);
  std::set<std::string> in_flight;
  int violations = 0;
  int runs = 0;
  std::map<std::string, int> adds_since_run_start;
  for (int w = 0; w < 4; ++w) {
    spawn(ioc, [&, w]() -> asio::awaitable<void> {
      auto timer = clock.make_timer(ioc.get_executor());
      for (;;) {
        auto key = co_await q.get();
        if (!key) break;
        if (!in_flight.insert(*key).second) ++violations;
        adds_since_run_start[*key] = 0;
        ++runs;
        timer->expires_at(clock.now() + std::chrono::milliseconds(1 + (runs * 7 + w) % 13));
        co_await timer->wait();
        in_flight.erase(*key);
        q.done(*key);
      }
    });
  }
  for (int step = 0; step < 2000; ++step) {
    std::string key = "k" + std::to_string(rng() % 5);
    q.add(key);
    ++adds_since_run_start[key];
    clock.advance(std::chrono::milliseconds(rng() % 4));
    run_ready(ioc);
  }
  testing::advance_through(clock, ioc, 1s);
  EXPECT_EQ(violations, 0);
  EXPECT_GT(runs, 100);
  for (const auto& [key, pending] : adds_since_run_start) {
    EXPECT_EQ(pending, 0) << key << " was added but never ran afterwards";
  }
  q.shut_down();
  run_ready(ioc);
}

TEST(WorkQueueMetrics, CountsAddsDepthRetriesAndDurations) {
  asio::io_context ioc;
  ManualClock clock;
  metrics::Registry registry;
  RuntimeMetrics m(registry);
  meshop::runtime::WorkQueue q("install", ioc.get_executor(), clock, nullptr, &m);
  q.add("a");
  q.add("a");  // coalesced: not an add
  q.add("b");
  EXPECT_EQ(m.queue_adds.with({"install"}).Value(), 2);
  EXPECT_EQ(m.queue_depth.with({"install"}).Value(), 2);
  clock.advance(2s);
  ASSERT_EQ(q.try_get(), "a");
  EXPECT_EQ(m.queue_depth.with({"install"}).Value(), 1);
  EXPECT_EQ(m.queue_latency.with({"install"}).Collect().histogram.sample_sum, 2.0);
  clock.advance(3s);
  q.update_unfinished_work_metrics();
  EXPECT_EQ(m.unfinished_work.with({"install"}).Value(), 3.0);
  EXPECT_EQ(m.longest_running.with({"install"}).Value(), 3.0);
  q.done("a");
  EXPECT_EQ(m.work_duration.with({"install"}).Collect().histogram.sample_sum, 3.0);
  q.add_rate_limited("a");
  EXPECT_EQ(m.retries.with({"install"}).Value(), 1);
  std::string text = registry.expose();
  EXPECT_NE(text.find("workqueue_adds_total{name=\"install\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_depth{name=\"install\"} 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace meshop::runtime
