// A snapshot's memo of parsed template output: texts a template rendered, each kept with its
// parse (api::ReusableYaml), so that the parse of a new rendering comes from an earlier one.
//
// Parsing what a template rendered was the largest part of an injection's cost, and the
// renderings of one template in one namespace are nearly the same text: the same text for the
// pods of one workload, and for the pods of a new workload the same lines but for a few
// values (its name, its labels, its ports). find() answers the parse of a text from a kept
// entry when one gives it: the same text (its document, shared), or a text of the same lines
// but for one-line scalar values (a fresh document with those values read again). Both are
// exactly what yaml_to_json gives for the text (api::ReusableYaml::reread); a text no entry
// gives is parsed by the caller, who keeps it with insert().
//
// Entries are keyed by the request's namespace, the template's name and the text's number of
// lines, at most kTextsPerKey texts per key (the newest first); nothing is shared between
// namespaces, and entries live in their Snapshot (dropped with it, so never shared between
// revisions or configurations). The memo is bounded in entries and in bytes: when either bound
// would be passed the oldest entries go first. Only successful parses are kept (a failure is
// parsed again, so its message is always a fresh one).
//
// Thread-safe: any number of requests may look up and insert at once; the lock is held only to
// copy the candidates out, never while a text is compared or read.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"

namespace meshop::inject {

class RenderCache {
 public:
  // One per revision snapshot. An entry is ≈ 30 KiB (a parsed rendering of the sidecar
  // template): 2 MiB keeps ≈ 70 namespaces' renderings, the workloads of a wave.
  static constexpr std::size_t kDefaultMaxEntries = 128;
  static constexpr std::size_t kDefaultMaxBytes = 2u << 20;
  // Texts of one key tried before giving up: workloads of one namespace whose renderings have
  // the same number of lines but differ in their structure each keep theirs.
  static constexpr std::size_t kTextsPerKey = 4;

  explicit RenderCache(std::size_t max_entries = kDefaultMaxEntries,
                       std::size_t max_bytes = kDefaultMaxBytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}
  RenderCache(const RenderCache&) = delete;
  RenderCache& operator=(const RenderCache&) = delete;

  // The parse of `text`, rendered by template `name` for namespace `ns`, when a kept entry
  // gives it (see above); null otherwise. With a parse, `*plain` (when given) says whether
  // the entry was inserted as plain: a re-read changes one-line scalar values only, so it
  // has the keys of the entry's document.
  std::shared_ptr<const api::Value> find(std::string_view ns, std::string_view name,
                                         std::string_view text, bool* plain = nullptr) const;

  // Keeps `parsed`, the parse of a text template `name` rendered for `ns`; no-op when
  // max_entries is 0 or the entry alone is larger than max_bytes. `plain` is the caller's
  // fact about the document's keys (the injection engine: no strategic merge directive at
  // any depth), handed back by find().
  void insert(std::string_view ns, std::string_view name,
              std::shared_ptr<const api::ReusableYaml> parsed, bool plain = false);

  struct Stats {
    std::size_t entries = 0, bytes = 0;
    std::size_t hits = 0;     // the same text
    std::size_t rereads = 0;  // a text of the same lines but for some values
    std::size_t misses = 0;
  };
  Stats stats() const;

 private:
  static std::string key_of(std::string_view ns, std::string_view name, std::size_t lines);
  struct Entry {
    std::shared_ptr<const api::ReusableYaml> yaml;
    bool plain = false;
  };
  std::size_t max_entries_, max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<Entry>> entries_;  // newest first
  std::deque<std::pair<std::string, Entry>> order_;              // insertion order, oldest first
  std::size_t count_ = 0, bytes_ = 0;
  mutable std::size_t hits_ = 0, rereads_ = 0, misses_ = 0;
};

}  // namespace meshop::inject
