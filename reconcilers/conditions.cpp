#include "reconcilers/conditions.hpp"

#include <utility>

#include "api/json.hpp"

namespace meshop::reconcilers {

const rapidjson::Value* find_condition(const rapidjson::Value& object, std::string_view type) {
  const rapidjson::Value* conds = api::find(object, "/status/conditions");
  const rapidjson::Value* found = nullptr;
  if (conds != nullptr && conds->IsArray())
    for (const rapidjson::Value& c : conds->GetArray())
      if (c.IsObject() && api::string_at(c, {"type"}) == type) found = &c;
  return found;
}

bool condition_shows(const rapidjson::Value* current, const Condition& want) {
  return current != nullptr && api::string_at(*current, {"status"}) == want.status &&
         api::string_at(*current, {"reason"}) == want.reason &&
         api::string_at(*current, {"message"}) == want.message &&
         (want.last_transition.empty() ||
          api::string_at(*current, {"lastTransitionTime"}) == want.last_transition);
}

rapidjson::Value merge_conditions(const rapidjson::Value& object,
                                  const std::vector<Condition>& mine, std::string_view now,
                                  rapidjson::Document::AllocatorType& a) {
  const rapidjson::Value* generation = api::find(object, "/metadata/generation");
  auto entry = [&](const Condition& c) {
    std::string transition = c.last_transition;
    if (transition.empty()) {
      const rapidjson::Value* existing = find_condition(object, c.type);
      if (existing != nullptr && api::string_at(*existing, {"status"}) == c.status)
        transition = api::string_at(*existing, {"lastTransitionTime"});
      if (transition.empty()) transition = std::string(now);
    }
    rapidjson::Value cond(rapidjson::kObjectType);
    cond.AddMember("type", api::make_string(c.type, a), a);
    cond.AddMember("status", api::make_string(c.status, a), a);
    if (generation != nullptr && generation->IsInt64())
      cond.AddMember("observedGeneration", rapidjson::Value(generation->GetInt64()), a);
    cond.AddMember("lastTransitionTime", api::make_string(transition, a), a);
    cond.AddMember("reason", api::make_string(c.reason, a), a);
    cond.AddMember("message", api::make_string(c.message, a), a);
    return cond;
  };
  auto mine_of = [&](std::string_view type) -> const Condition* {
    for (const Condition& c : mine)
      if (c.type == type) return &c;
    return nullptr;
  };

  rapidjson::Value out(rapidjson::kArrayType);
  std::vector<const Condition*> placed;
  const rapidjson::Value* current = api::find(object, "/status/conditions");
  if (current != nullptr && current->IsArray())
    for (const rapidjson::Value& c : current->GetArray()) {
      const std::string type = c.IsObject() ? api::string_at(c, {"type"}) : std::string();
      const Condition* own = mine_of(type);
      if (own == nullptr) {
        out.PushBack(rapidjson::Value(c, a), a);  // another reconciler's, as it is
        continue;
      }
      bool already = false;
      for (const Condition* p : placed)
        already = already || p == own;
      if (already) continue;  // a duplicate of a type of mine: one entry per type
      out.PushBack(entry(*own), a);
      placed.push_back(own);
    }
  for (const Condition& c : mine) {
    bool already = false;
    for (const Condition* p : placed)
      already = already || p == &c;
    if (!already) out.PushBack(entry(c), a);
  }
  return out;
}

void guard_with_resource_version(rapidjson::Document& patch, const rapidjson::Value& object) {
  const std::string rv = api::string_at(object, {"metadata", "resourceVersion"});
  if (rv.empty()) return;
  auto& a = patch.GetAllocator();
  rapidjson::Value* meta = api::find_member(patch, "metadata");
  if (meta == nullptr || !meta->IsObject()) {
    patch.RemoveMember("metadata");
    patch.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
    meta = api::find_member(patch, "metadata");
  }
  meta->RemoveMember("resourceVersion");
  meta->AddMember("resourceVersion", api::make_string(rv, a), a);
}

kube::Task<api::Result<bool>> patch_status(kube::Writer& writer, kube::Reader* reader,
                                           const kube::ResourceType& type,
                                           const rapidjson::Value& object, StatusPatch body,
                                           int attempts) {
  const std::string ns = api::string_at(object, {"metadata", "namespace"});
  const std::string name = api::string_at(object, {"metadata", "name"});
  kube::PatchOptions options;
  options.subresource = "status";
  std::optional<std::string> patch = body(object);
  rapidjson::Document fresh;  // the object as last read from the apiserver
  for (int attempt = 1;; ++attempt) {
    if (!patch) co_return false;
    auto r = co_await writer.patch(type, ns, name, kube::PatchType::kMerge, *patch, options);
    if (r) co_return true;
    if (!r.error().conflict() || reader == nullptr || attempt >= attempts) co_return r.error();
    auto got = co_await reader->get(type, ns, name);
    if (!got) co_return got.error();
    fresh = std::move(*got);
    patch = body(fresh);
  }
}

}  // namespace meshop::reconcilers
