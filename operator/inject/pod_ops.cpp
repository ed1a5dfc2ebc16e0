#include "operator/inject/pod_ops.hpp"

#include <algorithm>

#include "api/json_writer.hpp"

namespace meshop::inject {

namespace {

rapidjson::Value& ensure_object_member(rapidjson::Value& obj, std::string_view name,
                                       api::Allocator& alloc) {
  rapidjson::Value* m = api::find_member(obj, name);
  if (m == nullptr) {
    obj.AddMember(api::make_string(name, alloc), rapidjson::Value(rapidjson::kObjectType), alloc);
    m = api::find_member(obj, name);
  } else if (!m->IsObject()) {
    m->SetObject();
  }
  return *m;
}

void set_map_entry(api::Document& pod, std::string_view map, std::string_view key,
                   std::string_view value) {
  auto& alloc = pod.GetAllocator();
  if (!pod.IsObject()) pod.SetObject();
  rapidjson::Value& meta = ensure_object_member(pod, "metadata", alloc);
  rapidjson::Value& m = ensure_object_member(meta, map, alloc);
  if (rapidjson::Value* existing = api::find_member(m, key))
    existing->SetString(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc);
  else
    m.AddMember(api::make_string(key, alloc), api::make_string(value, alloc), alloc);
}

const rapidjson::Value* metadata_entry(const rapidjson::Value& pod, std::string_view map,
                                       std::string_view key) {
  if (!pod.IsObject()) return nullptr;
  const rapidjson::Value* meta = api::find_member(pod, "metadata");
  if (meta == nullptr || !meta->IsObject()) return nullptr;
  const rapidjson::Value* m = api::find_member(*meta, map);
  if (m == nullptr || !m->IsObject()) return nullptr;
  const rapidjson::Value* v = api::find_member(*m, key);
  return v != nullptr && v->IsString() ? v : nullptr;
}

rapidjson::Value* annotations_of(rapidjson::Value& pod) {
  if (!pod.IsObject()) return nullptr;
  rapidjson::Value* meta = api::find_member(pod, "metadata");
  if (meta == nullptr || !meta->IsObject()) return nullptr;
  rapidjson::Value* m = api::find_member(*meta, "annotations");
  return m != nullptr && m->IsObject() ? m : nullptr;
}

std::string_view name_of(const rapidjson::Value& c) {
  if (!c.IsObject()) return {};
  const rapidjson::Value* n = api::find_member(c, "name");
  return n != nullptr && n->IsString() ? api::string_view_of(*n) : std::string_view();
}

void append_names(api::JsonWriter& out, const rapidjson::Value* list) {
  if (list == nullptr || !list->IsArray() || list->Empty()) {
    out.raw("null");
    return;
  }
  out.raw('[');
  bool first = true;
  for (const auto& e : list->GetArray()) {
    if (!first) out.raw(',');
    first = false;
    out.string(name_of(e));
  }
  out.raw(']');
}

}  // namespace

rapidjson::Value* container_list(rapidjson::Value& pod, std::string_view list) {
  if (!pod.IsObject()) return nullptr;
  rapidjson::Value* spec = api::find_member(pod, "spec");
  if (spec == nullptr || !spec->IsObject()) return nullptr;
  rapidjson::Value* l = api::find_member(*spec, list);
  return l != nullptr && l->IsArray() ? l : nullptr;
}

const rapidjson::Value* container_list(const rapidjson::Value& pod, std::string_view list) {
  return container_list(const_cast<rapidjson::Value&>(pod), list);
}

rapidjson::Value* find_container(rapidjson::Value* list, std::string_view name) {
  if (list == nullptr || !list->IsArray()) return nullptr;
  for (auto& c : list->GetArray())
    if (name_of(c) == name) return &c;
  return nullptr;
}

const rapidjson::Value* find_container(const rapidjson::Value* list, std::string_view name) {
  return find_container(const_cast<rapidjson::Value*>(list), name);
}

rapidjson::Value* find_pod_container(rapidjson::Value& pod, std::string_view name) {
  if (rapidjson::Value* c = find_container(container_list(pod, "containers"), name)) return c;
  return find_container(container_list(pod, "initContainers"), name);
}

const rapidjson::Value* find_pod_container(const rapidjson::Value& pod, std::string_view name) {
  return find_pod_container(const_cast<rapidjson::Value&>(pod), name);
}

const rapidjson::Value* annotation(const rapidjson::Value& pod, std::string_view key) {
  return metadata_entry(pod, "annotations", key);
}

const rapidjson::Value* label(const rapidjson::Value& pod, std::string_view key) {
  return metadata_entry(pod, "labels", key);
}

void set_annotation(api::Document& pod, std::string_view key, std::string_view value) {
  set_map_entry(pod, "annotations", key, value);
}

void set_label(api::Document& pod, std::string_view key, std::string_view value) {
  set_map_entry(pod, "labels", key, value);
}

void remove_annotation(rapidjson::Value& pod, std::string_view key) {
  if (rapidjson::Value* m = annotations_of(pod)) {
    for (auto it = m->MemberBegin(); it != m->MemberEnd();) {
      if (api::string_view_of(it->name) == key)
        it = m->EraseMember(it);
      else
        ++it;
    }
  }
}

void modify_containers(api::Document& pod, std::string_view list, std::string_view name,
                       Reorder how) {
  rapidjson::Value* l = container_list(pod, list);
  if (l == nullptr) return;
  rapidjson::Value kept(rapidjson::kArrayType);
  rapidjson::Value match;
  bool found = false;
  for (auto& c : l->GetArray()) {
    if (name_of(c) == name) {
      match = std::move(c);  // the last one wins, as upstream's loop keeps the last match
      found = true;
    } else {
      kept.PushBack(std::move(c), pod.GetAllocator());
    }
  }
  if (!found) {
    *l = std::move(kept);
    return;
  }
  if (how == Reorder::kMoveLast) {
    kept.PushBack(std::move(match), pod.GetAllocator());
  } else if (how == Reorder::kMoveFirst) {
    rapidjson::Value front(rapidjson::kArrayType);
    front.PushBack(std::move(match), pod.GetAllocator());
    for (auto& c : kept.GetArray())
      front.PushBack(std::move(c), pod.GetAllocator());
    kept = std::move(front);
  }
  *l = std::move(kept);
}

void move_container(api::Document& pod, std::string_view from, std::string_view to,
                    std::string_view name) {
  rapidjson::Value* src = container_list(pod, from);
  if (src == nullptr) return;
  auto& alloc = pod.GetAllocator();
  for (auto it = src->Begin(); it != src->End(); ++it) {
    if (name_of(*it) != name) continue;
    rapidjson::Value moved(std::move(*it));
    src->Erase(it);
    rapidjson::Value& spec = ensure_object_member(pod, "spec", alloc);
    rapidjson::Value* dst = api::find_member(spec, to);
    if (dst == nullptr) {
      spec.AddMember(api::make_string(to, alloc), rapidjson::Value(rapidjson::kArrayType), alloc);
      dst = api::find_member(spec, to);
    } else if (!dst->IsArray()) {
      dst->SetArray();
    }
    dst->PushBack(std::move(moved), alloc);
    return;
  }
}

StatusContainers parse_status(std::string_view status) {
  StatusContainers out;
  auto doc = api::parse_json(status);
  if (!doc || !doc->IsObject()) return out;
  out.valid = true;
  auto read = [&](std::string_view key, std::vector<std::string>& names) {
    const rapidjson::Value* v = api::find_member(*doc, key);
    if (v == nullptr || v->IsNull()) return;
    if (!v->IsArray()) {
      out.valid = false;
      return;
    }
    for (const auto& e : v->GetArray()) {
      if (e.IsString())
        names.emplace_back(api::string_view_of(e));
      else
        out.valid = false;
    }
  };
  read("containers", out.containers);
  read("initContainers", out.init_containers);
  return out;
}

std::string injection_status(const rapidjson::Value& template_pod, std::string_view revision) {
  const rapidjson::Value* spec =
      template_pod.IsObject() ? api::find_member(template_pod, "spec") : nullptr;
  auto list = [&](std::string_view name) -> const rapidjson::Value* {
    if (spec == nullptr || !spec->IsObject()) return nullptr;
    return api::find_member(*spec, name);
  };
  std::string text;
  {
    api::JsonWriter out(text);  // Go's json.Marshal: HTML-escaped
    out.raw("{\"initContainers\":");
    append_names(out, list("initContainers"));
    out.raw(",\"containers\":");
    append_names(out, list("containers"));
    out.raw(",\"volumes\":");
    append_names(out, list("volumes"));
    out.raw(",\"imagePullSecrets\":");
    append_names(out, list("imagePullSecrets"));
    out.raw(",\"revision\":");
    out.string(revision.empty() ? api::kDefaultRevision : revision);
    out.raw('}');
  }
  return text;
}

std::string sanitize_label_name(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  return out;
}

std::optional<std::string> prometheus_port(const rapidjson::Value& pod) {
  const rapidjson::Value* m = annotations_of(const_cast<rapidjson::Value&>(pod));
  if (m == nullptr) return std::nullopt;
  for (const auto& e : m->GetObject()) {
    if (sanitize_label_name(api::string_view_of(e.name)) != "prometheus_io_port") continue;
    return e.value.IsString() ? std::string(api::string_view_of(e.value)) : std::string();
  }
  return std::nullopt;
}

void clear_prometheus_annotations(rapidjson::Value& pod) {
  rapidjson::Value* m = annotations_of(pod);
  if (m == nullptr) return;
  for (auto it = m->MemberBegin(); it != m->MemberEnd();) {
    std::string k = sanitize_label_name(api::string_view_of(it->name));
    if (k == "prometheus_io_scrape" || k == "prometheus_io_path" || k == "prometheus_io_port")
      it = m->EraseMember(it);
    else
      ++it;
  }
}

void overwrite_cluster_envs(api::Document& pod, const std::map<std::string, std::string>& envs) {
  if (envs.empty()) return;
  rapidjson::Value* proxy = find_pod_container(pod, kProxyContainerName);
  if (proxy == nullptr) return;
  auto& alloc = pod.GetAllocator();
  rapidjson::Value kept(rapidjson::kArrayType);
  if (rapidjson::Value* env = api::find_member(*proxy, "env"); env != nullptr && env->IsArray()) {
    for (auto& e : env->GetArray())
      if (envs.find(std::string(name_of(e))) == envs.end()) kept.PushBack(std::move(e), alloc);
  }
  for (const auto& [k, v] : envs) {
    rapidjson::Value e(rapidjson::kObjectType);
    e.AddMember("name", api::make_string(k, alloc), alloc);
    if (!v.empty()) e.AddMember("value", api::make_string(v, alloc), alloc);
    kept.PushBack(std::move(e), alloc);
  }
  if (rapidjson::Value* env = api::find_member(*proxy, "env"))
    *env = std::move(kept);
  else
    proxy->AddMember("env", std::move(kept), alloc);
}

}  // namespace meshop::inject
