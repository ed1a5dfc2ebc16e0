#include "operator/kube/resource.hpp"

#include <array>

namespace meshop::kube {

namespace resources {
const ResourceType kNamespaces{"", "v1", "namespaces", "Namespace", false};
const ResourceType kPods{"", "v1", "pods", "Pod", true};
const ResourceType kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const ResourceType kSecrets{"", "v1", "secrets", "Secret", true};
const ResourceType kServices{"", "v1", "services", "Service", true};
const ResourceType kServiceAccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
const ResourceType kEvents{"events.k8s.io", "v1", "events", "Event", true};
const ResourceType kNodes{"", "v1", "nodes", "Node", false};
const ResourceType kReplicationControllers{"", "v1", "replicationcontrollers",
                                           "ReplicationController", true};
const ResourceType kDeployments{"apps", "v1", "deployments", "Deployment", true};
const ResourceType kStatefulSets{"apps", "v1", "statefulsets", "StatefulSet", true};
const ResourceType kDaemonSets{"apps", "v1", "daemonsets", "DaemonSet", true};
const ResourceType kReplicaSets{"apps", "v1", "replicasets", "ReplicaSet", true};
const ResourceType kJobs{"batch", "v1", "jobs", "Job", true};
const ResourceType kCronJobs{"batch", "v1", "cronjobs", "CronJob", true};
const ResourceType kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets",
                                         "PodDisruptionBudget", true};
const ResourceType kHorizontalPodAutoscalers{"autoscaling", "v2", "horizontalpodautoscalers",
                                             "HorizontalPodAutoscaler", true};
const ResourceType kMutatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                  "mutatingwebhookconfigurations",
                                                  "MutatingWebhookConfiguration", false};
const ResourceType kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                    "validatingwebhookconfigurations",
                                                    "ValidatingWebhookConfiguration", false};
const ResourceType kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
const ResourceType kCustomResourceDefinitions{
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
const ResourceType kRoles{"rbac.authorization.k8s.io", "v1", "roles", "Role", true};
const ResourceType kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding",
                                 true};
const ResourceType kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                                 false};
const ResourceType kClusterRoleBindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                                        "ClusterRoleBinding", false};
}  // namespace resources

namespace {
const std::array<const ResourceType*, 25> kTable = {
    &resources::kNamespaces,
    &resources::kPods,
    &resources::kConfigMaps,
    &resources::kSecrets,
    &resources::kServices,
    &resources::kServiceAccounts,
    &resources::kEvents,
    &resources::kNodes,
    &resources::kReplicationControllers,
    &resources::kDeployments,
    &resources::kStatefulSets,
    &resources::kDaemonSets,
    &resources::kReplicaSets,
    &resources::kJobs,
    &resources::kCronJobs,
    &resources::kPodDisruptionBudgets,
    &resources::kHorizontalPodAutoscalers,
    &resources::kMutatingWebhookConfigurations,
    &resources::kValidatingWebhookConfigurations,
    &resources::kLeases,
    &resources::kCustomResourceDefinitions,
    &resources::kRoles,
    &resources::kRoleBindings,
    &resources::kClusterRoles,
    &resources::kClusterRoleBindings,
};
}  // namespace

std::string ResourceType::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::path(std::string_view ns, std::string_view name,
                               std::string_view subresource) const {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) {
    p += "/namespaces/";
    p += ns;
  }
  p += "/";
  p += resource;
  if (!name.empty()) {
    p += "/";
    p += name;
    if (!subresource.empty()) {
      p += "/";
      p += subresource;
    }
  }
  return p;
}

std::string ResourceType::display() const {
  return group.empty() ? resource : resource + "." + group;
}

std::optional<ResourceType> builtin_resource(std::string_view name) {
  for (const ResourceType* t : kTable) {
    if (t->resource == name || t->kind == name || t->display() == name ||
        t->api_version() + "/" + t->kind == name) {
      return *t;
    }
  }
  return std::nullopt;
}

std::optional<ResourceType> builtin_resource(std::string_view api_version, std::string_view kind) {
  for (const ResourceType* t : kTable) {
    if (t->api_version() == api_version && (t->kind == kind || t->resource == kind)) return *t;
  }
  return std::nullopt;
}

}  // namespace meshop::kube
