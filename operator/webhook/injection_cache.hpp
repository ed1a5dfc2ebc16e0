// Memoized injection answers (issue 16): a Deployment's rollout sends hundreds of reviews whose
// pods are byte for byte the same (the apiserver has not named them yet), and the engine's
// answer for one of them is a pure function of what the key below covers. serve_inject()
// (admission.cpp) looks an answer up before running the engine and stores it after.
//
// Key (InjectionCache::key): a SHA-256 digest, plus the exact length of the pod's bytes, over
// length-prefixed fields: the revision's name and its RevisionConfig::generation (unique per
// published configuration in this process), the request's URL path (it carries the proxy envs
// and the revision), request.namespace, and the bytes of request.object exactly as sent.
// Nothing else of a review changes the answer once serve_inject() has validated it (uid,
// apiVersion and kind only shape the envelope, which is built per request; dryRun, operation,
// userInfo and oldObject are not read). Why a digest and not the bytes: a pod can be up to
// 6 MiB, keeping it would make the bytes bound count the keys rather than the answers, and
// comparing would cost as much as hashing; SHA-256 has no known collisions (finding one is
// ~2^128 work), so equal digests and lengths stand for equal inputs.
//
// What is stored: only injected and skipped answers (the patch already base64-encoded, and
// the skip reason for the metrics). Failures are not: a template stopped by its time bound
// (template limits) fails or not depending on the machine's load.
//
// Invalidation: entries are tied to (revision, generation). The first lookup or insert that
// sees a newer generation of a revision drops that revision's entries; an answer computed on
// an older generation is not stored. A removed revision's entries are never found (serve_inject
// refuses its reviews before any lookup) and age out.
// Bounds: at most `max_entries` entries and `max_bytes` bytes (answers plus a fixed overhead
// per entry), least recently used evicted first; an answer larger than max_bytes / 8 is not
// stored. max_entries or max_bytes 0 disables the cache (find() always misses).
//
// Thread-safe: one mutex, held only to look up, splice and copy a shared_ptr; never while the
// engine runs. Two threads that miss on the same key both compute (the second insert
// replaces the first with an identical answer).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "operator/inject/injector.hpp"

namespace meshop::webhook {

// The defaults hold a rollout's answers many times over (an answer is 5–10 KiB; the pods of
// one Deployment share one entry) in a budget that matters next to the informers' stores:
// `meshop run`'s steady RSS target is 100 MiB at 100k pods (issue 13).
struct InjectionCacheLimits {
  std::size_t max_entries = 1024;
  std::size_t max_bytes = 4 * 1024 * 1024;
};

struct CachedAnswer {
  bool injected = false;                              // false: skipped (allowed, no patch)
  inject::Reason reason = inject::Reason::kInjected;  // why skipped, for the skip metric
  std::string patch_base64;                           // the response's patch field (injected)
};

struct InjectionKey {
  std::array<unsigned char, 32> digest{};
  std::uint64_t pod_bytes = 0;
  bool operator==(const InjectionKey&) const = default;
};

// What an answer depends on (see the header comment).
struct InjectionKeyInputs {
  std::string_view revision;
  std::uint64_t generation = 0;
  std::string_view path;
  std::string_view ns;
  std::string_view pod;  // request.object's bytes as sent
};

class InjectionCache {
 public:
  explicit InjectionCache(InjectionCacheLimits limits = {});
  InjectionCache(const InjectionCache&) = delete;
  InjectionCache& operator=(const InjectionCache&) = delete;

  static InjectionKey key(const InjectionKeyInputs& inputs);

  // The answer stored for `key`, or null. `revision`/`generation` are the configuration the
  // request is served with.
  std::shared_ptr<const CachedAnswer> find(const std::string& revision, std::uint64_t generation,
                                           const InjectionKey& key);
  void insert(const std::string& revision, std::uint64_t generation, const InjectionKey& key,
              std::shared_ptr<const CachedAnswer> answer);

  struct Stats {
    std::size_t entries = 0;
    std::size_t bytes = 0;
    std::uint64_t hits = 0, misses = 0, evictions = 0, invalidated = 0;
  };
  Stats stats() const;
  const InjectionCacheLimits& limits() const { return limits_; }
  bool enabled() const { return limits_.max_entries > 0 && limits_.max_bytes > 0; }

  // Bytes an entry is charged beyond its answer's text (nodes, key, control blocks).
  static constexpr std::size_t kEntryOverhead = 256;

 private:
  struct KeyHash {
    std::size_t operator()(const InjectionKey& k) const;
  };
  struct Entry {
    InjectionKey key;
    std::string revision;
    std::uint64_t generation = 0;
    std::size_t bytes = 0;
    std::shared_ptr<const CachedAnswer> answer;
  };
  using List = std::list<Entry>;

  // Under mu_: false when `generation` is older than the newest seen for `revision`; drops the
  // revision's entries when it is newer.
  bool observe_generation(const std::string& revision, std::uint64_t generation);
  void erase(List::iterator it);
  void drop_revision(const std::string& revision);

  InjectionCacheLimits limits_;
  mutable std::mutex mu_;
  List lru_;  // most recently used first
  std::unordered_map<InjectionKey, List::iterator, KeyHash> index_;
  std::map<std::string, std::uint64_t, std::less<>> generations_;
  Stats stats_;
};

// The byte range [first, second) of request.object in an AdmissionReview body: the value of
// the first "object" member of the first "request" member of the top-level object, as
// RapidJSON's FindMember picks them. nullopt when the body does not scan as JSON or has no
// such object value.
std::optional<std::pair<std::size_t, std::size_t>> request_object_range(std::string_view body);

}  // namespace meshop::webhook
