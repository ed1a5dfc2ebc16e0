// Installation profiles (manifests/profiles/*.yaml, embedded in the binary).
//
// A profile is an IstioOperator. As in istioctl, every profile other than "default" is an
// overlay on "default": load_profile("demo") is default.yaml deep-merged with demo.yaml
// (maps merged, lists replaced). Immutable data; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::manifest {

// Names of the embedded profiles, sorted ("ambient", "default", "demo", ...).
std::vector<std::string> profile_names();

// The profile `name` ("" means "default") as a whole IstioOperator object. An unknown name is
// an error naming it and listing the known ones.
api::Result<api::Document> load_profile(std::string_view name);

}  // namespace meshop::manifest
