#include "operator/runtime/object.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unordered_map>

#include "api/record.hpp"

namespace meshop::runtime {

namespace {
const rapidjson::Value* member(const rapidjson::Value& v, std::string_view name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(rapidjson::Value(
      rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
  return it == v.MemberEnd() ? nullptr : &it->value;
}
std::string_view str(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}
}  // namespace

namespace {
constexpr std::size_t align8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

// Longest string a Value holds inline (RapidJSON's ShortString with 16-byte values).
constexpr rapidjson::SizeType kInlineString = 13;
static_assert(sizeof(rapidjson::Value) == 16, "RapidJSON's 48-bit pointer layout");

// Member names too long to be held inline that most stored objects have: a compact copy refers
// to these (RapidJSON copies a constant string as a reference) instead of copying them into
// every object.
constexpr const char* kKnownNames[] = {
    "resourceVersion", "creationTimestamp", "deletionTimestamp", "ownerReferences",
    "blockOwnerDeletion", "deletionGracePeriodSeconds", "observedGeneration", "availableReplicas",
    "updatedReplicas", "readyReplicas", "fullyLabeledReplicas", "unavailableReplicas",
    "terminatingReplicas", "collisionCount", "lastTransitionTime", "lastUpdateTime",
    "lastHeartbeatTime", "progressDeadlineSeconds", "revisionHistoryLimit", "minReadySeconds",
    "initContainers", "ephemeralContainers", "containerStatuses", "initContainerStatuses",
    "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "imagePullSecrets",
    "securityContext", "serviceAccountName", "serviceAccount", "automountServiceAccountToken",
    "terminationGracePeriodSeconds", "enableServiceLinks", "preemptionPolicy", "readinessProbe",
    "livenessProbe", "startupProbe", "volumeMounts", "matchLabels", "matchExpressions",
    "rollingUpdate", "maxUnavailable", "updateStrategy", "podManagementPolicy", "currentReplicas",
    "currentRevision", "updateRevision", "numberAvailable", "numberReady", "desiredNumberScheduled",
    "currentNumberScheduled", "updatedNumberScheduled", "numberMisscheduled", "numberUnavailable",
    "kubeletVersion", "disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods",
    "pod-template-hash",
    // Label and annotation keys of most namespaces and
    // injected pods.
    "kubernetes.io/metadata.name", "istio-injection", "security.istio.io/tlsMode",
    "service.istio.io/canonical-name", "service.istio.io/canonical-revision",
    "sidecar.istio.io/status", "meshop.io/injector-fingerprint", "app.kubernetes.io/name",
    "app.kubernetes.io/instance"};

// The known name equal to `name`, or null.
const char* known_name(std::string_view name) {
  static const std::unordered_map<std::string_view, const char*> table = [] {
    std::unordered_map<std::string_view, const char*> t;
    for (const char* n : kKnownNames)
      t.emplace(n, n);
    return t;
  }();
  if (name.size() <= kInlineString) return nullptr;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

bool is_known_name(const rapidjson::Value& v) {
  return known_name(str(v)) == v.GetString();
}

// Member names that are known names become references to them.
void refer_to_known_names(rapidjson::Value& v) {
  if (v.IsObject()) {
    for (auto& m : v.GetObject()) {
      if (const char* n = known_name(str(m.name)); n != nullptr && n != m.name.GetString())
        m.name.SetString(rapidjson::StringRef(n, m.name.GetStringLength()));
      refer_to_known_names(m.value);
    }
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray())
      refer_to_known_names(e);
  }
}

// The bytes a copy of `v` takes from a pool: member and element arrays and strings. `exact`:
// the strings held inline and the known names (referenced, not copied) cost nothing, as in
// compact_copy; otherwise every string is counted (a safe estimate for any copy).
std::size_t pool_size(const rapidjson::Value& v, bool exact) {
  switch (v.GetType()) {
    case rapidjson::kObjectType: {
      std::size_t n = align8(v.MemberCount() * sizeof(rapidjson::Value::Member));
      for (const auto& m : v.GetObject())
        n += pool_size(m.name, exact) + pool_size(m.value, exact);
      return n;
    }
    case rapidjson::kArrayType: {
      std::size_t n = align8(v.Size() * sizeof(rapidjson::Value));
      for (const auto& e : v.GetArray())
        n += pool_size(e, exact);
      return n;
    }
    case rapidjson::kStringType:
      if (exact && (v.GetStringLength() <= kInlineString || is_known_name(v))) return 0;
      return align8(v.GetStringLength() + 1);
    default:
      return 0;
  }
}

// The allocator behind a flat object's one allocation: shared_ptr's control block (with the
// object's hold on its shared parts) followed by `extra` bytes for the tree, whose address it
// reports. The state is a pointer (stored in the control block: 8 bytes).
struct TailRequest {
  std::size_t extra;
  char* tail = nullptr;
};

template <class T>
struct TailAllocator {
  using value_type = T;
  TailRequest* request;
  explicit TailAllocator(TailRequest* r) : request(r) {}
  template <class U>
  TailAllocator(const TailAllocator<U>& o) : request(o.request) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    const std::size_t head = align8(n * sizeof(T));
    char* p = static_cast<char*>(::operator new(head + request->extra));
    request->tail = p + head;
    return reinterpret_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { ::operator delete(static_cast<void*>(p)); }
  template <class U>
  bool operator==(const TailAllocator<U>& o) const {
    return request == o.request;
  }
};

// What a flat object's control block holds besides the counts: the parts its tree refers to.
struct FlatHolder {
  std::shared_ptr<const void> parts;
};

// The tree's bytes: a pool over the tail (its 24-byte chunk header first, the root Value put
// there once the pool is gone) with exactly the member arrays, element arrays and strings of
// the copy. A Value built by a MemoryPoolAllocator needs its allocator no more once built (the
// pool never frees per value), so nothing but these bytes is kept: no Document (96 bytes), no
// allocator object, no second allocation.
using Pool = rapidjson::MemoryPoolAllocator<>;
struct PoolHeader {  // RapidJSON 1.1's MemoryPoolAllocator::ChunkHeader
  std::size_t capacity, size;
  void* next;
};
static_assert(sizeof(PoolHeader) >= sizeof(rapidjson::Value));

// A flat copy of `scratch`, which it changes (known names become references), holding `parts`.
// Returns the root and its holder.
Object flat_copy(rapidjson::Value& scratch, std::shared_ptr<const void> parts) {
  refer_to_known_names(scratch);
  // RapidJSON's pool wants room past its header even for a tree that needs none.
  std::size_t need = std::max<std::size_t>(pool_size(scratch, true), 8);
  for (;;) {
    TailRequest request{sizeof(PoolHeader) + need};
    auto holder = std::allocate_shared<FlatHolder>(TailAllocator<FlatHolder>(&request));
    rapidjson::Value copy;
    bool fits;
    {
      Pool pool(request.tail, request.extra);
      copy = rapidjson::Value(scratch, pool);
      // A second chunk would be freed with `pool`: the estimate must hold all (it is exact).
      fits = pool.Capacity() == need;
      if (!fits) need = pool.Size() + 64;
    }
    if (!fits) continue;  // never seen; the next try has room
    auto* root = new (request.tail) rapidjson::Value();
    *root = copy;  // RapidJSON's assignment moves the handle
    holder->parts = std::move(parts);
    return Object(std::move(holder), root);
  }
}
}  // namespace

std::size_t compact_size(const rapidjson::Value& v) {
  return pool_size(v, false);
}

std::size_t compact_own_size(const rapidjson::Value& v) {
  rapidjson::Document scratch;
  scratch.CopyFrom(v, scratch.GetAllocator());
  refer_to_known_names(scratch);
  return pool_size(scratch, true);
}

Object compact_object(const rapidjson::Value& value) {
  rapidjson::Document scratch;
  scratch.CopyFrom(value, scratch.GetAllocator());
  return compact_object_from(scratch);
}

Object compact_object_from(rapidjson::Document& scratch) {
  return flat_copy(scratch, nullptr);
}

namespace {

// The order-sensitive identity of a value, for SharedParts: equal under strict_equal means
// equal hash.
void hash_into(std::uint64_t& h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;  // FNV-1a
  }
}

void hash_value(std::uint64_t& h, const rapidjson::Value& v) {
  auto tag = static_cast<unsigned char>(v.GetType());
  if (v.IsNumber()) tag = v.IsDouble() ? 16 : v.IsUint64() ? 17 : 18;
  hash_into(h, &tag, 1);
  switch (v.GetType()) {
    case rapidjson::kObjectType: {
      rapidjson::SizeType n = v.MemberCount();
      hash_into(h, &n, sizeof n);
      for (const auto& m : v.GetObject()) {
        hash_value(h, m.name);
        hash_value(h, m.value);
      }
      return;
    }
    case rapidjson::kArrayType: {
      rapidjson::SizeType n = v.Size();
      hash_into(h, &n, sizeof n);
      for (const auto& e : v.GetArray())
        hash_value(h, e);
      return;
    }
    case rapidjson::kStringType: {
      rapidjson::SizeType n = v.GetStringLength();
      hash_into(h, &n, sizeof n);
      hash_into(h, v.GetString(), n);
      return;
    }
    case rapidjson::kNumberType: {
      if (v.IsDouble()) {
        double d = v.GetDouble();
        hash_into(h, &d, sizeof d);
      } else if (v.IsUint64()) {
        std::uint64_t u = v.GetUint64();
        hash_into(h, &u, sizeof u);
      } else {
        std::int64_t i = v.GetInt64();
        hash_into(h, &i, sizeof i);
      }
      return;
    }
    default:
      return;  // null, true, false: the tag says it all
  }
}

// Equal as JSON text is: same types (1 is not 1.0), same members in the same order. A shared
// part replaces a subtree, so "equal" must mean "writes the same bytes".
bool strict_equal(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.GetType() != b.GetType()) return false;
  switch (a.GetType()) {
    case rapidjson::kObjectType: {
      if (a.MemberCount() != b.MemberCount()) return false;
      for (auto i = a.MemberBegin(), j = b.MemberBegin(); i != a.MemberEnd(); ++i, ++j)
        if (!strict_equal(i->name, j->name) || !strict_equal(i->value, j->value)) return false;
      return true;
    }
    case rapidjson::kArrayType: {
      if (a.Size() != b.Size()) return false;
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
        if (!strict_equal(a[i], b[i])) return false;
      return true;
    }
    case rapidjson::kStringType:
      return str(a) == str(b);
    case rapidjson::kNumberType:
      if (a.IsDouble() != b.IsDouble()) return false;
      if (a.IsDouble()) {
        double x = a.GetDouble();
        double y = b.GetDouble();
        return std::memcmp(&x, &y, sizeof x) == 0;
      }
      if (a.IsUint64() != b.IsUint64()) return false;
      return a.IsUint64() ? a.GetUint64() == b.GetUint64() : a.GetInt64() == b.GetInt64();
    default:
      return true;
  }
}

// The node at a JSON pointer of member names ("/spec", "/metadata/labels"), or null.
template <class V>
V* node_at(V& root, std::string_view path) {
  V* v = &root;
  while (!path.empty()) {
    if (path.front() != '/') return nullptr;
    path.remove_prefix(1);
    std::string_view name = path.substr(0, path.find('/'));
    path.remove_prefix(name.size());
    if (v->IsArray()) {  // a record's slot ("/0")
      long long i = api::parse_array_index(name);
      if (i < 0 || i >= static_cast<long long>(v->Size())) return nullptr;
      v = &(*v)[static_cast<rapidjson::SizeType>(i)];
      continue;
    }
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(rapidjson::Value(
        rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
    if (it == v->MemberEnd()) return nullptr;
    v = &it->value;
  }
  return v;
}

// Whether `path` lies under one of `parts` ("/0/spec" under "/0").
bool nested_in(std::string_view path, const std::vector<std::string_view>& parts) {
  for (std::string_view p : parts)
    if (path.size() > p.size() && path.starts_with(p) && path[p.size()] == '/') return true;
  return false;
}

}  // namespace

struct SharedParts::Table {
  std::unordered_multimap<std::uint64_t, std::weak_ptr<const rapidjson::Value>> entries;
  std::size_t sweep_at = 1024;
  // Sets of parts as objects hold them: the pods of one ReplicaSet hold one set, so each holds
  // one pointer rather than one per part.
  using Set = std::vector<std::shared_ptr<const rapidjson::Value>>;
  std::unordered_multimap<std::uint64_t, std::weak_ptr<const Set>> sets;
  std::size_t sets_sweep_at = 1024;

  std::shared_ptr<const Set> set_of(Set parts) {
    std::uint64_t h = 14695981039346656037ULL;
    for (const auto& p : parts) {
      const void* raw = p.get();
      hash_into(h, &raw, sizeof raw);
    }
    auto [first, last] = sets.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (auto set = it->second.lock(); set != nullptr && *set == parts) return set;
    }
    auto set = std::make_shared<const Set>(std::move(parts));
    sets.emplace(h, set);
    if (sets.size() >= sets_sweep_at) {
      std::erase_if(sets, [](const auto& e) { return e.second.expired(); });
      sets_sweep_at = std::max<std::size_t>(1024, 2 * sets.size());
    }
    return set;
  }
};

SharedParts::SharedParts() : table_(std::make_unique<Table>()) {}
SharedParts::~SharedParts() = default;

std::size_t SharedParts::size() const {
  std::size_t n = 0;
  for (const auto& [h, part] : table_->entries)
    if (!part.expired()) ++n;
  return n;
}

std::shared_ptr<const rapidjson::Value> SharedParts::intern(const rapidjson::Value& value) {
  static const std::vector<std::string> kNone;
  return intern(value, kNone);
}

std::shared_ptr<const rapidjson::Value> SharedParts::intern(const rapidjson::Value& value,
                                                            const std::vector<std::string>& paths) {
  std::uint64_t h = 14695981039346656037ULL;
  hash_value(h, value);
  auto [first, last] = table_->entries.equal_range(h);
  for (auto it = first; it != last; ++it) {
    if (auto part = it->second.lock(); part != nullptr && strict_equal(*part, value)) return part;
  }
  std::shared_ptr<const rapidjson::Value> part =
      paths.empty() ? compact_object(value) : compact_object(value, *this, paths);
  table_->entries.emplace(h, part);
  if (table_->entries.size() >= table_->sweep_at) {
    std::erase_if(table_->entries, [](const auto& e) { return e.second.expired(); });
    table_->sweep_at = std::max<std::size_t>(1024, 2 * table_->entries.size());
  }
  return part;
}

Object compact_object(const rapidjson::Value& value, SharedParts& parts,
                      const std::vector<std::string>& paths) {
  rapidjson::Document scratch;
  scratch.CopyFrom(value, scratch.GetAllocator());
  return compact_object_from(scratch, parts, paths);
}

Object compact_object_from(rapidjson::Document& scratch, SharedParts& parts,
                           const std::vector<std::string>& paths) {
  // A Value is a 16-byte handle (type, size, pointer): a part is put in place by copying its
  // handle, so the object's tree points into the part's memory. Sound because the pool
  // allocator never frees per value (kNeedFree is false: destroying the document does not walk
  // into the part) and objects are never modified.
  static_assert(!rapidjson::MemoryPoolAllocator<>::kNeedFree);
  static_assert(std::is_standard_layout_v<rapidjson::Value>);
  // The object with its shared subtrees cut out (null) is copied, then the parts' handles are
  // put in their places: the object's own memory is only what is its own.
  std::vector<std::string_view> cut;
  SharedParts::Table::Set found;
  std::vector<std::string> inner;
  for (const std::string& path : paths) {
    if (nested_in(path, cut)) continue;  // shared inside the part it lies in
    rapidjson::Value* node = node_at(static_cast<rapidjson::Value&>(scratch), path);
    if (node == nullptr || node->IsNull()) continue;
    if ((node->IsObject() && node->MemberCount() == 0) || (node->IsArray() && node->Empty()))
      continue;  // nothing to share
    inner.clear();
    for (const std::string& p : paths)
      if (p.size() > path.size() + 1 && p.starts_with(path) && p[path.size()] == '/')
        inner.push_back(p.substr(path.size()));
    cut.push_back(path);
    found.push_back(parts.intern(*node, inner));
    node->SetNull();
  }
  // The parts' handles go in the copy's slots (nulls): the copy is ours until it is returned.
  std::vector<const rapidjson::Value*> handles;
  for (const auto& part : found)
    handles.push_back(part.get());
  std::shared_ptr<const void> set;
  if (!found.empty()) set = parts.table_->set_of(std::move(found));
  Object object = flat_copy(scratch, std::move(set));
  auto& tree = const_cast<rapidjson::Value&>(*object);
  for (std::size_t i = 0; i < cut.size(); ++i) {
    rapidjson::Value* slot = node_at(tree, cut[i]);
    std::memcpy(static_cast<void*>(slot), static_cast<const void*>(handles[i]),
                sizeof(rapidjson::Value));
  }
  return object;
}

std::string_view meta_string(const rapidjson::Value& object, std::string_view field) {
  const rapidjson::Value* meta;
  if (api::is_record(object)) {  // its own fields in slots, the rest in its base
    rapidjson::SizeType slot = field == "name"                ? api::kRecordName
                               : field == "resourceVersion"   ? api::kRecordResourceVersion
                               : field == "creationTimestamp" ? api::kRecordCreationTimestamp
                               : field == "deletionTimestamp" ? api::kRecordDeletionTimestamp
                                                              : api::kRecordBase;
    if (slot != api::kRecordBase) {
      if (slot >= object.Size() || !object[slot].IsString()) return {};
      return str(object[slot]);
    }
    meta = member(object[api::kRecordBase], "metadata");
  } else {
    meta = member(object, "metadata");
  }
  if (meta == nullptr) return {};
  const rapidjson::Value* v = member(*meta, field);
  if (v == nullptr || !v->IsString()) return {};
  return str(*v);
}

std::string make_key(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  if (!ns.empty()) {
    key.append(ns);
    key.push_back('/');
  }
  key.append(name);
  return key;
}

std::string object_key(const rapidjson::Value& object) {
  return make_key(namespace_of(object), name_of(object));
}

std::pair<std::string_view, std::string_view> split_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::vector<std::string> label_pairs(const rapidjson::Value& object) {
  std::vector<std::string> out;
  const rapidjson::Value* meta =
      member(api::is_record(object) ? object[api::kRecordBase] : object, "metadata");
  const rapidjson::Value* labels = meta ? member(*meta, "labels") : nullptr;
  if (labels == nullptr || !labels->IsObject()) return out;
  for (const auto& m : labels->GetObject()) {
    if (!m.value.IsString()) continue;
    std::string pair(str(m.name));
    pair.push_back('=');
    pair.append(str(m.value));
    out.push_back(std::move(pair));
  }
  return out;
}

std::vector<std::string> owner_uids(const rapidjson::Value& object) {
  std::vector<std::string> out;
  const rapidjson::Value* meta =
      member(api::is_record(object) ? object[api::kRecordBase] : object, "metadata");
  const rapidjson::Value* owners = meta ? member(*meta, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->IsArray()) return out;
  for (const auto& ref : owners->GetArray()) {
    const rapidjson::Value* uid = member(ref, "uid");
    if (uid != nullptr && uid->IsString()) out.emplace_back(str(*uid));
  }
  return out;
}

}  // namespace meshop::runtime
