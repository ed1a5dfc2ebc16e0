// Which IstioOperator owns what when several exist: one rule and one tie-break, used by the
// install, webhooks and revisions reconcilers alike.
//
//   - A revision ("" is "default") belongs to its oldest IstioOperator: ordered by
//     metadata.creationTimestamp, then namespace, then name (so "a/x" and "a-b/x" created in
//     the same second order the same way everywhere).
//   - What every revision renders the same way (the Base component: the reader
//     ServiceAccount, its ClusterRole and binding, later the CRDs) has one owner among the
//     revision owners that are not being deleted and whose spec is valid: the default
//     revision's owner when there is one, else the oldest. Only that IstioOperator applies
//     them; the others neither apply, relabel nor prune them, and an uninstall leaves them
//     in place while another IstioOperator remains to take them over (as
//     `istioctl uninstall --revision` keeps base).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <rapidjson/document.h>

#include "api/mesh_conventions.hpp"
#include "operator/kube/resource.hpp"

namespace meshop::reconcilers {

using api::kDefaultRevision;  // api/mesh_conventions.hpp

// install.istio.io/v1alpha1 istiooperators (namespaced), from api/mesh_conventions.hpp; built
// rather than discovered so a pass needs no discovery round trip (crd/istiooperator.yaml fixes it).
const kube::ResourceType& istio_operator_resource();
// The component whose objects every revision renders the same way.
inline constexpr std::string_view kSharedComponent = "Base";

struct OperatorRef {
  std::string ns, name;
  std::string revision;  // normalised: "" is "default"
  std::string created;   // metadata.creationTimestamp (RFC 3339, one format per apiserver)
  bool deleting = false;
  bool valid = true;  // the spec passes api::validate_istio_operator
  std::string key() const { return ns + "/" + name; }
};

// The revision an IstioOperator installs, "" normalised to "default".
std::string revision_of(const rapidjson::Value& iop);

// An IstioOperator's ownership facts. `check_spec` also validates the spec (for shared_owner).
OperatorRef operator_ref(const rapidjson::Value& iop, bool check_spec = false);

// The one ownership order: older first, then namespace, then name.
inline auto ownership_rank(const OperatorRef& r) {
  return std::tie(r.created, r.ns, r.name);
}
inline bool owns_before(const OperatorRef& a, const OperatorRef& b) {
  return ownership_rank(a) < ownership_rank(b);
}

// The owner of `revision` among `iops` (all of them, being deleted included), if any.
std::optional<OperatorRef> revision_owner(const std::vector<OperatorRef>& iops,
                                          std::string_view revision);

// The owner of the shared (Base) objects, if any IstioOperator qualifies (see above).
std::optional<OperatorRef> shared_owner(const std::vector<OperatorRef>& iops);

// Whether `component` (operator.istio.io/component) names shared objects.
inline bool is_shared_component(std::string_view component) {
  return component == kSharedComponent;
}

}  // namespace meshop::reconcilers
