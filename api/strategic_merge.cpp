#include "api/strategic_merge.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/json_copy.hpp"

namespace meshop::api {
namespace {

constexpr std::string_view kDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

struct MergeFailure {
  std::string message;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Go's dynamic types of decoded JSON: booleans are one type, numbers another (float64).
int kind_of(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return 0;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return 1;
    case rapidjson::kNumberType:
      return 2;
    case rapidjson::kStringType:
      return 3;
    case rapidjson::kArrayType:
      return 4;
    case rapidjson::kObjectType:
      return 5;
  }
  return 0;
}

// Go's == on two interface{} values that are merge-key values or list scalars: absent (nil)
// equals absent; maps and lists are never equal (Go would panic).
bool go_equal(const Value* a, const Value* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->IsObject() || a->IsArray() || b->IsObject() || b->IsArray()) return false;
  return json_equal(*a, *b);
}

// Counted for strategic_merge_key_comparisons().
bool counted_equal(const Value* a, const Value* b) {
  ++strategic_merge_key_comparisons();
  return go_equal(a, b);
}

// A hash consistent with go_equal on scalars (json_equal: numbers by value, so by their
// double; -0 and 0 are equal).
std::size_t scalar_hash(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return 0x9e3779b9u;
    case rapidjson::kFalseType:
      return 1;
    case rapidjson::kTrueType:
      return 2;
    case rapidjson::kNumberType: {
      double d = v.GetDouble();
      return std::hash<double>{}(d == 0 ? 0.0 : d);
    }
    case rapidjson::kStringType:
      return std::hash<std::string_view>{}(string_view_of(v));
    default:
      return 3;  // never looked up: maps and lists equal nothing
  }
}

// The first position of each merge key (or scalar) in a list, under go_equal, found in O(1)
// instead of by a scan: a pod's containers are merged by name, and a scan per container made
// injection quadratic in their number. Positions are added in increasing order; `key_at(pos)`
// gives the key now at a position (looked up again on every comparison, so the index holds no
// pointers into values that a merge may move).
class FirstIndex {
 public:
  void add(std::size_t pos, const Value* key) {
    if (key == nullptr) {
      if (!absent_) absent_ = pos;
      return;
    }
    if (key->IsObject() || key->IsArray()) return;
    by_hash_.emplace(scalar_hash(*key), pos);
  }

  template <class KeyAt>
  std::optional<std::size_t> find(const Value* key, KeyAt key_at) const {
    if (key == nullptr) return absent_;
    if (key->IsObject() || key->IsArray()) return std::nullopt;
    std::optional<std::size_t> first;
    auto [lo, hi] = by_hash_.equal_range(scalar_hash(*key));
    for (auto it = lo; it != hi; ++it) {
      if ((!first || it->second < *first) && counted_equal(key, key_at(it->second)))
        first = it->second;
    }
    return first;
  }

 private:
  std::unordered_multimap<std::size_t, std::size_t> by_hash_;
  std::optional<std::size_t> absent_;
};

std::string describe(const Value& v) {
  std::string s = to_json(v);
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

std::string key_text(const Value& v) {
  return v.IsString() ? std::string(string_view_of(v)) : to_json(v);
}

// Where in the patch the merge is, for messages ("spec.containers[name=app].env"): a chain of
// frames on the stack, made into text only when a message is written (a merge that succeeds
// builds no path strings). What the frames view (member names, merge keys, key values) lives
// in the patch and the schema, which outlive the merge.
class MergePath {
 public:
  MergePath() = default;  // the patch itself: ""
  MergePath(const MergePath& parent, std::string_view member) : parent_(&parent), key_(member) {}
  // An element of the list at `parent`, named by its merge key.
  MergePath(const MergePath& parent, std::string_view merge_key, const Value& key_value)
      : parent_(&parent), key_(merge_key), key_value_(&key_value) {}

  std::string str() const {
    if (parent_ == nullptr) return {};
    std::string p = parent_->str();
    if (key_value_ != nullptr)
      return p + "[" + std::string(key_) + "=" + key_text(*key_value_) + "]";
    return p.empty() ? std::string(key_) : p + "." + std::string(key_);
  }

 private:
  const MergePath* parent_ = nullptr;
  std::string_view key_;
  const Value* key_value_ = nullptr;
};

class Merger {
 public:
  explicit Merger(Allocator& alloc) : alloc_(alloc) {}

  void merge_map(Value& original, const Value& patch, const PatchSchemaType* schema,
                 const MergePath& path) {
    // Without a key that starts with '$' (a template's patch has none) there is no directive,
    // $retainKeys, $setElementOrder or deletion list to look for: each member merges in order,
    // as the first pass below would merge it.
    bool directives = false;
    for (const auto& m : patch.GetObject()) {
      if (m.name.GetStringLength() != 0 && m.name.GetString()[0] == '$') {
        directives = true;
        break;
      }
    }
    if (!directives) {
      if (!original.IsObject()) original.SetObject();
      for (const auto& m : patch.GetObject())
        merge_member(original, string_view_of(m.name), m.value, schema, path, false);
      return;
    }
    if (const Value* d = find_member(patch, kDirective)) {
      if (d->IsString() && string_view_of(*d) == "replace") {
        original.SetObject();
        for (const auto& m : patch.GetObject()) {
          if (string_view_of(m.name) == kDirective) continue;
          original.AddMember(Value(m.name, alloc_), copied_json(m.value, alloc_), alloc_);
        }
        return;
      }
      if (d->IsString() && string_view_of(*d) == "delete") {
        original.SetObject();
        return;
      }
      fail(path, "unknown patch type: " + describe(*d) + " in map: " + describe(patch));
    }
    if (!original.IsObject()) original.SetObject();
    retain_keys(original, patch, path);
    std::unordered_set<std::string_view> consumed;
    set_element_order(original, patch, schema, path, consumed);

    // Plain keys first, then $deleteFromPrimitiveList lists (Go's order is random; applying the
    // deletions last is the order under which a patch that adds and deletes is well defined).
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& m : patch.GetObject()) {
        std::string_view key = string_view_of(m.name);
        if (key == kRetainKeys || starts_with(key, kSetElementOrder) || consumed.count(key) != 0) {
          continue;
        }
        bool is_delete_list = starts_with(key, kDeleteFromPrimitiveList);
        if (is_delete_list != (pass == 1)) continue;
        if (is_delete_list) key.remove_prefix(kDeleteFromPrimitiveList.size());
        merge_member(original, key, m.value, schema, path, is_delete_list);
      }
    }
  }

  // A patch value taken over as is: nulls dropped (IgnoreUnmatchedNulls), directive maps
  // dropped (removeDirectives). Returns false when the value itself is a directive map.
  bool clean_copy(const Value& src, Value& dst, bool discard_nulls) {
    if (is_directive_map(src)) return false;
    copy_clean(src, dst, discard_nulls);
    return true;
  }

 private:
  static bool is_directive_map(const Value& v) {
    return v.IsObject() && find_member(v, kDirective) != nullptr;
  }

  // clean_copy of a value that is not a directive map. Objects and arrays get exactly the
  // members and elements they keep (counted first), as copy_json gives them.
  void copy_clean(const Value& src, Value& dst, bool discard_nulls) {
    if (src.IsObject()) {
      auto kept = [&](const Value& v) {
        return !(discard_nulls && v.IsNull()) && !is_directive_map(v);
      };
      rapidjson::SizeType n = 0;
      for (const auto& m : src.GetObject())
        n += kept(m.value) ? 1 : 0;
      Value::Member* out = detail::RawValue::object(dst, n, alloc_);
      const bool all = n == src.MemberCount();  // the usual case: no second look at each
      for (const auto& m : src.GetObject()) {
        if (!all && !kept(m.value)) continue;
        detail::copy_scalar(out->name, m.name, alloc_);
        copy_clean(m.value, out->value, discard_nulls);
        ++out;
      }
      return;
    }
    if (src.IsArray()) {
      rapidjson::SizeType n = 0;
      for (const auto& e : src.GetArray())
        n += is_directive_map(e) ? 0 : 1;
      Value* out = detail::RawValue::array(dst, n, alloc_);
      const bool all = n == src.Size();
      for (const auto& e : src.GetArray()) {
        if (!all && is_directive_map(e)) continue;
        copy_clean(e, *out++, discard_nulls);
      }
      return;
    }
    copy_json(dst, src, alloc_);
  }

  [[noreturn]] static void fail(const MergePath& path, const std::string& message) {
    std::string where = path.str();
    throw MergeFailure{(where.empty() ? std::string("patch") : where) + ": " + message};
  }

  void merge_member(Value& original, std::string_view key, const Value& patch_value,
                    const PatchSchemaType* schema, const MergePath& path, bool is_delete_list) {
    const MergePath here(path, key);
    if (patch_value.IsNull()) {
      auto it = original.FindMember(
          Value(rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
      if (it != original.MemberEnd()) original.EraseMember(it);
      return;
    }
    Value* orig = find_member(original, key);
    if (orig == nullptr || kind_of(*orig) != kind_of(patch_value)) {
      if (is_delete_list) return;
      Value v;
      bool keep = clean_copy(patch_value, v, true);
      if (orig == nullptr) {
        if (keep) original.AddMember(make_string(key, alloc_), v, alloc_);
      } else if (keep) {
        *orig = v;
      } else {
        original.EraseMember(original.FindMember(make_string(key, alloc_)));
      }
      return;
    }
    const PatchSchemaField* field = schema != nullptr ? schema->field(key) : nullptr;
    const PatchSchemaType* sub = field != nullptr ? field->type : nullptr;
    if (patch_value.IsObject()) {
      merge_map(*orig, patch_value, sub, here);
    } else if (patch_value.IsArray()) {
      if ((field != nullptr && field->merge_list) || is_delete_list) {
        merge_slice(*orig, patch_value, sub, field != nullptr ? field->merge_key : "",
                    is_delete_list, here);
      } else {
        copy_json(*orig, patch_value, alloc_);  // Kubernetes takes a non-merge list as is
      }
    } else {
      copy_json(*orig, patch_value, alloc_);
    }
  }

  void retain_keys(Value& original, const Value& patch, const MergePath& path) {
    const Value* retain = find_member(patch, kRetainKeys);
    if (retain == nullptr) return;
    if (!retain->IsArray()) fail(path, "$retainKeys must be a list of field names");
    auto listed = [&](std::string_view k) {
      for (const auto& e : retain->GetArray()) {
        if (e.IsString() && string_view_of(e) == k) return true;
      }
      return false;
    };
    for (const auto& m : patch.GetObject()) {
      std::string_view k = string_view_of(m.name);
      if (m.value.IsNull() || k == kRetainKeys || starts_with(k, kDeleteFromPrimitiveList) ||
          starts_with(k, kSetElementOrder)) {
        continue;
      }
      if (!listed(k)) {
        fail(path, "field \"" + std::string(k) + "\" is in the patch but not in $retainKeys");
      }
    }
    for (auto it = original.MemberBegin(); it != original.MemberEnd();) {
      if (listed(string_view_of(it->name))) {
        ++it;
      } else {
        it = original.EraseMember(it);
      }
    }
  }

  static const Value* key_of(const Value& item, std::string_view merge_key) {
    return merge_key.empty() ? &item : find_member(item, merge_key);
  }

  // The merge key of a list element (the element itself in a list of scalars); null when a
  // map element has none (or the element is not a map).
  static const Value* element_key(const Value& item, std::string_view merge_key) {
    return merge_key.empty() ? &item : (item.IsObject() ? find_member(item, merge_key) : nullptr);
  }

  // index(): position of the first element of `order` whose merge key (or value) equals
  // `item`'s; -1 when absent. Through a FirstIndex of `order`.
  class OrderIndex {
   public:
    OrderIndex(const std::vector<const Value*>& order, std::string_view merge_key)
        : order_(order), merge_key_(merge_key) {
      for (std::size_t i = 0; i < order.size(); ++i)
        index_.add(i, element_key(*order[i], merge_key));
    }
    int index_of(const Value& item) const {
      auto i = index_.find(element_key(item, merge_key_), [this](std::size_t pos) {
        return element_key(*order_[pos], merge_key_);
      });
      return i ? static_cast<int>(*i) : -1;
    }

   private:
    const std::vector<const Value*>& order_;
    std::string_view merge_key_;
    FirstIndex index_;
  };

  // partition + normalizeElementOrder + mergeSortedSlice: the list order Kubernetes produces.
  void order(Value& list, const std::vector<const Value*>& patch_order,
             const std::vector<const Value*>& server_order, std::string_view merge_key) {
    struct Item {
      Value* v;
      int patch_idx;
      int server_idx;
    };
    OrderIndex in_patch(patch_order, merge_key), in_server(server_order, merge_key);
    std::vector<Item> patch_items, server_only;
    for (auto& e : list.GetArray()) {
      Item it{&e, in_patch.index_of(e), in_server.index_of(e)};
      (it.patch_idx >= 0 ? patch_items : server_only).push_back(it);
    }
    auto sort_key = [](int idx) { return idx >= 0 ? idx : INT_MAX; };
    std::stable_sort(patch_items.begin(), patch_items.end(), [&](const Item& a, const Item& b) {
      return sort_key(a.patch_idx) < sort_key(b.patch_idx);
    });
    std::stable_sort(server_only.begin(), server_only.end(), [&](const Item& a, const Item& b) {
      return sort_key(a.server_idx) < sort_key(b.server_idx);
    });
    Value out(rapidjson::kArrayType);
    out.Reserve(list.Size(), alloc_);
    std::size_t i = 0, j = 0;
    while (i < server_only.size() || j < patch_items.size()) {
      bool take_left;
      if (i >= server_only.size()) {
        take_left = false;
      } else if (j >= patch_items.size()) {
        take_left = true;
      } else {
        int li = server_only[i].server_idx, ri = patch_items[j].server_idx;
        take_left = li >= 0 && ri >= 0 && li < ri;
      }
      Value& v = take_left ? *server_only[i++].v : *patch_items[j++].v;
      out.PushBack(v, alloc_);  // moves
    }
    list.Swap(out);
  }

  // Keeps the elements of `list` for which `keep(element)` holds, in order, in one pass; a
  // kept element is in its final place before `keep` sees the next one.
  template <class Keep>
  static void keep_if(Value& list, Keep keep) {
    rapidjson::SizeType w = 0;
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
      if (!keep(static_cast<const Value&>(list[i]))) continue;
      if (w != i) list[w] = list[i];  // moves
      ++w;
    }
    list.Erase(list.Begin() + w, list.End());
  }

  void check_element_types(const Value& a, const Value& b, const MergePath& path) {
    int kind = -1;
    for (const Value* list : {&a, &b}) {
      for (const auto& e : list->GetArray()) {
        int k = kind_of(e);
        if (k == 4) fail(path, "lists of lists are not supported");
        if (kind == -1) kind = k;
        if (k != kind) fail(path, "list element types are not identical");
      }
    }
  }

  void merge_slice(Value& original, const Value& patch, const PatchSchemaType* elem_schema,
                   std::string_view merge_key, bool is_delete_list, const MergePath& path) {
    if (original.Empty() && patch.Empty()) return;
    check_element_types(original, patch, path);
    bool maps =
        (!original.Empty() && original[0].IsObject()) || (!patch.Empty() && patch[0].IsObject());
    if (!maps) {
      if (is_delete_list) {
        FirstIndex deleted;
        for (rapidjson::SizeType i = 0; i < patch.Size(); ++i)
          deleted.add(i, &patch[i]);
        keep_if(original, [&](const Value& e) {
          return !deleted.find(&e, [&](std::size_t pos) { return &patch[pos]; });
        });
        return;
      }
      Document server_copy;
      server_copy.CopyFrom(original, server_copy.GetAllocator());
      for (const auto& p : patch.GetArray())
        original.PushBack(Value(p, alloc_), alloc_);
      // Duplicates go (first occurrence kept; the order is normalized below anyway).
      {
        FirstIndex seen;
        std::size_t pos = 0;
        keep_if(original, [&](const Value& e) {
          bool dup = seen.find(&e, [&](std::size_t p) { return &original[p]; }).has_value();
          // Kept elements are compacted to the front: the next kept one lands at `pos`.
          if (!dup) seen.add(pos++, &e);
          return !dup;
        });
      }
      std::vector<const Value*> patch_order, server_order;
      for (const auto& p : patch.GetArray())
        patch_order.push_back(&p);
      for (const auto& s : server_copy.GetArray())
        server_order.push_back(&s);
      order(original, patch_order, server_order, "");
      return;
    }
    if (merge_key.empty()) fail(path, "cannot merge lists without merge key");

    // Special elements: {$patch: delete, key: v} removes entries; {$patch: replace} replaces.
    bool replace = false;
    std::vector<const Value*> plain;
    std::vector<const Value*> deleted;  // merge keys of {$patch: delete} items
    for (const auto& p : patch.GetArray()) {
      const Value* d = find_member(p, kDirective);
      if (d == nullptr) {
        plain.push_back(&p);
        continue;
      }
      std::string_view dv = d->IsString() ? string_view_of(*d) : std::string_view();
      if (dv == "delete") {
        const Value* kv = find_member(p, merge_key);
        if (kv == nullptr) {
          fail(path, "map: " + describe(p) +
                         " does not contain declared merge key: " + std::string(merge_key));
        }
        deleted.push_back(kv);
      } else if (dv == "replace") {
        replace = true;
      } else if (dv == "merge") {
        fail(path, "merging lists cannot yet be specified in the patch");
      } else {
        fail(path, "unknown patch type: " + describe(*d) + " in map: " + describe(p));
      }
    }
    // The deletions are independent of each other and of the directives after them: one pass.
    if (!deleted.empty()) {
      FirstIndex del;
      for (std::size_t i = 0; i < deleted.size(); ++i)
        del.add(i, deleted[i]);
      keep_if(original, [&](const Value& e) {
        return !del.find(find_member(e, merge_key), [&](std::size_t i) { return deleted[i]; });
      });
    }
    if (replace) {
      original.SetArray();
      for (const Value* p : plain)
        original.PushBack(copied_json(*p, alloc_), alloc_);
      plain.clear();
    }

    // Merge patch items into the entries with the same key; append the others.
    rapidjson::SizeType appended = 0;
    FirstIndex by_key;
    auto key_at = [&](std::size_t i) {
      return element_key(original[static_cast<rapidjson::SizeType>(i)], merge_key);
    };
    for (rapidjson::SizeType i = 0; i < original.Size(); ++i)
      by_key.add(i, key_at(i));
    for (const Value* p : plain) {
      const Value* kv = find_member(*p, merge_key);
      if (kv == nullptr) {
        fail(path, "map: " + describe(*p) +
                       " does not contain declared merge key: " + std::string(merge_key));
      }
      // The first element with that key, an appended one included (merging keeps the key).
      if (auto match = by_key.find(kv, key_at)) {
        merge_map(original[static_cast<rapidjson::SizeType>(*match)], *p, elem_schema,
                  MergePath(path, merge_key, *kv));
      } else {
        original.PushBack(copied_json(*p, alloc_), alloc_);
        by_key.add(original.Size() - 1, key_at(original.Size() - 1));
        ++appended;
      }
    }
    for (const auto& e : original.GetArray()) {
      if (!e.IsObject() || find_member(e, merge_key) == nullptr) {
        fail(path, "map: " + describe(e) +
                       " does not contain declared merge key: " + std::string(merge_key));
      }
    }
    // Server order: the entries that came from the original list (merged in place, keys
    // unchanged); the appended ones are at the end.
    std::vector<const Value*> server_order;
    for (rapidjson::SizeType i = 0; i + appended < original.Size(); ++i) {
      server_order.push_back(&original[i]);
    }
    std::vector<const Value*> patch_order(plain.begin(), plain.end());
    order(original, patch_order, server_order, merge_key);
  }

  // The items of a patch list must appear in its $setElementOrder list, in the same relative
  // order (deletions and other directive items aside), as validatePatchWithSetOrderList checks.
  static void check_set_order(const Value& patch_list, const Value& order,
                              std::string_view merge_key, const MergePath& path) {
    rapidjson::SizeType p = 0, o = 0;
    while (p < patch_list.Size() && o < order.Size()) {
      const Value& item = patch_list[p];
      if (item.IsObject() && find_member(item, kDirective) != nullptr) {
        ++p;
        continue;
      }
      const Value* a =
          merge_key.empty() ? &item : (item.IsObject() ? find_member(item, merge_key) : nullptr);
      const Value* b = merge_key.empty()
                           ? &order[o]
                           : (order[o].IsObject() ? find_member(order[o], merge_key) : nullptr);
      if (!merge_key.empty() && (a == nullptr || b == nullptr)) {
        fail(path, "map: " + describe(a == nullptr ? item : order[o]) +
                       " does not contain declared merge key: " + std::string(merge_key));
      }
      if (go_equal(a, b)) ++p;
      ++o;
    }
    while (p < patch_list.Size() && patch_list[p].IsObject() &&
           find_member(patch_list[p], kDirective) != nullptr) {
      ++p;
    }
    if (p < patch_list.Size()) {
      fail(path, "the order in the patch list " + describe(patch_list) +
                     " doesn't match the $setElementOrder list " + describe(order));
    }
  }

  void set_element_order(Value& original, const Value& patch, const PatchSchemaType* schema,
                         const MergePath& path, std::unordered_set<std::string_view>& consumed) {
    for (const auto& m : patch.GetObject()) {
      std::string_view key = string_view_of(m.name);
      if (!starts_with(key, kSetElementOrder)) continue;
      std::string_view list_key = key.substr(kSetElementOrder.size());
      const MergePath here(path, list_key);
      if (!m.value.IsArray()) fail(here, "$setElementOrder must be a list");
      const PatchSchemaField* field = schema != nullptr ? schema->field(list_key) : nullptr;
      std::string_view merge_key = field != nullptr ? field->merge_key : "";
      Value* orig = find_member(original, list_key);
      const Value* patch_list = find_member(patch, list_key);
      if (orig != nullptr && !orig->IsArray()) fail(here, "the original value is not a list");
      if (patch_list != nullptr && !patch_list->IsArray())
        fail(here, "the patch value is not a list");
      if (patch_list != nullptr) check_set_order(*patch_list, m.value, merge_key, here);
      if (orig == nullptr && patch_list == nullptr) continue;
      Document server_copy(rapidjson::kArrayType);
      if (orig != nullptr) copy_json(server_copy, *orig, server_copy.GetAllocator());
      if (orig == nullptr) {
        Value v;
        clean_copy(*patch_list, v, false);
        original.AddMember(make_string(list_key, alloc_), v, alloc_);
        orig = find_member(original, list_key);
      } else if (patch_list != nullptr) {
        if (field != nullptr && field->merge_list) {
          merge_slice(*orig, *patch_list, field->type, merge_key, false, here);
        } else {
          copy_json(*orig, *patch_list, alloc_);
        }
      }
      if (patch_list != nullptr) consumed.insert(list_key);
      std::vector<const Value*> set_order, server_order;
      for (const auto& e : m.value.GetArray())
        set_order.push_back(&e);
      for (const auto& e : server_copy.GetArray())
        server_order.push_back(&e);
      // $setElementOrder lists hold {mergeKey: value} maps for map lists, values otherwise.
      order(*orig, set_order, server_order, merge_key);
    }
  }

  Allocator& alloc_;
};

}  // namespace

std::uint64_t& strategic_merge_key_comparisons() {
  thread_local std::uint64_t comparisons = 0;
  return comparisons;
}

Status apply_strategic_merge_patch(Document& target, const Value& patch,
                                   const PatchSchemaType& schema) {
  if (!patch.IsObject()) return Error{"strategic merge patch must be a JSON object"};
  if (!target.IsObject()) return Error{"strategic merge patch target must be a JSON object"};
  Document work;
  copy_json(work, target, work.GetAllocator());
  if (auto st = apply_strategic_merge_patch_in_place(work, patch, schema); !st) return st;
  target.Swap(work);
  return ok_status();
}

Status apply_strategic_merge_patch_in_place(Document& target, const Value& patch,
                                            const PatchSchemaType& schema) {
  if (!patch.IsObject()) return Error{"strategic merge patch must be a JSON object"};
  if (!target.IsObject()) return Error{"strategic merge patch target must be a JSON object"};
  try {
    Merger(target.GetAllocator()).merge_map(target, patch, &schema, MergePath());
  } catch (const MergeFailure& f) {
    return Error{"strategic merge patch: " + f.message};
  }
  return ok_status();
}

}  // namespace meshop::api
