// Rate limiters for work-queue retries, with client-go's semantics (util/workqueue
// default_rate_limiters.go):
//
//   ItemExponentialRateLimiter  per key: base * 2^failures, capped (5 ms .. 1000 s by default)
//   BucketRateLimiter           overall token bucket (10/s, burst 100 by default); a request
//                               beyond the burst reserves a future token, so delays grow
//                               linearly with the backlog instead of failing
//   MaxOfRateLimiter            the largest delay of its members
//
// default_controller_rate_limiter() is the max of the first two, the limiter of every
// controller-runtime controller. when(key) records a failure and returns how long to wait;
// forget(key) ends the key's backoff (call it after a success). All times come from the
// injected Clock. Not thread-safe: one io_context thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "operator/runtime/clock.hpp"

namespace meshop::runtime {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Counts one more failure of `key` and returns the delay before it may run again.
  virtual Duration when(const std::string& key) = 0;
  virtual void forget(const std::string& key) = 0;
  // Failures counted for `key` since the last forget().
  virtual int num_requeues(const std::string& key) const = 0;
};

class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(Duration base, Duration max) : base_(base), max_(max) {}
  Duration when(const std::string& key) override;
  void forget(const std::string& key) override { failures_.erase(key); }
  int num_requeues(const std::string& key) const override;

 private:
  Duration base_;
  Duration max_;
  std::unordered_map<std::string, int> failures_;
};

class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(const Clock& clock, double per_second, int burst);
  Duration when(const std::string& key) override;
  void forget(const std::string&) override {}
  int num_requeues(const std::string&) const override { return 0; }

 private:
  const Clock& clock_;
  double per_second_;
  double burst_;
  double tokens_;  // may go negative: tokens already promised to callers waiting for them
  TimePoint last_;
};

class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int num_requeues(const std::string& key) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// max(per key 5 ms * 2^n capped at 1000 s, overall 10/s burst 100).
std::unique_ptr<RateLimiter> default_controller_rate_limiter(const Clock& clock);

}  // namespace meshop::runtime
