// A minimal meshop runtime process for the leader-election end-to-end test: a Manager with
// leader election on a Lease, a health server, and one no-op controller. It logs (JSON lines
// on stderr) "acquired the leader lease" when it leads, exits 0 after SIGTERM (releasing the
// lease) and 1 when it loses the lease.
//
//   meshop_leader_candidate NAMESPACE LEASE IDENTITY
#include <cstdio>
#include <string>

#include <boost/asio/io_context.hpp>

#include "operator/kube/client.hpp"
#include "operator/log/log.hpp"
#include "operator/runtime/kube_source.hpp"
#include "operator/runtime/manager.hpp"

using namespace meshop;
using namespace meshop::runtime;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NAMESPACE LEASE IDENTITY\n", argv[0]);
    return 2;
  }
  boost::asio::io_context ioc;
  auto config = kube::load_default_config();
  if (!config.ok()) {
    log::error("kubeconfig", {{"error", config.error().message}});
    return 1;
  }
  auto client = kube::Client::create(ioc.get_executor(), *config);
  if (!client.ok()) {
    log::error("client", {{"error", client.error().message}});
    return 1;
  }
  SteadyClock clock;
  metrics::Registry registry;
  RuntimeMetrics metrics(registry);
  KubeLeaseLock lock(*client, argv[1], argv[2]);
  WorkQueue queue("noop", ioc.get_executor(), clock, nullptr, &metrics);
  Controller controller(
      "noop", queue,
      [](const std::string&) -> boost::asio::awaitable<Action> { co_return Action::done(); },
      {.workers = 1}, clock, &metrics);
  Manager manager(ioc, clock, metrics,
                  {.health_address = "127.0.0.1:0",
                   .leader_election = true,
                   .leader_election_config = {.identity = argv[3]}});
  manager.set_lease_lock(lock);
  manager.add_queue(queue);
  manager.add_controller(controller);
  return manager.run();
}
