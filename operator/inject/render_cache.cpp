#include "operator/inject/render_cache.hpp"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace meshop::inject {

namespace {

// The number of '\n' in `text`, 16 bytes at a time (a rendering has hundreds of short lines).
std::size_t count_newlines(std::string_view text) {
  std::size_t n = 0, i = 0;
#if defined(__SSE2__)
  // Per byte lane, a counter the matches (0xFF, -1) are subtracted from, summed up every 255
  // blocks before a lane can overflow.
  const __m128i nl = _mm_set1_epi8('\n');
  while (i + 16 <= text.size()) {
    __m128i lanes = _mm_setzero_si128();
    for (int k = 0; k < 255 && i + 16 <= text.size(); ++k, i += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(v, nl));
    }
    __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    n += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
         static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < text.size(); ++i)
    n += text[i] == '\n';
  return n;
}

}  // namespace

std::string RenderCache::key_of(std::string_view ns, std::string_view name, std::size_t lines) {
  // Length-prefixed fields: no (ns, name, lines) is another's.
  std::string key;
  key.reserve(ns.size() + name.size() + 3 * sizeof(std::size_t));
  for (std::size_t n : {ns.size(), name.size(), lines})
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(ns);
  key.append(name);
  return key;
}

std::shared_ptr<const api::Value> RenderCache::find(std::string_view ns, std::string_view name,
                                                    std::string_view text, bool* plain) const {
  if (max_entries_ == 0) return nullptr;
  std::size_t lines = 1 + count_newlines(text);
  std::string key = key_of(ns, name, lines);
  std::vector<Entry> candidates;
  {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) candidates = it->second;
  }
  // A re-read document shares the kept one's unchanged parts (it holds the entry), in a small
  // pool of its own (a document's default first chunk is 64 KiB).
  struct Fresh {
    Fresh() : pool(4096), doc(&pool) {}
    std::shared_ptr<const api::ReusableYaml> base;
    api::Allocator pool;
    api::Document doc;
  };
  std::shared_ptr<Fresh> fresh;
  for (const Entry& e : candidates) {
    if (!fresh) fresh = std::make_shared<Fresh>();
    fresh->base = e.yaml;
    switch (e.yaml->reread(text, fresh->doc)) {
      case api::ReusableYaml::Reread::kSame: {
        std::lock_guard lock(mutex_);
        ++hits_;
        if (plain != nullptr) *plain = e.plain;
        return std::shared_ptr<const api::Value>(e.yaml, &e.yaml->document());
      }
      case api::ReusableYaml::Reread::kChanged: {
        std::lock_guard lock(mutex_);
        ++rereads_;
        if (plain != nullptr) *plain = e.plain;
        return std::shared_ptr<const api::Value>(fresh, &fresh->doc);
      }
      case api::ReusableYaml::Reread::kNotReusable:
        break;
    }
  }
  std::lock_guard lock(mutex_);
  ++misses_;
  return nullptr;
}

void RenderCache::insert(std::string_view ns, std::string_view name,
                         std::shared_ptr<const api::ReusableYaml> parsed, bool plain) {
  if (max_entries_ == 0 || parsed == nullptr) return;
  std::string key = key_of(ns, name, parsed->line_count());
  // The key is held twice (map and order).
  std::size_t bytes = 2 * key.size() + parsed->bytes();
  if (bytes > max_bytes_) return;
  // Forgets entry `e` of key `k` (its place in order_ is the caller's business).
  auto forget = [&](const std::string& k, const Entry& e) {
    auto it = entries_.find(k);
    if (it == entries_.end()) return;
    auto& list = it->second;
    for (auto i = list.begin(); i != list.end(); ++i) {
      if (i->yaml == e.yaml) {
        bytes_ -= 2 * k.size() + e.yaml->bytes();
        --count_;
        list.erase(i);
        break;
      }
    }
    if (list.empty()) entries_.erase(it);
  };
  std::lock_guard lock(mutex_);
  auto& list = entries_[key];
  for (const Entry& e : list)
    if (e.yaml->text() == parsed->text()) return;  // another request parsed the same text meanwhile
  if (list.size() >= kTextsPerKey) {
    Entry oldest = list.back();
    list.pop_back();
    bytes_ -= 2 * key.size() + oldest.yaml->bytes();
    --count_;
    for (auto i = order_.begin(); i != order_.end(); ++i) {
      if (i->second.yaml == oldest.yaml) {
        order_.erase(i);
        break;
      }
    }
  }
  Entry entry{std::move(parsed), plain};
  list.insert(list.begin(), entry);
  ++count_;
  bytes_ += bytes;
  order_.emplace_back(std::move(key), std::move(entry));
  while (!order_.empty() && (count_ > max_entries_ || bytes_ > max_bytes_)) {
    auto [k, e] = std::move(order_.front());
    order_.pop_front();
    forget(k, e);
  }
}

RenderCache::Stats RenderCache::stats() const {
  std::lock_guard lock(mutex_);
  return Stats{count_, bytes_, hits_, rereads_, misses_};
}

}  // namespace meshop::inject
