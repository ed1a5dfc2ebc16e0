#include "operator/kube/retry.hpp"

#include <gtest/gtest.h>

#include "operator/kube/rate_limiter.hpp"

namespace meshop::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

AttemptOutcome http(int code, std::optional<seconds> retry_after = std::nullopt) {
  AttemptOutcome o;
  o.http_status = code;
  o.retry_after = retry_after;
  return o;
}

TEST(Retry, TooManyRequestsIsRetriedForEveryVerbHonouringRetryAfter) {
  RetryPolicy p;
  for (const char* verb : {"GET", "POST", "PATCH", "PUT", "DELETE"}) {
    auto d = retry_delay(p, verb, 0, http(429, seconds(2)), 0.5);
    ASSERT_TRUE(d.has_value()) << verb;
    EXPECT_EQ(*d, milliseconds(2000)) << verb;
  }
}

TEST(Retry, RetryAfterIsClamped) {
  RetryPolicy p;
  p.max_retry_after = milliseconds(5000);
  EXPECT_EQ(*retry_delay(p, "GET", 0, http(429, seconds(3600)), 0), milliseconds(5000));
}

TEST(Retry, ServerErrorsRetryOnlyIdempotentVerbsUnlessServerAsks) {
  RetryPolicy p;
  EXPECT_TRUE(retry_delay(p, "GET", 0, http(500), 0).has_value());
  EXPECT_TRUE(retry_delay(p, "PUT", 0, http(503), 0).has_value());
  EXPECT_FALSE(retry_delay(p, "POST", 0, http(500), 0).has_value());
  EXPECT_FALSE(retry_delay(p, "PATCH", 0, http(504), 0).has_value());
  EXPECT_TRUE(retry_delay(p, "POST", 0, http(503, seconds(1)), 0).has_value());
}

TEST(Retry, ClientErrorsAreNotRetried) {
  RetryPolicy p;
  for (int code : {400, 401, 403, 404, 409, 410, 422, 501}) {
    EXPECT_FALSE(retry_delay(p, "GET", 0, http(code), 0).has_value()) << code;
  }
}

TEST(Retry, ConnectionFailures) {
  RetryPolicy p;
  AttemptOutcome connect;
  connect.connect_failed = true;
  EXPECT_TRUE(retry_delay(p, "POST", 0, connect, 0).has_value());
  AttemptOutcome broken;
  broken.transport_failed = true;
  EXPECT_TRUE(retry_delay(p, "GET", 0, broken, 0).has_value());
  EXPECT_FALSE(retry_delay(p, "POST", 0, broken, 0).has_value());
  EXPECT_FALSE(retry_delay(p, "GET", 0, AttemptOutcome{}, 0).has_value());
}

TEST(Retry, StopsAfterMaxRetries) {
  RetryPolicy p;
  p.max_retries = 3;
  EXPECT_TRUE(retry_delay(p, "GET", 2, http(500), 0).has_value());
  EXPECT_FALSE(retry_delay(p, "GET", 3, http(500), 0).has_value());
}

TEST(Retry, BackoffDoublesWithJitterAndIsCapped) {
  RetryPolicy p;
  p.base_delay = milliseconds(100);
  p.max_delay = milliseconds(1000);
  p.max_retries = 100;
  // random 1.0 gives the full delay, 0.0 half of it.
  EXPECT_EQ(*retry_delay(p, "GET", 0, http(500), 1.0), milliseconds(100));
  EXPECT_EQ(*retry_delay(p, "GET", 0, http(500), 0.0), milliseconds(50));
  EXPECT_EQ(*retry_delay(p, "GET", 1, http(500), 1.0), milliseconds(200));
  EXPECT_EQ(*retry_delay(p, "GET", 3, http(500), 1.0), milliseconds(800));
  EXPECT_EQ(*retry_delay(p, "GET", 4, http(500), 1.0), milliseconds(1000));
  EXPECT_EQ(*retry_delay(p, "GET", 60, http(500), 0.5), milliseconds(750));
}

TEST(Retry, ParseRetryAfter) {
  EXPECT_EQ(parse_retry_after("5"), seconds(5));
  EXPECT_EQ(parse_retry_after(" 0 "), seconds(0));
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
}

TEST(Retry, IdempotentVerbs) {
  EXPECT_TRUE(is_idempotent("GET"));
  EXPECT_TRUE(is_idempotent("PUT"));
  EXPECT_TRUE(is_idempotent("DELETE"));
  EXPECT_FALSE(is_idempotent("POST"));
  EXPECT_FALSE(is_idempotent("PATCH"));
}

using Clock = TokenBucket::Clock;

TEST(TokenBucket, BurstIsFreeThenRequestsAreSpacedByOneOverQps) {
  Clock::time_point t0{};
  TokenBucket b(10, 3, t0);
  EXPECT_EQ(b.reserve(t0), Clock::duration::zero());
  EXPECT_EQ(b.reserve(t0), Clock::duration::zero());
  EXPECT_EQ(b.reserve(t0), Clock::duration::zero());
  auto w1 = b.reserve(t0);
  auto w2 = b.reserve(t0);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(w1), milliseconds(100));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(w2), milliseconds(200));
}

TEST(TokenBucket, RefillsOverTimeUpToBurst) {
  Clock::time_point t0{};
  TokenBucket b(2, 4, t0);
  for (int i = 0; i < 4; ++i)
    b.reserve(t0);
  EXPECT_NEAR(b.tokens(t0), 0.0, 1e-9);
  EXPECT_NEAR(b.tokens(t0 + milliseconds(500)), 1.0, 1e-9);
  EXPECT_EQ(b.reserve(t0 + milliseconds(500)), Clock::duration::zero());
  EXPECT_NEAR(b.tokens(t0 + seconds(100)), 4.0, 1e-9);
}

TEST(TokenBucket, TimeGoingBackwardsDoesNotAddTokens) {
  Clock::time_point t0 = Clock::time_point{} + seconds(10);
  TokenBucket b(1, 1, t0);
  b.reserve(t0);
  EXPECT_NEAR(b.tokens(t0 - seconds(5)), 0.0, 1e-9);
}

TEST(TokenBucket, NonPositiveQpsDisablesLimiting) {
  Clock::time_point t0{};
  TokenBucket b(0, 1, t0);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(b.reserve(t0), Clock::duration::zero());
}

}  // namespace
}  // namespace meshop::kube
