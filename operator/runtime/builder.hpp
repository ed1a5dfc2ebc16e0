// kubebuilder's builder: one controller, its work queue, and the watches that feed the queue,
// declared in one place (controller-runtime's builder.ControllerManagedBy, kube-rs's
// Controller::owns/watches).
//
//   ControllerBuilder(manager, cache, "install")
//       .workers(2)
//       .for_kind(istio_operators_spec)                 // the object's own key
//       .watches(deployments_spec, owner_keys)          // keys a mapper names
//       .complete([r](const std::string& key) { return r->reconcile(key); });
//
//   ControllerBuilder(manager, cache, "webhooks")
//       .singleton("all")                               // one key for the whole cluster,
//       .watches(istio_operators_spec)                  // which every change enqueues
//       .watches(webhooks_spec)
//       .complete(...);
//
// complete() creates the queue and the controller, adds the handlers to the cache's stores
// and gives both to the manager, which owns them (and starts them on the leader). Watches are
// created in the cache as the builder names them; the same spec in two builders is one
// informer. Handlers only add keys: reconcilers are level-triggered.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operator/runtime/cache.hpp"
#include "operator/runtime/controller.hpp"
#include "operator/runtime/enqueue.hpp"
#include "operator/runtime/manager.hpp"

namespace meshop::runtime {

class ControllerBuilder {
 public:
  ControllerBuilder(Manager& manager, Cache& cache, std::string name);

  ControllerBuilder& workers(int n);
  // A controller that looks at everything at once: `key` is queued at start, and watches()
  // without a mapper enqueue it.
  ControllerBuilder& singleton(std::string key);
  // A key queued at start.
  ControllerBuilder& initial(std::string key);
  // Each change of the spec's objects enqueues the object's own key.
  ControllerBuilder& for_kind(const WatchSpec& spec);
  // Each change enqueues the keys `map` gives (old and new object on update).
  ControllerBuilder& watches(const WatchSpec& spec, KeyMapper map);
  // Each change enqueues the singleton key (singleton() first).
  ControllerBuilder& watches(const WatchSpec& spec);
  // Handlers of the caller's making, for rules a mapper cannot say (e.g. "only when the spec
  // changed"). `make` gets the queue and the watched store.
  using HandlerFactory = std::function<StoreHandlers(WorkQueue& queue, const Store& store)>;
  ControllerBuilder& handlers(const WatchSpec& spec, HandlerFactory make);

  Controller& complete(Reconciler reconciler);

 private:
  Manager& manager_;
  Cache& cache_;
  std::string name_;
  Controller::Options options_{};
  std::optional<std::string> singleton_;
  std::vector<std::string> initial_;
  std::vector<std::pair<Store*, HandlerFactory>> handlers_;
  bool completed_ = false;
};

}  // namespace meshop::runtime
