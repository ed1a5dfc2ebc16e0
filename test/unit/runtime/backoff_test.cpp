#include "operator/runtime/backoff.hpp"

#include <gtest/gtest.h>

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;

TEST(Backoff, DoublesFromInitialUpToTheCapWithoutJitter) {
  ManualClock clock;
  Backoff b(clock, {.jitter = 0.0}, [] { return 0.5; });
  EXPECT_EQ(b.next(), 800ms);
  EXPECT_EQ(b.next(), 1600ms);
  EXPECT_EQ(b.next(), 3200ms);
  EXPECT_EQ(b.next(), 6400ms);
  EXPECT_EQ(b.next(), 12800ms);
  EXPECT_EQ(b.next(), 25600ms);
  EXPECT_EQ(b.next(), 30s);
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(b.next(), 30s);  // no overflow when failing forever
}

TEST(Backoff, JitterStaysBetweenInitialAndCap) {
  ManualClock clock;
  double r = 0.0;
  Backoff b(clock, {}, [&] { return r; });
  r = 0.999;
  Duration first = b.next();
  EXPECT_GT(first, 1500ms);
  EXPECT_LT(first, 1600ms);
  r = 0.0;
  EXPECT_EQ(b.next(), 1600ms);
  for (int i = 0; i < 20; ++i) {
    r = (i % 2) ? 0.999 : 0.0;
    Duration d = b.next();
    EXPECT_GE(d, 800ms);
    EXPECT_LE(d, 30s);
  }
}

TEST(Backoff, ResetsAfterAHealthyPeriod) {
  ManualClock clock;
  Backoff b(clock, {.jitter = 0.0});
  b.next();
  b.next();
  clock.advance(119s);
  EXPECT_EQ(b.next(), 3200ms);  // failures 119 s apart: still the same episode
  clock.advance(120s);
  EXPECT_EQ(b.next(), 800ms);  // 120 s without failure: starts over
}

TEST(Backoff, ExplicitResetStartsOver) {
  ManualClock clock;
  Backoff b(clock, {.jitter = 0.0});
  b.next();
  b.next();
  b.reset();
  EXPECT_EQ(b.next(), 800ms);
}

}  // namespace
}  // namespace meshop::runtime
