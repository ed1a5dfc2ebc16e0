// The cluster-wide restart plan: every workload of a cluster view, its staleness
// (planner.hpp) and what the policy of the revision involved says to do about it now.
//
// A ClusterView is what the plan is computed from: lists as read from the API (the CLI) or
// copies of informer stores (the operator). The plan is pure: same view, same time, same
// answer; nothing is written. The restarts executor carries out the `kRestart` entries.
//
// Policy source (issue 7): the IstioOperator of the revision the workload moves to, or the
// one it leaves when injection is disabled. A revision is an IstioOperator's spec.revision
// ("" is "default"); an IstioOperator whose spec.restarts does not parse makes its workloads
// kBlocked with the error, never restarted with a guessed policy. No IstioOperator for the
// revision → the default policy (DryRun).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/planner.hpp"
#include "operator/restart/policy.hpp"

namespace meshop::restart {

struct ClusterView {
  std::vector<rapidjson::Document> namespaces;
  std::vector<rapidjson::Document> webhook_configurations;
  std::vector<rapidjson::Document> istio_operators;
  // Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs,
  // CronJobs (each with its kind set).
  std::vector<rapidjson::Document> workloads;
  std::vector<rapidjson::Document> pods;
  std::vector<rapidjson::Document> pod_disruption_budgets;
  // Deployments of the control planes (istiod[-<rev>]) to tell whether a revision is healthy;
  // may overlap with `workloads`.
  std::vector<rapidjson::Document> control_plane_deployments;
  // ConfigMaps of the control-plane namespace (istio-sidecar-injector[-<rev>], istio[-<rev>])
  // and the nodes' kubelet versions: what the injection engines of the revisions are built
  // from. Not read by plan_cluster itself.
  std::vector<rapidjson::Document> config_maps;
  std::vector<std::string> kubelet_versions;
};

enum class Action {
  kNone,          // up to date
  kRestart,       // restart now (mode Auto, every gate open)
  kWouldRestart,  // mode DryRun: would restart
  kDeferred,      // stale, but a gate is closed for now (PDB, maintenance window, control plane)
  kSkipped,       // stale, and meshop will not restart it (opt-out, mode Off)
  kInProgress,    // already restarted for this cause; its pods are still rolling
  kManual,        // stale Job/CronJob/Pod: a person must restart it
  kBlocked,       // conflict, unknown revision or an invalid policy
};
std::string_view action_name(Action a);

struct PlanEntry {
  WorkloadPlan plan;
  Action action = Action::kNone;
  std::string why;            // the gate or the skip reason, for people
  std::string cause;          // restart_cause(), for kRestart / kWouldRestart / kInProgress
  std::string policy_source;  // "<namespace>/<name>" of the IstioOperator, or "defaults"
  Policy policy;
};

struct ClusterPlanOptions {
  std::string namespace_filter;  // "" = all namespaces
  // The namespace holding the control planes (istiod[-<rev>] Deployments).
  std::string control_plane_namespace = "istio-system";
};

std::vector<PlanEntry> plan_cluster(const ClusterView& view, const DesiredFn& desired,
                                    SystemTime now, const ClusterPlanOptions& options = {});

}  // namespace meshop::restart
