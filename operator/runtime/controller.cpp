#include "operator/runtime/controller.hpp"

#include <exception>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "operator/log/log.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr Duration kForbiddenFirstRetry = 1s;
constexpr Duration kForbiddenMaxRetry = 5min;

Controller::Controller(std::string name, WorkQueue& queue, Reconciler reconciler, Options options,
                       Clock& clock, RuntimeMetrics* metrics)
    : name_(std::move(name)),
      queue_(queue),
      reconciler_(std::move(reconciler)),
      options_(options),
      clock_(clock),
      metrics_(metrics) {
  if (options_.workers < 1) options_.workers = 1;
  if (metrics_ != nullptr) metrics_->max_concurrent.with({name_}).Set(options_.workers);
}

asio::awaitable<void> Controller::run() {
  auto executor = co_await asio::this_coro::executor;
  log::info("starting controller", {{"controller", name_}, {"workers", options_.workers}});
  for (int i = 0; i < options_.workers; ++i) {
    ++running_workers_;
    asio::co_spawn(executor, worker(), [this](std::exception_ptr e) {
      --running_workers_;
      if (e) {
        // worker() catches everything a reconcile throws; this is a bug in the runtime.
        log::error("controller worker ended with an exception", {{"controller", name_}});
      }
    });
  }
  // The workers end when the queue is shut down and empty (stop() shuts it down); drain waits
  // for the keys they hold.
  stop_timer_ = clock_.make_timer(executor);
  while (!stopping_) {
    stop_timer_->expires_never();
    co_await stop_timer_->wait();
  }
  co_await queue_.shut_down_with_drain();
  while (running_workers_ > 0) {  // let the woken workers observe the shutdown and exit
    co_await asio::post(executor, asio::use_awaitable);
  }
  log::info("controller stopped", {{"controller", name_}});
}

void Controller::stop() {
  stopping_ = true;
  queue_.shut_down();
  if (stop_timer_) stop_timer_->cancel();
}

asio::awaitable<void> Controller::worker() {
  // (Written without co_await inside the loop condition: g++ 12 miscompiles some coroutine
  // awaits in conditions.)
  for (;;) {
    std::optional<std::string> key = co_await queue_.get();
    if (!key) break;
    if (stopping_) {
      // Shutting down: in-flight work finishes, queued work is left for the next leader.
      queue_.done(*key);
      break;
    }
    co_await reconcile_one(*key);
    queue_.done(*key);
  }
}

asio::awaitable<void> Controller::reconcile_one(const std::string& key) {
  ++active_;
  if (metrics_ != nullptr) metrics_->active_workers.with({name_}).Set(active_);
  TimePoint start = clock_.now();
  Action action;
  try {
    action = co_await reconciler_(key);
  } catch (const std::exception& e) {
    action = Action::error(std::string("reconcile threw: ") + e.what());
  } catch (...) {
    action = Action::error("reconcile threw a non-standard exception");
  }
  --active_;
  const char* result = "success";
  switch (action.kind) {
    case Action::Kind::kDone:
      queue_.forget(key);
      break;
    case Action::Kind::kRequeue:
      result = "requeue";
      queue_.add_rate_limited(key);
      break;
    case Action::Kind::kRequeueAfter:
      result = "requeue_after";
      queue_.forget(key);
      queue_.add_after(key, action.after);
      break;
    case Action::Kind::kError:
      result = "error";
      log::error("reconcile failed; retrying with backoff",
                 {{"controller", name_},
                  {"object", key},
                  {"error", action.message},
                  {"retries", queue_.num_requeues(key)}});
      queue_.add_rate_limited(key);
      break;
    case Action::Kind::kConflict:
      result = "conflict";
      log::info("object changed during reconcile; retrying",
                {{"controller", name_},
                 {"object", key},
                 {"reason", action.message},
                 {"retries", queue_.num_requeues(key)}});
      queue_.add_rate_limited(key);
      break;
    case Action::Kind::kRetryAfter:
      result = "error";
      log::error("reconcile failed; retrying when the server asked",
                 {{"controller", name_},
                  {"object", key},
                  {"error", action.message},
                  {"retry_after_seconds",
                   std::chrono::duration_cast<std::chrono::seconds>(action.after).count()}});
      queue_.add_after(key, action.after);
      break;
    case Action::Kind::kForbidden: {
      result = "error";
      const auto retries = queue_.num_requeues(key);
      const Duration delay =
          queue_.add_rate_limited_slow(key, kForbiddenFirstRetry, kForbiddenMaxRetry);
      log::error("reconcile forbidden by RBAC; retrying slowly",
                 {{"controller", name_},
                  {"object", key},
                  {"error", action.message},
                  {"retries", retries},
                  {"retry_in_seconds", std::chrono::duration<double>(delay).count()}});
      break;
    }
    case Action::Kind::kTerminalError:
      result = "error";
      log::error("reconcile failed terminally; not retrying until the object changes",
                 {{"controller", name_}, {"object", key}, {"error", action.message}});
      queue_.forget(key);
      break;
  }
  if (metrics_ != nullptr) {
    metrics_->active_workers.with({name_}).Set(active_);
    metrics_->reconcile_total.with({name_, result}).Increment();
    if (std::string_view(result) == "error") {
      metrics_->reconcile_errors.with({name_}).Increment();
    }
    metrics_->reconcile_time.with({name_}).Observe(
        std::chrono::duration<double>(clock_.now() - start).count());
  }
}

}  // namespace meshop::runtime
