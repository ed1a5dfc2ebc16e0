// An in-memory cache of one kind of object, kept by an Informer and read by reconcilers
// (client-go's Indexer / kube-rs's Store).
//
//   Store store(strip_managed_fields);                 // optional projection
//   store.add_index(kIndexNamespace, index_by_namespace);
//   store.add_handlers({.on_add = ..., .on_update = ..., .on_delete = ...});
//   for (const Object& cm : store.by_index(kIndexNamespace, "istio-system")) ...
//
// Contract:
// - Objects are immutable shared values (object.hpp), keyed "namespace/name" (the key is read
//   from the object itself, not stored beside it).
// - The projection (if any) runs on every object before it is stored or handed to handlers:
//   it keeps only what users need (e.g. drops managedFields) so memory stays flat.
// - apply() inserts or replaces one object (on_add or on_update(old, new)); remove() deletes
//   one (on_delete with the object's final state as the event carried it, or the cached one).
// - replace() swaps the whole content after a (re)list: objects missing from the new list are
//   deleted (on_delete), new ones added, changed ones updated; an object whose
//   resourceVersion did not change raises no event. The first replace() makes has_synced()
//   true for good.
// - Stored objects are compact copies (object.hpp compact_object): memory per object is about
//   the size of its JSON, not RapidJSON's 64 KiB pool chunk. With `shared_paths`, the subtrees
//   there are kept once for all the objects that hold equal ones (object.hpp SharedParts).
// - add_index() and add_handlers() may be called at any time: the index is built over the
//   current content, and new handlers first receive on_add for every current object (as
//   client-go's AddEventHandler does), so late registration never misses an object.
// - Handlers run synchronously inside the mutation, after the store has changed, so a handler
//   that reads the store sees the new state. A handler must not mutate the store.
// Thread affinity: the control-loop thread only; no locks.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "operator/runtime/object.hpp"

namespace meshop::runtime {

using IndexFunc = std::function<std::vector<std::string>(const rapidjson::Value&)>;
using Projection = std::function<void(rapidjson::Document&)>;

inline constexpr std::string_view kIndexNamespace = "namespace";
inline constexpr std::string_view kIndexLabel = "label";  // values "key=value"
inline constexpr std::string_view kIndexOwner = "owner";  // values owner uid

std::vector<std::string> index_by_namespace(const rapidjson::Value& object);
std::vector<std::string> index_by_label(const rapidjson::Value& object);
std::vector<std::string> index_by_owner(const rapidjson::Value& object);

// A projection that drops metadata.managedFields and the
// kubectl.kubernetes.io/last-applied-configuration annotation (often most of an object).
void strip_managed_fields(rapidjson::Document& object);

struct StoreHandlers {
  std::function<void(const Object&)> on_add{};
  std::function<void(const Object& old_object, const Object& new_object)> on_update{};
  std::function<void(const Object&)> on_delete{};
};

class Store {
 public:
  // `parts`: where shared subtrees are kept (not owned; e.g. the Cache's, one for every store,
  // so a Deployment and its ReplicaSets share their pod template); null = the store's own.
  explicit Store(Projection projection = {}, std::vector<std::string> shared_paths = {},
                 SharedParts* parts = nullptr);

  void add_index(std::string name, IndexFunc func);
  void add_handlers(StoreHandlers handlers);

  // Mutations, used by the Informer (and by tests).
  void apply(rapidjson::Document object);
  void remove(rapidjson::Document object);
  void remove_key(const std::string& key);
  void replace(std::vector<rapidjson::Document> objects);
  // `items`: a JSON array of objects (a List's "items"); non-objects are skipped.
  void replace(const rapidjson::Value& items);
  // Objects already made by prepare().
  void replace(std::vector<Object> prepared);
  // The object as this store keeps it: projected, compact, shared. For sources that convert
  // list pages as they arrive (ItemPreparer).
  Object prepare(const rapidjson::Value& object) const { return finish(object); }

  // Reads.
  Object get(std::string_view key) const;  // nullptr when absent
  std::vector<Object> list() const;
  std::vector<std::string> keys() const;
  std::vector<Object> by_index(std::string_view index, std::string_view value) const;
  std::size_t size() const { return objects_.size(); }
  // Distinct shared subtrees alive (0 without shared paths).
  std::size_t shared_parts() const { return parts_ != nullptr ? parts_->size() : 0; }
  bool has_synced() const { return synced_; }

 private:
  struct Index {
    IndexFunc func;
    std::unordered_map<std::string, std::unordered_set<std::string>> entries;  // value -> keys
  };
  // The objects are their own keys: an entry is the shared pointer alone (the key's namespace
  // and name are read from the object), not a copy of "namespace/name" beside it. Lookups by a
  // key string split it, with no allocation. The hash is not cached in the nodes (it is
  // noexcept, so libstdc++ recomputes it instead): 24-byte nodes.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const Object& o) const noexcept;
    std::size_t operator()(std::string_view key) const noexcept;
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(const Object& a, const Object& b) const noexcept;
    bool operator()(std::string_view key, const Object& o) const noexcept;
    bool operator()(const Object& o, std::string_view key) const noexcept {
      return (*this)(key, o);
    }
  };
  using ObjectSet = std::unordered_set<Object, KeyHash, KeyEqual>;

  Object finish(rapidjson::Document object) const;
  Object finish(const rapidjson::Value& object) const;
  void replace_prepared(std::vector<Object> fresh_objects);
  void index_insert(const std::string& key, const rapidjson::Value& object);
  void index_erase(const std::string& key, const rapidjson::Value& object);
  void put(const std::string& key, Object object);  // no events
  Object erase(std::string_view key);               // no events; returns the removed object

  void emit_add(const Object& o);
  void emit_update(const Object& old_object, const Object& new_object);
  void emit_delete(const Object& o);

  Projection projection_;
  std::vector<std::string> shared_paths_;
  std::unique_ptr<SharedParts> own_parts_;
  SharedParts* parts_ = nullptr;  // set when shared_paths_ is not empty
  ObjectSet objects_;
  std::unordered_map<std::string, Index> indices_;
  std::vector<StoreHandlers> handlers_;
  bool synced_ = false;
};

}  // namespace meshop::runtime
