#include "operator/runtime/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace meshop::runtime {

using namespace std::chrono_literals;

Duration ItemExponentialRateLimiter::when(const std::string& key) {
  int n = failures_[key]++;
  // Compute in double so a large exponent saturates at max_ instead of overflowing.
  double d = static_cast<double>(base_.count()) * std::pow(2.0, n);
  if (d >= static_cast<double>(max_.count())) return max_;
  return Duration(static_cast<Duration::rep>(d));
}

int ItemExponentialRateLimiter::num_requeues(const std::string& key) const {
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(const Clock& clock, double per_second, int burst)
    : clock_(clock), per_second_(per_second), burst_(burst), tokens_(burst), last_(clock.now()) {}

Duration BucketRateLimiter::when(const std::string&) {
  TimePoint now = clock_.now();
  double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ = std::min(burst_, tokens_ + elapsed * per_second_);
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Duration::zero();
  auto wait = std::chrono::duration<double>(-tokens_ / per_second_);
  return std::chrono::duration_cast<Duration>(wait);
}

Duration MaxOfRateLimiter::when(const std::string& key) {
  Duration out = Duration::zero();
  for (auto& l : limiters_)
    out = std::max(out, l->when(key));
  return out;
}

void MaxOfRateLimiter::forget(const std::string& key) {
  for (auto& l : limiters_)
    l->forget(key);
}

int MaxOfRateLimiter::num_requeues(const std::string& key) const {
  int out = 0;
  for (auto& l : limiters_)
    out = std::max(out, l->num_requeues(key));
  return out;
}

std::unique_ptr<RateLimiter> default_controller_rate_limiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace meshop::runtime
