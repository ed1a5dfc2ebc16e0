// Injector configuration from the cluster: the ConfigMaps of the control-plane namespace, as
// istiod reads them, one configuration per revision found there:
//
//   istio-sidecar-injector            keys config, values   → revision "default"
//   istio-sidecar-injector-<rev>      keys config, values   → revision <rev>
//   istio / istio-<rev>               key mesh              → that revision's mesh config
//
// ConfigMapSource subscribes to a runtime::Store of ConfigMaps (kept by an Informer over the
// namespace) and, whenever one of these changes, rebuilds the affected revision (coalesced:
// several events before the rebuild runs give one build). A configuration whose texts did not
// change is not rebuilt. A revision that fails to build keeps its last good configuration; the
// error is logged, counted (meshop_injector_config_errors_total{source="configmap"}), kept in
// the RevisionStore and handed to `report` with the ConfigMap it most likely comes from (the
// mesh ConfigMap for "mesh..." errors, else the injector ConfigMap), which the command turns
// into a Warning Event on that ConfigMap. A deleted injector ConfigMap keeps the last good
// configuration too (istiod does the same: it keeps serving what it had).
// Thread affinity: the control-loop executor (the store's); publishes to the thread-safe
// RevisionStore that the webhook threads read.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "operator/runtime/store.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"

namespace meshop::webhook {

enum class ConfigMapRole { kInjector, kMesh };

// The role and revision of a ConfigMap by its name; nullopt for unrelated ones.
std::optional<std::pair<ConfigMapRole, std::string>> classify_configmap(std::string_view name);
std::string injector_configmap_name(const std::string& revision);
std::string mesh_configmap_name(const std::string& revision);

// What `revision`'s engine is built from: `defaults` with the injector ConfigMap's `config` and
// `values` and the mesh ConfigMap's `mesh` (`mesh` null: none). The one place where ConfigMaps
// become engine input: ConfigMapSource (the webhook) and the restart planner's one-shot CLI
// (reconcilers/restarts.hpp build_engines) both build through it.
inject::SnapshotSources configmap_sources(const std::string& revision,
                                          const rapidjson::Value& injector,
                                          const rapidjson::Value* mesh,
                                          inject::SnapshotSources defaults);

class ConfigMapSource {
 public:
  using Reporter =
      std::function<void(const rapidjson::Value& configmap, const std::string& message)>;

  ConfigMapSource(boost::asio::any_io_executor executor, runtime::Store& configmaps,
                  RevisionStore& revisions, const Engine& engine, WebhookMetrics* metrics,
                  Reporter report, inject::SnapshotSources defaults = {});

  // Subscribes to the store (existing objects are replayed as adds).
  void start();
  // Builds `revision` from the store now (the handlers post this).
  void rebuild(const std::string& revision);

 private:
  void schedule(const std::string& revision);

  boost::asio::any_io_executor executor_;
  runtime::Store& configmaps_;
  RevisionStore& revisions_;
  const Engine& engine_;
  WebhookMetrics* metrics_;
  Reporter report_;
  inject::SnapshotSources defaults_;  // native sidecar mode, compliance policy, ...
  std::set<std::string> pending_;
  std::map<std::string, std::string> last_texts_;  // revision → config+values+mesh last built
};

}  // namespace meshop::webhook
