// Helm chart rendering on meshop's Go text/template engine, with the semantics of
// `helm template` (Helm v4's pkg/engine, which istioctl embeds):
//
//   auto chart = helm::load_chart("manifests/charts/base");
//   auto out = helm::render(*chart, overrides, {.name = "istio", .namespace_ = "istio-system"});
//   // out->templates: "base/templates/crds.yaml" -> rendered text, ...
//
// Values: the chart's values.yaml coalesced with `overrides` (Helm's CoalesceValues: maps merge
// deeply, the override wins, an override of null deletes the key; a subchart sees
// .Values.<subchart> coalesced with its own values.yaml, and the parent's `global`).
// Every template of the chart and its subcharts is parsed into one namespace (defines are
// shared; Helm's order: deeper paths first, so the root chart's definitions win); every
// non-partial template (`_*` files are partials) is executed with .Values, .Release,
// .Chart, .Capabilities, .Files, .Subcharts and .Template (Name, BasePath); "<no value>" is
// removed from the output as Helm does. NOTES.txt is rendered (callers skip it, as istioctl
// and `helm template` do). crds/ files are returned separately, unrendered.
//
// Functions: sprig (without env/expandenv) plus Helm's toYaml, mustToYaml, fromYaml,
// fromYamlArray, toJson, mustToJson, fromJson, fromJsonArray, toToml, include, tpl,
// required, fail, lookup (always an empty map, as `helm template` without a cluster) and
// getHostByName (""; Helm's DNS lookups are off by default).
//
// Errors are Helm's: "parse error at (base/templates/x.yaml:3): function \"foo\" not defined",
// "execution error at (base/templates/x.yaml:7:14): <required/fail message>", otherwise Go's
// execution error, which names the file, line and column of the failing node.
// Not reproduced: Helm's multi-line trace format for nested non-required errors, the
// missingkey=zero difference ({{.a.b}} with `a` missing is an error in Helm, empty here),
// dependency conditions/tags/import-values, values.schema.json validation, .helmignore.
//
// Thread safety: render() is reentrant; a Chart is only read.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/result.hpp"
#include "operator/helm/chart.hpp"
#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::helm {

struct ReleaseOptions {
  std::string name = "release-name";
  std::string namespace_ = "default";
  int revision = 1;
  bool is_install = true;
  bool is_upgrade = false;
};

struct Capabilities {
  // .Capabilities.KubeVersion (Version/GitVersion, Major, Minor parsed from it).
  std::string kube_version = "v1.36.0";
  // .Capabilities.APIVersions.Has: "group/version" and "group/version/Kind" entries. Helm
  // defaults to its client-go scheme's list; callers pass what their target cluster serves.
  std::vector<std::string> api_versions;
};

struct Rendered {
  std::map<std::string, std::string> templates;  // Helm's keys: "<chart path>/templates/..."
  std::map<std::string, std::string> crds;       // "<chart path>/crds/..." -> file contents
};

// Helm's CoalesceValues(chart, overrides); `overrides` is not modified.
template_engine::Value coalesce_values(const Chart& chart, const template_engine::Value& overrides);

api::Result<Rendered> render(const Chart& chart, const template_engine::Value& overrides,
                             const ReleaseOptions& release = {},
                             const Capabilities& capabilities = {});

// The markers Helm puts around required/fail messages (HELM_ERR_START ... HELM_ERR_END).
inline constexpr std::string_view kErrStart = "HELM_ERR_START";
inline constexpr std::string_view kErrEnd = "HELM_ERR_END";

// Helm's template functions on top of sprig (without include/tpl, which render() binds to
// the chart's templates). Built once.
const template_engine::FunctionMap& helm_functions();

}  // namespace meshop::helm
