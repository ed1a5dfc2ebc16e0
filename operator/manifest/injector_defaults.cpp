#include "operator/manifest/injector_defaults.hpp"

#include <string>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::manifest {
namespace {

const api::Value* configmap_data(const istioctl::PipelineResult& rendered, const std::string& name,
                                 std::string_view key) {
  for (const istioctl::PipelineObject& o : rendered.objects) {
    const api::Value* kind = api::find_member(o.object, "kind");
    if (kind == nullptr || !kind->IsString() || std::string_view(kind->GetString()) != "ConfigMap")
      continue;
    const api::Value* meta = api::find_member(o.object, "metadata");
    const api::Value* n = meta != nullptr ? api::find_member(*meta, "name") : nullptr;
    if (n == nullptr || !n->IsString() || n->GetString() != name) continue;
    const api::Value* data = api::find_member(o.object, "data");
    const api::Value* v = data != nullptr ? api::find_member(*data, key) : nullptr;
    if (v != nullptr && v->IsString()) return v;
  }
  return nullptr;
}

}  // namespace

api::Result<inject::SnapshotSources> chart_set_injector_sources(std::string_view version,
                                                                std::string_view revision) {
  const ChartSet* set = version.empty() ? &default_chart_set() : find_chart_set(version);
  if (set == nullptr)
    return api::Error{"Istio version \"" + std::string(version) + "\" is not bundled"};
  istioctl::PipelineInputs inputs;
  inputs.version = set->version;
  if (revision != "default") inputs.revision = std::string(revision);
  auto rendered = istioctl::generate(inputs);
  if (!rendered.ok()) return api::Error{"chart set " + set->version + ": " + rendered.message()};

  inject::SnapshotSources sources;
  sources.revision = inputs.revision;
  struct Want {
    std::string configmap;
    std::string_view key;
    std::string* into;
  };
  for (const Want& w :
       {Want{api::injector_configmap_name(inputs.revision), "config", &sources.config},
        Want{api::injector_configmap_name(inputs.revision), "values", &sources.values},
        Want{api::mesh_configmap_name(inputs.revision), "mesh", &sources.mesh}}) {
    const api::Value* v = configmap_data(*rendered, w.configmap, w.key);
    if (v == nullptr)
      return api::Error{"chart set " + set->version +
                        ": the default profile renders no ConfigMap " + w.configmap + " with key " +
                        std::string(w.key)};
    *w.into = std::string(v->GetString(), v->GetStringLength());
  }
  return sources;
}

}  // namespace meshop::manifest
