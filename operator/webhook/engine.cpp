#include "operator/webhook/engine.hpp"

namespace meshop::webhook {

Engine default_engine() {
  Engine e;
  e.build = [](const inject::SnapshotSources& sources) { return inject::build_snapshot(sources); };
  e.inject = [](const RevisionConfig& config, const inject::PodRequest& request) {
    if (!config.snapshot) {
      inject::InjectResult r;
      r.failure_type = "no_config";
      r.message = "revision " + config.revision + " has no injector snapshot";
      return r;
    }
    return inject::inject(*config.snapshot, request);
  };
  e.reason_name = [](inject::Reason r) { return inject::reason_name(r); };
  e.memoizable = [](const RevisionConfig& config) {
    return config.snapshot != nullptr && inject::snapshot_is_deterministic(*config.snapshot);
  };
  return e;
}

}  // namespace meshop::webhook
