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

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/evict.hpp"
#include "operator/restart/planner.hpp"
#include "operator/restart/policy.hpp"

namespace meshop::restart {

// The objects of one kind in a view: shared immutable documents (the same type as
// runtime::Object), so a view taken from informer stores shares their objects instead of
// copying them. Iterating yields `const rapidjson::Document&`.
class ObjectList {
 public:
  using Item = std::shared_ptr<const rapidjson::Document>;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = rapidjson::Document;
    using difference_type = std::ptrdiff_t;
    using pointer = const rapidjson::Document*;
    using reference = const rapidjson::Document&;
    const_iterator() = default;
    explicit const_iterator(std::vector<Item>::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++it_;
      return old;
    }
    bool operator==(const const_iterator& o) const { return it_ == o.it_; }
    bool operator!=(const const_iterator& o) const { return it_ != o.it_; }

   private:
    std::vector<Item>::const_iterator it_{};
  };

  void push_back(rapidjson::Document object) {
    items_.push_back(std::make_shared<const rapidjson::Document>(std::move(object)));
  }
  void push_back(Item object) { items_.push_back(std::move(object)); }
  void reserve(std::size_t n) { items_.reserve(n); }
  void clear() { items_.clear(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const rapidjson::Document& operator[](std::size_t i) const { return *items_[i]; }
  const_iterator begin() const { return const_iterator(items_.begin()); }
  const_iterator end() const { return const_iterator(items_.end()); }
  // A private copy of item `i`, to change (tests): others sharing the old one do not see it.
  rapidjson::Document& edit(std::size_t i);

 private:
  std::vector<Item> items_;
};

struct ClusterView {
  ObjectList namespaces;
  ObjectList webhook_configurations;
  ObjectList istio_operators;
  // Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs,
  // CronJobs (each with its kind set).
  ObjectList workloads;
  // Whole pods, or pods as restart::project_pod keeps them (projection.hpp): the plan is the
  // same. Any order: the plan looks at each workload's pods by name.
  ObjectList pods;
  ObjectList pod_disruption_budgets;
  // Deployments of the control planes (istiod[-<rev>]) to tell whether a revision is healthy;
  // may overlap with `workloads`.
  ObjectList control_plane_deployments;
  // ConfigMaps of the control-plane namespace (istio-sidecar-injector[-<rev>], istio[-<rev>])
  // and the nodes' kubelet versions: what the injection engines of the revisions are built
  // from. Not read by plan_cluster itself.
  ObjectList config_maps;
  std::vector<std::string> kubelet_versions;
};

// Who runs a pod: the chain of controller ownerReferences (pod → ReplicaSet → Deployment,
// pod → Job → CronJob, pod → StatefulSet/DaemonSet/ReplicationController) followed through
// `workloads` to its top. The list must outlive this index.
class Owners {
 public:
  explicit Owners(const ObjectList& workloads);
  // The top of `object`'s chain: `object` itself when it has no controller; null when its
  // controller is not in the list (owned by something not planned, e.g. a custom resource).
  const rapidjson::Value* top_of(const rapidjson::Value& object) const;

 private:
  std::map<std::string, const rapidjson::Value*, std::less<>> by_uid_;
};

enum class Action {
  kNone,            // up to date
  kRestart,         // restart now (mode Auto, every gate open)
  kWouldRestart,    // mode DryRun: would restart
  kDeferred,        // stale, but a gate is closed for now (PDB, maintenance window, control plane)
  kSkipped,         // stale, and meshop will not restart it (opt-out, mode Off)
  kInProgress,      // already restarted for this cause; its pods are still rolling (Rollout),
                    // or its eviction wave is under way (Evict)
  kManual,          // stale Job/CronJob/Pod: a person must restart it
  kBlocked,         // conflict, unknown revision or an invalid policy
  kApprovalNeeded,  // the move exceeds maxVersionSkew; waits for `meshop restart approve`
  // Set by the restarts executor from the wave of its IstioOperator (halt.hpp), not by
  // plan_cluster:
  kHalted,  // a canary regressed: nothing of this IstioOperator starts until resumed
  kPaused,  // paused by hand (`meshop restart pause`)
};
std::string_view action_name(Action a);

struct PlanEntry {
  WorkloadPlan plan;
  Action action = Action::kNone;
  std::string why;            // the gate or the skip reason, for people
  std::string cause;          // restart_cause(), for kRestart / kWouldRestart / kInProgress
  std::string policy_source;  // "<namespace>/<name>" of the IstioOperator, or "defaults"
  Policy policy;
  // Strategy Evict, a stale restartable workload: the next step of its wave (evict.hpp). The
  // executor evicts `evict.next` for kRestart (once admitted) and kInProgress entries.
  EvictStep evict;
  // A member of its wave's canary group (halt.hpp): restarted first, then soaked.
  bool canary = false;
  // The Istio versions of the move ("" when unknown): of the first stale pod's proxy image tag,
  // else the spec.version of its revision's IstioOperator, else the bundled default.
  std::string current_version;
  std::string target_version;
  // Stale entries: since when (the meshop.io/stale-since record of this cause, else `now`: the
  // executor records it), and whether that is longer ago than the policy's maxStaleness.
  SystemTime stale_since{};
  bool stale_since_recorded = false;
  bool overdue = false;
  // Up to date, yet the workload still carries a meshop.io/stale-since record (of the episode
  // that ended): the executor removes it, so that it cannot date a later episode of the same
  // cause (ProxyImageChanged/default recurs with every proxy upgrade).
  bool stale_since_left = false;
};

struct ClusterPlanOptions {
  std::string namespace_filter;  // "" = all namespaces
  // The namespace holding the control planes (istiod[-<rev>] Deployments).
  std::string control_plane_namespace = "istio-system";
  // "Kind/namespace/name" → when meshop last restarted it without writing the workload (strategy
  // Evict: the reconciler's memory of the waves it started). For Rollout the pod template's
  // record is read (last_restart_of); the later of the two counts for minInterval.
  std::map<std::string, LastRestart> last_restarts;
  // The Istio version an IstioOperator without spec.version nor spec.installPackagePath
  // installs: the bundled default (manifest::default_chart_set(), which the restarts
  // reconciler passes; "" leaves such revisions' versions unknown: they never gate).
  std::string default_istio_version;
};

std::vector<PlanEntry> plan_cluster(const ClusterView& view, const DesiredFn& desired,
                                    SystemTime now, const ClusterPlanOptions& options = {});

}  // namespace meshop::restart
