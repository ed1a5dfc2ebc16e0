#include "operator/manifest/installed_kinds.hpp"

namespace meshop::manifest {
namespace {
using K = InstalledKind;
constexpr int kUnknownRank = 1000;  // with the workloads
}  // namespace

const std::vector<InstalledKind>& installed_kinds() {
  // Ranks follow Helm's install order where it matters: identities and RBAC before what runs
  // under them, configuration before workloads, Services last (their endpoints follow pods),
  // webhooks after the Service they call.
  static const std::vector<InstalledKind> kinds{
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false,
       -1000, K::Owner::kKeep, K::Watch::kMetadata},
      {"", "v1", "namespaces", "Namespace", false, -900, K::Owner::kNever, K::Watch::kNone},
      {"", "v1", "serviceaccounts", "ServiceAccount", true, 1, K::Owner::kInstall,
       K::Watch::kMetadata},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, 1,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, 2,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"rbac.authorization.k8s.io", "v1", "roles", "Role", true, 3, K::Owner::kInstall,
       K::Watch::kMetadata},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, 4,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"", "v1", "resourcequotas", "ResourceQuota", true, 100, K::Owner::kInstall,
       K::Watch::kMetadata},
      {"", "v1", "configmaps", "ConfigMap", true, 100, K::Owner::kInstall,
       K::Watch::kOperatorNamespace},
      // Multus' (istio-cni with values.cni.provider multus): applied and pruned where the
      // apiserver serves it (uninstall skips a kind it does not), never watched.
      {"k8s.cni.cncf.io", "v1", "network-attachment-definitions", "NetworkAttachmentDefinition",
       true, 100, K::Owner::kInstall, K::Watch::kNone},
      {"apps", "v1", "deployments", "Deployment", true, 1000, K::Owner::kInstall, K::Watch::kFull},
      {"apps", "v1", "daemonsets", "DaemonSet", true, 1000, K::Owner::kInstall, K::Watch::kFull},
      {"autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, 1001,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, 1002,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"", "v1", "services", "Service", true, 1003, K::Owner::kInstall, K::Watch::kMetadata},
      {"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, 1004, K::Owner::kInstall,
       K::Watch::kMetadata},
      {"networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, 1005,
       K::Owner::kInstall, K::Watch::kMetadata},
      {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
       "ValidatingAdmissionPolicy", false, 9000, K::Owner::kInstall, K::Watch::kMetadata},
      {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
       "ValidatingAdmissionPolicyBinding", false, 9001, K::Owner::kInstall, K::Watch::kMetadata},
      {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
       "ValidatingWebhookConfiguration", false, 9002, K::Owner::kInstall, K::Watch::kMetadata},
      {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
       "MutatingWebhookConfiguration", false, 10000, K::Owner::kWebhooks, K::Watch::kNone},
  };
  return kinds;
}

std::optional<InstalledKind> find_installed_kind(std::string_view group, std::string_view kind) {
  for (const InstalledKind& k : installed_kinds())
    if (k.group == group && k.kind == kind) return k;
  return std::nullopt;
}

int apply_rank(std::string_view group, std::string_view kind) {
  auto k = find_installed_kind(group, kind);
  return k ? k->apply_rank : kUnknownRank;
}

}  // namespace meshop::manifest
