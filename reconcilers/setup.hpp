// What a reconciler's setup() gets: the process's client, metrics, Event recorder, manager and
// shared cache (kubebuilder's SetupWithManager). Each reconciler's header declares
//   void setup_<name>(const OperatorSetup& s, <Name>Config config);
// which builds its controller (runtime::ControllerBuilder), asks the cache for the watches it
// reads and enqueues from, and gives the controller to the manager. `meshop run` is flags plus
// one such call per reconciler.
//
// Reads and writes: a controller's reconciler reads through reader() and writes through writer().
// With `cached_reader` set (`meshop run`), reads are answered from the cache's stores when a
// watch covers them (runtime/cached_reader.hpp) and writes are tracked so that a pass does not
// read the store's older copy of what it just wrote; without, both go to `client`.
#pragma once

#include <memory>
#include <string>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/builder.hpp"
#include "operator/runtime/cache.hpp"
#include "operator/runtime/cached_reader.hpp"
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
  // Over `cache`, falling back to `client`; null: every read goes to `client`.
  std::shared_ptr<runtime::CachedReader> cached_reader = nullptr;

  std::shared_ptr<kube::Reader> reader() const {
    if (cached_reader) return cached_reader;
    return kube::client_reader(client);
  }
  // Writes and Events (`events`) through `client`, tracked by `cached_reader` when set.
  std::shared_ptr<kube::Writer> writer() const {
    auto w = kube::client_writer(client, events);
    return cached_reader ? cached_reader->tracking(std::move(w)) : w;
  }

  runtime::ControllerBuilder controller(std::string name) const {
    return runtime::ControllerBuilder(manager, cache, std::move(name));
  }
};

}  // namespace meshop::reconcilers
