// A Controller runs N worker coroutines that take keys from a WorkQueue and reconcile them
// (controller-runtime's reconcileHandler, kube-rs's Runner):
//
//   Action::done()               success: forget the key's backoff
//   Action::requeue()            run again after the key's rate-limited backoff
//   Action::requeue_after(d)     forget the backoff, run again in d
//   Action::error(msg)           log, count an error, rate-limited requeue
//   Action::terminal_error(msg)  log, count an error, forget; no requeue until the next event
//
// An exception escaping reconcile is caught, logged with the key and treated as error(). The
// queue guarantees a key is never reconciled by two workers at once.
//
// stop() stops taking new keys; run() returns once every in-flight reconcile has finished
// (the queue is shut down with drain). Metrics: controller_runtime_reconcile_total{controller,
// result}, controller_runtime_reconcile_errors_total, controller_runtime_reconcile_time_seconds,
// controller_runtime_active_workers (metrics.hpp).
//
// Thread affinity: the control-loop thread; the queue, clock and metrics outlive the controller.
#pragma once

#include <functional>
#include <string>

#include "operator/runtime/work_queue.hpp"

namespace meshop::runtime {

struct Action {
  enum class Kind {
    kDone,
    kRequeue,
    kRequeueAfter,
    kError,
    kTerminalError,
    kConflict,
    kRetryAfter,
    kForbidden
  };
  Kind kind = Kind::kDone;
  Duration after{};
  std::string message;

  static Action done() { return {}; }
  static Action requeue() { return {Kind::kRequeue, {}, {}}; }
  static Action requeue_after(Duration d) { return {Kind::kRequeueAfter, d, {}}; }
  static Action error(std::string msg) { return {Kind::kError, {}, std::move(msg)}; }
  static Action terminal_error(std::string msg) {
    return {Kind::kTerminalError, {}, std::move(msg)};
  }
  // The object changed under the pass (a write lost a resourceVersion race): retried through
  // the rate limiter like an error (its first steps are milliseconds), logged at info, counted
  // as result "conflict" and not as a reconcile error.
  static Action conflict(std::string msg) { return {Kind::kConflict, {}, std::move(msg)}; }
  // A failure whose server said when to come back (Retry-After): logged and counted as an
  // error, retried after exactly that delay instead of the backoff's next step.
  static Action retry_after(Duration d, std::string msg) {
    return {Kind::kRetryAfter, d, std::move(msg)};
  }
  // The apiserver refused a request (403): logged and counted as an error, retried on a slow
  // per-key backoff (1 s, doubling, at most 5 min; never sooner than the rate limiter's step),
  // because only a change of meshop's RBAC can make the next try succeed.
  static Action forbidden(std::string msg) { return {Kind::kForbidden, {}, std::move(msg)}; }
};

using Reconciler = std::function<boost::asio::awaitable<Action>(const std::string& key)>;

class Controller {
 public:
  struct Options {
    int workers = 1;
  };

  Controller(std::string name, WorkQueue& queue, Reconciler reconciler, Options options,
             Clock& clock, RuntimeMetrics* metrics = nullptr);

  // Runs the workers until stop(); returns after in-flight reconciles finished.
  boost::asio::awaitable<void> run();
  void stop();

  const std::string& name() const { return name_; }
  int active_workers() const { return active_; }

 private:
  boost::asio::awaitable<void> worker();
  boost::asio::awaitable<void> reconcile_one(const std::string& key);

  std::string name_;
  WorkQueue& queue_;
  Reconciler reconciler_;
  Options options_;
  Clock& clock_;
  RuntimeMetrics* metrics_;
  std::unique_ptr<Timer> stop_timer_;
  bool stopping_ = false;
  int active_ = 0;
  int running_workers_ = 0;
};

}  // namespace meshop::runtime
