// meshop's built-in injector configuration: the files of manifests/inject/ (templates, default
// values, default injector config, default mesh config), embedded into the binary at build
// time so that `meshop kube-inject` and the webhook work without any ConfigMap.
//
// Contract:
//   - builtin_file("sidecar.yaml") is the exact text of manifests/inject/sidecar.yaml as it
//     was at build time; unknown names give std::nullopt.
//   - builtin_config() is manifests/inject/config.yaml with `templates` holding every other
//     template file of that folder, by name without ".yaml" (sidecar, gateway), i.e. the
//     text of a `config` ConfigMap key. It is computed once.
//   - builtin_sources() is a SnapshotSources for the default revision made of these texts,
//     ready for build_snapshot(); callers adjust revision or native_sidecars as needed.
// Thread-safe: the texts are immutable; builtin_config() is initialised once (magic static).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/inject/injector.hpp"

namespace meshop::inject {

// Names of the embedded files ("config.yaml", "gateway.yaml", ...), sorted.
std::vector<std::string_view> builtin_file_names();
std::optional<std::string_view> builtin_file(std::string_view name);

// The embedded texts, one function per file meshop's defaults consist of.
std::string_view builtin_sidecar_template();  // sidecar.yaml
std::string_view builtin_gateway_template();  // gateway.yaml
std::string_view builtin_values();            // values.yaml
std::string_view builtin_mesh();              // mesh.yaml

// config.yaml with the templates added (see above).
const std::string& builtin_config();

SnapshotSources builtin_sources();

}  // namespace meshop::inject
