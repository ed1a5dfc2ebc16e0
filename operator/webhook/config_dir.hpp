// Injector configuration from a directory, as istiod reads /var/lib/istio/inject:
//
//   DIR/config   the `config` key of ConfigMap istio-sidecar-injector[-<rev>]   (required)
//   DIR/values   its `values` key                                                (optional)
//   DIR/mesh     the `mesh` key of ConfigMap istio[-<rev>]                        (optional)
//
// (`kubectl get cm istio-sidecar-injector -o jsonpath='{.data.config}' > DIR/config`, ...).
// A mounted ConfigMap volume works as is: files are read through its symlinks.
//
// ConfigDirSource loads the directory into a RevisionStore and, polled, reloads it when any
// file changes (inode, size or mtime), once the files have stayed unchanged for `debounce`
// (upstream's file watcher debounces 100 ms), so a writer that updates the three files one by
// one is read once. A directory that fails to read or to build keeps the last good
// configuration: the error is logged, counted (meshop_injector_config_errors_total) and kept in
// the store (RevisionStore::last_error, shown by /ready when nothing good was ever loaded);
// the same files are not retried until they change.
// Thread affinity: load() and poll() from one thread at a time (the poller's).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "api/result.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"

namespace meshop::webhook {

api::Result<inject::SnapshotSources> read_config_dir(const std::string& dir,
                                                     const std::string& revision);

class ConfigDirSource {
 public:
  ConfigDirSource(std::string dir, std::string revision, RevisionStore& store, const Engine& engine,
                  WebhookMetrics* metrics,
                  std::chrono::milliseconds debounce = std::chrono::milliseconds(100));

  // Reads and publishes now. An error (and the store untouched) when the directory is
  // unreadable or the engine rejects it.
  api::Status load();
  // Reloads when the files changed and have been stable for the debounce time. Returns true when
  // a load was attempted (successful or not).
  bool poll(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  const std::string& dir() const { return dir_; }

 private:
  std::string signature() const;

  std::string dir_;
  std::string revision_;
  RevisionStore& store_;
  const Engine& engine_;
  WebhookMetrics* metrics_;
  std::chrono::milliseconds debounce_;
  std::string loaded_signature_;
  std::string pending_signature_;
  std::chrono::steady_clock::time_point pending_since_{};
};

}  // namespace meshop::webhook
