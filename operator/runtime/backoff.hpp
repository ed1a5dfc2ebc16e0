// Jittered exponential backoff for reconnecting watches (client-go reflector / kube-rs
// DefaultBackoff): initial 800 ms, doubling, capped at 30 s, with jitter so that many
// informers failing together do not retry together; the sequence starts over once no
// failure has been reported for `reset_after` (120 s), i.e. after a healthy period.
//
//   Backoff b(clock);
//   co_await sleep(b.next());   // after each failure
//   b.reset();                  // optional: explicit reset
//
// Values: the n-th consecutive delay is min(max, initial * 2^n * (1 + jitter * r)) with r
// uniform in [0, 1) from the injected random source, so it always lies in [initial, max].
// Not thread-safe: one io_context thread.
#pragma once

#include <functional>

#include "operator/runtime/clock.hpp"

namespace meshop::runtime {

struct BackoffConfig {
  Duration initial = std::chrono::milliseconds(800);
  Duration max = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  Duration reset_after = std::chrono::seconds(120);
};

class Backoff {
 public:
  // `random01` returns values in [0, 1); the default is a seeded std::mt19937.
  explicit Backoff(const Clock& clock, BackoffConfig config = {},
                   std::function<double()> random01 = {});

  // The delay to wait after one more failure.
  Duration next();
  void reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  const Clock& clock_;
  BackoffConfig config_;
  std::function<double()> random01_;
  int attempt_ = 0;
  bool has_last_ = false;
  TimePoint last_{};
};

}  // namespace meshop::runtime
