// A Helm chart loaded from a directory, as Helm 3/4's loader reads a chart (apiVersion v1/v2):
//
//   Chart.yaml      metadata; apiVersion, name and version are required (Helm's validation
//                   messages: "validation: chart.metadata.name is required")
//   values.yaml     the default values (absent = empty)
//   templates/**    templates, named "templates/<path>"; `_*` files are partials (parsed,
//                   never output), NOTES.txt is rendered like any template (callers skip it)
//   charts/<dir>/   subcharts (directories; packaged .tgz subcharts are an error naming them)
//   everything else .Files (crds/ included, which crds() also lists)
// Chart.lock, requirements.yaml/lock and values.schema.json are read by Helm for dependency
// management and schema validation, which meshop does not do; they are neither templates nor
// .Files here. .helmignore is not applied.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "api/result.hpp"
#include "operator/template/value.hpp"

namespace meshop::helm {

struct ChartFile {
  std::string name;  // relative to the chart root, '/' separated
  std::string data;
};

struct Chart {
  std::string name, version, app_version, type;
  // Chart.yaml as .Chart sees it: Helm's Metadata struct with Go field names (Name, Version,
  // AppVersion, APIVersion, Description, Type, ...), every field present.
  template_engine::Value metadata;
  template_engine::Value values;  // values.yaml as a map[string]interface {}
  std::vector<ChartFile> templates;
  std::vector<ChartFile> files;
  std::vector<Chart> dependencies;
  // Helm's ChartFullPath: "name" for the root, "parent/charts/name" for a subchart.
  std::string full_path;
  bool is_root = true;

  // The files under crds/, sorted by name.
  std::vector<ChartFile> crds() const;
};

// A chart's files by path relative to its root ('/' separated): a directory read into memory
// (read_chart_tree), or a chart of an embedded chart set (manifest::ChartSet::tree).
using ChartTree = std::map<std::string, std::string>;

// Loads the chart in `dir`. Errors name the chart directory and the file.
api::Result<Chart> load_chart(const std::filesystem::path& dir);
// Loads a chart from its files; `label` names it in errors as the directory would.
api::Result<Chart> load_chart(const ChartTree& files, const std::string& label);
// The regular files under `dir`, recursively.
api::Result<ChartTree> read_chart_tree(const std::filesystem::path& dir);

}  // namespace meshop::helm
