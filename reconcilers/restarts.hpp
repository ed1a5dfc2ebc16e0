// The restarts reconciler (issue 7): restarts, paced and health-gated, the workloads whose
// pods no longer match what injection would give them.
//
// One pass reads the cluster (from the operator's informer stores, RestartsCache; else list
// calls, as `meshop restart` does), takes each revision's injection engine (the webhook's
// snapshot in `meshop run`, RestartsConfig::revisions; else built from its ConfigMaps), computes
// the plan (operator/restart/cluster_plan.hpp; the verdicts of workloads whose objects did not
// change since the previous pass are reused, restart::PlanMemo) and, when executing:
//   1. follows the rollouts already started (the workload's pod template records the cause and
//      kubectl.kubernetes.io/restartedAt): complete, still progressing (counts against the
//      concurrency limits), or failed (timeout, ProgressDeadlineExceeded). Workloads that do
//      not roll on a template change (StatefulSet OnDelete, owner-less ReplicaSet and
//      ReplicationController) get one pre-restart pod deleted at a time, each only when all
//      their pods are Ready;
//   2. if a failed rollout's policy says Pause, starts nothing more and says why;
//   3. starts the admitted `Restart` entries (maxConcurrent cluster-wide and
//      maxConcurrentPerNamespace, from each entry's policy) with the strategic-merge patch
//      `kubectl rollout restart` sends plus the cause record, or, under strategy Evict, by
//      evicting their first stale pod (operator/restart/evict.hpp); waves under way evict
//      their next pod once the previous replacement is Ready. A PodDisruptionBudget's refusal
//      (429) makes the entry Deferred, naming the budget, retried with backoff. A pass that
//      does not execute asks the apiserver with dry-run evictions;
//   1b. watches the health of every workload it restarted (operator/restart/halt.hpp): while
//      its rollout runs and for `soak` (spec.restarts.canary.soak, else 5m) after this process
//      saw it complete, a new pod in CrashLoopBackOff, a restarted container, a stalled rollout
//      or (once rolled out) a new pod not Ready makes the restart failed under failurePolicy;
//   1c. decides each IstioOperator's wave (halt.hpp): under spec.restarts.canary only the canary
//      group starts until it rolled out and soaked; a canary's regression halts the wave
//      (RestartsHalted condition, a Warning Event on the IstioOperator, metrics) and while
//      halted or paused by hand (meshop.io/restarts-paused) nothing of that IstioOperator
//      starts. meshop.io/restarts-resume is honoured (the halt and the pause lifted) and
//      removed; a spec change lifts a halt too;
//   4. reports: an Event on each workload whose state changed (restarted, skipped, deferred,
//      failed, manual), metrics meshop_restarts_total{reason,result},
//      meshop_stale_workloads{reason} and meshop_restarts_halted{istio_operator}, and
//      `status.restarts` (with `wave`) and the RestartsHalted / RestartsOverdue conditions on
//      each IstioOperator whose policy governed an entry (reconcilers/restarts_status.hpp).
// The pass is level-triggered: everything it needs is in the cluster, so a restarted meshop
// picks up where the previous one stopped. Memory kept between passes is what avoids repeating
// Events and work (the plan memo, the engines' decisions). Every write goes through a
// kube::Writer (the client's, or a test's recording fake).
//
// Thread affinity: the client's executor (the control loop).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "operator/inject/injector.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/restart/cluster_plan.hpp"
#include "operator/restart/halt.hpp"
#include "operator/runtime/controller.hpp"
#include "operator/runtime/store.hpp"
#include "operator/webhook/revision_store.hpp"

namespace meshop::reconcilers {

// The IstioOperator condition listing workloads stale past spec.restarts.maxStaleness.
inline constexpr std::string_view kOverdueCondition = "RestartsOverdue";

// The pods of an informer store grouped by controller (restart::PodGroups), kept up to date by
// the store's handlers: a pass takes the groups as they are (an immutable snapshot, copied only
// after a change) instead of walking every pod, and a group is a new object only when one of
// its pods changed (restart::PlanMemo then replans only its workload). Registering on the store
// replays its current pods. The handlers share the index's state, so either may outlive the
// other. Thread affinity: the store's (the control loop).
class PodIndex {
 public:
  explicit PodIndex(runtime::Store& pods);
  std::shared_ptr<const restart::PodGroups> groups();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The informer stores a pass reads instead of listing (`meshop run`). Each must hold every
// object of its kind cluster-wide (or of the control-plane namespace where said), with apiVersion
// and kind set (but on the pods a controller owns), workloads and PDBs at least as
// restart::project_workload keeps them, pods and nodes at least as restart::project_pod /
// project_node keep them. The stores must outlive the reconciler.
struct RestartsCache {
  const runtime::Store* namespaces = nullptr;
  const runtime::Store* webhook_configurations = nullptr;
  const runtime::Store* istio_operators = nullptr;
  // Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs, CronJobs.
  std::vector<const runtime::Store*> workloads;
  const runtime::Store* deployments = nullptr;  // all Deployments (the control planes' among them)
  const runtime::Store* pods = nullptr;
  const runtime::Store* pod_disruption_budgets = nullptr;
  const runtime::Store* config_maps = nullptr;  // of the control-plane namespace
  const runtime::Store* nodes = nullptr;
  // Set: the pods of `pods`, grouped (a pass over every namespace takes them from here).
  std::shared_ptr<PodIndex> pod_index;
};

struct RestartsConfig {
  std::string control_plane_namespace = "istio-system";
  std::string namespace_filter;  // "" = every namespace
  std::string field_manager = "meshop";
  inject::NativeSidecars native_sidecars = inject::NativeSidecars::kAuto;
  // `meshop restart run`: a person asked for the restarts, so entries whose policy is DryRun
  // (the operator only reports them) are carried out too. Mode Off still restarts nothing.
  bool run_dry_run_entries = false;
  // The Istio version an IstioOperator without spec.version installs, for the version gate
  // (spec.restarts.maxVersionSkew). "" = the one the install path uses:
  // manifest::default_chart_set() (manifests/versions.yaml's `default`), so `meshop run`,
  // `meshop restart` and `meshop check` all plan with it.
  std::string default_istio_version;
  // Set: passes read these stores and make no list call (not owned).
  const RestartsCache* cache = nullptr;
  // Set (`meshop run`): each revision's engine is the snapshot the webhook serves (immutable,
  // shared), so the plan asks what injection gives a pod now with the very configuration the
  // webhook injects with; a revision not published there is built from the view's ConfigMaps
  // the same way (webhook::configmap_sources). Unset (`meshop restart`, `meshop check`): every
  // engine is built from the view's ConfigMaps. Not owned.
  const webhook::RevisionStore* revisions = nullptr;
};

// Lists what a plan needs. Pods, workloads and PDBs of `namespace_filter` only when set.
kube::Task<api::Result<restart::ClusterView>> load_cluster_view(
    std::shared_ptr<kube::Client> client, RestartsConfig config);
// The same view from the stores (shared objects, no copies); an error when one is not synced.
api::Result<restart::ClusterView> cluster_view_from(const RestartsCache& cache,
                                                    const RestartsConfig& config);

// Engine decisions remembered across passes. What the engine gives a pod template depends only
// on the revision's engine (its ConfigMaps' fingerprint, the native-sidecar setting and the
// nodes' kubelet versions) and on the pod built from the template (namespace included), so a
// pass over an unchanged cluster needs no engine run at all. The key is a SHA-256 digest of
// those inputs (revision, engine key, the pod's canonical JSON written straight into the
// digest): 32 bytes per entry, whatever the size of the pod. Mark and sweep keeps it bounded by
// what the cluster holds: begin_pass() drops the entries no lookup used during the last
// `keep_passes` passes (1: since the previous begin_pass()); beyond `max_entries` new decisions
// are not remembered (still correct, only recomputed). The reconciler keeps entries for many
// passes: its plan memo (restart::PlanMemo) answers for unchanged workloads without asking, and
// a workload that changes later (a status update) still finds its decision here.
// Not thread-safe: one reconciler's passes, one at a time.
class DecisionCache {
 public:
  using Key = std::array<std::uint8_t, 32>;
  static Key key_of(const std::string& revision, const std::string& engine_key,
                    const rapidjson::Value& pod);

  explicit DecisionCache(std::size_t max_entries = 100000, std::uint32_t keep_passes = 1)
      : max_entries_(max_entries), keep_passes_(keep_passes) {}
  const restart::Desired* find(const Key& key);
  void put(const Key& key, restart::Desired desired);
  void begin_pass();
  std::size_t size() const { return entries_.size(); }

 private:
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Entry {
    // Kept once for every entry with the same decision (most templates of a revision get the
    // same one: its proxy image and fingerprint).
    std::shared_ptr<const restart::Desired> desired;
    std::uint64_t used = 0;  // the pass that last used it
  };
  std::shared_ptr<const restart::Desired> intern(restart::Desired desired);
  std::size_t max_entries_;
  std::uint32_t keep_passes_;
  std::uint64_t pass_ = 0;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::unordered_multimap<std::uint64_t, std::weak_ptr<const restart::Desired>> values_;
};

// Each revision's injection engine; revisions whose ConfigMaps are missing or do not build are
// listed in `errors` (and plan as UnknownRevision).
struct Engines {
  std::map<std::string, std::shared_ptr<const inject::Snapshot>> snapshots;
  // Per revision: what besides the pod its decisions depend on (DecisionCache keys).
  std::map<std::string, std::string> engine_keys;
  std::map<std::string, std::string> errors;
  // With a cache, decisions are looked up there first and remembered; the Engines must
  // outlive the returned function, and so must the cache.
  restart::DesiredFn desired(DecisionCache* cache = nullptr) const;
};
Engines build_engines(const restart::ClusterView& view, const RestartsConfig& config);
// The webhook's snapshots (engine key: their generation in `revisions`), for the revisions the
// view's webhook configurations serve; those not published there built as build_engines does.
Engines engines_from(const webhook::RevisionStore& revisions, const restart::ClusterView& view,
                     const RestartsConfig& config);

struct RolloutReport {
  std::string key;  // Kind/namespace/name
  std::string message;
};

struct PassReport {
  std::vector<restart::PlanEntry> plan;
  std::vector<std::string> started;        // restarted in this pass
  std::vector<RolloutReport> progressing;  // restarted earlier, still rolling
  std::vector<RolloutReport> failed;       // restarted earlier, timed out / failed
  std::vector<std::string> pods_deleted;   // pod-by-pod kinds: pods deleted in this pass
  std::vector<std::string> pods_evicted;   // strategy Evict: pods evicted in this pass
  bool paused = false;
  std::string pause_reason;
  // Per IstioOperator ("<namespace>/<name>") under a canary policy, paused or resumed: the
  // wave decision of this pass.
  std::map<std::string, restart::WaveDecision> waves;
  bool halted = false;                               // some IstioOperator's wave is halted
  std::string halt_reason;                           // the first one's why
  std::map<std::string, std::string> engine_errors;  // revision → why it has no engine
  std::vector<std::string> istio_operators;          // "<namespace>/<name>" of every one seen
  // What the plan was computed from (`meshop check` explains it): the view as read, and the
  // revisions' engines (engines->desired() answers for any pod built in that view).
  std::shared_ptr<const restart::ClusterView> view;
  std::shared_ptr<const Engines> engines;
};

class OwnedIndex;  // restarts.cpp: who owns which pods in a pass's view

class RestartsReconciler {
 public:
  using Now = std::function<std::chrono::system_clock::time_point()>;

  // Writes (and Events) through `client` (kube::client_writer); reads from config.cache when
  // set, else lists with `client`.
  RestartsReconciler(
      std::shared_ptr<kube::Client> client, RestartsConfig config,
      metrics::Registry* registry = nullptr, std::shared_ptr<kube::EventRecorder> events = nullptr,
      Now now = [] { return std::chrono::system_clock::now(); });
  // Writes and Events through `writer` (tests: a recording fake); reads from config.cache, else
  // lists with `reads` (a pass without either fails).
  RestartsReconciler(
      RestartsConfig config, std::shared_ptr<kube::Writer> writer,
      std::shared_ptr<kube::Client> reads = nullptr, metrics::Registry* registry = nullptr,
      Now now = [] { return std::chrono::system_clock::now(); });
  // The same, getting an IstioOperator whose status write conflicted (409) through `gets`
  // (tests: test/support/fake_api.hpp), where the others get it through `reads`.
  RestartsReconciler(RestartsConfig config, std::shared_ptr<kube::Writer> writer,
                     std::shared_ptr<kube::Reader> gets, Now now);

  // One pass; with `execute` false nothing is written (the plan and rollout states only).
  kube::Task<api::Result<PassReport>> pass(bool execute);

  // The controller adapter: a pass; again in 2 s while rollouts are in progress or deferred
  // entries wait, else in 30 s.
  kube::Task<runtime::Action> reconcile(const std::string& key);

 private:
  // The steps of a pass, in order (pass() runs them on one PassState; writes only through
  // writer_, and only when executing):
  struct PassState;
  //   observe: the view (stores, else lists), the engines, the plan; the restarts this process
  //   started that the store does not show yet are in progress; deferred causes remembered.
  kube::Task<api::Status> observe(PassState& st);
  //   1. follow: rollouts and eviction waves started earlier (complete, progressing: they hold
  //   concurrency slots, or failed); deletes the next pod of the kinds that roll pod by pod.
  kube::Task<api::Status> follow_rollouts(PassState& st);
  //   1b. watch_health and 1c. decide_waves (below), then the eviction waves under way go on
  //   (or, not executing, dry-run evictions ask whether they would).
  kube::Task<api::Status> continue_evictions(PassState& st);
  //   deadlines: meshop.io/stale-since recorded once per cause, removed once up to date.
  kube::Task<api::Status> record_staleness(PassState& st);
  //   2./3. admit (maxConcurrent, per namespace; nothing while paused) and start.
  kube::Task<api::Status> start_admitted(PassState& st);
  //   4. report: metrics; executing, Events, status.restarts and the waves' annotations.
  kube::Task<api::Status> report_results(PassState& st);
  // What the Restarted Event of `e` says about the causes it coalesces; forgets them.
  std::string coalesced(const restart::PlanEntry& e);

  // status.restarts and the RestartsHalted / RestartsOverdue conditions of each IstioOperator
  // (restarts_status.hpp computes them; one write each, its conditions merged into the object
  // and guarded by its resourceVersion: reconcilers/conditions.hpp).
  kube::Task<api::Status> report_status(const PassReport& report, const restart::ClusterView& view);
  // Strategy Evict: evicts e.evict.next (or with `dry_run` asks whether it may go), and turns a
  // refusal by a PodDisruptionBudget into a Deferred entry naming it.
  kube::Task<api::Status> evict_next(restart::PlanEntry& e, bool dry_run, PassReport& report);
  bool evict_running(const restart::PlanEntry& e, std::chrono::system_clock::time_point now) const;
  void record_transitions(const PassReport& report);
  // 1b: fails (fail) the restarted workloads whose new pods regressed.
  void watch_health(PassReport& report, OwnedIndex& owned,
                    const std::function<void(const std::string&, const restart::PlanEntry&,
                                             const std::string&)>& fail);
  // 1c: the waves; holds the entries they hold.
  void decide_waves(PassReport& report, const restart::ClusterView& view, OwnedIndex& owned,
                    bool execute);
  // Events, metrics and annotation clean-up of the waves' transitions (executing passes).
  kube::Task<api::Status> apply_waves(const PassReport& report, const restart::ClusterView& view);
  // Its synchronous part: Events and metrics; returns the IstioOperators whose resume
  // annotation (source, value) is to be removed.
  std::vector<std::pair<std::string, std::string>> record_waves(const PassReport& report,
                                                                const restart::ClusterView& view);

  // The revisions' engines for `view`: the previous pass's while the ConfigMaps, webhook
  // configurations and kubelet versions it was built from are the same objects.
  std::shared_ptr<const Engines> engines_for(const restart::ClusterView& view);

  std::shared_ptr<kube::Client> client_;  // reads (list) when config_.cache is null
  std::shared_ptr<kube::Writer> writer_;
  // Gets an IstioOperator again after a status write conflicted (null: the Conflict is the
  // pass's error, retried at once).
  std::shared_ptr<kube::Reader> reader_;
  RestartsConfig config_;
  Now now_;
  metrics::Family<metrics::Counter>* restarts_total_ = nullptr;
  metrics::Family<metrics::Gauge>* stale_ = nullptr;
  std::unordered_map<std::string, std::string> last_state_;  // key → action/why last reported
  std::map<std::string, std::string> last_status_;  // IstioOperator → status.restarts written
  DecisionCache decisions_{100000, 100};
  // Staleness verdicts of the previous pass (restart::PlanMemo), for the workloads whose
  // objects did not change.
  restart::PlanMemo plans_;
  // engines_for(): the engines last built and what they were built from.
  std::shared_ptr<const Engines> engines_;
  std::vector<restart::ObjectList::Item> engine_sources_;
  std::vector<std::string> engine_kubelets_;
  std::string engine_published_;  // revision=generation in config_.revisions
  // Strategy Evict. When this process last evicted a pod of a workload: until the replacement
  // shows up the cluster alone cannot tell the wave is under way.
  std::map<std::string, std::chrono::system_clock::time_point> evicted_at_;
  // A workload whose eviction a PodDisruptionBudget refused: no attempt before `until`; the
  // delay doubles from 2 s up to 60 s and is forgotten after an eviction goes through.
  struct EvictBackoff {
    std::chrono::system_clock::time_point until;
    std::chrono::seconds delay{0};
    std::string why;
  };
  std::map<std::string, EvictBackoff> evict_backoff_;
  // minInterval. Strategy Evict writes nothing on the workload, so when this process last
  // started a wave of it is remembered here (key → time and cause) and given to plan_cluster.
  std::map<std::string, restart::LastRestart> evict_restarts_;
  // Strategy Rollout. A restart patch this process sent whose result the informer store has not
  // shown yet: until the store's copy of the workload reaches the metadata.generation the
  // patch's answer carried, that copy predates the restart (no cause record on its template),
  // and a pass planning from it would restart the workload a second time, count a second
  // start and record a second Restarted Event. Meanwhile the workload is in progress for the
  // cause it was restarted for. Forgotten once the store shows the generation, when the workload
  // is gone (or another one of that name), or after its policy's rolloutTimeout.
  struct UnseenRestart {
    std::string cause;
    std::string uid;
    std::int64_t generation = 0;
    std::chrono::system_clock::time_point at;
  };
  std::map<std::string, UnseenRestart> unseen_restarts_;
  // Causes a workload was Deferred for since its last restart, in the order first seen: the
  // next Restarted Event lists them (they are coalesced into that one restart).
  std::unordered_map<std::string, std::vector<std::string>> deferred_causes_;
  // Health watch: when this process saw a workload it restarted complete (key → time).
  std::map<std::string, std::chrono::system_clock::time_point> completed_at_;
  // Each IstioOperator's wave as last decided by this process (status.restarts.wave is read
  // when absent: another process, or a restarted one, decided it).
  std::map<std::string, restart::WaveState> waves_;
  std::unordered_map<std::string, std::string> stale_since_written_;  // workload → cause recorded
  // The resume annotation values already honoured (its removal may not be in the cache yet).
  std::map<std::string, std::string> resumed_;
  metrics::Family<metrics::Gauge>* halted_ = nullptr;
};

struct OperatorSetup;

// `meshop run`'s restarts controller: one pass ("all") at start and whenever an IstioOperator,
// a Namespace, a MutatingWebhookConfiguration or a ConfigMap of the control-plane namespace
// changes; it reads every workload, Pod, PodDisruptionBudget and Node from the cache
// (config.cache is filled in).
void setup_restarts(const OperatorSetup& setup, RestartsConfig config);

}  // namespace meshop::reconcilers
