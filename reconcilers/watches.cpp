#include "reconcilers/watches.hpp"

#include "operator/kube/client.hpp"
#include "operator/restart/projection.hpp"
#include "reconcilers/install.hpp"

namespace meshop::reconcilers::watches {
namespace {

runtime::WatchSpec spec(const kube::ResourceType& type, std::string ns = {}) {
  runtime::WatchSpec s;
  s.type = type;
  s.ns = std::move(ns);
  return s;
}

// First lists of the kinds that grow with the cluster are quorum reads in pages of 500: an
// rv=0 answer comes in one body, hundreds of MB at 100k pods.
runtime::WatchSpec paged(runtime::WatchSpec s) {
  s.initial_list_resource_version = "";
  return s;
}

}  // namespace

runtime::WatchSpec istio_operators() {
  return spec(istio_operator_resource());
}

runtime::WatchSpec namespaces() {
  runtime::WatchSpec s = spec(kube::resources::kNamespaces);
  // Every namespace's spec ({"finalizers":["kubernetes"]}) and status ({"phase":"Active"}) are
  // the same: kept once (the store still reads whole, so the CachedReader may serve it).
  s.shared_paths = {"/spec", "/status"};
  return s;
}

runtime::WatchSpec mutating_webhook_configurations() {
  return spec(kube::resources::kMutatingWebhookConfigurations);
}

runtime::WatchSpec control_plane_config_maps(const std::string& ns) {
  return spec(kube::resources::kConfigMaps, ns);
}

runtime::WatchSpec webhook_secret(const std::string& ns) {
  runtime::WatchSpec s = spec(kube::resources::kSecrets, ns);
  s.options.field_selector = "metadata.name=meshop-webhook-certs";
  return s;
}

std::optional<runtime::WatchSpec> installed(const manifest::InstalledKind& k,
                                            const std::string& ns) {
  using Watch = manifest::InstalledKind::Watch;
  if (k.watch == Watch::kNone) return std::nullopt;
  if (k.watch == Watch::kOperatorNamespace) {
    runtime::WatchSpec s = spec({std::string(k.group), std::string(k.version),
                                 std::string(k.resource), std::string(k.kind), k.namespaced},
                                ns);
    return s;
  }
  runtime::WatchSpec s = spec({std::string(k.group), std::string(k.version),
                               std::string(k.resource), std::string(k.kind), k.namespaced});
  s.options.label_selector = std::string(api::kManagedSelector);
  s.options.metadata_only = k.watch == Watch::kMetadata;
  return s;
}

runtime::WatchSpec pods() {
  runtime::WatchSpec s = paged(spec(kube::resources::kPods));
  s.projection = restart::project_pod;
  s.projection_name = "restart::project_pod";
  // A pod a controller owns is a record (api/record.hpp): what the pods of one ReplicaSet have
  // in common (namespace, labels, owner, injection status, containers and, while they are
  // healthy, status: the record's base) is kept once for all of them, and within it the
  // annotations, containers and status the pods of other ReplicaSets have too; creation times
  // are kept once per second. A pod costs its name and its record's slots: at 100k pods the
  // base would otherwise be most of the store. A pod no controller owns is kept whole, its
  // annotations, spec and status shared.
  s.shared_paths = {"/0", "/0/metadata/annotations", "/0/spec", "/0/status",
                    "/3", "/metadata/annotations",   "/spec",   "/status"};
  return s;
}

runtime::WatchSpec every(const kube::ResourceType& type) {
  runtime::WatchSpec s = paged(spec(type));
  s.projection = [api_version = type.api_version(), kind = type.kind](rapidjson::Document& o) {
    restart::project_workload(o, api_version, kind);
  };
  s.projection_name = "restart::project_workload";
  s.name = type.resource + "-all";
  // Workloads made from one manifest (or one chart) differ in name, uid and times: their
  // labels, spec and, while they are healthy, status (project_workload drops the times and
  // messages that made each its own) are kept once. A Deployment's ReplicaSets keep no spec
  // (project_workload), so its template is not shared with them any more.
  s.shared_paths = {"/metadata/labels", "/spec", "/status"};
  return s;
}

runtime::WatchSpec nodes() {
  runtime::WatchSpec s = paged(spec(kube::resources::kNodes));
  s.projection = restart::project_node;
  s.projection_name = "restart::project_node";
  s.name = "nodes-all";
  return s;
}

}  // namespace meshop::reconcilers::watches
