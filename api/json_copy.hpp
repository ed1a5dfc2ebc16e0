// A deep copy of a JSON value into another document's allocator, as Value::CopyFrom makes it but
// without its detour: RapidJSON 1.1 (Debian 12) copies an object or array by replaying it as SAX
// events into a temporary GenericDocument, whose stack is a malloc'd buffer, and grows each copied
// array and object by doubling. copy_json walks the value once and sizes each array exactly.
//
// The copy is the one CopyFrom gives: same types, same member order, numbers with the same
// flags, strings copied into `allocator` except constant strings (StringRef), which both keep
// referring to the same bytes. Recursion is as deep as the value (documents are depth-bounded
// when parsed, see json.hpp).
#pragma once

#include <rapidjson/document.h>

#include "api/json.hpp"

namespace meshop::api {

inline void copy_json(Value& dst, const Value& src, Allocator& allocator) {
  switch (src.GetType()) {
    case rapidjson::kObjectType: {
      dst.SetObject();
      for (const auto& m : src.GetObject()) {
        Value name(m.name, allocator);  // a string: no SAX detour for scalars
        Value v;
        copy_json(v, m.value, allocator);
        dst.AddMember(name, v, allocator);
      }
      return;
    }
    case rapidjson::kArrayType: {
      dst.SetArray();
      dst.Reserve(src.Size(), allocator);
      for (const auto& e : src.GetArray()) {
        Value v;
        copy_json(v, e, allocator);
        dst.PushBack(v, allocator);
      }
      return;
    }
    default:
      dst = Value(src, allocator);
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
