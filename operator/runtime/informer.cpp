#include "operator/runtime/informer.hpp"

#include <random>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "operator/log/log.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;

std::string_view to_string(Informer::State state) {
  switch (state) {
    case Informer::State::kEmpty:
      return "empty";
    case Informer::State::kListed:
      return "listed";
    case Informer::State::kWatching:
      return "watching";
  }
  return "unknown";
}

namespace {
std::function<double()> default_random() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}
}  // namespace

Informer::Informer(std::string name, asio::any_io_executor executor, Clock& clock,
                   ListWatch& source, Store& store, Options options)
    : name_(std::move(name)),
      executor_(std::move(executor)),
      clock_(clock),
      source_(source),
      store_(store),
      random01_(options.random01 ? std::move(options.random01) : default_random()),
      initial_rv_(std::move(options.initial_list_resource_version)),
      backoff_(clock, options.backoff, random01_),
      timer_(clock.make_timer(executor_)) {}

Informer::~Informer() = default;

std::string Informer::list_resource_version() const {
  if (!listed_once_ && rv_.empty()) return initial_rv_;
  if (rv_unavailable_) return "";
  return rv_;
}

Informer::StepResult Informer::fail(api::Error error) {
  if (is_gone(error)) ++gone_errors_;
  last_error_ = std::move(error);
  return StepResult::kError;
}

asio::awaitable<Informer::StepResult> Informer::step() {
  switch (state_) {
    case State::kEmpty:
      co_return co_await do_list();
    case State::kListed:
      co_return co_await do_watch();
    case State::kWatching:
      co_return co_await do_next();
  }
  co_return StepResult::kError;
}

asio::awaitable<Informer::StepResult> Informer::do_list() {
  ++lists_;
  // Held in this frame: the source keeps a reference while it pages.
  ItemPreparer prepare = [this](const rapidjson::Value& item) { return store_.prepare(item); };
  auto result = co_await source_.list(list_resource_version(), prepare);
  if (!result.ok()) {
    // A 410 on the list itself: the rv is compacted away; fall back to a quorum read.
    if (is_gone(result.error())) rv_unavailable_ = true;
    co_return fail(std::move(result).error());
  }
  rv_ = std::move(result->resource_version);
  rv_unavailable_ = false;
  listed_once_ = true;
  store_.replace(std::move(result->items));
#ifdef __GLIBC__
  // The pages (tens of MB for a large cluster) were freed in many small chunks that glibc
  // would otherwise keep: give them back so RSS reflects the store, not the list.
  malloc_trim(0);
#endif
  state_ = State::kListed;
  co_return StepResult::kProgress;
}

asio::awaitable<Informer::StepResult> Informer::do_watch() {
  ++watches_;
  int timeout = 300 + static_cast<int>(random01_() * 300.0);
  auto result = co_await source_.watch(rv_, timeout);
  if (!result.ok()) {
    if (is_gone(result.error())) state_ = State::kEmpty;
    co_return fail(std::move(result).error());
  }
  stream_ = std::move(*result);
  state_ = State::kWatching;
  watch_opened_at_ = clock_.now();
  watch_events_ = 0;
  co_return StepResult::kProgress;
}

asio::awaitable<Informer::StepResult> Informer::do_next() {
  WatchNext next = co_await stream_->next();
  switch (next.kind) {
    case WatchNext::Kind::kEnd:
      stream_.reset();
      state_ = State::kListed;
      // client-go's "very short watch": a server that closes every watch at once would
      // otherwise be hammered with re-watches; back off as for an error.
      if (watch_events_ == 0 && clock_.now() - watch_opened_at_ < std::chrono::seconds(1)) {
        co_return fail(api::Error{"very short watch: closed within a second with no events"});
      }
      co_return StepResult::kProgress;
    case WatchNext::Kind::kError:
      stream_.reset();
      // 410: the rv is too old to resume from; relist (from rv first, as client-go does).
      state_ = is_gone(next.error) ? State::kEmpty : State::kListed;
      co_return fail(std::move(next.error));
    case WatchNext::Kind::kEvent:
      break;
  }
  ++watch_events_;
  std::string rv(resource_version_of(next.object));
  switch (next.type) {
    case EventType::kAdded:
    case EventType::kModified:
      store_.apply(std::move(next.object));
      break;
    case EventType::kDeleted:
      store_.remove(std::move(next.object));
      break;
    case EventType::kBookmark:
      break;
  }
  if (!rv.empty()) rv_ = std::move(rv);
  co_return StepResult::kProgress;
}

asio::awaitable<void> Informer::run() {
  while (!stopping_) {
    State before = state_;
    StepResult r = co_await step();
    if (stopping_) break;
    if (r == StepResult::kProgress) continue;
    Duration delay = backoff_.next();
    log::warn("informer error; retrying after backoff",
              {{"informer", name_},
               {"state", std::string(to_string(before))},
               {"next", std::string(to_string(state_))},
               {"gone", is_gone(last_error_)},
               {"error", last_error_.message},
               {"backoff_ms",
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())}});
    timer_->expires_at(clock_.now() + delay);
    co_await timer_->wait();
  }
  stream_.reset();
}

void Informer::stop() {
  stopping_ = true;
  if (stream_) stream_->close();
  timer_->cancel();
}

}  // namespace meshop::runtime
