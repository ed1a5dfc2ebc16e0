#include "api/record.hpp"

namespace meshop::api {
namespace {

struct OwnField {
  std::string_view member;  // in metadata
  rapidjson::SizeType slot;
};
constexpr OwnField kOwnFields[] = {{"name", kRecordName},
                                   {"resourceVersion", kRecordResourceVersion},
                                   {"creationTimestamp", kRecordCreationTimestamp},
                                   {"deletionTimestamp", kRecordDeletionTimestamp}};
constexpr std::string_view kMetadataPrefix = "/metadata/";

}  // namespace

bool is_record(const Value& v) {
  return v.IsArray() && v.Size() > kRecordCreationTimestamp && v[kRecordBase].IsObject();
}

void to_record(Document& object) {
  if (!object.IsObject()) return;
  Value* meta = find_member(object, "metadata");
  if (meta == nullptr || !meta->IsObject()) return;
  auto& a = object.GetAllocator();
  Value slots[std::size(kOwnFields)];
  for (std::size_t i = 0; i < std::size(kOwnFields); ++i) {
    auto it = meta->FindMember(
        Value(rapidjson::StringRef(kOwnFields[i].member.data(),
                                   static_cast<rapidjson::SizeType>(kOwnFields[i].member.size()))));
    if (it == meta->MemberEnd()) continue;
    slots[i] = it->value;  // moves the handle: the value stays in `object`'s allocator
    meta->EraseMember(it);
  }
  Value record(rapidjson::kArrayType);
  const bool deleting = !slots[3].IsNull();
  record.Reserve(deleting ? 5 : 4, a);
  Value base;
  base.Swap(object);  // the handle: nothing is copied
  record.PushBack(base, a);
  for (std::size_t i = 0; i < (deleting ? 4 : 3); ++i)
    record.PushBack(slots[i], a);
  static_cast<Value&>(object).Swap(record);
}

Document from_record(const Value& v) {
  Document out;
  if (!is_record(v)) {
    out.CopyFrom(v, out.GetAllocator());
    return out;
  }
  auto& a = out.GetAllocator();
  out.CopyFrom(v[kRecordBase], a);
  Value& meta = ensure_object_member(out, "metadata", a);
  for (const OwnField& f : kOwnFields)
    if (f.slot < v.Size() && !v[f.slot].IsNull())
      meta.AddMember(make_string(f.member, a), Value(v[f.slot], a), a);
  return out;
}

const Value* field(const Value& object, std::string_view pointer) {
  if (!is_record(object)) return find(object, pointer);
  if (pointer.starts_with(kMetadataPrefix)) {
    std::string_view member = pointer.substr(kMetadataPrefix.size());
    for (const OwnField& f : kOwnFields)
      if (member == f.member) {
        if (f.slot >= object.Size() || object[f.slot].IsNull()) return nullptr;
        return &object[f.slot];
      }
  }
  return find(object[kRecordBase], pointer);
}

std::string_view field_string(const Value& object, std::string_view pointer) {
  const Value* v = field(object, pointer);
  return v != nullptr && v->IsString() ? string_view_of(*v) : std::string_view();
}

}  // namespace meshop::api
