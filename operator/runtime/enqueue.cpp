#include "operator/runtime/enqueue.hpp"

#include "api/record.hpp"

namespace meshop::runtime {

namespace {

std::string_view group_of(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

std::string_view str(const rapidjson::Value& v, const char* name) {
  auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

StoreHandlers enqueue_each(WorkQueue& queue, KeyMapper map) {
  auto add_all = [&queue, map](const rapidjson::Value& o) {
    for (const auto& key : map(o))
      queue.add(key);
  };
  return {
      .on_add = [add_all](const Object& o) { add_all(*o); },
      .on_update =
          [add_all](const Object& old_object, const Object& new_object) {
            add_all(*old_object);  // coalesces with the new object's keys in the queue
            add_all(*new_object);
          },
      .on_delete = [add_all](const Object& o) { add_all(*o); },
  };
}

}  // namespace

std::vector<std::string> owner_keys(const rapidjson::Value& object, std::string_view api_version,
                                    std::string_view kind, bool controller_only) {
  std::vector<std::string> out;
  // A record (api/record.hpp) keeps its owner references in its base.
  const rapidjson::Value& whole = api::is_record(object) ? object[api::kRecordBase] : object;
  if (!whole.IsObject()) return out;
  auto meta = whole.FindMember("metadata");
  if (meta == whole.MemberEnd() || !meta->value.IsObject()) return out;
  auto refs = meta->value.FindMember("ownerReferences");
  if (refs == meta->value.MemberEnd() || !refs->value.IsArray()) return out;
  // Owners match by group and kind: the version of a reference may differ from ours.
  std::string_view group = group_of(api_version);
  for (const auto& ref : refs->value.GetArray()) {
    if (!ref.IsObject()) continue;
    if (str(ref, "kind") != kind || group_of(str(ref, "apiVersion")) != group) continue;
    if (controller_only) {
      auto c = ref.FindMember("controller");
      if (c == ref.MemberEnd() || !c->value.IsBool() || !c->value.GetBool()) continue;
    }
    out.push_back(make_key(namespace_of(object), str(ref, "name")));
  }
  return out;
}

StoreHandlers enqueue_object(WorkQueue& queue) {
  return enqueue_each(
      queue, [](const rapidjson::Value& o) { return std::vector<std::string>{object_key(o)}; });
}

StoreHandlers enqueue_owner(WorkQueue& queue, std::string api_version, std::string kind,
                            bool controller_only) {
  return enqueue_each(queue, [api_version = std::move(api_version), kind = std::move(kind),
                              controller_only](const rapidjson::Value& o) {
    return owner_keys(o, api_version, kind, controller_only);
  });
}

StoreHandlers enqueue_mapped(WorkQueue& queue, KeyMapper map) {
  return enqueue_each(queue, std::move(map));
}

}  // namespace meshop::runtime
