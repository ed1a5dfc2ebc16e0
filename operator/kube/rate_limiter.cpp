#include "operator/kube/rate_limiter.hpp"

#include <algorithm>

namespace meshop::kube {

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

void TokenBucket::refill(Clock::time_point now) {
  if (now <= last_) return;
  std::chrono::duration<double> elapsed = now - last_;
  tokens_ = std::min(burst_, tokens_ + elapsed.count() * qps_);
  last_ = now;
}

double TokenBucket::tokens(Clock::time_point now) {
  refill(now);
  return tokens_;
}

TokenBucket::Clock::duration TokenBucket::reserve(Clock::time_point now) {
  if (qps_ <= 0) return Clock::duration::zero();
  refill(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::duration::zero();
  // In debt: this caller waits until the bucket has refilled its token.
  std::chrono::duration<double> wait(-tokens_ / qps_);
  return std::chrono::duration_cast<Clock::duration>(wait);
}

}  // namespace meshop::kube
