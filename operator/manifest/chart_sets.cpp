#include "operator/manifest/chart_sets.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/chart_sets_blob.h"

// The blob hack/chart-sets.py wrote, as read-only data (its digest is in the generated header,
// so a changed blob recompiles this file even through ccache).
__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".globl meshop_chart_sets_begin\n"
    "meshop_chart_sets_begin:\n"
    ".incbin \"" MESHOP_CHART_SETS_BLOB
    "\"\n"
    ".globl meshop_chart_sets_end\n"
    "meshop_chart_sets_end:\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const char meshop_chart_sets_begin[];
extern "C" const char meshop_chart_sets_end[];

namespace meshop::manifest {
namespace {

[[noreturn]] void corrupt(const std::string& why) {
  // Only a broken build gets here: the blob is written and checked by the build itself.
  std::cerr << "meshop: the embedded chart sets are corrupt (" << why << ", digest "
            << MESHOP_CHART_SETS_DIGEST << ")\n";
  std::abort();
}

std::vector<ChartSet> load() {
  std::string_view blob(meshop_chart_sets_begin,
                        static_cast<std::size_t>(meshop_chart_sets_end - meshop_chart_sets_begin));
  constexpr std::string_view kMagic = "MESHOP-CHART-SETS 1\n";
  if (blob.substr(0, kMagic.size()) != kMagic) corrupt("no header");
  blob.remove_prefix(kMagic.size());
  std::map<std::string, std::string_view, std::less<>> entries;
  std::vector<std::string> order;
  while (!blob.empty()) {
    std::size_t nl = blob.find('\n');
    if (nl == std::string_view::npos) corrupt("truncated path");
    std::string path(blob.substr(0, nl));
    blob.remove_prefix(nl + 1);
    nl = blob.find('\n');
    if (nl == std::string_view::npos) corrupt("truncated size of " + path);
    std::size_t size = std::strtoull(std::string(blob.substr(0, nl)).c_str(), nullptr, 10);
    blob.remove_prefix(nl + 1);
    if (size > blob.size()) corrupt("truncated " + path);
    entries.emplace(path, blob.substr(0, size));
    blob.remove_prefix(size);
  }
  auto table_text = entries.find("versions.yaml");
  if (table_text == entries.end()) corrupt("no versions.yaml");
  auto table = api::yaml_to_json(table_text->second);
  if (!table || !table->IsObject()) corrupt("versions.yaml does not parse");
  std::vector<ChartSet> sets;
  const rapidjson::Value* versions = api::find_member(*table, "versions");
  if (versions == nullptr || !versions->IsArray()) corrupt("versions.yaml has no versions");
  for (const auto& v : versions->GetArray()) {
    ChartSet s;
    s.version = api::string_at(v, {"version"});
    s.module = api::string_at(v, {"module"});
    s.sha256 = api::string_at(v, {"sha256"});
    s.hub = api::string_at(v, {"hub"});
    s.tag = api::string_at(v, {"tag"});
    std::string prefix = s.version + "/";
    for (auto it = entries.lower_bound(prefix);
         it != entries.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      s.files.emplace(it->first.substr(prefix.size()), it->second);
    if (s.files.empty()) corrupt("no files for version " + s.version);
    sets.push_back(std::move(s));
  }
  std::string def = api::string_at(*table, {"default"});
  auto is_default = [&](const ChartSet& s) { return s.version == def; };
  if (std::find_if(sets.begin(), sets.end(), is_default) == sets.end())
    corrupt("default version " + def + " is not bundled");
  // The default first, then the table's order.
  std::stable_partition(sets.begin(), sets.end(), is_default);
  return sets;
}

}  // namespace

std::optional<std::string_view> ChartSet::file(std::string_view path) const {
  auto it = files.find(path);
  if (it == files.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> ChartSet::tree(std::string_view dir) const {
  std::string prefix(dir);
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  std::map<std::string, std::string> out;
  for (auto it = files.lower_bound(prefix);
       it != files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.emplace(it->first.substr(prefix.size()), std::string(it->second));
  return out;
}

std::vector<std::string> ChartSet::profiles() const {
  std::vector<std::string> out;
  constexpr std::string_view kDir = "profiles/", kExt = ".yaml";
  for (const auto& [path, data] : files) {
    std::string_view p = path;
    if (p.substr(0, kDir.size()) != kDir || !p.ends_with(kExt)) continue;
    p.remove_prefix(kDir.size());
    p.remove_suffix(kExt.size());
    if (p.find('/') == std::string_view::npos) out.emplace_back(p);
  }
  // By name: path order puts "openshift-ambient.yaml" before "openshift.yaml".
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<ChartSet>& chart_sets() {
  static const std::vector<ChartSet> sets = load();
  return sets;
}

const ChartSet* find_chart_set(std::string_view version) {
  for (const ChartSet& s : chart_sets())
    if (s.version == version) return &s;
  return nullptr;
}

const ChartSet& default_chart_set() {
  return chart_sets().front();
}

}  // namespace meshop::manifest
