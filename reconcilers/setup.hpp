// What a reconciler's setup() gets: the process's client, metrics, Event recorder, manager and
// shared cache (kubebuilder's SetupWithManager). Each reconciler's header declares
//   void setup_<name>(const OperatorSetup& s, <Name>Config config);
// which builds its controller (runtime::ControllerBuilder), asks the cache for the watches it
// reads and enqueues from, and gives the controller to the manager. `meshop run` is flags plus
// one such call per reconciler.
#pragma once

#include <memory>
#include <string>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/builder.hpp"
#include "operator/runtime/cache.hpp"
#include "operator/runtime/manager.hpp"

namespace meshop::reconcilers {

// The key of the controllers that look at the whole cluster in one pass.
inline constexpr const char* kAllKey = "all";

struct OperatorSetup {
  std::shared_ptr<kube::Client> client;
  metrics::Registry* registry = nullptr;
  std::shared_ptr<kube::EventRecorder> events;
  runtime::Manager& manager;
  runtime::Cache& cache;
  std::string ns;  // the control plane's (and meshop's) namespace

  runtime::ControllerBuilder controller(std::string name) const {
    return runtime::ControllerBuilder(manager, cache, std::move(name));
  }
};

}  // namespace meshop::reconcilers
