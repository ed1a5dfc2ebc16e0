#include "operator/runtime/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace meshop::runtime {

Backoff::Backoff(const Clock& clock, BackoffConfig config, std::function<double()> random01)
    : clock_(clock), config_(config), random01_(std::move(random01)) {
  if (!random01_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    random01_ = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
}

Duration Backoff::next() {
  TimePoint now = clock_.now();
  if (has_last_ && now - last_ >= config_.reset_after) attempt_ = 0;
  has_last_ = true;
  last_ = now;
  double max = static_cast<double>(config_.max.count());
  double d = static_cast<double>(config_.initial.count()) * std::pow(config_.factor, attempt_);
  if (d < max) ++attempt_;  // stop counting once capped: no overflow however long it fails
  d *= 1.0 + config_.jitter * random01_();
  return Duration(static_cast<Duration::rep>(std::min(d, max)));
}

}  // namespace meshop::runtime
