// A deep copy of a JSON value into another document's allocator, as Value::CopyFrom makes it but
// without its detour: RapidJSON 1.1 (Debian 12) copies an object or array by replaying it as SAX
// events into a temporary GenericDocument, whose stack is a malloc'd buffer. copy_json walks the
// value once and gives each copied object and array exactly its size (one allocation each,
// filled in place; AddMember would give every object room for 16 members, 512 bytes).
//
// The copy is the one CopyFrom gives: same types, same member order, numbers with the same
// flags, strings copied into `allocator` except constant strings (StringRef), which both keep
// referring to the same bytes; a string short enough to live inside its Value is copied with
// the Value. Recursion is as deep as the value (documents are depth-bounded when parsed, see
// json.hpp).
#pragma once

#include <new>

#include <rapidjson/document.h>

#include "api/json.hpp"

namespace meshop::api::detail {
// Names the specialization below: not a stack allocator, a key to Value's internals.
struct RawValueAccess;
}  // namespace meshop::api::detail

namespace rapidjson {

// Value's private members are open to every GenericDocument (a friend template). This
// specialization, on meshop's own key type, uses that to build objects and arrays of an exact
// size in place, which RapidJSON 1.1 has no public call for (MemberReserve came later). It is
// never a document: only these static functions.
template <>
class GenericDocument<UTF8<>, MemoryPoolAllocator<CrtAllocator>,
                      meshop::api::detail::RawValueAccess> {
 public:
  using V = GenericValue<UTF8<>, MemoryPoolAllocator<CrtAllocator>>;
  using A = MemoryPoolAllocator<CrtAllocator>;

  // `v` becomes an object of `n` members, each a null name and a null value, to be filled in
  // (every name must be made a string). What `v` held is dropped (the pool frees nothing).
  static V::Member* object(V& v, SizeType n, A& allocator) {
    V::Member* m = nullptr;
    if (n != 0) {
      m = static_cast<V::Member*>(allocator.Malloc(n * sizeof(V::Member)));
      for (SizeType i = 0; i < n; ++i) {
        new (&m[i].name) V();
        new (&m[i].value) V();
      }
    }
    v.data_.f.flags = V::kObjectFlag;
    v.SetMembersPointer(m);
    v.data_.o.size = v.data_.o.capacity = n;
    return m;
  }
  // `v` becomes an array of `n` nulls, to be filled in.
  static V* array(V& v, SizeType n, A& allocator) {
    V* e = nullptr;
    if (n != 0) {
      e = static_cast<V*>(allocator.Malloc(n * sizeof(V)));
      for (SizeType i = 0; i < n; ++i)
        new (&e[i]) V();
    }
    v.data_.f.flags = V::kArrayFlag;
    v.SetElementsPointer(e);
    v.data_.a.size = v.data_.a.capacity = n;
    return e;
  }
  // Whether copying `v` is copying its bits: a null, a boolean, a number, a string held inside
  // the Value or a constant string (one that refers to bytes it does not own).
  static bool copied_by_bits(const V& v) {
    const auto flags = v.data_.f.flags;
    return !(v.IsObject() || v.IsArray()) && flags != V::kCopyStringFlag;
  }
  static void copy_bits(V& dst, const V& src) { dst.data_ = src.data_; }
};

}  // namespace rapidjson

namespace meshop::api {

namespace detail {
using RawValue = rapidjson::GenericDocument<rapidjson::UTF8<>, Allocator, detail::RawValueAccess>;

// A string or scalar (not an object or array) copied as copy_json copies it.
inline void copy_scalar(Value& dst, const Value& src, Allocator& allocator) {
  if (RawValue::copied_by_bits(src)) {
    RawValue::copy_bits(dst, src);
  } else {
    dst.SetString(src.GetString(), src.GetStringLength(), allocator);
  }
}
}  // namespace detail

inline void copy_json(Value& dst, const Value& src, Allocator& allocator) {
  switch (src.GetType()) {
    case rapidjson::kObjectType: {
      Value::Member* m = detail::RawValue::object(dst, src.MemberCount(), allocator);
      for (const auto& s : src.GetObject()) {
        detail::copy_scalar(m->name, s.name, allocator);
        copy_json(m->value, s.value, allocator);
        ++m;
      }
      return;
    }
    case rapidjson::kArrayType: {
      Value* e = detail::RawValue::array(dst, src.Size(), allocator);
      for (const auto& s : src.GetArray())
        copy_json(*e++, s, allocator);
      return;
    }
    default:
      detail::copy_scalar(dst, src, allocator);
      return;
  }
}

// The copy as a new value (owned by `allocator`).
inline Value copied_json(const Value& src, Allocator& allocator) {
  Value v;
  copy_json(v, src, allocator);
  return v;
}

}  // namespace meshop::api
