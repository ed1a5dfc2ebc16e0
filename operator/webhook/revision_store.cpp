#include "operator/webhook/revision_store.hpp"

#include <atomic>
#include <mutex>

namespace meshop::webhook {

std::string normalize_revision(std::string revision) {
  return revision.empty() ? "default" : revision;
}

std::shared_ptr<const RevisionConfig> RevisionStore::get(const std::string& revision) const {
  std::shared_lock lock(mu_);
  auto it = configs_.find(revision.empty() ? std::string_view("default") : revision);
  return it == configs_.end() ? nullptr : it->second;
}

void RevisionStore::publish(RevisionConfig config) {
  // One counter for all stores: a generation names one published configuration in the process.
  static std::atomic<std::uint64_t> generations{0};
  config.revision = normalize_revision(std::move(config.revision));
  std::unique_lock lock(mu_);
  config.generation = ++generations;
  errors_.erase(config.revision);
  std::string key = config.revision;
  configs_[key] = std::make_shared<const RevisionConfig>(std::move(config));
}

void RevisionStore::remove(const std::string& revision) {
  std::unique_lock lock(mu_);
  configs_.erase(normalize_revision(revision));
}

void RevisionStore::record_error(const std::string& revision, std::string message) {
  std::unique_lock lock(mu_);
  errors_[normalize_revision(revision)] = std::move(message);
}

std::string RevisionStore::last_error(const std::string& revision) const {
  std::shared_lock lock(mu_);
  auto it = errors_.find(normalize_revision(revision));
  return it == errors_.end() ? std::string() : it->second;
}

std::vector<std::string> RevisionStore::revisions() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, config] : configs_)
    out.push_back(name);
  return out;
}

}  // namespace meshop::webhook
