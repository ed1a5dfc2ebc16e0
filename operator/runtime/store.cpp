#include "operator/runtime/store.hpp"

#include <algorithm>

namespace meshop::runtime {

std::vector<std::string> index_by_namespace(const rapidjson::Value& object) {
  return {std::string(namespace_of(object))};
}

std::vector<std::string> index_by_label(const rapidjson::Value& object) {
  return label_pairs(object);
}

std::vector<std::string> index_by_owner(const rapidjson::Value& object) {
  return owner_uids(object);
}

void strip_managed_fields(rapidjson::Document& object) {
  auto meta = object.FindMember("metadata");
  if (meta == object.MemberEnd() || !meta->value.IsObject()) return;
  meta->value.RemoveMember("managedFields");
  auto ann = meta->value.FindMember("annotations");
  if (ann != meta->value.MemberEnd() && ann->value.IsObject()) {
    ann->value.RemoveMember("kubectl.kubernetes.io/last-applied-configuration");
  }
}

namespace {
std::size_t key_hash(std::string_view ns, std::string_view name) noexcept {
  std::size_t h = std::hash<std::string_view>{}(ns);
  return h ^ (std::hash<std::string_view>{}(name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}
}  // namespace

std::size_t Store::KeyHash::operator()(const Object& o) const noexcept {
  return key_hash(namespace_of(*o), name_of(*o));
}

std::size_t Store::KeyHash::operator()(std::string_view key) const noexcept {
  auto [ns, name] = split_key(key);
  return key_hash(ns, name);
}

bool Store::KeyEqual::operator()(const Object& a, const Object& b) const noexcept {
  return name_of(*a) == name_of(*b) && namespace_of(*a) == namespace_of(*b);
}

bool Store::KeyEqual::operator()(std::string_view key, const Object& o) const noexcept {
  auto [ns, name] = split_key(key);
  return name_of(*o) == name && namespace_of(*o) == ns;
}

Store::Store(Projection projection, std::vector<std::string> shared_paths, SharedParts* parts)
    : projection_(std::move(projection)), shared_paths_(std::move(shared_paths)) {
  if (shared_paths_.empty()) return;
  if (parts == nullptr) {
    own_parts_ = std::make_unique<SharedParts>();
    parts = own_parts_.get();
  }
  parts_ = parts;
}

void Store::add_index(std::string name, IndexFunc func) {
  Index& index = indices_[name];
  index.func = std::move(func);
  index.entries.clear();
  for (const Object& object : objects_) {
    const std::string key = object_key(*object);
    for (auto& value : index.func(*object))
      index.entries[value].insert(key);
  }
}

void Store::add_handlers(StoreHandlers handlers) {
  handlers_.push_back(std::move(handlers));
  if (handlers_.back().on_add) {
    for (const Object& object : objects_)
      handlers_.back().on_add(object);
  }
}

Object Store::finish(rapidjson::Document object) const {
  if (projection_) projection_(object);
  return parts_ != nullptr ? compact_object_from(object, *parts_, shared_paths_)
                           : compact_object_from(object);
}

Object Store::finish(const rapidjson::Value& object) const {
  rapidjson::Document scratch;  // freed before the next item: the peak stays one object
  scratch.CopyFrom(object, scratch.GetAllocator());
  return finish(std::move(scratch));
}

void Store::index_insert(const std::string& key, const rapidjson::Value& object) {
  for (auto& [name, index] : indices_) {
    for (auto& value : index.func(object))
      index.entries[value].insert(key);
  }
}

void Store::index_erase(const std::string& key, const rapidjson::Value& object) {
  for (auto& [name, index] : indices_) {
    for (auto& value : index.func(object)) {
      auto it = index.entries.find(value);
      if (it == index.entries.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.entries.erase(it);
    }
  }
}

void Store::put(const std::string& key, Object object) {
  auto it = objects_.find(std::string_view(key));
  if (it != objects_.end()) {
    if (!indices_.empty()) index_erase(key, **it);
    // The node is kept: the new version has the same key, so the same hash.
    auto node = objects_.extract(it);
    node.value() = std::move(object);
    it = objects_.insert(std::move(node)).position;
  } else {
    it = objects_.insert(std::move(object)).first;
  }
  if (!indices_.empty()) index_insert(key, **it);
}

Object Store::erase(std::string_view key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  Object old = std::move(objects_.extract(it).value());
  if (!indices_.empty()) index_erase(std::string(key), *old);
  return old;
}

void Store::emit_add(const Object& o) {
  for (auto& h : handlers_) {
    if (h.on_add) h.on_add(o);
  }
}

void Store::emit_update(const Object& old_object, const Object& new_object) {
  for (auto& h : handlers_) {
    if (h.on_update) h.on_update(old_object, new_object);
  }
}

void Store::emit_delete(const Object& o) {
  for (auto& h : handlers_) {
    if (h.on_delete) h.on_delete(o);
  }
}

void Store::apply(rapidjson::Document object) {
  Object now = finish(std::move(object));
  std::string key = object_key(*now);
  Object old = get(key);
  put(key, now);
  if (old) {
    emit_update(old, now);
  } else {
    emit_add(now);
  }
}

void Store::remove(rapidjson::Document object) {
  Object final_state = finish(std::move(object));
  std::string key = object_key(*final_state);
  if (erase(key)) emit_delete(final_state);
}

void Store::remove_key(const std::string& key) {
  if (Object old = erase(key)) emit_delete(old);
}

void Store::replace(std::vector<rapidjson::Document> objects) {
  std::vector<Object> prepared;
  prepared.reserve(objects.size());
  for (auto& doc : objects)
    prepared.push_back(finish(std::move(doc)));
  replace_prepared(std::move(prepared));
}

void Store::replace(const rapidjson::Value& items) {
  std::vector<Object> prepared;
  if (items.IsArray()) {
    prepared.reserve(items.Size());
    for (const auto& item : items.GetArray()) {
      if (item.IsObject()) prepared.push_back(finish(item));
    }
  }
  replace_prepared(std::move(prepared));
}

void Store::replace(std::vector<Object> prepared) {
  replace_prepared(std::move(prepared));
}

void Store::replace_prepared(std::vector<Object> objects) {
  ObjectSet fresh;
  fresh.reserve(objects.size());
  for (auto& o : objects) {
    auto [it, added] = fresh.insert(o);
    if (!added) {  // the last one of a key wins
      auto node = fresh.extract(it);
      node.value() = std::move(o);
      fresh.insert(std::move(node));
    }
  }
  objects.clear();
  objects.shrink_to_fit();
  // Deletes first, so handlers of the adds and updates see a store without the vanished.
  std::vector<std::string> gone;
  for (const Object& object : objects_) {
    if (!fresh.contains(object)) gone.push_back(object_key(*object));
  }
  std::sort(gone.begin(), gone.end());
  for (const auto& key : gone)
    remove_key(key);
  for (const Object& object : fresh) {
    const std::string key = object_key(*object);
    Object old = get(key);
    if (old && resource_version_of(*old) == resource_version_of(*object) &&
        !resource_version_of(*object).empty()) {
      continue;  // unchanged: keep the old shared copy, no event
    }
    put(key, object);
    if (old) {
      emit_update(old, object);
    } else {
      emit_add(object);
    }
  }
  synced_ = true;
}

Object Store::get(std::string_view key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : *it;
}

std::vector<Object> Store::list() const {
  std::vector<Object> out;
  out.reserve(objects_.size());
  for (const Object& object : objects_)
    out.push_back(object);
  return out;
}

std::vector<std::string> Store::keys() const {
  std::vector<std::string> out;
  out.reserve(objects_.size());
  for (const Object& object : objects_)
    out.push_back(object_key(*object));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Object> Store::by_index(std::string_view index, std::string_view value) const {
  std::vector<Object> out;
  auto idx = indices_.find(std::string(index));
  if (idx == indices_.end()) return out;
  auto it = idx->second.entries.find(std::string(value));
  if (it == idx->second.entries.end()) return out;
  out.reserve(it->second.size());
  for (const auto& key : it->second)
    out.push_back(get(key));
  return out;
}

}  // namespace meshop::runtime
