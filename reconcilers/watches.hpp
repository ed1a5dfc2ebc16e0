// The watches `meshop run`'s controllers read, as runtime::Cache specs: each is named once
// here, so the controllers that read the same kind share one informer (runtime/cache.hpp).
#pragma once

#include <optional>
#include <string>

#include "api/mesh_conventions.hpp"
#include "operator/kube/resource.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/runtime/cache.hpp"

namespace meshop::reconcilers::watches {

runtime::WatchSpec istio_operators();
runtime::WatchSpec namespaces();
runtime::WatchSpec mutating_webhook_configurations();
// The injector ConfigMaps and whatever else lives in the control-plane namespace.
runtime::WatchSpec control_plane_config_maps(const std::string& ns);
// The Secret holding the webhook's serving certificate.
runtime::WatchSpec webhook_secret(const std::string& ns);
// The watch of an installed kind, as its manifest::installed_kinds() entry says: the objects
// meshop installed (label api::kManagedSelector), full (Watch::kFull: their status is install's
// status), full in the control-plane namespace `ns` only (kOperatorNamespace: the injector
// ConfigMaps), or metadata only (kMetadata: enough to see drift and find the owner);
// nullopt for kNone.
std::optional<runtime::WatchSpec> installed(const manifest::InstalledKind& kind,
                                            const std::string& ns);
// Every Pod as restart::project_pod keeps it, listed in pages.
runtime::WatchSpec pods();
// Every object of `type`, whole less managedFields, with apiVersion and kind set (what the
// restart plan reads), listed in pages.
runtime::WatchSpec every(const kube::ResourceType& type);
// Every Node as restart::project_node keeps it.
runtime::WatchSpec nodes();

}  // namespace meshop::reconcilers::watches
