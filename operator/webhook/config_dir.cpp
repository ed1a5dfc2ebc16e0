#include "operator/webhook/config_dir.hpp"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "operator/log/log.hpp"

namespace meshop::webhook {
namespace {

enum class Read { kOk, kMissing, kError };

Read read_file(const std::string& path, std::string& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Read::kMissing;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Read::kError;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return in.bad() ? Read::kError : Read::kOk;
}

std::string file_signature(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

api::Result<inject::SnapshotSources> read_config_dir(const std::string& dir,
                                                     const std::string& revision) {
  inject::SnapshotSources sources;
  sources.revision = revision;
  struct File {
    const char* name;
    std::string* text;
    bool required;
  };
  for (File f : {File{"config", &sources.config, true}, File{"values", &sources.values, false},
                 File{"mesh", &sources.mesh, false}}) {
    std::string path = dir + "/" + f.name;
    switch (read_file(path, *f.text)) {
      case Read::kOk:
        break;
      case Read::kMissing:
        if (f.required) return api::Error{path + ": no such file"};
        break;
      case Read::kError:
        return api::Error{path + ": cannot be read"};
    }
  }
  return sources;
}

ConfigDirSource::ConfigDirSource(std::string dir, std::string revision, RevisionStore& store,
                                 const Engine& engine, WebhookMetrics* metrics,
                                 std::chrono::milliseconds debounce)
    : dir_(std::move(dir)),
      revision_(normalize_revision(std::move(revision))),
      store_(store),
      engine_(engine),
      metrics_(metrics),
      debounce_(debounce) {}

std::string ConfigDirSource::signature() const {
  return file_signature(dir_ + "/config") + "|" + file_signature(dir_ + "/values") + "|" +
         file_signature(dir_ + "/mesh");
}

api::Status ConfigDirSource::load() {
  loaded_signature_ = signature();
  pending_signature_.clear();
  std::string error;
  auto sources = read_config_dir(dir_, revision_);
  if (!sources.ok()) {
    error = sources.message();
  } else {
    auto snapshot = engine_.build(*sources);
    if (!snapshot.ok()) {
      error = snapshot.message();
    } else {
      RevisionConfig config;
      config.revision = revision_;
      config.snapshot = std::move(*snapshot);
      config.source = "dir:" + dir_;
      store_.publish(std::move(config));
      if (metrics_) metrics_->config_reloads.with({revision_, "dir"}).Increment();
      log::info("injector configuration loaded",
                {{"revision", revision_}, {"source", "dir:" + dir_}});
      return api::ok_status();
    }
  }
  store_.record_error(revision_, error);
  if (metrics_) metrics_->config_errors.with({revision_, "dir"}).Increment();
  bool have_good = store_.get(revision_) != nullptr;
  log::error(have_good ? "injector configuration rejected; keeping the last good one"
                       : "injector configuration rejected; no configuration to serve yet",
             {{"revision", revision_}, {"source", "dir:" + dir_}, {"error", error}});
  return api::Error{error};
}

bool ConfigDirSource::poll(std::chrono::steady_clock::time_point now) {
  std::string sig = signature();
  if (sig == loaded_signature_) {
    pending_signature_.clear();
    return false;
  }
  if (sig != pending_signature_) {
    pending_signature_ = sig;
    pending_since_ = now;
    return false;
  }
  if (now - pending_since_ < debounce_) return false;
  (void)load();
  return true;
}

}  // namespace meshop::webhook
