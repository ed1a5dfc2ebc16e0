#include "operator/runtime/clock.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace meshop::runtime {

namespace asio = boost::asio;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

class RealTimer final : public Timer {
 public:
  explicit RealTimer(asio::any_io_executor executor) : timer_(std::move(executor)) {}
  void expires_at(TimePoint deadline) override {
    timer_.expires_at(deadline);
    cancelled_ = false;
  }
  void expires_never() override { expires_at(TimePoint::max()); }
  // A cancel() with no wait pending is remembered, so the next wait() returns at once
  // (the same as ManualClock's timers).
  void cancel() override {
    cancelled_ = true;
    timer_.cancel();
  }
  asio::awaitable<void> wait() override {
    if (!cancelled_) co_await timer_.async_wait(kAwait);
    cancelled_ = false;
  }

 private:
  asio::steady_timer timer_;
  bool cancelled_ = false;
};

}  // namespace

Clock& steady_clock() {
  static SteadyClock clock;
  return clock;
}

std::unique_ptr<Timer> SteadyClock::make_timer(asio::any_io_executor executor) {
  return std::make_unique<RealTimer>(std::move(executor));
}

// Waits on an asio timer that never expires by itself; ManualClock::advance() and cancel()
// wake it by cancelling that wait.
class ManualClock::FakeTimer final : public Timer {
 public:
  FakeTimer(ManualClock& clock, asio::any_io_executor executor)
      : clock_(clock), wake_(std::move(executor)) {
    wake_.expires_at(TimePoint::max());
  }
  ~FakeTimer() override { disarm(); }

  void expires_at(TimePoint deadline) override {
    disarm();
    deadline_ = deadline;
    pos_ = clock_.armed_.emplace(deadline, this);
    armed_ = true;
    cancelled_ = false;
  }
  void expires_never() override {
    disarm();
    deadline_ = TimePoint::max();
    cancelled_ = false;
  }
  void cancel() override {
    cancelled_ = true;
    wake_.cancel();
  }
  asio::awaitable<void> wait() override {
    if (cancelled_ || deadline_ <= clock_.now_) {
      cancelled_ = false;
      co_return;
    }
    co_await wake_.async_wait(kAwait);
    cancelled_ = false;
  }

  void fire() {
    armed_ = false;
    wake_.cancel();
  }

 private:
  void disarm() {
    if (armed_) clock_.armed_.erase(pos_);
    armed_ = false;
  }

  ManualClock& clock_;
  asio::steady_timer wake_;
  TimePoint deadline_ = TimePoint::max();
  std::multimap<TimePoint, FakeTimer*>::iterator pos_;
  bool armed_ = false;
  bool cancelled_ = false;
};

ManualClock::ManualClock(WallTime wall_start) : wall_start_(wall_start) {}
ManualClock::~ManualClock() = default;

std::unique_ptr<Timer> ManualClock::make_timer(asio::any_io_executor executor) {
  return std::make_unique<FakeTimer>(*this, std::move(executor));
}

void ManualClock::advance(Duration d) {
  now_ += d;
  while (!armed_.empty() && armed_.begin()->first <= now_) {
    FakeTimer* t = armed_.begin()->second;
    armed_.erase(armed_.begin());
    t->fire();
  }
}

TimePoint ManualClock::next_deadline() const {
  return armed_.empty() ? TimePoint::max() : armed_.begin()->first;
}

}  // namespace meshop::runtime
