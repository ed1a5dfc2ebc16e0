// Client-side request limiter: a token bucket of `qps` tokens per second holding at most
// `burst` tokens (client-go's flowcontrol.NewTokenBucketRateLimiter). No I/O: reserve() says how
// long the caller must wait, so it is tested with an injected time. Single-threaded.
#pragma once

#include <chrono>

namespace meshop::kube {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // qps <= 0 disables limiting (reserve() always returns 0).
  TokenBucket(double qps, int burst, Clock::time_point now = Clock::now());

  // Takes one token, going into debt if none is available, and returns how long to wait before
  // sending (0 when a token was available). Reservations are first come, first served.
  Clock::duration reserve(Clock::time_point now);

  // Tokens available at `now` (may be negative while callers wait).
  double tokens(Clock::time_point now);

 private:
  void refill(Clock::time_point now);

  double qps_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace meshop::kube
