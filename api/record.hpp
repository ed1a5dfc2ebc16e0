// A record: an object kept as the few fields that are its own plus one base it shares with
// objects like it (issue 13). The pods of one ReplicaSet differ only in name, resourceVersion,
// creation and deletion time; everything else the planners read (namespace, labels, owner,
// annotations, containers, status) is the same for all of them while they are healthy. A store
// of 100k pods keeps each as a record whose base is kept once (runtime::SharedParts), so a pod
// costs the bytes of its name and four 16-byte slots instead of a JSON tree of ~10 members.
//
// Layout: a JSON array
//   [0] base                the object without the fields below (an object)
//   [1] metadata.name
//   [2] metadata.resourceVersion
//   [3] metadata.creationTimestamp      (null when absent)
//   [4] metadata.deletionTimestamp      (only when present)
// No Kubernetes object is an array, so a record is never taken for one, and field() reads a
// record and a whole object alike: code that may be given records reads through field() and
// field_string(), never through api::find on the object itself (a record's find("/metadata/name")
// names nothing). Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

#include "api/json.hpp"

namespace meshop::api {

inline constexpr rapidjson::SizeType kRecordBase = 0;
inline constexpr rapidjson::SizeType kRecordName = 1;
inline constexpr rapidjson::SizeType kRecordResourceVersion = 2;
inline constexpr rapidjson::SizeType kRecordCreationTimestamp = 3;
inline constexpr rapidjson::SizeType kRecordDeletionTimestamp = 4;

bool is_record(const Value& v);
// Makes `object` (an object with an object metadata) a record, in place; anything else is left
// as it is. A whole object again: from_record.
void to_record(Document& object);
// The whole object a record stands for (the base with its own fields back in metadata, in the
// order name, resourceVersion, creationTimestamp, deletionTimestamp after the base's); a copy of
// `v` when it is not a record.
Document from_record(const Value& v);

// api::find that reads a record as the object it stands for. A pointer naming one of the
// record's own fields must name it exactly ("/metadata/name"); "/metadata" of a record is the
// base's metadata, without them.
const Value* field(const Value& object, std::string_view pointer);
// The string at `pointer` (field()), "" when absent or not a string.
std::string_view field_string(const Value& object, std::string_view pointer);

}  // namespace meshop::api
