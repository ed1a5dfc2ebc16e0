// A snapshot's memo of parsed template output: the rendered YAML text of a template → the
// JSON document yaml_to_json gives for it.
//
// Parsing what a template rendered is most of an injection's cost (libyaml on ~6 KiB per pod),
// and pods of one workload render the same text. yaml_to_json is a pure function of the text,
// so a hit is exactly what a parse would give. Entries are keyed by the request's namespace and
// the text (nothing is shared between namespaces), live in their Snapshot (dropped with it, so
// never shared between revisions or configurations), and are bounded in count and in bytes:
// when either bound would be passed the oldest entries go first. Only successful parses are
// kept (a failure is re-parsed, so its message is always a fresh one).
//
// Thread-safe: any number of requests may look up and insert at once.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/json.hpp"

namespace meshop::inject {

class RenderCache {
 public:
  static constexpr std::size_t kDefaultMaxEntries = 512;
  static constexpr std::size_t kDefaultMaxBytes = 8u << 20;

  explicit RenderCache(std::size_t max_entries = kDefaultMaxEntries,
                       std::size_t max_bytes = kDefaultMaxBytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}
  RenderCache(const RenderCache&) = delete;
  RenderCache& operator=(const RenderCache&) = delete;

  // The parse of `text` rendered for namespace `ns`, or null.
  std::shared_ptr<const api::Value> find(std::string_view ns, std::string_view text) const;

  // Keeps a copy of `doc` as the parse of `text` for `ns`, in a pool sized for it (a parsed
  // document's own pool is mostly slack); no-op when max_entries is 0 or the entry alone is
  // larger than max_bytes.
  void insert(std::string_view ns, std::string_view text, const api::Value& doc);

  struct Stats {
    std::size_t entries = 0, bytes = 0, hits = 0, misses = 0;
  };
  Stats stats() const;

 private:
  static std::string key_of(std::string_view ns, std::string_view text);
  struct Entry {
    std::shared_ptr<const api::Value> doc;
    std::size_t bytes = 0;
  };
  std::size_t max_entries_, max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::deque<std::string> order_;  // insertion order, oldest first
  std::size_t bytes_ = 0;
  mutable std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace meshop::inject
