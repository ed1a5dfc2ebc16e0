// How the runtime holds and names Kubernetes objects.
//
// An Object is an immutable, shared RapidJSON value: the store, the event handlers and the
// reconcilers all see the same bytes without copying, and nobody can change an object under
// another's feet. A new version of an object is a new Object. It is a Value, not a Document:
// a stored object needs no allocator, parse state or stack once built (see compact_object).
//
// Keys follow client-go's MetaNamespaceKeyFunc: "namespace/name", or "name" for
// cluster-scoped objects.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

namespace meshop::runtime {

using Object = std::shared_ptr<const rapidjson::Value>;

// metadata.<field> as a string, "" when absent or not a string. A record (api/record.hpp) is
// read as the object it stands for.
std::string_view meta_string(const rapidjson::Value& object, std::string_view field);
inline std::string_view name_of(const rapidjson::Value& o) {
  return meta_string(o, "name");
}
inline std::string_view namespace_of(const rapidjson::Value& o) {
  return meta_string(o, "namespace");
}
inline std::string_view uid_of(const rapidjson::Value& o) {
  return meta_string(o, "uid");
}
inline std::string_view resource_version_of(const rapidjson::Value& o) {
  return meta_string(o, "resourceVersion");
}

// A deep copy of `value` in memory sized for it. A default rapidjson::Document grows its pool
// in 64 KiB chunks, i.e. about 8 KiB of touched memory even for a tiny object; a store of
// 100k objects must not pay that, so stores hold compact copies: one allocation holding the
// shared_ptr's counts and the tree's member arrays, element arrays and strings, nothing else
// (about 40 bytes over the tree's own). Long member names most objects have
// ("resourceVersion", "creationTimestamp", ...) are references to constants, not copies.
Object compact_object(const rapidjson::Value& value);
// Bytes a compact copy of `value` needs (an estimate that errs on the large side).
std::size_t compact_size(const rapidjson::Value& value);
// The tree bytes compact_object(value) holds: exact, without the strings held inline in a
// Value and the known names it refers to (a benchmark and test figure).
std::size_t compact_own_size(const rapidjson::Value& value);

// Identical parts of the objects of one store, kept once (hash-consing). In a store of 100k
// pods, most of a pod is the same as its siblings': the labels, owner, containers and status of
// the pods of one ReplicaSet are equal, only name, uid, resourceVersion and creation time
// differ. compact_object(value, parts, paths) makes each subtree at `paths` a part shared with
// every object holding an equal one; the object keeps its parts alive, and a part no object
// holds any more is forgotten.
// Reading a shared object is reading any object: the parts are ordinary (immutable) values.
// Thread affinity: one thread makes objects (the store's); the objects may be read and released
// on any thread.
class SharedParts {
 public:
  SharedParts();
  ~SharedParts();
  SharedParts(const SharedParts&) = delete;
  SharedParts& operator=(const SharedParts&) = delete;

  // The shared part equal to `value` (a compact copy made on first sight). The returned
  // pointer keeps the part alive.
  std::shared_ptr<const rapidjson::Value> intern(const rapidjson::Value& value);
  // The same, the subtrees of a new part at `paths` (relative to it) themselves shared.
  std::shared_ptr<const rapidjson::Value> intern(const rapidjson::Value& value,
                                                 const std::vector<std::string>& paths);
  // Distinct live parts (a test and benchmark figure).
  std::size_t size() const;

 private:
  friend Object compact_object_from(rapidjson::Document& scratch, SharedParts& parts,
                                    const std::vector<std::string>& paths);
  struct Table;
  std::unique_ptr<Table> table_;
};

// A compact copy of `value` whose subtrees at `paths` (JSON pointers such as "/spec" or
// "/metadata/labels", or "/0" for a slot of a record: api/record.hpp; absent ones are skipped)
// are shared through `parts`. A path under another ("/0/spec" under "/0") is shared within that
// part: the part is made with it. `value` is left unchanged.
Object compact_object(const rapidjson::Value& value, SharedParts& parts,
                      const std::vector<std::string>& paths);
// The same from a document the caller gives up (it is changed: no scratch copy is made).
Object compact_object_from(rapidjson::Document& scratch);
Object compact_object_from(rapidjson::Document& scratch, SharedParts& parts,
                           const std::vector<std::string>& paths);

std::string object_key(const rapidjson::Value& object);
std::string make_key(std::string_view ns, std::string_view name);
// Splits a key into (namespace, name); namespace is "" for cluster-scoped keys.
std::pair<std::string_view, std::string_view> split_key(std::string_view key);

// "key=value" for every metadata.labels entry.
std::vector<std::string> label_pairs(const rapidjson::Value& object);
// metadata.ownerReferences[*].uid.
std::vector<std::string> owner_uids(const rapidjson::Value& object);

}  // namespace meshop::runtime
