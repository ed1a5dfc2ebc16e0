// What the webhook needs from the injection engine, as two functions, so the HTTP layer and
// the configuration plumbing are tested without the engine (and with a fake that fails or
// blocks on purpose).
//
// default_engine() is meshop::inject's build_snapshot() and inject(). Both functions must be
// safe to call from several threads at once (the engine's are: pure, on immutable snapshots).
// Its memoizable() is Snapshot::deterministic (no template calls a clock, random or DNS
// function).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/result.hpp"
#include "operator/inject/injector.hpp"

namespace meshop::webhook {

// One revision's configuration as the webhook serves it: immutable once published.
struct RevisionConfig {
  std::string revision;  // "default" for the default revision
  // The engine's snapshot. A fake engine may leave it null; the default engine never does.
  std::shared_ptr<const inject::Snapshot> snapshot;
  std::string source;            // where it came from, for logs: "dir:/etc/inject", "configmap:..."
  std::uint64_t generation = 0;  // increases with every swap in a store
};

struct Engine {
  std::function<api::Result<std::shared_ptr<const inject::Snapshot>>(
      const inject::SnapshotSources&)>
      build;
  std::function<inject::InjectResult(const RevisionConfig&, const inject::PodRequest&)> inject;
  // Stable label values for sidecar_injection_skip_total{reason}.
  std::function<std::string_view(inject::Reason)> reason_name;
  // True when inject() on this configuration is a pure function of the request (the same
  // pod, namespace and path give the same answer), so its answers may be memoized
  // (injection_cache.hpp). Null or false: never memoized.
  std::function<bool(const RevisionConfig&)> memoizable;
};

Engine default_engine();

}  // namespace meshop::webhook
