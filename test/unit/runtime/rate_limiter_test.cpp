#include "operator/runtime/rate_limiter.hpp"

#include <gtest/gtest.h>

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;

TEST(ItemExponentialRateLimiter, DoublesPerKeyFrom5msAndCapsAt1000s) {
  ItemExponentialRateLimiter l(5ms, 1000s);
  EXPECT_EQ(l.when("a"), 5ms);
  EXPECT_EQ(l.when("a"), 10ms);
  EXPECT_EQ(l.when("a"), 20ms);
  EXPECT_EQ(l.when("b"), 5ms);  // keys are independent
  EXPECT_EQ(l.num_requeues("a"), 3);
  for (int i = 0; i < 100; ++i)
    l.when("a");
  EXPECT_EQ(l.when("a"), 1000s);
}

TEST(ItemExponentialRateLimiter, ForgetResetsTheKey) {
  ItemExponentialRateLimiter l(5ms, 1000s);
  l.when("a");
  l.when("a");
  l.forget("a");
  EXPECT_EQ(l.num_requeues("a"), 0);
  EXPECT_EQ(l.when("a"), 5ms);
}

TEST(BucketRateLimiter, BurstIsFreeThenOneTokenPerTenthOfASecond) {
  ManualClock clock;
  BucketRateLimiter l(clock, 10.0, 100);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(l.when("k" + std::to_string(i)), Duration::zero());
  EXPECT_EQ(l.when("x"), 100ms);  // reserves the next token
  EXPECT_EQ(l.when("y"), 200ms);  // and the one after
  clock.advance(1s);              // 10 tokens refill; 2 were already promised
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(l.when("z"), Duration::zero());
  EXPECT_EQ(l.when("z"), 100ms);
}

TEST(BucketRateLimiter, RefillNeverExceedsTheBurst) {
  ManualClock clock;
  BucketRateLimiter l(clock, 10.0, 100);
  clock.advance(1h);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(l.when("k"), Duration::zero());
  EXPECT_GT(l.when("k"), Duration::zero());
}

TEST(DefaultControllerRateLimiter, IsTheMaxOfPerKeyAndOverall) {
  ManualClock clock;
  auto l = default_controller_rate_limiter(clock);
  EXPECT_EQ(l->when("a"), 5ms);
  EXPECT_EQ(l->when("a"), 10ms);
  // Exhaust the bucket with other keys: then the bucket's delay dominates a fresh key's 5 ms.
  for (int i = 0; i < 98; ++i)
    l->when("k" + std::to_string(i));
  EXPECT_EQ(l->when("fresh"), 100ms);
  EXPECT_EQ(l->num_requeues("a"), 2);
  l->forget("a");
  EXPECT_EQ(l->num_requeues("a"), 0);
}

}  // namespace
}  // namespace meshop::runtime
