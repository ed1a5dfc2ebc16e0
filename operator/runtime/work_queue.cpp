#include "operator/runtime/work_queue.hpp"

#include <algorithm>

namespace meshop::runtime {

namespace asio = boost::asio;

namespace {
double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}
}  // namespace

WorkQueue::WorkQueue(std::string name, asio::any_io_executor executor, Clock& clock,
                     std::unique_ptr<RateLimiter> limiter, RuntimeMetrics* metrics)
    : name_(std::move(name)),
      executor_(std::move(executor)),
      clock_(clock),
      limiter_(limiter ? std::move(limiter) : default_controller_rate_limiter(clock)) {
  if (metrics != nullptr) {
    depth_ = &metrics->queue_depth.with({name_});
    adds_ = &metrics->queue_adds.with({name_});
    latency_ = &metrics->queue_latency.with({name_});
    work_ = &metrics->work_duration.with({name_});
    retries_ = &metrics->retries.with({name_});
    unfinished_ = &metrics->unfinished_work.with({name_});
    longest_ = &metrics->longest_running.with({name_});
  }
}

WorkQueue::~WorkQueue() = default;

void WorkQueue::record_add(const std::string& key) {
  if (adds_ != nullptr) adds_->Increment();
  queued_at_.try_emplace(key, clock_.now());
}

void WorkQueue::add(const std::string& key) {
  if (shutting_down_) return;
  if (dirty_.count(key) > 0) return;  // already waiting for a run: coalesce
  record_add(key);
  dirty_.insert(key);
  if (processing_.count(key) > 0) return;  // done() re-queues it: exactly one more run
  queue_.push_back(key);
  if (depth_ != nullptr) depth_->Increment();
  notify();
}

void WorkQueue::add_after(const std::string& key, Duration delay) {
  if (shutting_down_) return;
  if (delay <= Duration::zero()) {
    add(key);
    return;
  }
  TimePoint deadline = clock_.now() + delay;
  auto it = delayed_index_.find(key);
  if (it != delayed_index_.end()) {
    if (it->second.first <= deadline) return;  // the earlier deadline wins
    delayed_.erase(it->second);
    delayed_index_.erase(it);
  }
  std::pair<TimePoint, std::uint64_t> slot{deadline, seq_++};
  delayed_.emplace(slot, key);
  delayed_index_.emplace(key, slot);
  notify();  // waiters re-arm their timers for a possibly earlier deadline
}

void WorkQueue::add_rate_limited(const std::string& key) {
  if (shutting_down_) return;
  if (retries_ != nullptr) retries_->Increment();
  add_after(key, limiter_->when(key));
}

Duration WorkQueue::add_rate_limited_slow(const std::string& key, Duration first, Duration max) {
  if (shutting_down_) return Duration::zero();
  const int before = limiter_->num_requeues(key);
  if (retries_ != nullptr) retries_->Increment();
  Duration delay = limiter_->when(key);
  Duration slow = max;
  if (before < 30) slow = std::min(max, first * (int64_t{1} << before));
  delay = std::max(delay, slow);
  add_after(key, delay);
  return delay;
}

void WorkQueue::forget(const std::string& key) {
  limiter_->forget(key);
}

int WorkQueue::num_requeues(const std::string& key) const {
  return limiter_->num_requeues(key);
}

void WorkQueue::promote_due() {
  TimePoint now = clock_.now();
  while (!delayed_.empty() && delayed_.begin()->first.first <= now) {
    std::string key = std::move(delayed_.begin()->second);
    delayed_index_.erase(key);
    delayed_.erase(delayed_.begin());
    add(key);
  }
}

std::optional<std::string> WorkQueue::try_get() {
  if (!shutting_down_) promote_due();
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  if (depth_ != nullptr) depth_->Decrement();
  TimePoint now = clock_.now();
  auto q = queued_at_.find(key);
  if (q != queued_at_.end()) {
    if (latency_ != nullptr) latency_->Observe(seconds(now - q->second));
    queued_at_.erase(q);
  }
  processing_[key] = now;
  dirty_.erase(key);
  return key;
}

asio::awaitable<std::optional<std::string>> WorkQueue::get() {
  std::unique_ptr<Timer> timer;
  for (;;) {
    if (auto key = try_get()) co_return key;
    if (shutting_down_) co_return std::nullopt;
    if (!timer) timer = clock_.make_timer(executor_);
    if (delayed_.empty()) {
      timer->expires_never();
    } else {
      timer->expires_at(delayed_.begin()->first.first);
    }
    auto self = waiters_.insert(waiters_.end(), timer.get());
    co_await timer->wait();
    waiters_.erase(self);
  }
}

void WorkQueue::done(const std::string& key) {
  auto it = processing_.find(key);
  if (it == processing_.end()) return;
  if (work_ != nullptr) work_->Observe(seconds(clock_.now() - it->second));
  processing_.erase(it);
  if (dirty_.count(key) > 0) {
    queue_.push_back(key);
    if (depth_ != nullptr) depth_->Increment();
  }
  notify();  // a getter may take the key; a drain may be complete
}

void WorkQueue::notify() {
  for (Timer* t : waiters_)
    t->cancel();
}

void WorkQueue::shut_down() {
  if (shutting_down_) return;
  shutting_down_ = true;
  delayed_.clear();
  delayed_index_.clear();
  notify();
}

asio::awaitable<void> WorkQueue::shut_down_with_drain() {
  shut_down();
  std::unique_ptr<Timer> timer = clock_.make_timer(executor_);
  while (!processing_.empty()) {
    timer->expires_never();
    auto self = waiters_.insert(waiters_.end(), timer.get());
    co_await timer->wait();
    waiters_.erase(self);
  }
}

void WorkQueue::update_unfinished_work_metrics() {
  if (unfinished_ == nullptr) return;
  TimePoint now = clock_.now();
  double total = 0;
  double longest = 0;
  for (const auto& [key, start] : processing_) {
    double age = seconds(now - start);
    total += age;
    longest = std::max(longest, age);
  }
  unfinished_->Set(total);
  longest_->Set(longest);
}

}  // namespace meshop::runtime
