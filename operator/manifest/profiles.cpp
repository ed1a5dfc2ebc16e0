#include "operator/manifest/profiles.hpp"

#include "api/yaml.hpp"
#include "operator/manifest/embedded.hpp"
#include "operator/manifest/tree_path.hpp"

namespace meshop::manifest {
namespace {

constexpr std::string_view kPrefix = "profiles/";
constexpr std::string_view kSuffix = ".yaml";

api::Result<api::Document> read_profile_file(std::string_view name) {
  std::string path = std::string(kPrefix) + std::string(name) + std::string(kSuffix);
  std::optional<std::string_view> text = embedded_file(path);
  if (!text) {
    std::string known;
    for (const std::string& n : profile_names())
      known += (known.empty() ? "" : ", ") + n;
    return api::Error{"unknown profile \"" + std::string(name) + "\" (available: " + known + ")"};
  }
  auto doc = api::yaml_to_json(*text);
  if (!doc.ok()) return api::Error{"profile " + std::string(name) + ": " + doc.message()};
  if (!doc->IsObject()) return api::Error{"profile " + std::string(name) + ": not a mapping"};
  return std::move(doc).value();
}

}  // namespace

std::vector<std::string> profile_names() {
  std::vector<std::string> out;
  for (std::string_view p : embedded_paths(kPrefix)) {
    if (!p.ends_with(kSuffix)) continue;
    p.remove_prefix(kPrefix.size());
    p.remove_suffix(kSuffix.size());
    if (p.find('/') == std::string_view::npos) out.emplace_back(p);
  }
  return out;
}

api::Result<api::Document> load_profile(std::string_view name) {
  if (name.empty()) name = "default";
  // Check the name first so an unknown profile is reported as such.
  auto top = read_profile_file(name);
  if (!top.ok()) return top.error();
  if (name == "default") return top;
  auto base = read_profile_file("default");
  if (!base.ok()) return base.error();
  merge_into(*base, *top, base->GetAllocator());
  return base;
}

}  // namespace meshop::manifest
