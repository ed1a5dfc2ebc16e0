// Internal: the typed data of Helm's render values (.Files, .Capabilities) as template
// Objects, with Helm's method and field names.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "operator/helm/chart.hpp"
#include "operator/helm/render.hpp"
#include "operator/template/value.hpp"

namespace meshop::helm::detail {

// Helm's engine.files (map[string][]byte): Get, GetBytes, Glob, AsConfig, AsSecrets, Lines.
template_engine::Value make_files(std::map<std::string, std::string> files);

// *common.Capabilities: KubeVersion (Version, Major, Minor, String, GitVersion), APIVersions
// (Has), HelmVersion.
template_engine::Value make_capabilities(const Capabilities& caps);

// gobwas/glob with '/' as separator, as Files.Glob compiles patterns: `*` and `?` stay within
// a path segment, `**` crosses them, `[...]`/`[!...]` classes, `{a,b}` alternatives, `\` escapes.
bool glob_match(std::string_view pattern, std::string_view name);

// Helm's toYAML: sigs.k8s.io/yaml.Marshal without the final newline; "" when not marshalable.
std::string to_yaml(const template_engine::Value& v);

}  // namespace meshop::helm::detail
