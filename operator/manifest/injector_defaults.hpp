// The sidecar-injection configuration an install of a bundled chart set puts into the
// cluster, for the commands that inject without one: `meshop kube-inject` offline and
// `meshop webhook` without --config-dir or a cluster. istioctl has no such default (its
// kube-inject reads the cluster's ConfigMaps or files); meshop's is exactly what `meshop
// manifest generate [--revision R]` renders for the default profile of that version:
//
//   ConfigMap istio-sidecar-injector[-<rev>]   keys `config` and `values`
//   ConfigMap istio[-<rev>]                    key `mesh`
//
// so an offline injection equals one against a cluster installed from the same chart set.
// Rendering takes a few hundred milliseconds; callers do it once. Pure; thread-safe.
#pragma once

#include <string_view>

#include "api/result.hpp"
#include "operator/inject/injector.hpp"

namespace meshop::manifest {

// `version` "" = the default chart set; `revision` "" or "default" = the default revision.
// Errors name the version (not bundled) or the ConfigMap and key the render lacked.
api::Result<inject::SnapshotSources> chart_set_injector_sources(std::string_view version,
                                                                std::string_view revision);

}  // namespace meshop::manifest
