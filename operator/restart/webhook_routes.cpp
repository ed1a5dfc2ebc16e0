#include "operator/restart/webhook_routes.hpp"

#include <algorithm>

#include "api/json.hpp"

namespace meshop::restart {
namespace {

constexpr std::string_view kInjectorSuffix = "sidecar-injector.istio.io";

api::Result<api::LabelSelector> selector_at(const rapidjson::Value& hook, const char* field,
                                            const std::string& path) {
  const rapidjson::Value* s = api::find_member(hook, field);
  if (s == nullptr || s->IsNull()) return api::LabelSelector();
  return api::LabelSelector::from_json(*s, path + "." + field);
}

}  // namespace

api::Result<std::vector<InjectorEntry>> injector_entries(const rapidjson::Value& configurations) {
  std::vector<InjectorEntry> out;
  if (!configurations.IsArray()) return api::Error{"webhook configurations: expected a list"};
  std::vector<const rapidjson::Value*> sorted;
  for (const rapidjson::Value& c : configurations.GetArray())
    sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return api::string_at(*a, {"metadata", "name"}) < api::string_at(*b, {"metadata", "name"});
  });
  for (const rapidjson::Value* c : sorted) {
    std::string name = api::string_at(*c, {"metadata", "name"});
    std::string revision = api::string_at(*c, {"metadata", "labels", "istio.io/rev"});
    if (revision.empty()) continue;  // not an Istio injector configuration
    std::string tag = api::string_at(*c, {"metadata", "labels", "istio.io/tag"});
    const rapidjson::Value* hooks = api::find_member(*c, "webhooks");
    if (hooks == nullptr || !hooks->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < hooks->Size(); ++i) {
      const rapidjson::Value& h = (*hooks)[i];
      std::string entry = api::string_at(h, {"name"});
      if (!entry.ends_with(kInjectorSuffix)) continue;
      std::string path =
          "mutatingwebhookconfiguration " + name + ": webhooks[" + std::to_string(i) + "]";
      auto ns_sel = selector_at(h, "namespaceSelector", path);
      if (!ns_sel) return ns_sel.error();
      auto obj_sel = selector_at(h, "objectSelector", path);
      if (!obj_sel) return obj_sel.error();
      out.push_back({name, entry, revision, tag, std::move(*ns_sel), std::move(*obj_sel)});
    }
  }
  return out;
}

Route route(const std::vector<InjectorEntry>& entries, const rapidjson::Value* namespace_labels,
            const rapidjson::Value* pod_labels) {
  Route r;
  for (const InjectorEntry& e : entries) {
    if (!e.namespace_selector.matches(namespace_labels) || !e.object_selector.matches(pod_labels))
      continue;
    if (r.entry == nullptr) r.entry = &e;
    r.matched.push_back(&e);
    if (std::find(r.revisions.begin(), r.revisions.end(), e.revision) == r.revisions.end())
      r.revisions.push_back(e.revision);
  }
  return r;
}

}  // namespace meshop::restart
