// Time for the control loop, behind an interface so every timing decision (queue delays,
// rate limits, backoff, lease expiry) can be driven by a manual clock in unit tests.
//
//   SteadyClock clock;                       // production
//   auto timer = clock.make_timer(executor);
//   timer->expires_at(clock.now() + 2s);
//   co_await timer->wait();                  // returns when fired OR cancelled: re-check state
//
//   ManualClock fake;                        // tests: time moves only on advance()
//   fake.advance(5s);                        // wakes every timer whose deadline has passed;
//   ioc.poll();                              // then run the woken coroutines
//
// Contract:
// - now() is monotonic (steady); wall_now() is only for timestamps written into objects
//   (Lease renewTime), never for measuring intervals.
// - Timer::wait() completes when the deadline is reached or cancel() is called; callers loop
//   on their own state, so a spurious wake-up is harmless by design.
// - A Timer must be used from the executor it was created with, and must not outlive the
//   clock that made it. Not thread-safe: one io_context thread (DESIGN.md "Threading").
#pragma once

#include <chrono>
#include <map>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace meshop::runtime {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void expires_at(TimePoint deadline) = 0;
  // Never fires unless cancelled.
  virtual void expires_never() = 0;
  virtual void cancel() = 0;
  virtual boost::asio::awaitable<void> wait() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual WallTime wall_now() const = 0;
  virtual std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) = 0;
};

// The real clock: std::chrono::steady_clock and boost::asio::steady_timer.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  WallTime wall_now() const override { return std::chrono::system_clock::now(); }
  std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) override;
};

// The process's real clock, for objects given none (a reconciler built without a clock).
Clock& steady_clock();

// A clock that only moves when advance() is called. Timers it makes complete (on their
// executor) once advance() passes their deadline.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(WallTime wall_start = WallTime{} + std::chrono::hours(24 * 365 * 56));
  ~ManualClock() override;

  TimePoint now() const override { return now_; }
  WallTime wall_now() const override { return wall_start_ + (now_ - TimePoint{}); }
  std::unique_ptr<Timer> make_timer(boost::asio::any_io_executor executor) override;

  void advance(Duration d);
  // The earliest armed deadline, or TimePoint::max() when none: lets a test jump straight to
  // the next event instead of guessing.
  TimePoint next_deadline() const;

 private:
  class FakeTimer;
  friend class FakeTimer;
  TimePoint now_{};
  WallTime wall_start_;
  std::multimap<TimePoint, FakeTimer*> armed_;
};

}  // namespace meshop::runtime
