// The configurations the webhook serves, one per revision, each an immutable RevisionConfig
// swapped whole.
//
// Readers (request threads) call get() once per request and keep the shared_ptr for the whole
// request, so a swap never changes a configuration under a request and the old one is freed
// by the last request that used it. Writers (config watchers) call publish() with a complete
// configuration only: a bad configuration is never published (the caller records the error
// with record_error(), and the last good one stays).
// Thread-safe: a shared_mutex guards the map; get() copies one shared_ptr under the read lock.
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "operator/webhook/engine.hpp"

namespace meshop::webhook {

// "" → "default": upstream treats both as the default revision.
std::string normalize_revision(std::string revision);

class RevisionStore {
 public:
  // nullptr when the revision has no good configuration (yet).
  std::shared_ptr<const RevisionConfig> get(const std::string& revision) const;
  // Publishes `config` for config.revision (normalized), setting its generation (unique in the
  // process, increasing: memoized answers are keyed by it); clears the revision's last error.
  void publish(RevisionConfig config);
  void remove(const std::string& revision);
  // The last rejected configuration's message ("" after a successful publish).
  void record_error(const std::string& revision, std::string message);
  std::string last_error(const std::string& revision) const;
  std::vector<std::string> revisions() const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<const RevisionConfig>, std::less<>> configs_;
  std::map<std::string, std::string, std::less<>> errors_;
};

}  // namespace meshop::webhook
