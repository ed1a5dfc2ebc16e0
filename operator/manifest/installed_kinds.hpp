// The one table of the kinds an IstioOperator install can hold: what the renderer may emit, in
// which order install applies them, which kinds install prunes and uninstalls, and how
// `meshop run` watches them for drift. Prune and uninstall
// (reconcilers/install.cpp), the drift watches (operator/cli/run_cmd.cpp) and the RBAC test
// (test/unit/reconcilers/rbac_test.cpp, against config/rbac.yaml) all read this table, so a kind
// added here is applied, pruned, watched and checked for permissions at once.
//
// Pure data; safe from any thread.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace meshop::manifest {

struct InstalledKind {
  enum class Owner {
    kInstall,   // applied, pruned and uninstalled by the install reconciler
    kKeep,      // applied by install, never pruned nor deleted (CRDs: deleting one deletes
                // every object of its kind, so they stay, as Helm keeps a chart's crds/)
    kWebhooks,  // rendered, but applied by the webhooks reconciler (caBundle, URL)
    kNever,     // created when missing, never pruned nor deleted (Namespaces)
  };
  enum class Watch {
    kFull,               // full objects: their status is install's status (workloads)
    kOperatorNamespace,  // full objects, only in meshop's namespace (the injector ConfigMaps)
    kMetadata,           // metadata only: enough to see drift and find the owner
    kNone,               // watched elsewhere (webhooks reconciler) or not at all
  };
  std::string_view group;  // "" for the core group
  std::string_view version;
  std::string_view resource;  // plural, lower case
  std::string_view kind;
  bool namespaced;
  int apply_rank;  // lower first; uninstall walks install-owned kinds in reverse
  Owner owner;
  Watch watch;
};

// Every kind, in apply order (ascending apply_rank).
const std::vector<InstalledKind>& installed_kinds();

// The entry of (group, kind); nullopt for a kind the table does not know.
std::optional<InstalledKind> find_installed_kind(std::string_view group, std::string_view kind);

// The apply rank of (group, kind); a kind the table does not know goes with the workloads.
int apply_rank(std::string_view group, std::string_view kind);

}  // namespace meshop::manifest
