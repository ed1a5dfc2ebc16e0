// A work queue of string keys with client-go's invariants (util/workqueue queue.go,
// delaying_queue.go, rate_limiting_queue.go):
//
// - A key is never handed to two workers at once: get() moves it to `processing`; an add()
//   of a processing key only marks it dirty, and done() re-queues it. So any number of adds
//   while a key is processed coalesce into exactly ONE more run after done().
// - Adds of a key already waiting (dirty, not processing) coalesce with it.
// - add_after(key, d) holds the key until the clock passes now + d; a second delayed add keeps
//   the earlier deadline. add_rate_limited(key) is add_after(key, limiter.when(key));
//   forget(key) resets the key's backoff, num_requeues(key) reports it.
// - shut_down(): later adds are ignored, delayed keys are dropped, get() still hands out the
//   keys already queued and returns nullopt once none is left. shut_down_with_drain()
//   additionally waits until every key handed out has been done().
//
//   WorkQueue q("install", executor, clock);
//   while (auto key = co_await q.get()) { reconcile(*key); q.done(*key); }
//
// Thread affinity: every call on the one control-loop io_context thread (no locks).
// The clock and the metrics (nullable) must outlive the queue.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "operator/runtime/clock.hpp"
#include "operator/runtime/metrics.hpp"
#include "operator/runtime/rate_limiter.hpp"

namespace meshop::runtime {

class WorkQueue {
 public:
  // A null `limiter` means default_controller_rate_limiter(clock).
  WorkQueue(std::string name, boost::asio::any_io_executor executor, Clock& clock,
            std::unique_ptr<RateLimiter> limiter = nullptr, RuntimeMetrics* metrics = nullptr);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  ~WorkQueue();

  void add(const std::string& key);
  void add_after(const std::string& key, Duration delay);
  void add_rate_limited(const std::string& key);
  // Like add_rate_limited (counts a failure of `key`), but waits at least first·2^n, at most
  // `max`, where n is the failures counted before this one: a slow backoff for errors that
  // retrying soon cannot fix. Returns the delay chosen.
  Duration add_rate_limited_slow(const std::string& key, Duration first, Duration max);
  void forget(const std::string& key);
  int num_requeues(const std::string& key) const;

  // The next ready key (marked processing), or nullopt if none is ready right now.
  std::optional<std::string> try_get();
  // Waits for a ready key; nullopt once the queue is shut down and empty.
  boost::asio::awaitable<std::optional<std::string>> get();
  // Ends the processing of `key` (got from get()/try_get()).
  void done(const std::string& key);

  void shut_down();
  boost::asio::awaitable<void> shut_down_with_drain();
  bool shutting_down() const { return shutting_down_; }

  const std::string& name() const { return name_; }
  std::size_t len() const { return queue_.size(); }            // ready keys
  std::size_t num_delayed() const { return delayed_.size(); }  // keys waiting for a deadline
  std::size_t num_processing() const { return processing_.size(); }
  bool is_processing(const std::string& key) const { return processing_.count(key) > 0; }

  // Recomputes workqueue_unfinished_work_seconds and
  // workqueue_longest_running_processor_seconds (call before exposing metrics).
  void update_unfinished_work_metrics();

 private:
  void promote_due();
  void notify();
  void record_add(const std::string& key);

  std::string name_;
  boost::asio::any_io_executor executor_;
  Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;

  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_map<std::string, TimePoint> processing_;  // key -> start of processing
  std::unordered_map<std::string, TimePoint> queued_at_;   // for queue_duration
  // Delayed keys ordered by (deadline, insertion sequence), indexed by key for dedup.
  std::map<std::pair<TimePoint, std::uint64_t>, std::string> delayed_;
  std::unordered_map<std::string, std::pair<TimePoint, std::uint64_t>> delayed_index_;
  std::uint64_t seq_ = 0;

  std::list<Timer*> waiters_;
  bool shutting_down_ = false;

  metrics::Gauge* depth_ = nullptr;
  metrics::Counter* adds_ = nullptr;
  metrics::Histogram* latency_ = nullptr;
  metrics::Histogram* work_ = nullptr;
  metrics::Counter* retries_ = nullptr;
  metrics::Gauge* unfinished_ = nullptr;
  metrics::Gauge* longest_ = nullptr;
};

}  // namespace meshop::runtime
