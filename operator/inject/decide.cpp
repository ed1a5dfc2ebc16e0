// decide(): upstream's injectRequired (inject.go), with the reason for every outcome.
#include <array>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/snapshot.hpp"

namespace meshop::inject {

namespace {

// IgnoredNamespaces (initializer.go): never injected, whatever the pod says.
constexpr const auto& kIgnoredNamespaces = api::kNeverInjectedNamespaces;

constexpr std::string_view kInjectKey = api::kPodInjectLabel;

const rapidjson::Value* meta_map(const rapidjson::Value& pod, std::string_view name) {
  const rapidjson::Value* meta = pod.IsObject() ? api::find_member(pod, "metadata") : nullptr;
  if (meta == nullptr || !meta->IsObject()) return nullptr;
  const rapidjson::Value* m = api::find_member(*meta, name);
  return m != nullptr && m->IsObject() ? m : nullptr;
}

// The value under `key` of a string map, or nullptr.
const rapidjson::Value* string_entry(const rapidjson::Value* map, std::string_view key) {
  if (map == nullptr) return nullptr;
  const rapidjson::Value* v = api::find_member(*map, key);
  return v != nullptr && v->IsString() ? v : nullptr;
}

// First selector that is not empty and matches (invalid ones are skipped, as upstream logs
// and skips them).
bool any_selector_matches(const std::vector<std::optional<api::LabelSelector>>& selectors,
                          const rapidjson::Value* labels) {
  for (const auto& sel : selectors) {
    if (!sel || sel->matches_everything() || sel->matches_nothing()) continue;
    if (sel->matches(labels)) return true;
  }
  return false;
}

}  // namespace

std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::kInjected:
      return "injected";
    case Reason::kHostNetwork:
      return "host_network";
    case Reason::kIgnoredNamespace:
      return "ignored_namespace";
    case Reason::kLabelFalse:
      return "label_false";
    case Reason::kLabelTrue:
      return "label_true";
    case Reason::kAnnotationFalse:
      return "annotation_false";
    case Reason::kAnnotationTrue:
      return "annotation_true";
    case Reason::kNeverInjectSelector:
      return "never_inject_selector";
    case Reason::kAlwaysInjectSelector:
      return "always_inject_selector";
    case Reason::kPolicyEnabled:
      return "policy_enabled";
    case Reason::kPolicyDisabled:
      return "policy_disabled";
    case Reason::kPolicyInvalid:
      return "policy_invalid";
  }
  return "unknown";
}

Decision decide(const Snapshot& snapshot, const rapidjson::Value& pod, std::string_view ns,
                bool kube_inject) {
  const rapidjson::Value* spec = pod.IsObject() ? api::find_member(pod, "spec") : nullptr;
  if (spec != nullptr && spec->IsObject()) {
    const rapidjson::Value* host = api::find_member(*spec, "hostNetwork");
    if (host != nullptr && host->IsBool() && host->GetBool()) return {false, Reason::kHostNetwork};
  }

  std::string pod_ns = api::string_at(pod, {"metadata", "namespace"});
  std::string_view effective_ns = pod_ns.empty() ? ns : std::string_view(pod_ns);
  for (std::string_view ignored : kIgnoredNamespaces)
    if (effective_ns == ignored) return {false, Reason::kIgnoredNamespace};

  const rapidjson::Value* labels = meta_map(pod, "labels");
  const rapidjson::Value* annotations = meta_map(pod, "annotations");

  // The label is the newer API: when present (even empty) it replaces the annotation.
  std::string_view value;
  bool from_label = false;
  if (const rapidjson::Value* a = string_entry(annotations, kInjectKey))
    value = api::string_view_of(*a);
  if (labels != nullptr) {
    if (const rapidjson::Value* l = api::find_member(*labels, kInjectKey)) {
      from_label = true;
      value = l->IsString() ? api::string_view_of(*l) : std::string_view();
    }
  }

  std::string_view policy = kube_inject ? std::string_view("enabled") : snapshot.policy;
  bool policy_valid = policy == "enabled" || policy == "disabled";
  auto outcome = [&](bool inject, Reason reason) -> Decision {
    // An invalid policy disables injection for every pod, explicit opt-ins included.
    if (!policy_valid) return {false, Reason::kPolicyInvalid};
    return {inject, reason};
  };

  // Only the exact strings count; anything else falls back to the defaults (upstream logs it).
  if (value == "true")
    return outcome(true, from_label ? Reason::kLabelTrue : Reason::kAnnotationTrue);
  if (value == "false")
    return outcome(false, from_label ? Reason::kLabelFalse : Reason::kAnnotationFalse);

  if (!kube_inject) {
    if (any_selector_matches(snapshot.never_inject_selector, labels))
      return outcome(false, Reason::kNeverInjectSelector);
    if (any_selector_matches(snapshot.always_inject_selector, labels))
      return outcome(true, Reason::kAlwaysInjectSelector);
  }

  if (policy == "enabled") return {true, Reason::kPolicyEnabled};
  if (policy == "disabled") return {false, Reason::kPolicyDisabled};
  return {false, Reason::kPolicyInvalid};
}

}  // namespace meshop::inject
