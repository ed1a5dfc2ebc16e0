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
// - SIGTERM / SIGINT (or request_shutdown()): stop taking new keys, wait up to
//   graceful_shutdown for in-flight reconciles, release the lease, stop informers, return 0.
// - Lease lost: stop everything at once and return 1: another replica may already lead, so
//   nothing more may be written (the process must exit; its Deployment restarts it).
// Thread affinity: run() runs the io_context on the calling thread; everything registered
// must outlive run().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

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
  // WebhookServer::stuck_reason()). Called on the control loop's thread.
  std::function<std::string()> not_ready = nullptr;
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
  void request_shutdown();

  bool synced() const;
  bool is_leader() const { return elector_ && elector_->is_leader(); }
  unsigned short health_port() const { return health_ ? health_->port() : 0; }

 private:
  boost::asio::awaitable<void> main();
  boost::asio::awaitable<void> wait_until(std::function<bool()> done, Duration poll);
  std::string not_ready_reason() const;
  void wake();

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
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<Timer> wake_;
  bool shutdown_requested_ = false;
  bool lease_lost_ = false;
  int running_controllers_ = 0;
  int running_informers_ = 0;
  int exit_code_ = 0;
};

}  // namespace meshop::runtime
