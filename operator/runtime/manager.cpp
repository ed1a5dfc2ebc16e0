#include "operator/runtime/manager.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include "operator/log/log.hpp"
#include "operator/runtime/heap.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;

std::string default_identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::random_device rd;
  std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(r));
  return std::string(host) + "_" + suffix;
}

Manager::Manager(asio::io_context& ioc, Clock& clock, RuntimeMetrics& metrics,
                 ManagerOptions options)
    : ioc_(ioc), clock_(clock), metrics_(metrics), options_(std::move(options)) {}

Controller& Manager::adopt(std::unique_ptr<WorkQueue> queue,
                           std::unique_ptr<Controller> controller) {
  add_queue(*queue);
  add_controller(*controller);
  owned_queues_.push_back(std::move(queue));
  owned_controllers_.push_back(std::move(controller));
  return *owned_controllers_.back();
}

Manager::~Manager() {
  stop_health_thread();
}

bool Manager::synced() const {
  for (const Informer* i : informers_) {
    if (!i->has_synced()) return false;
  }
  return true;
}

void Manager::publish_readiness() {
  std::string reason;
  for (const Informer* i : informers_) {
    if (!i->has_synced()) reason += (reason.empty() ? "not synced: " : ", ") + i->name();
  }
  std::lock_guard lock(published_mu_);
  published_not_ready_ = std::move(reason);
}

std::string Manager::not_ready_reason() const {
  {
    std::lock_guard lock(published_mu_);
    if (!published_not_ready_.empty()) return published_not_ready_;
  }
  if (shutting_down_) return "shutting down";
  if (options_.not_ready) return options_.not_ready();
  return {};
}

void Manager::wake() {
  if (wake_) wake_->cancel();
}

void Manager::request_shutdown() {
  if (shutting_down_.exchange(true)) return;  // /readyz says "shutting down" from now on
  log::info("shutdown requested; draining in-flight work");
  if (options_.on_shutdown) options_.on_shutdown();
  asio::post(ioc_, [this] { begin_shutdown(); });
}

void Manager::begin_shutdown() {
  if (shutdown_requested_) return;
  shutdown_requested_ = true;
  if (elector_) elector_->stop();
  wake();
}

asio::awaitable<void> Manager::wait_until(std::function<bool()> done, Duration poll) {
  while (!done()) {
    wake_->expires_at(clock_.now() + poll);
    co_await wake_->wait();
  }
}

asio::awaitable<void> Manager::refresh() {
  while (!finished_) {
    publish_readiness();
    // client-go's queue refreshes these from its own goroutine; here the control loop does,
    // so that /metrics (on the health thread) never reads a queue's state.
    for (WorkQueue* q : queues_)
      q->update_unfinished_work_metrics();
    maybe_trim_heap();
    refresh_timer_->expires_at(clock_.now() + kRefreshPeriod);
    co_await refresh_timer_->wait();
  }
}

void Manager::maybe_trim_heap() {
  if (options_.heap_trim_period <= Duration::zero()) return;
  TimePoint now = clock_.now();
  if (last_heap_trim_ == TimePoint{}) last_heap_trim_ = now;  // the first period from start
  if (now - last_heap_trim_ < options_.heap_trim_period) return;
  last_heap_trim_ = now;
  HeapTrim trim = trim_heap(options_.heap_trim_min_free);
  if (!trim.trimmed) return;
  metrics_.heap_trims.with({}).Increment();
  if (trim.rss_before > trim.rss_after)
    metrics_.heap_released.with({}).Increment(
        static_cast<double>(trim.rss_before - trim.rss_after));
  log::debug("heap trimmed", {{"free_bytes", static_cast<std::int64_t>(trim.free_before)},
                              {"rss_before", static_cast<std::int64_t>(trim.rss_before)},
                              {"rss_after", static_cast<std::int64_t>(trim.rss_after)}});
}

void Manager::stop_health_thread() {
  if (!health_ioc_) return;
  if (health_) health_->stop();
  health_ioc_->stop();
  if (health_thread_.joinable()) health_thread_.join();
  // The thread is gone: its objects can be destroyed here (the signal set's destructor
  // restores the default dispositions).
  signals_.reset();
  health_.reset();
  health_ioc_.reset();
}

int Manager::run() {
  auto executor = ioc_.get_executor();
  wake_ = clock_.make_timer(executor);
  refresh_timer_ = clock_.make_timer(executor);
  health_ioc_ = std::make_unique<asio::io_context>(1);
  health_ = std::make_unique<HealthServer>(
      health_ioc_->get_executor(), HealthServer::Handlers{
                                       .not_ready_reason = [this] { return not_ready_reason(); },
                                       .metrics = [this] { return metrics_.registry.expose(); },
                                   });
  if (auto listening = health_->listen(options_.health_address); !listening) {
    log::error("cannot serve health and metrics", {{"error", listening.message()}});
    health_.reset();
    health_ioc_.reset();
    return 1;
  }
  health_port_ = health_->port();
  log::info("serving /healthz /readyz /metrics",
            {{"address", options_.health_address}, {"port", static_cast<int>(health_port_)}});

  if (options_.handle_signals) {
    signals_ = std::make_unique<asio::signal_set>(*health_ioc_, SIGINT, SIGTERM);
    // On the health thread: a busy control loop does not delay the readiness flip or the
    // on_shutdown work.
    signals_->async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      log::info("received signal", {{"signal", signo == SIGTERM ? "SIGTERM" : "SIGINT"}});
      signals_->async_wait([](const boost::system::error_code& ec2, int signo2) {
        if (ec2) return;
        log::error("second signal; exiting at once",
                   {{"signal", signo2 == SIGTERM ? "SIGTERM" : "SIGINT"}});
        std::fflush(nullptr);
        std::_Exit(1);
      });
      request_shutdown();
    });
  }
  if (options_.leader_election) {
    if (lease_lock_ == nullptr) {
      log::error("leader election is enabled but no lease lock was set");
      stop_health_thread();
      return 1;
    }
    elector_ = std::make_unique<LeaderElector>(*lease_lock_, clock_, executor,
                                               options_.leader_election_config, &metrics_);
  }

  asio::co_spawn(*health_ioc_, health_->run(), asio::detached);
  health_thread_ = std::thread([ioc = health_ioc_.get()] { ioc->run(); });
  asio::co_spawn(executor, refresh(), asio::detached);
  asio::co_spawn(executor, main(), [this](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        log::error("manager failed", {{"error", ex.what()}});
      }
      exit_code_ = 1;
    }
    finished_ = true;
    ioc_.stop();
  });
  ioc_.run();
  stop_health_thread();
  return exit_code_;
}

asio::awaitable<void> Manager::main() {
  auto executor = ioc_.get_executor();
  for (Informer* i : informers_) {
    ++running_informers_;
    asio::co_spawn(executor, i->run(), [this](std::exception_ptr) { --running_informers_; });
  }
  co_await wait_until(
      [this] {
        publish_readiness();  // readyz turns 200 with the last informer's sync, not 500 ms later
        return shutdown_requested_ || synced();
      },
      std::chrono::milliseconds(50));
  if (!shutdown_requested_)
    log::info("all informers synced", {{"informers", static_cast<int>(informers_.size())}});

  bool leading = !options_.leader_election;
  if (elector_ && !shutdown_requested_) {
    bool acquired = co_await elector_->acquire();
    leading = acquired;
    if (acquired) {
      asio::co_spawn(executor, elector_->renew(), [this](std::exception_ptr) {
        if (elector_->lost()) {
          lease_lost_ = true;
          wake();
        }
      });
    }
  }
  if (leading && !shutdown_requested_) {
    for (Controller* c : controllers_) {
      ++running_controllers_;
      asio::co_spawn(executor, c->run(), [this](std::exception_ptr) {
        --running_controllers_;
        wake();
      });
    }
  }
  co_await wait_until([this] { return shutdown_requested_ || lease_lost_; },
                      std::chrono::seconds(1));

  if (lease_lost_ && !shutdown_requested_) {
    log::error("leader lease lost; stopping reconcilers and exiting");
    for (Controller* c : controllers_)
      c->stop();
    exit_code_ = 1;
    co_return;  // the completion handler stops the io_context: nothing else may run
  }

  for (Controller* c : controllers_)
    c->stop();
  TimePoint give_up = clock_.now() + options_.graceful_shutdown;
  co_await wait_until(
      [this, give_up] { return running_controllers_ == 0 || clock_.now() >= give_up; },
      std::chrono::milliseconds(20));
  if (running_controllers_ > 0) {
    log::warn("graceful shutdown period over; abandoning in-flight reconciles",
              {{"controllers", running_controllers_}});
  }
  if (elector_ && elector_->is_leader() && !lease_lost_) co_await elector_->release();
  if (options_.drained)
    co_await wait_until([this] { return options_.drained(); }, std::chrono::milliseconds(20));
  for (Informer* i : informers_)
    i->stop();
  exit_code_ = lease_lost_ ? 1 : 0;
  log::info("shutdown complete", {{"exit_code", exit_code_}});
}

}  // namespace meshop::runtime
