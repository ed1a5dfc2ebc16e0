// Which REST path an API resource lives at: a small table of the built-in kinds meshop uses,
// plus ResourceType values built from discovery (Client::discover) for custom resources.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshop::kube {

// Group/version/resource plus scope; enough to build every URL of the resource.
struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "configmaps"
  std::string kind;      // "ConfigMap"
  bool namespaced = true;

  std::string api_version() const;  // "v1", "apps/v1"
  // "/api/v1/namespaces/NS/configmaps[/NAME[/SUBRESOURCE]]". An empty namespace for a
  // namespaced resource addresses all namespaces (list/watch only).
  std::string path(std::string_view ns = {}, std::string_view name = {},
                   std::string_view subresource = {}) const;
  // "configmaps" or "deployments.apps", for messages.
  std::string display() const;

  bool operator==(const ResourceType&) const = default;
};

// Looks up a built-in resource by plural ("configmaps", "deployments.apps" also accepted), by
// kind ("ConfigMap"), or by "<group>/<version>/<kind>". nullopt for anything not in the table.
std::optional<ResourceType> builtin_resource(std::string_view name);
// Looks up by apiVersion + kind, e.g. ("apps/v1", "Deployment").
std::optional<ResourceType> builtin_resource(std::string_view api_version, std::string_view kind);

namespace resources {
// The built-in kinds meshop uses.
extern const ResourceType kNamespaces;
extern const ResourceType kPods;
extern const ResourceType kConfigMaps;
extern const ResourceType kSecrets;
extern const ResourceType kServices;
extern const ResourceType kServiceAccounts;
extern const ResourceType kEvents;  // events.k8s.io/v1
extern const ResourceType kNodes;
extern const ResourceType kReplicationControllers;
extern const ResourceType kDeployments;
extern const ResourceType kStatefulSets;
extern const ResourceType kDaemonSets;
extern const ResourceType kReplicaSets;
extern const ResourceType kJobs;
extern const ResourceType kCronJobs;
extern const ResourceType kPodDisruptionBudgets;
extern const ResourceType kHorizontalPodAutoscalers;
extern const ResourceType kMutatingWebhookConfigurations;
extern const ResourceType kValidatingWebhookConfigurations;
extern const ResourceType kLeases;
extern const ResourceType kCustomResourceDefinitions;
extern const ResourceType kRoles;
extern const ResourceType kRoleBindings;
extern const ResourceType kClusterRoles;
extern const ResourceType kClusterRoleBindings;
}  // namespace resources

}  // namespace meshop::kube
