// Helpers for driving coroutines deterministically in unit tests: everything runs on a
// local io_context that is polled (never run with a wall-clock timeout), and time moves
// only through ManualClock::advance().
#pragma once

#include <exception>
#include <functional>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "operator/runtime/clock.hpp"

namespace meshop::runtime::testing {

// Runs every handler that is ready, including ones made ready by earlier handlers.
inline void run_ready(boost::asio::io_context& ioc) {
  ioc.restart();
  ioc.poll();
}

// Spawns `coro`, rethrowing any exception it ends with at the next run_ready().
template <class Awaitable>
void spawn(boost::asio::io_context& ioc, Awaitable coro) {
  boost::asio::co_spawn(ioc, std::move(coro), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
}

// Advances the clock to each armed deadline in turn (running the woken coroutines after
// each step) until `limit` has passed. Returns the time actually advanced.
inline Duration advance_through(ManualClock& clock, boost::asio::io_context& ioc, Duration limit) {
  TimePoint end = clock.now() + limit;
  TimePoint start = clock.now();
  run_ready(ioc);
  while (clock.next_deadline() <= end) {
    clock.advance(clock.next_deadline() - clock.now());
    run_ready(ioc);
  }
  clock.advance(end - clock.now());
  run_ready(ioc);
  return clock.now() - start;
}

}  // namespace meshop::runtime::testing
