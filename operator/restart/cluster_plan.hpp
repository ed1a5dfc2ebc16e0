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
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/evict.hpp"
#include "operator/restart/planner.hpp"
#include "operator/restart/policy.hpp"

namespace meshop::restart {

// The objects of one kind in a view: shared immutable values (the same type as
// runtime::Object), so a view taken from informer stores shares their objects instead of
// copying them. Iterating yields `const rapidjson::Value&`.
class ObjectList {
 public:
  using Item = std::shared_ptr<const rapidjson::Value>;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = rapidjson::Value;
    using difference_type = std::ptrdiff_t;
    using pointer = const rapidjson::Value*;
    using reference = const rapidjson::Value&;
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
  // Appends `objects` (moved).
  void append(std::vector<Item> objects);
  void reserve(std::size_t n) { items_.reserve(n); }
  void clear() { items_.clear(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const rapidjson::Value& operator[](std::size_t i) const { return *items_[i]; }
  // The shared object itself (to keep it alive past the list).
  const Item& item(std::size_t i) const { return items_[i]; }
  const_iterator begin() const { return const_iterator(items_.begin()); }
  const_iterator end() const { return const_iterator(items_.end()); }
  // A private copy of item `i`, to change (tests): others sharing the old one do not see it.
  rapidjson::Document& edit(std::size_t i);

 private:
  std::vector<Item> items_;
};

// Pods grouped by the uid of their controller ownerReference ("" for the pods no controller
// owns). Groups are immutable and shared: a holder that keeps them up to date (the operator's
// informer handlers, reconcilers/restarts.hpp PodIndex) replaces a group when one of its pods
// changes, so an unchanged group is the same object from one view to the next.
struct PodGroup {
  std::vector<ObjectList::Item> pods;
};
using PodGroups = std::unordered_map<std::string, std::shared_ptr<const PodGroup>>;
// Groups `pods` (every group new).
PodGroups group_pods(const ObjectList& pods);

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
  // Set: the pods grouped by controller, and `pods` is empty (`meshop run`: the groups kept by
  // the informer's handlers, so that a pass does not walk every pod). Unset: `pods` is grouped
  // when needed.
  std::shared_ptr<const PodGroups> pod_groups;
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
  // The workload of uid `uid`, or null.
  const rapidjson::Value* find(std::string_view uid) const;

 private:
  std::unordered_map<std::string_view, const rapidjson::Value*> by_uid_;  // views into the list
};

// The uid of `object`'s controller ownerReference ("" when it has none).
std::string_view controller_uid(const rapidjson::Value& object);

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
  // The object planned (workload or bare Pod), shared with the view it was planned from.
  ObjectList::Item object;
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

class PlanMemo;

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
  // Staleness verdicts of earlier passes, reused for the workloads whose inputs are the same
  // objects as then (PlanMemo), when `desired_key` is not empty: it names what `desired`
  // answers from (the engines' configurations), and the memo forgets everything when it
  // changes. Null or "": every workload is planned afresh.
  PlanMemo* memo = nullptr;
  std::string desired_key;
};

// What plan_cluster decided about each workload's staleness (plan_workload) in the previous
// pass, reused while none of its inputs changed: the workload object, its namespace object,
// its pods, the webhook configurations and the engines (ClusterPlanOptions::desired_key). The
// view's objects are immutable shared documents, so the same pointer is the same content; the
// memo holds the objects it compares against, so that no address is reused meanwhile. A pass
// over an unchanged cluster thus runs neither the engine nor the pods' observation, and costs
// a pointer comparison per pod. Mark and sweep: a plan_cluster drops the entries it did not
// use. Not thread-safe: one caller's passes, one at a time.
class PlanMemo {
 public:
  std::size_t size() const { return entries_.size(); }
  // Hits and misses of the last plan_cluster that used this memo.
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  friend std::vector<PlanEntry> plan_cluster(const ClusterView&, const DesiredFn&, SystemTime,
                                             const ClusterPlanOptions&);
  struct Entry {
    ObjectList::Item workload;
    ObjectList::Item ns_object;  // null when the namespace is not in the view
    // The pod groups of the workload (by address; a bare pod: none, it is its own pod).
    std::vector<std::shared_ptr<const PodGroup>> groups;
    // The verdicts, without kind, namespace and name (the target's): kept once for all the
    // workloads with the same one (every up-to-date workload of a revision has the same).
    std::shared_ptr<const WorkloadPlan> plain;           // PlanOptions{}
    std::shared_ptr<const WorkloadPlan> with_templates;  // include_template_changes
    std::uint64_t pass = 0;
  };
  // The one kept copy of `plan` (equal plans are shared; forgotten when no entry holds them).
  std::shared_ptr<const WorkloadPlan> intern(WorkloadPlan plan);
  std::unordered_multimap<std::uint64_t, std::weak_ptr<const WorkloadPlan>> plans_;
  std::string desired_key_;
  std::vector<ObjectList::Item> webhooks_;  // the webhook configurations routed with
  PodGroups groups_;  // a view without pod_groups: its pods as grouped in the last pass
  // Who is planned, in plan order, each with its pod groups: reused while the view's workloads
  // are the same objects in the same order and its pod_groups the same snapshot (what it
  // points into is pinned by the two members after it).
  struct Target {
    std::string_view ns, kind, name;
    std::size_t workload = 0;               // index in the view's workloads, unless
    const ObjectList::Item* pod = nullptr;  // a bare pod (in a pinned group)
    std::vector<const std::shared_ptr<const PodGroup>*> groups;  // by address
  };
  std::vector<Target> layout_;
  std::vector<ObjectList::Item> layout_workloads_;
  std::shared_ptr<const PodGroups> layout_groups_;
  std::unordered_map<const rapidjson::Value*, Entry> entries_;  // by workload
  std::uint64_t pass_ = 0;
  std::size_t hits_ = 0, misses_ = 0;
};

std::vector<PlanEntry> plan_cluster(const ClusterView& view, const DesiredFn& desired,
                                    SystemTime now, const ClusterPlanOptions& options = {});

}  // namespace meshop::restart
