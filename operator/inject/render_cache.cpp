#include "operator/inject/render_cache.hpp"

namespace meshop::inject {

std::string RenderCache::key_of(std::string_view ns, std::string_view text) {
  std::string key;
  key.reserve(ns.size() + 1 + text.size());
  key.append(ns);
  key.push_back('\0');  // namespaces never contain NUL: (ns, text) pairs cannot collide
  key.append(text);
  return key;
}

namespace {

// A copy of a document in a pool of small chunks, so that an entry costs about its size.
struct Owned {
  static constexpr std::size_t kChunk = 4096;
  api::Allocator pool{kChunk};
  api::Value value;
};

}  // namespace

std::shared_ptr<const api::Value> RenderCache::find(std::string_view ns,
                                                    std::string_view text) const {
  if (max_entries_ == 0) return nullptr;
  std::string key = key_of(ns, text);
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second.doc;
}

void RenderCache::insert(std::string_view ns, std::string_view text, const api::Value& doc) {
  if (max_entries_ == 0) return;
  std::string key = key_of(ns, text);
  auto owned = std::make_shared<Owned>();
  owned->value.CopyFrom(doc, owned->pool);
  // The key is held twice (map and order) plus the copy's pool.
  std::size_t bytes = 2 * key.size() + owned->pool.Capacity() + sizeof(Owned);
  std::shared_ptr<const api::Value> value(owned, &owned->value);
  if (bytes > max_bytes_) return;
  std::lock_guard lock(mutex_);
  if (entries_.count(key) != 0) return;  // another request parsed the same text meanwhile
  while (!order_.empty() && (entries_.size() + 1 > max_entries_ || bytes_ + bytes > max_bytes_)) {
    auto old = entries_.find(order_.front());
    bytes_ -= old->second.bytes;
    entries_.erase(old);
    order_.pop_front();
  }
  bytes_ += bytes;
  order_.push_back(key);
  entries_.emplace(std::move(key), Entry{std::move(value), bytes});
}

RenderCache::Stats RenderCache::stats() const {
  std::lock_guard lock(mutex_);
  return Stats{entries_.size(), bytes_, hits_, misses_};
}

}  // namespace meshop::inject
