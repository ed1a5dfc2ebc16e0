#include "operator/manifest/k8s_settings.hpp"

#include "api/strategic_merge.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/tree_path.hpp"

namespace meshop::manifest {
namespace {

using api::Value;

// Objects without patch metadata (Service, PDB, HPA): maps merge, lists are replaced.
const api::PatchSchemaType kPlainSchema{"plain", nullptr, 0};

const api::PatchSchemaType& schema_for(std::string_view kind) {
  const api::PatchSchemaType* s = api::patch_schema_for_kind(kind);
  return s != nullptr ? *s : kPlainSchema;
}

struct Setting {
  std::string_view field;  // key under k8s
  std::string_view kind;   // "" = the component's workload kind
  // Patch text with %s where the setting's JSON goes; %c is the container name.
  std::string_view patch;
};

constexpr Setting kSettings[] = {
    {"affinity", "", R"({"spec":{"template":{"spec":{"affinity":%s}}}})"},
    {"env", "", R"({"spec":{"template":{"spec":{"containers":[{"name":%c,"env":%s}]}}}})"},
    {"hpaSpec", "HorizontalPodAutoscaler", R"({"spec":%s})"},
    {"imagePullPolicy", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c,"imagePullPolicy":%s}]}}}})"},
    {"nodeSelector", "", R"({"spec":{"template":{"spec":{"nodeSelector":%s}}}})"},
    {"podDisruptionBudget", "PodDisruptionBudget", R"({"spec":%s})"},
    {"podAnnotations", "", R"({"spec":{"template":{"metadata":{"annotations":%s}}}})"},
    {"priorityClassName", "", R"({"spec":{"template":{"spec":{"priorityClassName":%s}}}})"},
    {"readinessProbe", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c,"readinessProbe":%s}]}}}})"},
    {"replicaCount", "", R"({"spec":{"replicas":%s}})"},
    {"resources", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c,"resources":%s}]}}}})"},
    {"strategy", "", R"({"spec":{"strategy":%s}})"},
    {"tolerations", "", R"({"spec":{"template":{"spec":{"tolerations":%s}}}})"},
    {"serviceAnnotations", "Service", R"({"metadata":{"annotations":%s}})"},
    {"service", "Service", R"({"spec":%s})"},
    {"securityContext", "", R"({"spec":{"template":{"spec":{"securityContext":%s}}}})"},
};

std::string fill(std::string_view pattern, const std::string& value, const std::string& container) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 's') {
      out += value;
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'c') {
      out += container;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

bool matches(const Value& object, std::string_view kind, std::string_view name) {
  return api::string_at(object, {"kind"}) == kind &&
         api::string_at(object, {"metadata", "name"}) == name;
}

// A PDB may not carry both minAvailable and maxUnavailable; the user's setting wins over the
// template's minAvailable (istioctl's postProcessPodDisruptionBudget).
void fix_pdb(Value& pdb) {
  Value* spec = api::find_member(pdb, "spec");
  if (spec == nullptr || !spec->IsObject()) return;
  if (api::find_member(*spec, "maxUnavailable") != nullptr &&
      api::find_member(*spec, "minAvailable") != nullptr)
    spec->EraseMember("minAvailable");
}

// tpath.WritePathContext turns a string that holds a YAML mapping or list (`value: |` in a
// patch) into that structure.
void structured_value(const Value& in, api::Document& out) {
  if (in.IsString()) {
    std::string_view s = api::string_view_of(in);
    if (s.find('\n') != std::string_view::npos || s.find(':') != std::string_view::npos) {
      auto parsed = api::yaml_to_json(s);
      if (parsed.ok() && (parsed->IsObject() || parsed->IsArray())) {
        out = std::move(parsed).value();
        return;
      }
    }
  }
  out.CopyFrom(in, out.GetAllocator());
}

}  // namespace

api::Status apply_k8s_settings(std::vector<api::Document>& objects, const Value& k8s,
                               const ComponentTarget& target, std::string_view component_path,
                               std::vector<std::string>& warnings) {
  if (!k8s.IsObject()) return api::ok_status();
  std::string container = api::to_json(api::Value(rapidjson::StringRef(
      target.container.data(), static_cast<rapidjson::SizeType>(target.container.size()))));
  for (const Setting& s : kSettings) {
    const Value* v = api::find_member(k8s, s.field);
    if (v == nullptr || v->IsNull()) continue;
    std::string_view kind = s.kind.empty() ? target.workload_kind : s.kind;
    if (kind.empty()) continue;  // base has no workload
    std::string_view pattern = s.patch;
    if (s.field == "replicaCount" && kind == "DaemonSet") continue;
    if (s.field == "strategy" && kind == "DaemonSet") pattern = R"({"spec":{"updateStrategy":%s}})";
    api::Document value;
    value.CopyFrom(*v, value.GetAllocator());
    if (s.field == "service" && target.gateway && value.IsObject())
      value.EraseMember("ports");  // rendered from values.gateways.<gw>.ports
    auto patch = api::parse_json(fill(pattern, api::to_json(value), container));
    if (!patch.ok())
      return api::Error{std::string(component_path) + "." + std::string(s.field) + ": " +
                        patch.message()};
    for (api::Document& obj : objects) {
      if (!matches(obj, kind, target.resource_name)) continue;
      api::Status st = api::apply_strategic_merge_patch(obj, *patch, schema_for(kind));
      if (!st.ok())
        return api::Error{std::string(component_path) + "." + std::string(s.field) + ": " +
                          st.message()};
      if (kind == "PodDisruptionBudget") fix_pdb(obj);
    }
  }

  const Value* overlays = api::find_member(k8s, "overlays");
  if (overlays == nullptr || !overlays->IsArray()) return api::ok_status();
  for (rapidjson::SizeType i = 0; i < overlays->Size(); ++i) {
    const Value& o = (*overlays)[i];
    std::string opath = std::string(component_path) + ".overlays[" + std::to_string(i) + "]";
    std::string kind = api::string_at(o, {"kind"});
    std::string name = api::string_at(o, {"name"});
    const Value* patches = api::find_member(o, "patches");
    bool found = false;
    for (api::Document& obj : objects) {
      if (!matches(obj, kind, name)) continue;
      found = true;
      if (patches == nullptr || !patches->IsArray()) continue;
      for (rapidjson::SizeType j = 0; j < patches->Size(); ++j) {
        const Value& p = (*patches)[j];
        std::string path = api::string_at(p, {"path"});
        api::Document value;
        if (const Value* pv = api::find_member(p, "value")) structured_value(*pv, value);
        api::Status st = apply_overlay_patch(obj, path, value, obj.GetAllocator());
        // istioctl drops a patch whose path does not resolve and renders the rest; meshop
        // does the same but says so.
        if (!st.ok())
          warnings.push_back(opath + ".patches[" + std::to_string(j) + "]: " + st.message() +
                             "; patch skipped");
      }
    }
    if (!found)
      warnings.push_back(opath + ": no " + kind + " named \"" + name +
                         "\" is rendered by this component; overlay ignored");
  }
  return api::ok_status();
}

}  // namespace meshop::manifest
