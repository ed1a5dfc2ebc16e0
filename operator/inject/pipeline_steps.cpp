#include "operator/inject/pipeline_steps.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "api/strategic_merge.hpp"
#include "operator/inject/kube_view.hpp"
#include "operator/inject/pod_ops.hpp"

namespace meshop::inject {

namespace {

std::string string_or_empty(const rapidjson::Value* v) {
  return v != nullptr && v->IsString() ? std::string(api::string_view_of(*v)) : std::string();
}

}  // namespace

// reinsertOverrides: containers saved in proxy.istio.io/overrides come back when missing.
api::Status reinsert_overrides(api::Document& pod) {
  const rapidjson::Value* a = annotation(pod, kOverridesAnnotation);
  if (a == nullptr) return api::ok_status();
  auto doc = api::parse_json(api::string_view_of(*a));
  if (!doc)
    return api::Error{"annotation " + std::string(kOverridesAnnotation) + ": " + doc.message()};
  if (doc->IsNull()) return api::ok_status();
  if (!doc->IsObject())
    return api::Error{"annotation " + std::string(kOverridesAnnotation) +
                      ": json: cannot unmarshal into Go value of type podOverrides"};
  auto& alloc = pod.GetAllocator();
  for (std::string_view list : {"containers", "initContainers"}) {
    const rapidjson::Value* items = api::find_member(*doc, list);
    if (items == nullptr || !items->IsArray()) continue;
    for (const auto& c : items->GetArray()) {
      const rapidjson::Value* n = c.IsObject() ? api::find_member(c, "name") : nullptr;
      std::string_view name = n != nullptr && n->IsString() ? api::string_view_of(*n) : "";
      if (find_container(container_list(pod, list), name) != nullptr) continue;
      if (!pod.IsObject()) pod.SetObject();
      rapidjson::Value* spec = api::find_member(pod, "spec");
      if (spec == nullptr) {
        pod.AddMember("spec", rapidjson::Value(rapidjson::kObjectType), alloc);
        spec = api::find_member(pod, "spec");
      } else if (!spec->IsObject()) {
        spec->SetObject();
      }
      rapidjson::Value* l = api::find_member(*spec, list);
      if (l == nullptr) {
        spec->AddMember(api::make_string(list, alloc), rapidjson::Value(rapidjson::kArrayType),
                        alloc);
        l = api::find_member(*spec, list);
      } else if (!l->IsArray()) {
        l->SetArray();
      }
      l->PushBack(rapidjson::Value(c, alloc), alloc);
    }
  }
  return api::ok_status();
}

// stripPod: a pod injected before loses what the previous injection added (idempotent
// re-injection).
void strip_pod(api::Document& pod, int mesh_status_port) {
  const rapidjson::Value* status = annotation(pod, kStatusAnnotation);
  if (status == nullptr) return;
  StatusContainers prev = parse_status(api::string_view_of(*status));
  if (!prev.valid) return;
  for (const std::string& c : prev.containers)
    modify_containers(pod, "containers", c, Reorder::kRemove);
  for (const std::string& c : prev.init_containers)
    modify_containers(pod, "initContainers", c, Reorder::kRemove);
  if (auto port = prometheus_port(pod); port && *port == std::to_string(mesh_status_port))
    clear_prometheus_annotations(pod);
  remove_annotation(pod, kStatusAnnotation);
}

// The patch upstream's applyContainer / applyInitContainer builds from a user container.
static api::Status apply_container(api::Document& pod, const rapidjson::Value& container,
                                   bool init) {
  api::Document patch;
  patch.SetObject();
  auto& alloc = patch.GetAllocator();
  rapidjson::Value list(rapidjson::kArrayType);
  // The container goes through corev1.Container in Go: only its typed fields survive.
  auto typed = api::parse_json(go_json(container, container_type()));
  if (!typed) return api::Error{typed.message()};
  list.PushBack(rapidjson::Value(*typed, alloc), alloc);
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember(rapidjson::StringRef(init ? "initContainers" : "containers"), std::move(list),
                 alloc);
  patch.AddMember("spec", std::move(spec), alloc);
  return api::apply_strategic_merge_patch(pod, patch, api::pod_patch_schema());
}

static std::int64_t int64_at(const rapidjson::Value* v) {
  if (v == nullptr || !v->IsNumber()) return 0;
  if (v->IsInt64()) return v->GetInt64();
  return static_cast<std::int64_t>(v->GetDouble());
}

// adjustInitContainerUser: the user's istio-proxy runAsUser/runAsGroup carry over to the
// init/validation container.
static void adjust_init_container_user(api::Document& final_pod, const rapidjson::Value& original,
                                       const ProxyConfig& proxy) {
  const rapidjson::Value* user = find_pod_container(original, kProxyContainerName);
  if (user == nullptr) return;
  const rapidjson::Value* sc = api::find_member(*user, "securityContext");
  if (sc == nullptr || !sc->IsObject()) return;
  const rapidjson::Value* run_as_user = api::find_member(*sc, "runAsUser");
  const rapidjson::Value* run_as_group = api::find_member(*sc, "runAsGroup");
  if (run_as_user != nullptr && run_as_user->IsNull()) run_as_user = nullptr;
  if (run_as_group != nullptr && run_as_group->IsNull()) run_as_group = nullptr;
  if (run_as_user == nullptr && run_as_group == nullptr) return;

  rapidjson::Value* init = nullptr;
  for (std::string_view name : {kInitContainerName, kValidationContainerName}) {
    init = find_container(container_list(final_pod, "initContainers"), name);
    if (init != nullptr) break;
  }
  if (init == nullptr) return;
  auto& alloc = final_pod.GetAllocator();

  bool tproxy = proxy.interception_mode() == "TPROXY";
  if (const rapidjson::Value* mode = annotation(final_pod, "sidecar.istio.io/interceptionMode");
      mode != nullptr && api::string_view_of(*mode) == "TPROXY")
    tproxy = true;

  if (tproxy && run_as_user != nullptr) {
    rapidjson::Value* sidecar = find_pod_container(final_pod, kProxyContainerName);
    if (sidecar == nullptr) return;
    rapidjson::Value* ssc = api::find_member(*sidecar, "securityContext");
    if (ssc != nullptr && ssc->IsObject()) {
      if (rapidjson::Value* u = api::find_member(*ssc, "runAsUser"))
        u->SetInt64(0);
      else
        ssc->AddMember("runAsUser", 0, alloc);
    }
  }

  auto name_member = api::find_member(*init, "name");
  bool is_validation = name_member != nullptr && name_member->IsString() &&
                       api::string_view_of(*name_member) == kValidationContainerName;
  if (!tproxy && is_validation) {
    rapidjson::Value* isc = api::find_member(*init, "securityContext");
    if (isc == nullptr || !isc->IsObject()) {
      if (isc == nullptr) {
        init->AddMember("securityContext", rapidjson::Value(rapidjson::kObjectType), alloc);
        isc = api::find_member(*init, "securityContext");
      } else {
        isc->SetObject();
      }
    }
    auto set = [&](std::string_view key, const rapidjson::Value* v) {
      if (v == nullptr) return;
      if (rapidjson::Value* m = api::find_member(*isc, key))
        m->CopyFrom(*v, alloc);
      else
        isc->AddMember(api::make_string(key, alloc), rapidjson::Value(*v, alloc), alloc);
    };
    set("runAsUser", run_as_user);
    set("runAsGroup", run_as_group);
  }

  if (run_as_user == nullptr || int64_at(run_as_user) == 0) return;
  rapidjson::Value* args = api::find_member(*init, "args");
  if (args == nullptr || !args->IsArray()) return;
  for (rapidjson::SizeType i = 0; i + 1 < args->Size(); ++i) {
    if ((*args)[i].IsString() && api::string_view_of((*args)[i]) == "-u") {
      std::string uid = std::to_string(int64_at(run_as_user));
      (*args)[i + 1].SetString(uid.data(), static_cast<rapidjson::SizeType>(uid.size()), alloc);
      return;
    }
  }
}

// reapplyOverwrittenContainers: a container the templates produce that the user also defined
// (typically a customised istio-proxy) gets the user's fields merged back on top.
api::Status reapply_overwritten_containers(api::Document& final_pod,
                                           const rapidjson::Value& original,
                                           const rapidjson::Value& template_pod,
                                           const ProxyConfig& proxy) {
  api::Document existing;
  existing.SetObject();
  if (const rapidjson::Value* a = annotation(original, kOverridesAnnotation)) {
    auto doc = api::parse_json(api::string_view_of(*a));
    if (!doc)
      return api::Error{"annotation " + std::string(kOverridesAnnotation) + ": " + doc.message()};
    if (doc->IsObject()) existing.CopyFrom(*doc, existing.GetAllocator());
  }
  const rapidjson::Value* status = annotation(original, kStatusAnnotation);
  StatusContainers injected;
  if (status != nullptr) injected = parse_status(api::string_view_of(*status));

  std::string overrides_json;
  bool any_override = false;
  std::string containers_json, init_json;
  for (bool init : {false, true}) {
    std::string_view list = init ? "initContainers" : "containers";
    const auto& skip = init ? injected.init_containers : injected.containers;
    const rapidjson::Value* templ = container_list(template_pod, list);
    if (templ == nullptr) continue;
    std::string& out = init ? init_json : containers_json;
    for (const auto& c : templ->GetArray()) {
      std::string name = string_or_empty(c.IsObject() ? api::find_member(c, "name") : nullptr);
      if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
      const rapidjson::Value* existing_list = api::find_member(existing, list);
      const rapidjson::Value* match = find_container(
          existing_list != nullptr && existing_list->IsArray() ? existing_list : nullptr, name);
      if (match == nullptr)
        match = init ? find_pod_container(original, name)
                     : find_container(container_list(original, "containers"), name);
      if (match == nullptr) continue;
      api::Document overlay;
      overlay.CopyFrom(*match, overlay.GetAllocator());
      if (overlay.IsObject()) {
        const rapidjson::Value* image = api::find_member(overlay, "image");
        if (image != nullptr && image->IsString() && api::string_view_of(*image) == "auto")
          overlay.RemoveMember("image");
      }
      if (!out.empty()) out += ',';
      out += go_json(overlay, container_type());
      any_override = true;
      if (auto st = apply_container(final_pod, overlay, init); !st)
        return api::Error{std::string("failed to apply sidecar ") +
                          (init ? "init container" : "container") + ": " + st.message()};
    }
  }

  if (status == nullptr && any_override) {
    overrides_json = "{";
    if (!containers_json.empty()) overrides_json += "\"containers\":[" + containers_json + "]";
    if (!init_json.empty()) {
      if (!containers_json.empty()) overrides_json += ',';
      overrides_json += "\"initContainers\":[" + init_json + "]";
    }
    overrides_json += '}';
    set_annotation(final_pod, kOverridesAnnotation, overrides_json);
  }

  adjust_init_container_user(final_pod, original, proxy);
  return api::ok_status();
}

// ParseBlock (openshift.go): "start/size" or "start-end" of unsigned 32-bit numbers.
static std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_block(std::string_view in) {
  auto number = [](std::string_view& s) -> std::optional<std::uint32_t> {
    std::size_t i = 0;
    if (i < s.size() && s[i] == '+') ++i;
    std::uint64_t v = 0;
    std::size_t start = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (v > 0xffffffffULL) return std::nullopt;
    }
    if (i == start) return std::nullopt;
    s.remove_prefix(i);
    return static_cast<std::uint32_t>(v);
  };
  bool slash = in.find('/') != std::string_view::npos;
  std::string_view rest = in;
  auto first = number(rest);
  if (!first || rest.empty() || rest[0] != (slash ? '/' : '-')) return std::nullopt;
  rest.remove_prefix(1);
  auto second = number(rest);
  if (!second) return std::nullopt;
  if (slash) return std::make_pair(*first, static_cast<std::uint32_t>(*first + *second - 1));
  return std::make_pair(*first, *second);
}

// GetProxyIDs: 1337, or on OpenShift the top of the namespace's UID range and of its first
// supplemental group block (falling back to the UID range).
std::pair<std::int64_t, std::int64_t> openshift_proxy_ids(const rapidjson::Value* ns) {
  std::int64_t uid = 1337, gid = 1337;
  if (ns == nullptr) return {uid, gid};
  const rapidjson::Value* uid_range = annotation(*ns, "openshift.io/sa.scc.uid-range");
  if (uid_range != nullptr && uid_range->GetStringLength() > 0) {
    if (auto b = parse_block(api::string_view_of(*uid_range))) uid = b->second;
  }
  const rapidjson::Value* groups = annotation(*ns, "openshift.io/sa.scc.supplemental-groups");
  if (groups == nullptr) groups = uid_range;
  if (groups != nullptr && groups->GetStringLength() > 0) {
    std::string_view list = api::string_view_of(*groups);
    std::optional<std::int64_t> first;
    bool ok = true;
    std::size_t start = 0;
    while (true) {
      std::size_t comma = list.find(',', start);
      auto b =
          parse_block(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (!b) {
        ok = false;
        break;
      }
      if (!first) first = b->second;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (ok && first) gid = *first;
  }
  return {uid, gid};
}

static std::optional<std::int64_t> run_as_user(const rapidjson::Value& c) {
  const rapidjson::Value* sc = c.IsObject() ? api::find_member(c, "securityContext") : nullptr;
  if (sc == nullptr || !sc->IsObject()) return std::nullopt;
  const rapidjson::Value* u = api::find_member(*sc, "runAsUser");
  if (u == nullptr || !u->IsNumber()) return std::nullopt;
  return int64_at(u);
}

// OpenShift assigns every container the same runAsUser; a user istio-proxy whose runAsUser
// equals the app's is taken as that default and reset (isSidecarUserMatchingAppUser).
void reset_openshift_sidecar_user(api::Document& pod) {
  rapidjson::Value* sidecar = find_pod_container(pod, kProxyContainerName);
  if (sidecar == nullptr) return;
  rapidjson::Value* sc = api::find_member(*sidecar, "securityContext");
  if (sc == nullptr || !sc->IsObject()) return;
  std::int64_t sidecar_user = 0, app_user = 0;
  for (std::string_view list : {"containers", "initContainers"}) {
    const rapidjson::Value* l = container_list(pod, list);
    if (l == nullptr) continue;
    for (const auto& c : l->GetArray()) {
      std::string name = string_or_empty(c.IsObject() ? api::find_member(c, "name") : nullptr);
      auto user = run_as_user(c);
      if (name == kProxyContainerName) {
        if (user) sidecar_user = *user;
      } else if (name != kValidationContainerName && name != kInitContainerName) {
        if (user) app_user = *user;
      }
    }
  }
  if (sidecar_user != app_user) return;
  sc->RemoveMember("runAsUser");
  sc->RemoveMember("runAsGroup");
}

}  // namespace meshop::inject
