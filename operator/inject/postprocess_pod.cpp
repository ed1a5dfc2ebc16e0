// Pod JSON access shared by the post-processing steps (postprocess_detail.hpp).
#include "api/json.hpp"
#include "operator/inject/postprocess_detail.hpp"

namespace meshop::inject::postprocess {

const rapidjson::Value* annotations_of(const rapidjson::Value& pod) {
  if (!pod.IsObject()) return nullptr;
  const rapidjson::Value* metadata = api::find_member(pod, "metadata");
  if (metadata == nullptr || !metadata->IsObject()) return nullptr;
  const rapidjson::Value* annotations = api::find_member(*metadata, "annotations");
  return annotations != nullptr && annotations->IsObject() ? annotations : nullptr;
}

rapidjson::Value& ensure_annotations(rapidjson::Value& pod,
                                     rapidjson::Document::AllocatorType& allocator) {
  if (!pod.IsObject()) pod.SetObject();
  rapidjson::Value* metadata = api::find_member(pod, "metadata");
  if (metadata == nullptr) {
    pod.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), allocator);
    metadata = api::find_member(pod, "metadata");
  } else if (!metadata->IsObject()) {
    metadata->SetObject();
  }
  rapidjson::Value* annotations = api::find_member(*metadata, "annotations");
  if (annotations == nullptr) {
    metadata->AddMember("annotations", rapidjson::Value(rapidjson::kObjectType), allocator);
    annotations = api::find_member(*metadata, "annotations");
  } else if (!annotations->IsObject()) {
    annotations->SetObject();  // a null map (annotations: null) becomes an empty one
  }
  return *annotations;
}

std::optional<std::string_view> annotation(const rapidjson::Value& pod, std::string_view name) {
  const rapidjson::Value* annotations = annotations_of(pod);
  if (annotations == nullptr) return std::nullopt;
  const rapidjson::Value* v = api::find_member(*annotations, name);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return api::string_view_of(*v);
}

void set_annotation(rapidjson::Value& pod, std::string_view name, std::string_view value,
                    rapidjson::Document::AllocatorType& allocator) {
  rapidjson::Value& annotations = ensure_annotations(pod, allocator);
  if (rapidjson::Value* v = api::find_member(annotations, name)) {
    *v = api::make_string(value, allocator);
    return;
  }
  annotations.AddMember(api::make_string(name, allocator), api::make_string(value, allocator),
                        allocator);
}

namespace {

rapidjson::Value* find_container(rapidjson::Value& spec, std::string_view list,
                                 std::string_view name) {
  rapidjson::Value* containers = api::find_member(spec, list);
  if (containers == nullptr || !containers->IsArray()) return nullptr;
  for (auto& c : containers->GetArray()) {
    if (!c.IsObject()) continue;
    const rapidjson::Value* n = api::find_member(c, "name");
    if (n != nullptr && n->IsString() && api::string_view_of(*n) == name) return &c;
  }
  return nullptr;
}

}  // namespace

rapidjson::Value* find_sidecar(rapidjson::Value& pod) {
  if (!pod.IsObject()) return nullptr;
  rapidjson::Value* spec = api::find_member(pod, "spec");
  if (spec == nullptr || !spec->IsObject()) return nullptr;
  if (rapidjson::Value* c = find_container(*spec, "containers", kProxyContainerName)) return c;
  return find_container(*spec, "initContainers", kProxyContainerName);
}

rapidjson::Value& ensure_env(rapidjson::Value& container,
                             rapidjson::Document::AllocatorType& allocator) {
  rapidjson::Value* env = api::find_member(container, "env");
  if (env == nullptr) {
    container.AddMember("env", rapidjson::Value(rapidjson::kArrayType), allocator);
    env = api::find_member(container, "env");
  } else if (!env->IsArray()) {
    env->SetArray();  // env: null is a nil slice in Go
  }
  return *env;
}

}  // namespace meshop::inject::postprocess
