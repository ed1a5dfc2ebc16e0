// An Informer keeps a Store in step with the server through a ListWatch source, as an
// explicit state machine (kube-rs watcher, with client-go reflector's rules):
//
//   kEmpty ──list ok──► kListed ──watch opened──► kWatching ──event──► kWatching
//     ▲                   ▲  ▲                       │
//     │                   │  └──── clean end ────────┤   (server timeout: re-watch from rv)
//     │                   └────── other error ───────┤   (backoff, then re-watch from rv)
//     └──────────── 410 Gone / Expired ──────────────┘   (relist)
//
// - The first list asks for rv "0" (the watch cache, as client-go; see Options); a relist after a
// watch 410
//   asks for the last rv seen; after a list itself got 410 it asks for "" (quorum read).
// - A list replaces the whole store (Store::replace), so deletes missed while disconnected
//   disappear. ADDED/MODIFIED apply, DELETED removes; every event's resourceVersion becomes
//   the rv to resume from. BOOKMARK only advances the rv.
// - A watch that ends cleanly within a second without any event counts as an error (backoff),
//   as client-go's "very short watch" does.
// - Errors (list or watch) back off: 0.8 s doubling to 30 s with jitter, reset after 120 s
//   without error (backoff.hpp). A clean end re-watches at once.
// - Watches ask for a server timeout drawn from [300, 600) s to spread reconnects.
//
//   Informer inf("configmaps", executor, clock, source, store);
//   co_spawn(executor, inf.run(), detached);   ...   inf.stop();
//
// step() performs exactly one transition; tests drive it directly. run() loops step() with
// backoff until stop(); stop() closes an open watch and cancels a backoff wait at once, but a
// list or watch request already sent is awaited (the client's request timeout bounds it). Thread
// affinity: the control-loop thread. The source, the store and the clock must outlive the informer.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "operator/runtime/backoff.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/list_watch.hpp"
#include "operator/runtime/store.hpp"

namespace meshop::runtime {

class Informer {
 public:
  enum class State { kEmpty, kListed, kWatching };
  enum class StepResult { kProgress, kError };

  struct Options {
    BackoffConfig backoff{};
    // Returns values in [0, 1): watch timeouts and backoff jitter. Default: seeded PRNG.
    std::function<double()> random01;
    // The first list's resourceVersion. "0" (client-go's) is served from the apiserver's watch
    // cache in ONE response whatever the page size; "" is a quorum read that the server pages,
    // so the peak memory of a huge initial list is one page (at some etcd cost).
    std::string initial_list_resource_version = "0";
  };

  Informer(std::string name, boost::asio::any_io_executor executor, Clock& clock, ListWatch& source,
           Store& store, Options options);
  Informer(std::string name, boost::asio::any_io_executor executor, Clock& clock, ListWatch& source,
           Store& store)
      : Informer(std::move(name), std::move(executor), clock, source, store, Options{}) {}
  ~Informer();

  boost::asio::awaitable<StepResult> step();
  boost::asio::awaitable<void> run();
  void stop();

  State state() const { return state_; }
  const std::string& resource_version() const { return rv_; }
  bool has_synced() const { return store_.has_synced(); }
  const std::string& name() const { return name_; }
  const api::Error& last_error() const { return last_error_; }
  // Counters for tests and logs.
  int lists() const { return lists_; }
  int watches() const { return watches_; }
  int gone_errors() const { return gone_errors_; }

 private:
  std::string list_resource_version() const;
  boost::asio::awaitable<StepResult> do_list();
  boost::asio::awaitable<StepResult> do_watch();
  boost::asio::awaitable<StepResult> do_next();
  StepResult fail(api::Error error);

  std::string name_;
  boost::asio::any_io_executor executor_;
  Clock& clock_;
  ListWatch& source_;
  Store& store_;
  std::function<double()> random01_;
  std::string initial_rv_;
  Backoff backoff_;
  std::unique_ptr<Timer> timer_;

  State state_ = State::kEmpty;
  std::string rv_;
  bool listed_once_ = false;
  bool rv_unavailable_ = false;  // the last list got 410: next list is a quorum read
  std::unique_ptr<WatchStream> stream_;
  TimePoint watch_opened_at_{};
  int watch_events_ = 0;
  api::Error last_error_;
  bool stopping_ = false;
  int lists_ = 0;
  int watches_ = 0;
  int gone_errors_ = 0;
};

std::string_view to_string(Informer::State state);

}  // namespace meshop::runtime
