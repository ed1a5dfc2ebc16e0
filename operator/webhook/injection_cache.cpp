#include "operator/webhook/injection_cache.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace meshop::webhook {

namespace {

// SHA-256 with a context reused per thread (the request threads hash once per review).
class Sha256 {
 public:
  Sha256() : ctx_(context()) {
    if (EVP_DigestInit_ex(ctx_, algorithm(), nullptr) != 1)
      throw std::runtime_error("EVP_DigestInit_ex(SHA-256) failed");
  }
  // A field: its length (8 bytes, little endian), then its bytes, so that no two sequences of
  // fields hash the same text.
  void field(std::string_view bytes) {
    number(bytes.size());
    EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
  }
  void number(std::uint64_t n) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = static_cast<unsigned char>(n >> (8 * i));
    EVP_DigestUpdate(ctx_, le, sizeof le);
  }
  std::array<unsigned char, 32> finish() {
    std::array<unsigned char, 32> out{};
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_, out.data(), &n) != 1 || n != out.size())
      throw std::runtime_error("EVP_DigestFinal_ex(SHA-256) failed");
    return out;
  }

 private:
  static const EVP_MD* algorithm() {
#if OPENSSL_VERSION_MAJOR >= 3
    // Fetched once: EVP_sha256() looks the implementation up again on every init.
    static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (md != nullptr) return md;
#endif
    return EVP_sha256();
  }
  static EVP_MD_CTX* context() {
    struct Holder {
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      ~Holder() { EVP_MD_CTX_free(ctx); }
    };
    thread_local Holder holder;
    if (holder.ctx == nullptr) throw std::runtime_error("EVP_MD_CTX_new failed");
    return holder.ctx;
  }

  EVP_MD_CTX* ctx_;
};

// SAX handler that finds the first request.object's byte range (see the header), then stops.
class ObjectFinder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ObjectFinder> {
 public:
  explicit ObjectFinder(const rapidjson::MemoryStream& stream) : stream_(stream) {}

  bool Default() {
    value_seen();
    return true;
  }
  bool StartObject() {
    Role role = next_;
    // The iterative parser (the only mode used here) calls the handler before it takes the
    // '{' or '}': Tell() is the bracket's own offset.
    if (role == Role::kObject) start_ = stream_.Tell();
    next_ = Role::kOther;
    frames_.push_back(role);
    if (role == Role::kObject) object_depth_ = frames_.size();
    return true;
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    std::string_view key(str, length);
    Role parent = frames_.empty() ? Role::kOther : frames_.back();
    next_ = Role::kOther;
    if (frames_.size() == 1 && parent == Role::kRoot && !request_seen_ && key == "request") {
      request_seen_ = true;
      next_ = Role::kRequest;
    } else if (parent == Role::kRequest && !object_seen_ && key == "object") {
      object_seen_ = true;
      next_ = Role::kObject;
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (frames_.size() == object_depth_ && object_depth_ != 0) {
      end_ = stream_.Tell() + 1;
      done_ = true;
      return false;  // found: stop scanning
    }
    frames_.pop_back();
    return true;
  }
  bool StartArray() {
    value_seen();
    frames_.push_back(Role::kOther);
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    frames_.pop_back();
    return true;
  }

  bool done() const { return done_; }
  std::size_t start() const { return start_; }
  std::size_t end() const { return end_; }
  void set_root() { next_ = Role::kRoot; }

 private:
  enum class Role : std::uint8_t { kOther, kRoot, kRequest, kObject };
  // A value that is not an object where request or request.object was expected: the review
  // is refused before any lookup, and the first such member is what FindMember returns, so
  // nothing later may take its place.
  void value_seen() { next_ = Role::kOther; }

  const rapidjson::MemoryStream& stream_;
  std::vector<Role> frames_;
  Role next_ = Role::kOther;
  bool request_seen_ = false, object_seen_ = false, done_ = false;
  std::size_t object_depth_ = 0, start_ = 0, end_ = 0;
};

}  // namespace

std::optional<std::pair<std::size_t, std::size_t>> request_object_range(std::string_view body) {
  rapidjson::MemoryStream stream(body.data(), body.size());
  ObjectFinder finder(stream);
  finder.set_root();
  rapidjson::Reader reader;
  reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(stream, finder);
  if (!finder.done()) return std::nullopt;
  std::size_t first = finder.start(), last = finder.end();
  // Defensive: the range must be one JSON object's text.
  if (first >= last || last > body.size() || body[first] != '{' || body[last - 1] != '}')
    return std::nullopt;
  return std::pair{first, last};
}

InjectionCache::InjectionCache(InjectionCacheLimits limits) : limits_(limits) {}

InjectionKey InjectionCache::key(const InjectionKeyInputs& in) {
  Sha256 h;
  h.field("meshop injection answer v1");
  h.field(in.revision);
  h.number(in.generation);
  h.field(in.path);
  h.field(in.ns);
  h.field(in.pod);
  InjectionKey k;
  k.digest = h.finish();
  k.pod_bytes = in.pod.size();
  return k;
}

std::size_t InjectionCache::KeyHash::operator()(const InjectionKey& k) const {
  std::size_t h = 0;
  std::memcpy(&h, k.digest.data(), sizeof h);  // a uniformly distributed digest already
  return h;
}

void InjectionCache::erase(List::iterator it) {
  stats_.bytes -= it->bytes;
  --stats_.entries;
  index_.erase(it->key);
  lru_.erase(it);
}

void InjectionCache::drop_revision(const std::string& revision) {
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->revision == revision) {
      erase(it);
      ++stats_.invalidated;
    }
    it = next;
  }
}

bool InjectionCache::observe_generation(const std::string& revision, std::uint64_t generation) {
  auto it = generations_.find(revision);
  if (it == generations_.end()) {
    generations_.emplace(revision, generation);
    return true;
  }
  if (generation < it->second) return false;
  if (generation > it->second) {
    it->second = generation;
    drop_revision(revision);
  }
  return true;
}

std::shared_ptr<const CachedAnswer> InjectionCache::find(const std::string& revision,
                                                         std::uint64_t generation,
                                                         const InjectionKey& key) {
  if (!enabled()) return nullptr;
  std::lock_guard lock(mu_);
  if (!observe_generation(revision, generation)) {
    ++stats_.misses;
    return nullptr;
  }
  auto it = index_.find(key);
  // The digest covers revision and generation; the check below only guards the invariant.
  if (it == index_.end() || it->second->revision != revision ||
      it->second->generation != generation) {
    ++stats_.misses;
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  ++stats_.hits;
  return it->second->answer;
}

void InjectionCache::insert(const std::string& revision, std::uint64_t generation,
                            const InjectionKey& key, std::shared_ptr<const CachedAnswer> answer) {
  if (!enabled() || !answer) return;
  std::size_t bytes = kEntryOverhead + revision.size() + answer->patch_base64.size();
  if (bytes > limits_.max_bytes / 8) return;
  std::lock_guard lock(mu_);
  if (!observe_generation(revision, generation)) return;
  if (auto it = index_.find(key); it != index_.end()) erase(it->second);
  lru_.push_front(Entry{key, revision, generation, bytes, std::move(answer)});
  index_.emplace(key, lru_.begin());
  ++stats_.entries;
  stats_.bytes += bytes;
  while (stats_.entries > limits_.max_entries || stats_.bytes > limits_.max_bytes) {
    erase(std::prev(lru_.end()));
    ++stats_.evictions;
  }
}

InjectionCache::Stats InjectionCache::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace meshop::webhook
