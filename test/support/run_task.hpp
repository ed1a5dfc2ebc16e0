// Runs one coroutine to completion on an io_context, for unit tests of coroutine code whose
// I/O is faked (test/support/fake_api.hpp): the task never waits on a socket, so run() returns
// once it is done. An exception escaping the task is rethrown.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace meshop::test_support {

// co_spawn's completion wants a default-constructible result, which api::Result is not: the
// value goes through `out`.
template <class T>
T run_task(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::optional<T> out;
  std::exception_ptr error;
  auto body = [](boost::asio::awaitable<T> t, std::optional<T>* o) -> boost::asio::awaitable<void> {
    T value = co_await std::move(t);
    o->emplace(std::move(value));
  };
  boost::asio::co_spawn(io, body(std::move(task), &out), [&](std::exception_ptr e) { error = e; });
  io.restart();
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

}  // namespace meshop::test_support
