// The Evict restart strategy (`spec.restarts.strategy: Evict`): a stale workload's pods are
// replaced one at a time through the Eviction API, as `kubectl drain` does. The apiserver
// checks every PodDisruptionBudget that selects the pod before it deletes it, and the
// workload's controller (ReplicaSet, StatefulSet, DaemonSet) creates the replacement, which the
// injection webhook gives the sidecar of now. The workload object is never written: no pod
// template change, no GitOps drift, metadata.generation unchanged.
//
// This file decides, from what the cluster shows, what the next step is for one workload:
//   - started: the wave is under way (a live pod already matches, or a pod is terminating), so
//     it holds a `maxConcurrent` slot without being admitted again;
//   - next: the pod to evict now. Only when no pod is terminating, every pod is Ready and at
//     least the desired number are, so the previous replacement is Ready before the next
//     eviction, and one more unavailable pod stays within the workload's own maxUnavailable;
//   - waiting: why no pod may go now;
//   - blocked: the workload's maxUnavailable resolves to 0 (a Deployment that relies on
//     maxSurge with few replicas, a surge-only DaemonSet): evicting any pod would exceed it;
//   - failed: a started wave whose pod has not been Ready for `rollout_timeout` since it was
//     created.
// Whether the eviction is allowed by the budgets is the apiserver's answer (a 429 naming the
// budget), see budget_of_refusal().
//
// Pure: no I/O; time is passed in.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

namespace meshop::restart {

struct EvictStep {
  bool started = false;
  // No pod terminating, every live pod Ready, at least the desired number: nothing to wait for.
  bool settled = false;
  std::string next;
  std::string waiting;
  std::string blocked;
  std::string failed;
  int max_unavailable = 1;  // resolved for the workload's desired replicas
  int desired = 0;          // replicas the workload wants
  int ready = 0;            // live pods that are Ready
  int stale_left = 0;       // live stale pods
};

// The workload's maxUnavailable, resolved as its controller resolves it for `desired` pods:
// Deployment spec.strategy.rollingUpdate.maxUnavailable (default 25%, rounded down; 1 when
// it and maxSurge are both 0; 1 for Recreate), StatefulSet
// spec.updateStrategy.rollingUpdate.maxUnavailable (default 1, at least 1), DaemonSet
// spec.updateStrategy.rollingUpdate.maxUnavailable (default 1, percentages rounded up; 1 for
// OnDelete), 1 for ReplicaSets and ReplicationControllers. `field` receives the path read.
int resolve_max_unavailable(const rapidjson::Value& workload, int desired, std::string* field);

// `pods` are the workload's pods (through its ReplicaSets for a Deployment), `stale_pods` the
// names of those that differ from what injection gives now (WorkloadPlan::stale_pods).
EvictStep evict_step(const rapidjson::Value& workload,
                     const std::vector<const rapidjson::Value*>& pods,
                     const std::vector<std::string>& stale_pods,
                     std::chrono::system_clock::time_point now,
                     std::chrono::seconds rollout_timeout);

// The PodDisruptionBudget named by an eviction refusal (the apiserver's 429: "Cannot evict
// pod as it would violate the pod's disruption budget." with a cause "The disruption budget
// <name> needs 3 healthy pods and has 3 currently", or "... is still being processed by the
// server."), searched in `text` (the error message with its causes); "" when none is named.
std::string budget_of_refusal(std::string_view text);

}  // namespace meshop::restart
