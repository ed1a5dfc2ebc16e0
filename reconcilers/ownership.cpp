#include "reconcilers/ownership.hpp"

#include "api/istio_operator.hpp"
#include "api/json.hpp"

namespace meshop::reconcilers {

const kube::ResourceType& istio_operator_resource() {
  static const kube::ResourceType type{
      std::string(api::kIstioOperatorGroup), std::string(api::kIstioOperatorVersion),
      std::string(api::kIstioOperatorPlural), std::string(api::kIstioOperatorKind), true};
  return type;
}

std::string revision_of(const rapidjson::Value& iop) {
  return api::normalize_revision(api::string_at(iop, {"spec", "revision"}));
}

OperatorRef operator_ref(const rapidjson::Value& iop, bool check_spec) {
  OperatorRef r;
  r.ns = api::string_at(iop, {"metadata", "namespace"});
  r.name = api::string_at(iop, {"metadata", "name"});
  r.revision = revision_of(iop);
  r.created = api::string_at(iop, {"metadata", "creationTimestamp"});
  r.deleting = !api::string_at(iop, {"metadata", "deletionTimestamp"}).empty();
  if (check_spec) r.valid = api::validate_istio_operator(iop).ok();
  return r;
}

std::optional<OperatorRef> revision_owner(const std::vector<OperatorRef>& iops,
                                          std::string_view revision) {
  const OperatorRef* best = nullptr;
  for (const OperatorRef& r : iops)
    if (r.revision == revision && (best == nullptr || owns_before(r, *best))) best = &r;
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<OperatorRef> shared_owner(const std::vector<OperatorRef>& iops) {
  const OperatorRef* best = nullptr;
  auto better = [](const OperatorRef& a, const OperatorRef& b) {
    bool a_default = a.revision == kDefaultRevision, b_default = b.revision == kDefaultRevision;
    if (a_default != b_default) return a_default;
    return owns_before(a, b);
  };
  for (const OperatorRef& r : iops) {
    if (r.deleting || !r.valid) continue;
    // Only a revision's owner installs anything.
    auto owner = revision_owner(iops, r.revision);
    if (!owner || owner->key() != r.key()) continue;
    if (best == nullptr || better(r, *best)) best = &r;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace meshop::reconcilers
