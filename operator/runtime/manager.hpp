// The Manager runs a process's runtime: informers and the health server on every replica,
// controllers only on the elected leader, and the shutdown sequence (controller-runtime's
// manager, reduced to what meshop needs).
//
//   Manager mgr(ioc, clock, registry, {.health_address = ":8081", .leader_election = true, ...});
//   mgr.add_informer(configmaps);  mgr.add_queue(queue);  mgr.add_controller(controller);
//   mgr.set_lease_lock(lease_lock);
//   (or ControllerBuilder(mgr, cache, name)...complete(...), which adds and gives ownership)
//   return mgr.run();             // blocks on ioc; the process's exit code
//
// Sequence: serve /healthz /readyz /metrics -> start informers -> wait until all synced (readyz
// turns 200) -> acquire the lease (when enabled) -> start controllers -> wait.
// - SIGTERM / SIGINT (or request_shutdown()): /readyz turns 503 at once, on_shutdown runs; then
//   stop taking new keys, wait up to graceful_shutdown for in-flight reconciles, release the
//   lease, stop informers, return 0. A second signal exits the process at once with 1
//   (controller-runtime's SetupSignalHandler does the same).
// - Lease lost: stop everything at once and return 1: another replica may already lead, so
//   nothing more may be written (the process must exit; its Deployment restarts it).
// Threads: the control loop is ioc, run on the thread that calls run(). /healthz, /readyz,
// /metrics and the signals are served by a thread of the manager's own, so that probes and
// SIGTERM are answered while the control loop is busy: readiness there is a snapshot the
// control loop publishes (informers synced; refreshed with the work queues' unfinished-work
// gauges every kRefreshPeriod), plus the shutdown flag and ManagerOptions::not_ready, read
// when asked. Everything registered must outlive run().
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "operator/runtime/controller.hpp"
#include "operator/runtime/health_server.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/leader_election.hpp"

namespace meshop::runtime {

struct ManagerOptions {
  std::string health_address = ":8081";
  bool leader_election = false;
  LeaderElectionConfig leader_election_config{};
  Duration graceful_shutdown = std::chrono::seconds(30);
  bool handle_signals = true;
  // More readiness: a non-empty reason makes /readyz 503 with it (e.g. the webhook's
  // WebhookServer::stuck_reason()). Called on the health server's thread, concurrently with
  // the control loop: it must be thread-safe and must not wait for the control loop.
  std::function<std::string()> not_ready = nullptr;
  // Called once when shutdown begins (the first signal, or request_shutdown()), on the thread
  // that began it, after /readyz turned 503 and before the control loop hears of it: work that
  // must not wait for a busy control loop, e.g. WebhookServer::shutdown(). Thread-safe, quick.
  std::function<void()> on_shutdown = nullptr;
  // After a shutdown's controllers are done, run() keeps serving /readyz (503) until this is
  // true (polled, thread-safe), e.g. WebhookServer::drained(): a load balancer sees 503, not
  // a refused connection, while the webhook drains.
  std::function<bool()> drained = nullptr;
  // Every period, when at least heap_trim_min_free bytes are free in the allocator's arenas,
  // they are given back to the kernel (heap.hpp), so RSS follows what is live rather than the
  // high-water mark of a relist, a render or a burst of events. Zero period: never.
  Duration heap_trim_period = std::chrono::seconds(30);
  std::size_t heap_trim_min_free = std::size_t{4} << 20;
};

// hostname + "_" + 16 random hex digits, like controller-runtime's identity.
std::string default_identity();

class Manager {
 public:
  Manager(boost::asio::io_context& ioc, Clock& clock, RuntimeMetrics& metrics,
          ManagerOptions options);
  ~Manager();

  void add_informer(Informer& informer) { informers_.push_back(&informer); }
  void add_queue(WorkQueue& queue) { queues_.push_back(&queue); }
  void add_controller(Controller& controller) { controllers_.push_back(&controller); }
  void set_lease_lock(LeaseLock& lock) { lease_lock_ = &lock; }
  // A queue and its controller that the manager owns from now on (ControllerBuilder).
  Controller& adopt(std::unique_ptr<WorkQueue> queue, std::unique_ptr<Controller> controller);

  boost::asio::any_io_executor executor() { return ioc_.get_executor(); }
  Clock& clock() { return clock_; }
  RuntimeMetrics& metrics() { return metrics_; }

  int run();
  // Begins the shutdown sequence (as SIGTERM does). Thread-safe; later calls do nothing.
  void request_shutdown();

  // How often the control loop republishes readiness and the unfinished-work gauges
  // (client-go's workqueue updates those every 500 ms too).
  static constexpr Duration kRefreshPeriod = std::chrono::milliseconds(500);

  // On the control loop.
  bool synced() const;
  bool is_leader() const { return elector_ && elector_->is_leader(); }
  // Any thread; 0 until run() listens.
  unsigned short health_port() const { return health_port_; }
  // Any thread: what /readyz answers ("" = 200).
  std::string not_ready_reason() const;

 private:
  boost::asio::awaitable<void> main();
  boost::asio::awaitable<void> refresh();
  boost::asio::awaitable<void> wait_until(std::function<bool()> done, Duration poll);
  void begin_shutdown();     // on the control loop
  void publish_readiness();  // on the control loop
  void wake();
  void maybe_trim_heap();  // on the control loop, from refresh()
  void stop_health_thread();

  boost::asio::io_context& ioc_;
  Clock& clock_;
  RuntimeMetrics& metrics_;
  ManagerOptions options_;
  std::vector<Informer*> informers_;
  std::vector<WorkQueue*> queues_;
  std::vector<Controller*> controllers_;
  // Adopted: queues first, so that the controllers (which use them) are destroyed before.
  std::vector<std::unique_ptr<WorkQueue>> owned_queues_;
  std::vector<std::unique_ptr<Controller>> owned_controllers_;
  LeaseLock* lease_lock_ = nullptr;
  std::unique_ptr<LeaderElector> elector_;
  // The health server's own io_context and thread (see above).
  std::unique_ptr<boost::asio::io_context> health_ioc_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<boost::asio::signal_set> signals_;  // on health_ioc_
  std::thread health_thread_;
  std::atomic<unsigned short> health_port_{0};
  std::atomic<bool> shutting_down_{false};  // request_shutdown() was called (any thread)
  mutable std::mutex published_mu_;
  std::string published_not_ready_ = "starting";  // the control loop's part of readiness
  std::unique_ptr<Timer> wake_;
  std::unique_ptr<Timer> refresh_timer_;
  bool shutdown_requested_ = false;  // the control loop's view of shutting_down_
  bool finished_ = false;
  TimePoint last_heap_trim_{};
  bool lease_lost_ = false;
  int running_controllers_ = 0;
  int running_informers_ = 0;
  int exit_code_ = 0;
};

}  // namespace meshop::runtime
