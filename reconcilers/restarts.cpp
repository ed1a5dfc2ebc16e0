#include "reconcilers/restarts.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <set>

#include <openssl/evp.h>
#include <rapidjson/writer.h>

#include "api/json.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/restart/rollout.hpp"
#include "operator/runtime/object.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"

namespace meshop::reconcilers {
namespace {

using restart::Action;
using SystemTime = std::chrono::system_clock::time_point;

// List items come without apiVersion/kind; the plan needs the kind. Each item is kept as a
// compact copy (runtime::compact_object): a default Document would hold a 64 KiB pool chunk
// per object.
void take_items(rapidjson::Document& list, std::string_view kind, restart::ObjectList& out) {
  rapidjson::Value* items = api::find_member(list, "items");
  if (items == nullptr || !items->IsArray()) return;
  out.reserve(out.size() + items->Size());
  auto& a = list.GetAllocator();
  for (rapidjson::Value& item : items->GetArray()) {
    if (!item.IsObject()) continue;
    if (!item.HasMember("kind")) item.AddMember("kind", api::make_string(kind, a), a);
    out.push_back(runtime::compact_object(item));
  }
}

// The objects of `store` (of namespace `ns` when not empty); sorted by key when `sorted`, as a
// LIST answers (for the kinds whose order a plan can see: the first match wins).
void take_store(const runtime::Store& store, std::string_view ns, bool sorted,
                restart::ObjectList& out) {
  std::vector<runtime::Object> objects = store.list();
  if (!ns.empty())
    std::erase_if(objects,
                  [&](const runtime::Object& o) { return runtime::namespace_of(*o) != ns; });
  if (sorted)
    std::sort(objects.begin(), objects.end(),
              [](const runtime::Object& a, const runtime::Object& b) {
                return std::pair(runtime::namespace_of(*a), runtime::name_of(*a)) <
                       std::pair(runtime::namespace_of(*b), runtime::name_of(*b));
              });
  out.reserve(out.size() + objects.size());
  for (runtime::Object& o : objects)
    out.push_back(std::move(o));
}

// SHA-256 of what a rapidjson::Writer writes, without the text.
class DigestStream {
 public:
  using Ch = char;
  DigestStream() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~DigestStream() { EVP_MD_CTX_free(ctx_); }
  DigestStream(const DigestStream&) = delete;
  DigestStream& operator=(const DigestStream&) = delete;
  void Put(char c) {
    buffer_[used_++] = c;
    if (used_ == sizeof(buffer_)) Flush();
  }
  void Flush() {
    if (used_ > 0) EVP_DigestUpdate(ctx_, buffer_, used_);
    used_ = 0;
  }
  void write(std::string_view s) {
    Flush();
    EVP_DigestUpdate(ctx_, s.data(), s.size());
    static const char kSeparator = 0;
    EVP_DigestUpdate(ctx_, &kSeparator, 1);
  }
  DecisionCache::Key finish() {
    Flush();
    DecisionCache::Key key{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, key.data(), &n);
    return key;
  }

 private:
  EVP_MD_CTX* ctx_;
  char buffer_[4096];
  std::size_t used_ = 0;
};

std::optional<SystemTime> parse_rfc3339(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string workload_key(const restart::WorkloadPlan& p) {
  return p.kind + "/" + p.ns + "/" + p.name;
}

const rapidjson::Value* find_workload(const restart::ClusterView& view,
                                      const restart::WorkloadPlan& p) {
  for (const auto& w : view.workloads)
    if (api::string_at(w, {"kind"}) == p.kind &&
        api::string_at(w, {"metadata", "name"}) == p.name &&
        api::string_at(w, {"metadata", "namespace"}) == p.ns)
      return &w;
  return nullptr;
}

const kube::ResourceType* resource_of(std::string_view kind) {
  using namespace kube::resources;
  if (kind == "Deployment") return &kDeployments;
  if (kind == "StatefulSet") return &kStatefulSets;
  if (kind == "DaemonSet") return &kDaemonSets;
  if (kind == "ReplicaSet") return &kReplicaSets;
  if (kind == "ReplicationController") return &kReplicationControllers;
  return nullptr;
}

std::int64_t generation_of(const rapidjson::Value& object) {
  const rapidjson::Value* g = api::find(object, "/metadata/generation");
  return g != nullptr && g->IsInt64() ? g->GetInt64() : 0;
}

bool pod_ready(const rapidjson::Value& pod) {
  if (api::find(pod, "/metadata/deletionTimestamp") != nullptr) return false;
  const rapidjson::Value* conds = api::find(pod, "/status/conditions");
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const rapidjson::Value& c : conds->GetArray())
    if (api::string_at(c, {"type"}) == "Ready") return api::string_at(c, {"status"}) == "True";
  return false;
}

// The pods controlled (directly or through a ReplicaSet) by `workload`, by name (the first one
// created before the restart is the next to go, whatever order the view has).
std::vector<const rapidjson::Value*> pods_of(const restart::ClusterView& view,
                                             const rapidjson::Value& workload) {
  std::string uid = api::string_at(workload, {"metadata", "uid"});
  std::vector<const rapidjson::Value*> out;
  for (const auto& p : view.pods) {
    const rapidjson::Value* refs = api::find(p, "/metadata/ownerReferences");
    if (refs == nullptr || !refs->IsArray()) continue;
    for (const rapidjson::Value& r : refs->GetArray())
      if (api::string_at(r, {"uid"}) == uid) out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), [](const rapidjson::Value* a, const rapidjson::Value* b) {
    return runtime::name_of(*a) < runtime::name_of(*b);
  });
  return out;
}

// The pods of `workload`, directly or through the ReplicaSets it controls (a Deployment's).
std::vector<const rapidjson::Value*> workload_pods(const restart::ClusterView& view,
                                                   const rapidjson::Value& workload) {
  std::set<std::string> owners = {api::string_at(workload, {"metadata", "uid"})};
  if (api::string_at(workload, {"kind"}) == "Deployment")
    for (const auto& w : view.workloads) {
      if (api::string_at(w, {"kind"}) != "ReplicaSet") continue;
      const rapidjson::Value* refs = api::find(w, "/metadata/ownerReferences");
      if (refs == nullptr || !refs->IsArray()) continue;
      for (const rapidjson::Value& r : refs->GetArray())
        if (owners.count(api::string_at(r, {"uid"})))
          owners.insert(api::string_at(w, {"metadata", "uid"}));
    }
  std::vector<const rapidjson::Value*> out;
  for (const auto& p : view.pods) {
    const rapidjson::Value* refs = api::find(p, "/metadata/ownerReferences");
    if (refs == nullptr || !refs->IsArray()) continue;
    for (const rapidjson::Value& r : refs->GetArray())
      if (owners.count(api::string_at(r, {"uid"}))) {
        out.push_back(&p);
        break;
      }
  }
  std::sort(out.begin(), out.end(), [](const rapidjson::Value* a, const rapidjson::Value* b) {
    return runtime::name_of(*a) < runtime::name_of(*b);
  });
  return out;
}

// Removes the resume and pause annotations of an IstioOperator (JSON merge patch).
std::string remove_resume_patch() {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value annotations(rapidjson::kObjectType);
  annotations.AddMember(api::make_string(restart::kResumeAnnotation, a),
                        rapidjson::Value(rapidjson::kNullType), a);
  annotations.AddMember(api::make_string(restart::kPauseAnnotation, a),
                        rapidjson::Value(rapidjson::kNullType), a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("annotations", annotations, a);
  d.AddMember("metadata", meta, a);
  return api::to_json(d);
}

std::chrono::seconds soak_of(const restart::Policy& p) {
  return p.canary ? p.canary->soak : std::chrono::minutes(5);
}

std::string source_of(const rapidjson::Value& iop) {
  return api::string_at(iop, {"metadata", "namespace"}) + "/" +
         api::string_at(iop, {"metadata", "name"});
}

kube::ObjectReference iop_reference(const rapidjson::Value& iop) {
  kube::ObjectReference r = kube::reference_to(iop);
  if (r.api_version.empty()) r.api_version = "install.istio.io/v1alpha1";
  if (r.kind.empty()) r.kind = "IstioOperator";
  return r;
}

}  // namespace

kube::Task<api::Result<restart::ClusterView>> load_cluster_view(
    std::shared_ptr<kube::Client> client, RestartsConfig config) {
  restart::ClusterView view;
  const std::string ns = config.namespace_filter;

  auto namespaces = co_await client->list_all(kube::resources::kNamespaces, "");
  if (!namespaces) co_return api::Error{namespaces.error().message};
  take_items(namespaces->list, "Namespace", view.namespaces);

  auto webhooks = co_await client->list_all(kube::resources::kMutatingWebhookConfigurations, "");
  if (!webhooks) co_return api::Error{webhooks.error().message};
  take_items(webhooks->list, "MutatingWebhookConfiguration", view.webhook_configurations);

  auto iop_type = co_await client->discover("install.istio.io/v1alpha1", "IstioOperator");
  if (iop_type) {
    auto iops = co_await client->list_all(*iop_type, "");
    if (!iops) co_return api::Error{iops.error().message};
    take_items(iops->list, "IstioOperator", view.istio_operators);
  }  // no CRD: no IstioOperators, default policies

  const std::pair<const kube::ResourceType*, const char*> kinds[] = {
      {&kube::resources::kDeployments, "Deployment"},
      {&kube::resources::kStatefulSets, "StatefulSet"},
      {&kube::resources::kDaemonSets, "DaemonSet"},
      {&kube::resources::kReplicaSets, "ReplicaSet"},
      {&kube::resources::kReplicationControllers, "ReplicationController"},
      {&kube::resources::kJobs, "Job"},
      {&kube::resources::kCronJobs, "CronJob"},
  };
  for (const auto& [type, kind] : kinds) {
    auto page = co_await client->list_all(*type, ns);
    if (!page) co_return api::Error{page.error().message};
    take_items(page->list, kind, view.workloads);
  }
  auto pods = co_await client->list_all(kube::resources::kPods, ns);
  if (!pods) co_return api::Error{pods.error().message};
  take_items(pods->list, "Pod", view.pods);
  auto pdbs = co_await client->list_all(kube::resources::kPodDisruptionBudgets, ns);
  if (!pdbs) co_return api::Error{pdbs.error().message};
  take_items(pdbs->list, "PodDisruptionBudget", view.pod_disruption_budgets);

  auto control =
      co_await client->list_all(kube::resources::kDeployments, config.control_plane_namespace);
  if (!control) co_return api::Error{control.error().message};
  take_items(control->list, "Deployment", view.control_plane_deployments);
  auto config_maps =
      co_await client->list_all(kube::resources::kConfigMaps, config.control_plane_namespace);
  if (!config_maps) co_return api::Error{config_maps.error().message};
  take_items(config_maps->list, "ConfigMap", view.config_maps);

  auto nodes = co_await client->list_all(kube::resources::kNodes, "");
  if (!nodes) co_return api::Error{nodes.error().message};
  for (const rapidjson::Value& n : nodes->list["items"].GetArray())
    view.kubelet_versions.push_back(api::string_at(n, {"status", "nodeInfo", "kubeletVersion"}));
  co_return view;
}

api::Result<restart::ClusterView> cluster_view_from(const RestartsCache& cache,
                                                    const RestartsConfig& config) {
  const std::pair<const char*, const runtime::Store*> stores[] = {
      {"namespaces", cache.namespaces},
      {"mutatingwebhookconfigurations", cache.webhook_configurations},
      {"istiooperators", cache.istio_operators},
      {"deployments", cache.deployments},
      {"pods", cache.pods},
      {"poddisruptionbudgets", cache.pod_disruption_budgets},
      {"configmaps", cache.config_maps},
      {"nodes", cache.nodes},
  };
  for (const auto& [name, store] : stores) {
    if (store == nullptr) return api::Error{std::string("restarts: no informer store of ") + name};
    if (!store->has_synced())
      return api::Error{std::string("restarts: the informer of ") + name + " has not synced"};
  }
  for (const runtime::Store* w : cache.workloads)
    if (w == nullptr || !w->has_synced())
      return api::Error{"restarts: a workload informer has not synced"};

  restart::ClusterView view;
  const std::string& ns = config.namespace_filter;
  take_store(*cache.namespaces, "", false, view.namespaces);
  take_store(*cache.webhook_configurations, "", true, view.webhook_configurations);
  take_store(*cache.istio_operators, "", true, view.istio_operators);
  for (const runtime::Store* w : cache.workloads)
    take_store(*w, ns, false, view.workloads);
  take_store(*cache.pods, ns, false, view.pods);
  take_store(*cache.pod_disruption_budgets, ns, true, view.pod_disruption_budgets);
  take_store(*cache.deployments, config.control_plane_namespace, true,
             view.control_plane_deployments);
  take_store(*cache.config_maps, config.control_plane_namespace, true, view.config_maps);
  restart::ObjectList nodes;
  take_store(*cache.nodes, "", true, nodes);
  for (const rapidjson::Value& n : nodes)
    view.kubelet_versions.push_back(api::string_at(n, {"status", "nodeInfo", "kubeletVersion"}));
  return view;
}

Engines build_engines(const restart::ClusterView& view, const RestartsConfig& config) {
  Engines engines;
  std::set<std::string> revisions;
  for (const auto& mwc : view.webhook_configurations) {
    std::string r = api::string_at(mwc, {"metadata", "labels", "istio.io/rev"});
    if (!r.empty()) revisions.insert(r);
  }
  auto data_of = [&](const std::string& name, std::string_view key) -> std::optional<std::string> {
    for (const auto& cm : view.config_maps)
      if (api::string_at(cm, {"metadata", "name"}) == name) {
        const rapidjson::Value* v = api::find_member(cm, "data");
        if (v == nullptr) return std::string();
        return api::string_at(*v, {key});
      }
    return std::nullopt;
  };
  for (const std::string& r : revisions) {
    std::string suffix = r == "default" ? "" : "-" + r;
    auto injector_config = data_of("istio-sidecar-injector" + suffix, "config");
    if (!injector_config) {
      engines.errors[r] = "ConfigMap " + config.control_plane_namespace +
                          "/istio-sidecar-injector" + suffix + " not found";
      continue;
    }
    inject::SnapshotSources sources;
    sources.revision = r;
    sources.config = *injector_config;
    sources.values = data_of("istio-sidecar-injector" + suffix, "values").value_or("");
    sources.mesh = data_of("istio" + suffix, "mesh").value_or("");
    sources.native_sidecars = config.native_sidecars;
    sources.node_kubelet_versions = view.kubelet_versions;
    auto snapshot = inject::build_snapshot(sources);
    if (!snapshot) {
      engines.errors[r] = "ConfigMap " + config.control_plane_namespace +
                          "/istio-sidecar-injector" + suffix + ": " + snapshot.message();
      continue;
    }
    engines.snapshots[r] = *snapshot;
    std::string key = inject::injector_fingerprint(sources);
    key += '|';
    key += std::to_string(static_cast<int>(sources.native_sidecars));
    for (const std::string& v : sources.node_kubelet_versions)
      key += '|' + v;
    engines.engine_keys[r] = std::move(key);
  }
  return engines;
}

DecisionCache::Key DecisionCache::key_of(const std::string& revision, const std::string& engine_key,
                                         const rapidjson::Value& pod) {
  DigestStream digest;
  digest.write(revision);
  digest.write(engine_key);
  rapidjson::Writer<DigestStream> writer(digest);
  pod.Accept(writer);
  return digest.finish();
}

std::size_t DecisionCache::KeyHash::operator()(const Key& k) const {
  std::size_t h = 0;
  std::memcpy(&h, k.data(), sizeof(h));  // a digest: any bytes are as good as a hash
  return h;
}

const restart::Desired* DecisionCache::find(const Key& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  it->second.used = true;
  return &it->second.desired;
}

void DecisionCache::put(const Key& key, restart::Desired desired) {
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second = Entry{std::move(desired), true};
    return;
  }
  if (entries_.size() >= max_entries_) return;
  entries_.emplace(key, Entry{std::move(desired), true});
}

void DecisionCache::begin_pass() {
  std::erase_if(entries_, [](const auto& e) { return !e.second.used; });
  for (auto& [key, entry] : entries_)
    entry.used = false;
}

restart::DesiredFn Engines::desired(DecisionCache* cache) const {
  return [this, cache](const std::string& revision,
                       const rapidjson::Value& pod) -> std::optional<restart::Desired> {
    auto it = snapshots.find(revision);
    if (it == snapshots.end()) return std::nullopt;
    DecisionCache::Key key{};
    if (cache != nullptr) {
      key = DecisionCache::key_of(revision, engine_keys.at(revision), pod);
      if (const restart::Desired* known = cache->find(key)) return *known;
    }
    inject::PodRequest request;
    request.pod = &pod;
    request.ns = api::string_at(pod, {"metadata", "namespace"});
    inject::InjectResult result = inject::inject(*it->second, request);
    restart::Desired d;
    d.revision = revision;
    d.fingerprint = it->second->fingerprint;
    switch (result.outcome) {
      case inject::Outcome::kInjected:
        d.inject = true;
        d.proxy_image = restart::observe_pod(result.pod).proxy_image;
        break;
      case inject::Outcome::kSkipped:
        d.inject = false;
        d.why = std::string(inject::reason_name(result.decision.reason));
        break;
      case inject::Outcome::kFailed:
        d.inject = true;
        d.fails = true;
        d.why = result.message;
        break;
    }
    if (cache != nullptr) cache->put(key, d);
    return d;
  };
}

RestartsReconciler::RestartsReconciler(std::shared_ptr<kube::Client> client, RestartsConfig config,
                                       metrics::Registry* registry,
                                       std::shared_ptr<kube::EventRecorder> events, Now now)
    : client_(std::move(client)),
      config_(std::move(config)),
      events_(std::move(events)),
      now_(std::move(now)) {
  if (config_.default_istio_version.empty())
    config_.default_istio_version = manifest::default_chart_set().version;
  if (registry != nullptr) {
    restarts_total_ = &registry->counter(
        "meshop_restarts_total",
        "Workload restarts by stale reason and result (started, completed, failed, halted).",
        {"reason", "result"});
    stale_ =
        &registry->gauge("meshop_stale_workloads",
                         "Workloads whose pods do not match what injection gives now.", {"reason"});
    halted_ = &registry->gauge(
        "meshop_restarts_halted",
        "1 while an IstioOperator's restart wave is halted by a canary regression, else 0.",
        {"istio_operator"});
  }
}

kube::Task<api::Result<PassReport>> RestartsReconciler::pass(bool execute) {
  const SystemTime now = now_();
  api::Result<restart::ClusterView> loaded = api::Error{""};
  if (config_.cache != nullptr)
    loaded = cluster_view_from(*config_.cache, config_);
  else
    loaded = co_await load_cluster_view(client_, config_);
  if (!loaded) co_return loaded.error();
  restart::ClusterView& view = *loaded;
  auto engines = std::make_shared<const Engines>(build_engines(view, config_));

  PassReport report;
  report.engine_errors = engines->errors;
  for (const auto& iop : view.istio_operators)
    report.istio_operators.push_back(api::string_at(iop, {"metadata", "namespace"}) + "/" +
                                     api::string_at(iop, {"metadata", "name"}));
  restart::ClusterPlanOptions plan_options;
  plan_options.namespace_filter = config_.namespace_filter;
  plan_options.control_plane_namespace = config_.control_plane_namespace;
  plan_options.default_istio_version = config_.default_istio_version;
  std::erase_if(evict_restarts_,
                [&](const auto& kv) { return now - kv.second.at > std::chrono::hours(24); });
  plan_options.last_restarts = evict_restarts_;
  decisions_.begin_pass();
  report.plan = restart::plan_cluster(view, engines->desired(&decisions_), now, plan_options);
  // Restarts this process started that the store does not show yet are in progress, whatever
  // the store's older copy of the workload says (unseen_restarts_).
  std::set<std::string> unseen;
  for (restart::PlanEntry& e : report.plan) {
    const std::string key = workload_key(e.plan);
    auto it = unseen_restarts_.find(key);
    if (it == unseen_restarts_.end()) continue;
    const rapidjson::Value* w = find_workload(view, e.plan);
    if (w == nullptr || api::string_at(*w, {"metadata", "uid"}) != it->second.uid ||
        generation_of(*w) >= it->second.generation ||
        now - it->second.at >= e.policy.rollout_timeout) {
      unseen_restarts_.erase(it);
      continue;
    }
    if (e.action != Action::kRestart && e.action != Action::kWouldRestart &&
        e.action != Action::kDeferred && e.action != Action::kInProgress)
      continue;
    e.action = Action::kInProgress;
    e.cause = it->second.cause;
    e.why = "restarted for " + e.cause + "; the informer does not show the restart yet";
    unseen.insert(key);
  }
  std::erase_if(unseen_restarts_, [&](const auto& kv) {
    return std::none_of(report.plan.begin(), report.plan.end(), [&](const restart::PlanEntry& e) {
      return workload_key(e.plan) == kv.first;
    });
  });
  // Causes waiting (minInterval, or any other gate) are coalesced into the next restart.
  for (const restart::PlanEntry& e : report.plan) {
    if (e.action == Action::kNone) deferred_causes_.erase(workload_key(e.plan));
    if (e.action != Action::kDeferred || e.cause.empty()) continue;
    // An Evict wave between its first eviction and the replacement is its own cause, not a
    // new one (evict_running below keeps it going).
    if (auto it = evict_restarts_.find(workload_key(e.plan));
        it != evict_restarts_.end() && it->second.cause == e.cause)
      continue;
    auto& causes = deferred_causes_[workload_key(e.plan)];
    if (std::find(causes.begin(), causes.end(), e.cause) == causes.end()) causes.push_back(e.cause);
  }
  // What the Restarted Event of `e` says about the causes it coalesces; forgets them.
  auto coalesced = [&](const restart::PlanEntry& e) {
    auto it = deferred_causes_.find(workload_key(e.plan));
    if (it == deferred_causes_.end()) return std::string();
    std::vector<std::string> causes = std::move(it->second);
    deferred_causes_.erase(it);
    if (std::find(causes.begin(), causes.end(), e.cause) == causes.end()) causes.push_back(e.cause);
    if (causes.size() < 2) return std::string();
    std::string out = "; coalesces " + std::to_string(causes.size()) + " causes seen meanwhile:";
    for (std::size_t i = 0; i < causes.size(); ++i)
      out += (i == 0 ? " " : ", ") + causes[i];
    return out;
  };

  // 1. Rollouts and eviction waves in progress.
  std::map<std::string, int> running_per_ns;
  int running = 0;
  auto fail_entry = [&](const std::string& key, const restart::PlanEntry& e,
                        const std::string& message) {
    report.failed.push_back({key, message});
    if (e.policy.failure_policy == restart::FailurePolicy::kPause && !report.paused) {
      report.paused = true;
      report.pause_reason = "restart of " + key + " failed (" + message +
                            "); failurePolicy Pause: no further restarts start";
    }
  };
  std::erase_if(evicted_at_,
                [&](const auto& kv) { return now - kv.second > std::chrono::hours(1); });
  for (restart::PlanEntry& e : report.plan) {
    if (e.policy.strategy == restart::Strategy::kEvict) {
      std::string key = workload_key(e.plan);
      if (e.action == Action::kNone) {
        // Up to date; the last replacement may still be on its way to Ready.
        auto it = evicted_at_.find(key);
        if (it == evicted_at_.end()) continue;
        if (e.evict.settled) {
          evicted_at_.erase(it);
          continue;
        }
        if (!e.evict.failed.empty()) {
          evicted_at_.erase(it);
          fail_entry(key, e, e.evict.failed);
          continue;
        }
        report.progressing.push_back({key, e.evict.waiting});
        ++running;
        ++running_per_ns[e.plan.ns];
        continue;
      }
      if (!evict_running(e, now)) continue;
      e.action = Action::kInProgress;
      if (!e.evict.failed.empty()) {
        fail_entry(key, e, e.evict.failed);
        continue;
      }
      report.progressing.push_back(
          {key, e.evict.next.empty() ? e.evict.waiting : "evicting pod " + e.evict.next});
      ++running;
      ++running_per_ns[e.plan.ns];
      continue;
    }
    if (e.action != Action::kInProgress) continue;
    const rapidjson::Value* w = find_workload(view, e.plan);
    if (w == nullptr) continue;
    std::string key = workload_key(e.plan);
    if (unseen.count(key)) {  // the store's copy predates the restart: nothing to judge by
      report.progressing.push_back({key, e.why});
      ++running;
      ++running_per_ns[e.plan.ns];
      continue;
    }
    std::string restarted_at = api::string_at(
        *w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation});
    SystemTime started = parse_rfc3339(restarted_at).value_or(now);
    restart::RolloutStatus status;
    if (restart::rolls_pod_by_pod(*w)) {
      // Delete one pod created before the restart, once every pod is Ready.
      auto pods = pods_of(view, *w);
      bool all_ready = std::all_of(pods.begin(), pods.end(),
                                   [](const rapidjson::Value* p) { return pod_ready(*p); });
      const rapidjson::Value* victim = nullptr;
      for (const rapidjson::Value* p : pods) {
        auto created = parse_rfc3339(api::string_at(*p, {"metadata", "creationTimestamp"}));
        if (created && *created < started &&
            api::find(*p, "/metadata/deletionTimestamp") == nullptr) {
          victim = p;
          break;
        }
      }
      if (now - started >= e.policy.rollout_timeout) {
        status = {restart::RolloutState::kFailed,
                  "pods were not all replaced and Ready within " +
                      std::to_string(e.policy.rollout_timeout.count()) + "s"};
      } else if (victim != nullptr && all_ready && execute) {
        std::string pod_name = api::string_at(*victim, {"metadata", "name"});
        auto deleted = co_await client_->remove(kube::resources::kPods, e.plan.ns, pod_name);
        if (!deleted && !deleted.error().is(kube::ErrorKind::kNotFound))
          co_return api::Error{deleted.error().message};
        report.pods_deleted.push_back(e.plan.ns + "/" + pod_name);
        status = {restart::RolloutState::kProgressing, "deleted pod " + pod_name};
      } else {
        status = {restart::RolloutState::kProgressing,
                  victim == nullptr ? "waiting for replaced pods to become Ready"
                                    : "waiting for every pod to be Ready before the next one"};
      }
    } else {
      status = restart::rollout_status(*w, started, now, e.policy.rollout_timeout);
      // The rollout finished but the pods still do not match (e.g. the webhook was not
      // called): keep waiting until the timeout, then call it failed.
      if (status.state == restart::RolloutState::kComplete) {
        if (now - started >= e.policy.rollout_timeout)
          status = {restart::RolloutState::kFailed,
                    "rollout completed but the pods still do not match: " + e.plan.detail};
        else
          status = {restart::RolloutState::kProgressing, "waiting for the new pods to show up"};
      }
    }
    if (status.state == restart::RolloutState::kFailed) {
      fail_entry(key, e, status.message);
    } else {
      report.progressing.push_back({key, status.message});
      ++running;
      ++running_per_ns[e.plan.ns];
    }
  }

  // 1b./1c. The health watch after every restart, then each IstioOperator's wave.
  watch_health(report, view, fail_entry);
  decide_waves(report, view, execute);

  // Waves under way: the next pod goes once the previous replacement is Ready (evict_step), and
  // none while a failure pauses the restarts.
  if (execute && !report.paused) {
    for (restart::PlanEntry& e : report.plan)
      if (e.policy.strategy == restart::Strategy::kEvict && e.action == Action::kInProgress &&
          !e.evict.next.empty()) {
        auto st = co_await evict_next(e, view, false, report);
        if (!st) co_return st.error();
      }
  }
  // A pass that executes nothing asks the apiserver whether each next eviction would go.
  if (!execute) {
    for (restart::PlanEntry& e : report.plan) {
      bool would = e.action == Action::kRestart || e.action == Action::kInProgress ||
                   e.action == Action::kWouldRestart;
      if (e.policy.strategy == restart::Strategy::kEvict && would && !e.evict.next.empty()) {
        auto st = co_await evict_next(e, view, true, report);
        if (!st) co_return st.error();
      }
    }
  }

  // Deadlines (spec.restarts.maxStaleness): the first pass that sees a stale cause records when,
  // on the workload's metadata (meshop.io/stale-since; the pod template is not touched), so the
  // deadline survives meshop's restarts and leader changes. Written once per cause by this
  // process, whatever a lagging store shows meanwhile; removed once the workload is up to date
  // (a record left behind would date the next episode of the same cause).
  if (execute) {
    for (const restart::PlanEntry& e : report.plan) {
      const std::string key = workload_key(e.plan);
      const bool remove = e.stale_since_left;
      if (!remove && e.plan.verdict == restart::Verdict::kUpToDate)
        stale_since_written_.erase(key);  // no record left: forget what was written
      if (!remove && (e.plan.verdict != restart::Verdict::kStale || !e.policy.max_staleness ||
                      e.stale_since_recorded || e.cause.empty()))
        continue;
      // The cause written, or "" for a removal sent that the store does not show yet.
      const std::string record = remove ? std::string() : e.cause;
      if (auto it = stale_since_written_.find(key);
          it != stale_since_written_.end() && it->second == record)
        continue;
      const kube::ResourceType* type = resource_of(e.plan.kind);
      if (type == nullptr) continue;
      rapidjson::Document patch(rapidjson::kObjectType);
      auto& pa = patch.GetAllocator();
      rapidjson::Value annotations(rapidjson::kObjectType);
      annotations.AddMember(
          api::make_string(restart::kStaleSinceAnnotation, pa),
          remove ? rapidjson::Value(rapidjson::kNullType)
                 : api::make_string(restart::stale_since_value(e.stale_since, e.cause), pa),
          pa);
      rapidjson::Value meta(rapidjson::kObjectType);
      meta.AddMember("annotations", annotations, pa);
      patch.AddMember("metadata", meta, pa);
      auto r = co_await client_->patch(*type, e.plan.ns, e.plan.name, kube::PatchType::kMerge,
                                       api::to_json(patch));
      if (!r && !r.error().is(kube::ErrorKind::kNotFound)) co_return api::Error{r.error().message};
      stale_since_written_[key] = record;
    }
  }

  // 2./3. Start admitted restarts.
  if (execute && !report.paused) {
    for (restart::PlanEntry& e : report.plan) {
      bool wanted = e.action == Action::kRestart ||
                    (e.action == Action::kWouldRestart && config_.run_dry_run_entries);
      if (!wanted) continue;
      if (running >= e.policy.max_concurrent) continue;
      if (e.policy.max_concurrent_per_namespace &&
          running_per_ns[e.plan.ns] >= *e.policy.max_concurrent_per_namespace)
        continue;
      if (e.policy.strategy == restart::Strategy::kEvict) {
        if (e.evict.next.empty()) continue;
        std::size_t evicted = report.pods_evicted.size();
        auto st = co_await evict_next(e, view, false, report);
        if (!st) co_return st.error();
        if (report.pods_evicted.size() == evicted) continue;  // refused: Deferred, not started
        report.started.push_back(workload_key(e.plan));
        evict_restarts_[workload_key(e.plan)] = {now, e.cause};
        ++running;
        ++running_per_ns[e.plan.ns];
        if (restarts_total_ != nullptr)
          restarts_total_->with({std::string(restart::reason_name(*e.plan.reason)), "started"})
              .Increment();
        std::string also = coalesced(e);
        if (const rapidjson::Value* w = find_workload(view, e.plan); w != nullptr && events_)
          events_->record(
              kube::reference_to(*w), kube::EventType::kNormal, "Restarted", "Restart",
              e.plan.detail + "; restarting by eviction, pod by pod (" + e.cause + ")" + also);
        continue;
      }
      const kube::ResourceType* type = resource_of(e.plan.kind);
      if (type == nullptr) continue;
      // Only the copy the plan judged is restarted: a store lagging behind another writer
      // (a previous leader's restart it has not shown yet) gets a 409, not a second restart.
      const rapidjson::Value* planned = find_workload(view, e.plan);
      std::string patch = restart::restart_patch(
          e.cause, now,
          planned != nullptr ? api::string_at(*planned, {"metadata", "resourceVersion"}) : "");
      auto patched = co_await client_->patch(*type, e.plan.ns, e.plan.name,
                                             kube::PatchType::kStrategicMerge, patch);
      if (!patched && patched.error().is(kube::ErrorKind::kConflict)) {
        log::info("workload changed since the plan read it; not restarted, planned again next pass",
                  {{"workload", workload_key(e.plan)}, {"cause", e.cause}});
        continue;
      }
      if (!patched) co_return api::Error{patched.error().message};
      unseen_restarts_[workload_key(e.plan)] = {
          e.cause, api::string_at(*patched, {"metadata", "uid"}), generation_of(*patched), now};
      report.started.push_back(workload_key(e.plan));
      ++running;
      ++running_per_ns[e.plan.ns];
      log::info(
          "restarted workload",
          {{"workload", workload_key(e.plan)}, {"cause", e.cause}, {"detail", e.plan.detail}});
      if (restarts_total_ != nullptr)
        restarts_total_->with({std::string(restart::reason_name(*e.plan.reason)), "started"})
            .Increment();
      std::string also = coalesced(e);
      if (events_)
        events_->record(kube::reference_to(*patched), kube::EventType::kNormal, "Restarted",
                        "Restart", e.plan.detail + "; restarted (" + e.cause + ")" + also);
    }
  }

  // 4. Report.
  if (stale_ != nullptr) {
    std::map<std::string, int> counts;
    for (const char* r : {"InjectionEnabled", "InjectionDisabled", "RevisionChanged",
                          "ProxyImageChanged", "TemplateChanged"})
      counts[r] = 0;
    for (const restart::PlanEntry& e : report.plan)
      if (e.plan.reason && e.action != Action::kNone)
        ++counts[std::string(restart::reason_name(*e.plan.reason))];
    for (const auto& [reason, n] : counts)
      stale_->with({reason}).Set(n);
  }
  if (restarts_total_ != nullptr) {
    // Counted once per failure (record_transitions remembers it below).
    for (const RolloutReport& f : report.failed) {
      if (last_state_.count(f.key + "#failed")) continue;
      for (const restart::PlanEntry& e : report.plan)
        if (workload_key(e.plan) == f.key && e.plan.reason)
          restarts_total_->with({std::string(restart::reason_name(*e.plan.reason)), "failed"})
              .Increment();
    }
  }
  if (execute) {
    record_transitions(report, view);
    auto status = co_await report_status(report, view);
    if (!status) co_return status.error();
    auto waves = co_await apply_waves(report, view);
    if (!waves) co_return waves.error();
  }
  report.engines = std::move(engines);
  report.view = std::make_shared<const restart::ClusterView>(std::move(view));
  co_return report;
}

void RestartsReconciler::watch_health(
    PassReport& report, const restart::ClusterView& view,
    const std::function<void(const std::string&, const restart::PlanEntry&, const std::string&)>&
        fail) {
  const SystemTime now = now_();
  std::erase_if(completed_at_,
                [&](const auto& kv) { return now - kv.second > std::chrono::hours(2); });
  std::set<std::string> failed;
  for (const RolloutReport& f : report.failed)
    failed.insert(f.key);
  for (restart::PlanEntry& e : report.plan) {
    const std::string key = workload_key(e.plan);
    // (A restart the store does not show yet has no new pods to judge.)
    if (failed.count(key) || unseen_restarts_.count(key)) continue;
    bool rolling = e.action == Action::kInProgress;
    auto done = completed_at_.find(key);
    bool soaking = e.action == Action::kNone && done != completed_at_.end() &&
                   now - done->second < soak_of(e.policy);
    if (!rolling && !soaking) continue;
    const rapidjson::Value* w = find_workload(view, e.plan);
    if (w == nullptr) continue;
    std::optional<SystemTime> since;
    if (e.policy.strategy == restart::Strategy::kEvict) {
      if (auto it = evict_restarts_.find(key); it != evict_restarts_.end()) since = it->second.at;
    } else {
      since = parse_rfc3339(api::string_at(
          *w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation}));
    }
    restart::Health h =
        restart::workload_health(*w, workload_pods(view, *w), e.plan.stale_pods, since, soaking);
    if (!h.regressed) continue;
    std::erase_if(report.progressing, [&](const RolloutReport& r) { return r.key == key; });
    fail(key, e, "its new pods regressed: " + h.what);
  }
}

void RestartsReconciler::decide_waves(PassReport& report, const restart::ClusterView& view,
                                      bool execute) {
  const SystemTime now = now_();
  std::map<std::string, std::string> failures;
  for (const RolloutReport& f : report.failed)
    failures.emplace(f.key, f.message);
  std::set<std::string> progressing;
  for (const RolloutReport& r : report.progressing)
    progressing.insert(r.key);
  for (const auto& iop : view.istio_operators) {
    const std::string source = source_of(iop);
    auto policy = restart::parse_policy(api::find(iop, "/spec/restarts"));
    if (!policy || policy->mode == restart::Mode::kOff) {
      waves_.erase(source);
      continue;
    }
    restart::WaveInput in;
    auto known = waves_.find(source);
    in.previous = known != waves_.end() ? known->second : restart::wave_from_status(iop);
    if (const rapidjson::Value* g = api::find(iop, "/metadata/generation"); g && g->IsInt64())
      in.generation = g->GetInt64();
    const rapidjson::Value* annotations = api::find(iop, "/metadata/annotations");
    if (annotations != nullptr && annotations->IsObject()) {
      in.pause = api::string_at(*annotations, {restart::kPauseAnnotation});
      if (const rapidjson::Value* r = api::find_member(*annotations, restart::kResumeAnnotation);
          r != nullptr) {
        std::string value = r->IsString() ? r->GetString() : "";
        auto seen = resumed_.find(source);
        in.resume = seen == resumed_.end() || seen->second != value;
      }
    }
    if (!policy->canary && in.pause.empty() && !in.resume &&
        in.previous.phase == restart::WavePhase::kNone)
      continue;
    std::map<std::string, restart::PlanEntry*> entries;
    for (restart::PlanEntry& e : report.plan) {
      if (e.policy_source != source) continue;
      const std::string key = workload_key(e.plan);
      entries[key] = &e;
      restart::Member m;
      switch (e.action) {
        case Action::kRestart:
        case Action::kWouldRestart:
        case Action::kDeferred:
          m.state = restart::MemberState::kWaiting;
          break;
        case Action::kInProgress:
          m.state = restart::MemberState::kRolling;
          break;
        case Action::kNone:
          m.state =
              progressing.count(key) ? restart::MemberState::kRolling : restart::MemberState::kDone;
          break;
        default:
          m.state = restart::MemberState::kGone;
          break;
      }
      if (auto f = failures.find(key); f != failures.end()) m.failure = f->second;
      if (m.state == restart::MemberState::kWaiting || m.state == restart::MemberState::kRolling) {
        in.affected.push_back(key);
        const rapidjson::Value* w = find_workload(view, e.plan);
        in.affected_labels.push_back(w != nullptr ? api::find(*w, "/metadata/labels") : nullptr);
      }
      in.members[key] = std::move(m);
    }
    // The health of the canary group's restarted members.
    for (const std::string& key : in.previous.canary) {
      auto m = in.members.find(key);
      auto e = entries.find(key);
      if (m == in.members.end() || e == entries.end() || unseen_restarts_.count(key)) continue;
      if (m->second.state != restart::MemberState::kRolling &&
          m->second.state != restart::MemberState::kDone)
        continue;
      const rapidjson::Value* w = find_workload(view, e->second->plan);
      if (w == nullptr) continue;
      std::optional<SystemTime> since;
      if (e->second->policy.strategy == restart::Strategy::kEvict) {
        if (auto it = evict_restarts_.find(key); it != evict_restarts_.end()) since = it->second.at;
      } else {
        since = parse_rfc3339(api::string_at(
            *w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation}));
      }
      m->second.health =
          restart::workload_health(*w, workload_pods(view, *w), e->second->plan.stale_pods, since,
                                   m->second.state == restart::MemberState::kDone);
    }

    restart::WaveDecision d =
        restart::decide_wave(policy->canary ? &*policy->canary : nullptr, in, now);
    const bool group = d.next.phase == restart::WavePhase::kCanary ||
                       d.next.phase == restart::WavePhase::kSoaking ||
                       d.next.phase == restart::WavePhase::kHalted;
    for (auto& [key, e] : entries) {
      bool in_group =
          std::find(d.next.canary.begin(), d.next.canary.end(), key) != d.next.canary.end();
      e->canary = in_group && d.next.phase != restart::WavePhase::kNone;
      bool startable = e->action == Action::kRestart || e->action == Action::kWouldRestart ||
                       e->action == Action::kDeferred;
      if (d.hold_all && startable) {
        e->action = d.next.phase == restart::WavePhase::kHalted ? Action::kHalted : Action::kPaused;
        e->why = d.why;
      } else if (d.hold_all && e->action == Action::kInProgress) {
        // A rollout under way goes on (it cannot be stopped halfway); no further eviction.
        if (!e->evict.next.empty()) {
          e->evict.next.clear();
          e->evict.waiting = d.why;
        }
      } else if (d.hold_others && group && !in_group &&
                 (e->action == Action::kRestart || e->action == Action::kWouldRestart)) {
        e->action = Action::kDeferred;
        e->why = d.why;
      }
    }
    if (d.next.phase == restart::WavePhase::kHalted && !report.halted) {
      report.halted = true;
      report.halt_reason = "IstioOperator " + source + ": " + d.why;
    }
    if (execute) waves_[source] = d.next;
    report.waves[source] = std::move(d);
  }
}

std::vector<std::pair<std::string, std::string>> RestartsReconciler::record_waves(
    const PassReport& report, const restart::ClusterView& view) {
  std::vector<std::pair<std::string, std::string>> resumed;
  for (const auto& iop : view.istio_operators) {
    const std::string source = source_of(iop);
    auto it = report.waves.find(source);
    const bool halted =
        it != report.waves.end() && it->second.next.phase == restart::WavePhase::kHalted;
    if (halted_ != nullptr) halted_->with({source}).Set(halted ? 1 : 0);
    if (it == report.waves.end()) continue;
    const restart::WaveDecision& d = it->second;
    if (d.halted_now) {
      log::warn("restart wave halted", {{"istio_operator", source},
                                        {"workload", d.next.halted_workload},
                                        {"reason", d.next.halt_reason},
                                        {"message", d.next.message}});
      if (events_)
        events_->record(iop_reference(iop), kube::EventType::kWarning, "RestartsHalted", "Restart",
                        d.next.message +
                            "; nothing more starts until `meshop restart resume` or a spec change");
      if (restarts_total_ != nullptr) {
        // The stale reason the canary was restarted for (its cause record, once rolled out).
        std::string reason;
        for (const restart::PlanEntry& e : report.plan) {
          if (workload_key(e.plan) != d.next.halted_workload) continue;
          if (e.plan.reason) {
            reason = restart::reason_name(*e.plan.reason);
          } else if (const rapidjson::Value* w = find_workload(view, e.plan)) {
            if (auto last = restart::last_restart_of(*w))
              reason = last->cause.substr(0, last->cause.find('/'));
          }
        }
        restarts_total_->with({reason, "halted"}).Increment();
      }
    }
    if (d.resumed_now) {
      log::info("restart wave resumed", {{"istio_operator", source}, {"by", d.resumed_by}});
      if (events_)
        events_->record(iop_reference(iop), kube::EventType::kNormal, "RestartsResumed", "Restart",
                        "the halted restart wave resumed by " + d.resumed_by);
    }
    std::string pause, resume;
    bool has_resume = false;
    if (const rapidjson::Value* annotations = api::find(iop, "/metadata/annotations");
        annotations != nullptr && annotations->IsObject()) {
      pause = api::string_at(*annotations, {restart::kPauseAnnotation});
      if (const rapidjson::Value* v = api::find_member(*annotations, restart::kResumeAnnotation)) {
        has_resume = true;
        resume = v->IsString() ? v->GetString() : "";
      }
    }
    std::string& last = last_state_["iop:" + source + "#paused"];
    if (last != pause) {
      if (!pause.empty() && events_)
        events_->record(iop_reference(iop), kube::EventType::kNormal, "RestartsPaused", "Restart",
                        "restarts paused by hand (" + std::string(restart::kPauseAnnotation) +
                            ": " + pause + ")");
      last = pause;
    }
    if (has_resume && !(resumed_.count(source) && resumed_[source] == resume)) {
      resumed_[source] = resume;
      resumed.emplace_back(source, resume);
    }
  }
  return resumed;
}

kube::Task<api::Status> RestartsReconciler::apply_waves(const PassReport& report,
                                                        const restart::ClusterView& view) {
  // Honour each resume annotation once: the pause is lifted too, and both are removed.
  std::vector<std::pair<std::string, std::string>> resumed = record_waves(report, view);
  if (resumed.empty()) co_return api::ok_status();
  auto iop_type = co_await client_->discover("install.istio.io/v1alpha1", "IstioOperator");
  if (!iop_type) co_return api::ok_status();
  const std::string body = remove_resume_patch();
  for (const auto& [source, value] : resumed) {
    auto slash = source.find('/');
    auto r = co_await client_->patch(*iop_type, source.substr(0, slash), source.substr(slash + 1),
                                     kube::PatchType::kMerge, body);
    if (!r && !r.error().is(kube::ErrorKind::kNotFound)) {
      resumed_.erase(source);
      co_return api::Error{r.error().message};
    }
    log::info("resume annotation honoured and removed", {{"istio_operator", source}});
  }
  co_return api::ok_status();
}

bool RestartsReconciler::evict_running(const restart::PlanEntry& e, SystemTime now) const {
  if (e.policy.strategy != restart::Strategy::kEvict ||
      e.plan.verdict != restart::Verdict::kStale || !e.evict.blocked.empty())
    return false;
  if (e.action == Action::kInProgress) return true;
  bool runnable = e.action == Action::kRestart || e.action == Action::kDeferred ||
                  (e.action == Action::kWouldRestart && config_.run_dry_run_entries);
  if (!runnable) return false;
  if (e.evict.started && e.action == Action::kWouldRestart) return true;
  // Evicted by this process a moment ago: the replacement may not be in the view yet.
  auto it = evicted_at_.find(workload_key(e.plan));
  return it != evicted_at_.end() && now - it->second < e.policy.rollout_timeout;
}

kube::Task<api::Status> RestartsReconciler::evict_next(restart::PlanEntry& e,
                                                       const restart::ClusterView& view,
                                                       bool dry_run, PassReport& report) {
  const SystemTime now = now_();
  const std::string key = workload_key(e.plan);
  const std::string pod = e.evict.next;
  if (!dry_run) {
    if (auto b = evict_backoff_.find(key); b != evict_backoff_.end() && now < b->second.until) {
      e.action = Action::kDeferred;
      e.why = b->second.why;
      co_return api::ok_status();
    }
  }
  auto evicted = co_await client_->evict(e.plan.ns, pod, dry_run);
  if (evicted) {
    if (dry_run) co_return api::ok_status();
    evict_backoff_.erase(key);
    evicted_at_[key] = now;
    report.pods_evicted.push_back(e.plan.ns + "/" + pod);
    log::info("evicted pod", {{"workload", key}, {"pod", pod}, {"cause", e.cause}});
    if (const rapidjson::Value* w = find_workload(view, e.plan); w != nullptr && events_)
      events_->record(kube::reference_to(*w), kube::EventType::kNormal, "Evicted", "Restart",
                      "evicted pod " + pod + " for " + e.cause + " (" +
                          std::to_string(e.evict.stale_left - 1) + " stale pods left)");
    co_return api::ok_status();
  }
  const kube::Error& err = evicted.error();
  if (err.is(kube::ErrorKind::kNotFound) || err.is(kube::ErrorKind::kConflict))
    co_return api::ok_status();  // gone or changed meanwhile: the next pass sees it
  if (err.is(kube::ErrorKind::kTooManyRequests)) {
    std::string pdb = restart::budget_of_refusal(err.message);
    e.action = Action::kDeferred;
    e.why = (pdb.empty() ? std::string("the apiserver") : "PodDisruptionBudget " + pdb) +
            " refuses the eviction of pod " + pod + " now: " + err.message;
    if (!dry_run) {
      EvictBackoff& b = evict_backoff_[key];
      b.delay = std::min<std::chrono::seconds>(
          std::max<std::chrono::seconds>(b.delay * 2, std::chrono::seconds(2)),
          std::chrono::seconds(60));
      b.until = now + b.delay;
      b.why = e.why;
      log::info("eviction refused by a disruption budget; waiting",
                {{"workload", key},
                 {"pod", pod},
                 {"pdb", pdb},
                 {"retry_in", std::to_string(b.delay.count()) + "s"}});
    }
    co_return api::ok_status();
  }
  if (dry_run) {
    // `meshop restart plan`: the check could not be made (e.g. no permission); say so.
    e.why += (e.why.empty() ? "" : "; ") + std::string("eviction check failed: ") + err.message;
    co_return api::ok_status();
  }
  if (err.http_status == 500 &&
      err.message.find("more than one PodDisruptionBudget") != std::string::npos) {
    e.action = Action::kBlocked;
    e.why = err.message;
    co_return api::ok_status();
  }
  co_return api::Error{err.message};
}

void RestartsReconciler::record_transitions(const PassReport& report,
                                            const restart::ClusterView& view) {
  auto note = [&](const std::string& key, const std::string& state, const rapidjson::Value* object,
                  kube::EventType type, const char* reason, const std::string& message) {
    auto& last = last_state_[key];
    if (last == state) return;
    last = state;
    if (events_ && object != nullptr)
      events_->record(kube::reference_to(*object), type, reason, "Restart", message);
  };
  for (const restart::PlanEntry& e : report.plan) {
    const rapidjson::Value* w = find_workload(view, e.plan);
    std::string key = workload_key(e.plan);
    if (e.overdue && e.plan.verdict == restart::Verdict::kStale)
      note(key + "#overdue", "overdue:" + e.cause, w, kube::EventType::kWarning, "RestartOverdue",
           "stale since " + restart::rfc3339(e.stale_since) + " for " + e.cause +
               ", longer than maxStaleness " + restart::go_duration(*e.policy.max_staleness) +
               (e.policy.restart_after_deadline ? "; restarted outside the maintenance window"
                                                : "; waits for the maintenance window"));
    switch (e.action) {
      case Action::kSkipped:
        note(key, "skipped:" + e.why, w, kube::EventType::kNormal, "RestartSkipped", e.why);
        break;
      case Action::kDeferred:
        note(key, "deferred:" + e.why, w, kube::EventType::kNormal, "RestartDeferred", e.why);
        break;
      case Action::kManual:
        note(key, "manual:" + e.plan.detail, w, kube::EventType::kWarning, "ManualRestartNeeded",
             e.plan.detail);
        break;
      case Action::kBlocked:
        note(key, "blocked:" + e.why, w, kube::EventType::kWarning, "RestartBlocked", e.why);
        break;
      case Action::kApprovalNeeded:
        note(key, "approval:" + e.plan.target_revision + "@" + e.target_version, w,
             kube::EventType::kWarning, "RestartApprovalNeeded", e.why);
        break;
      case Action::kInProgress:
        note(key, "inprogress:" + e.cause, w, kube::EventType::kNormal, "Restarting",
             "restarted for " + e.cause + "; waiting for the rollout");
        break;
      case Action::kNone:
        // A workload restarted by this process whose pods now match: completed (under Evict
        // once the last replacement is Ready too, i.e. it is no longer progressing).
        if (std::any_of(report.progressing.begin(), report.progressing.end(),
                        [&](const RolloutReport& r) { return r.key == key; }))
          break;
        if (auto it = last_state_.find(key);
            it != last_state_.end() && it->second.rfind("inprogress:", 0) == 0) {
          std::string cause = it->second.substr(std::string_view("inprogress:").size());
          completed_at_[key] = now_();  // the health watch goes on for the soak
          note(key, "done", w, kube::EventType::kNormal, "RestartCompleted",
               "rollout complete; pods match revision " +
                   (e.plan.target_revision.empty() ? std::string("none") : e.plan.target_revision));
          if (restarts_total_ != nullptr)
            restarts_total_->with({cause.substr(0, cause.find('/')), "completed"}).Increment();
        }
        break;
      default:
        break;
    }
  }
  for (const RolloutReport& f : report.failed) {
    for (const restart::PlanEntry& e : report.plan)
      if (workload_key(e.plan) == f.key)
        note(f.key + "#failed", f.message, find_workload(view, e.plan), kube::EventType::kWarning,
             "RestartFailed", f.message);
  }
}

kube::Task<api::Status> RestartsReconciler::report_status(const PassReport& report,
                                                          const restart::ClusterView& view) {
  auto iop_type = co_await client_->discover("install.istio.io/v1alpha1", "IstioOperator");
  if (!iop_type) co_return api::ok_status();
  // Per IstioOperator: counts and the workloads in each state.
  struct Summary {
    int pending = 0, in_progress = 0, failed = 0, skipped = 0, manual = 0, deferred = 0;
    rapidjson::Document items{rapidjson::kArrayType};
    // Stale past maxStaleness (condition RestartsOverdue): how many, and the first few.
    int overdue = 0;
    std::vector<std::string> overdue_first;
  };
  std::map<std::string, Summary> by_source;
  for (const std::string& iop : report.istio_operators)
    by_source[iop];  // zeros when idle
  std::set<std::string> failed_keys;
  for (const RolloutReport& f : report.failed)
    failed_keys.insert(f.key);
  for (const restart::PlanEntry& e : report.plan) {
    std::string key = workload_key(e.plan);
    // Up to date, unless its new pods regressed after the rollout (the health watch).
    if ((e.action == Action::kNone && !failed_keys.count(key)) || e.policy_source == "defaults")
      continue;
    Summary& s = by_source[e.policy_source];
    if (e.overdue && e.plan.verdict == restart::Verdict::kStale) {
      ++s.overdue;
      if (s.overdue_first.size() < 5) s.overdue_first.push_back(key);
    }
    std::string state;
    switch (e.action) {
      case Action::kNone:
        state = "Failed";
        break;
      case Action::kRestart:
      case Action::kWouldRestart:
        state = std::find(report.started.begin(), report.started.end(), key) != report.started.end()
                    ? "InProgress"
                    : "Pending";
        break;
      case Action::kInProgress:
        state = failed_keys.count(key) ? "Failed" : "InProgress";
        break;
      case Action::kDeferred:
        state = "Deferred";
        break;
      case Action::kSkipped:
      case Action::kBlocked:
        state = "Skipped";
        break;
      case Action::kManual:
        state = "ManualRestartNeeded";
        break;
      case Action::kApprovalNeeded:
        state = "ApprovalNeeded";
        break;
      case Action::kHalted:
        state = "Halted";
        break;
      case Action::kPaused:
        state = "Paused";
        break;
      default:
        break;
    }
    if (state == "Pending" || state == "Halted" || state == "Paused") ++s.pending;
    if (state == "InProgress") ++s.in_progress;
    if (state == "Failed") ++s.failed;
    if (state == "Skipped") ++s.skipped;
    if (state == "ManualRestartNeeded") ++s.manual;
    if (state == "Deferred" || state == "ApprovalNeeded") ++s.deferred;
    auto& a = s.items.GetAllocator();
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("workload", api::make_string(key, a), a);
    item.AddMember("state", api::make_string(state, a), a);
    item.AddMember("reason",
                   api::make_string(e.plan.reason ? restart::reason_name(*e.plan.reason) : "", a),
                   a);
    item.AddMember("message", api::make_string(e.why.empty() ? e.plan.detail : e.why, a), a);
    if (e.canary) item.AddMember("canary", true, a);
    if (s.items.Size() < 100) s.items.PushBack(item, a);
  }
  std::map<std::string, const rapidjson::Value*> objects;
  for (const auto& iop : view.istio_operators)
    objects[source_of(iop)] = &iop;
  for (auto& [source, s] : by_source) {
    auto slash = source.find('/');
    std::string ns = source.substr(0, slash), name = source.substr(slash + 1);
    rapidjson::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    rapidjson::Value restarts(rapidjson::kObjectType);
    restarts.AddMember("pending", s.pending, a);
    restarts.AddMember("inProgress", s.in_progress, a);
    restarts.AddMember("failed", s.failed, a);
    restarts.AddMember("deferred", s.deferred, a);
    restarts.AddMember("skipped", s.skipped, a);
    restarts.AddMember("manualRestartNeeded", s.manual, a);
    auto wave = report.waves.find(source);
    const bool halted =
        wave != report.waves.end() && wave->second.next.phase == restart::WavePhase::kHalted;
    const bool held = wave != report.waves.end() && wave->second.hold_all;
    restarts.AddMember("paused", report.paused || held, a);
    restarts.AddMember("halted", halted, a);
    std::string message = report.pause_reason;
    if (held) message = wave->second.why + (message.empty() ? "" : "; " + message);
    restarts.AddMember("message", api::make_string(message, a), a);
    rapidjson::Value items;
    items.CopyFrom(s.items, a);
    restarts.AddMember("workloads", items, a);
    if (wave != report.waves.end())
      restarts.AddMember("wave", restart::wave_to_json(wave->second.next, a), a);
    else
      restarts.AddMember("wave", rapidjson::Value(rapidjson::kNullType), a);
    rapidjson::Value status(rapidjson::kObjectType);
    status.AddMember("restarts", restarts, a);
    // The RestartsHalted condition, among the others as they are; written only when it changes
    // (last_condition_), True while halted, False once a halt was lifted.
    const rapidjson::Value* object = objects.count(source) ? objects[source] : nullptr;
    const rapidjson::Value* current =
        object != nullptr ? api::find(*object, "/status/conditions") : nullptr;
    const rapidjson::Value* mine = nullptr;
    if (current != nullptr && current->IsArray())
      for (const rapidjson::Value& c : current->GetArray())
        if (api::string_at(c, {"type"}) == restart::kHaltedCondition) mine = &c;
    std::string cond_status, cond_reason, cond_message;
    const bool resumed = wave != report.waves.end() && wave->second.resumed_now;
    if (halted) {
      cond_status = "True";
      cond_reason = wave->second.next.halt_reason;
      cond_message = wave->second.next.message;
    } else if (resumed || (mine != nullptr && api::string_at(*mine, {"status"}) == "True")) {
      // Lifted: by resume or a spec change, or the wave is no longer known halted.
      cond_status = "False";
      cond_reason = "Resumed";
      cond_message = resumed ? "resumed by " + wave->second.resumed_by
                             : "the restart wave is no longer halted";
    }
    std::string cond_key =
        cond_status.empty() ? "" : cond_status + "|" + cond_reason + "|" + cond_message;
    const bool on_object = mine != nullptr && api::string_at(*mine, {"status"}) == cond_status &&
                           api::string_at(*mine, {"reason"}) == cond_reason &&
                           api::string_at(*mine, {"message"}) == cond_message;
    // Written once per change. A True that another writer of status.conditions removed is
    // written again at most once a minute (no tug of war with it); a True still in a lagging
    // cache after this process wrote False is not written over.
    const SystemTime now = now_();
    const bool again = cond_status == "True" && cond_key == last_condition_[source] &&
                       now - last_condition_at_[source] >= std::chrono::minutes(1);
    bool write_condition =
        !cond_key.empty() && !on_object && (cond_key != last_condition_[source] || again) &&
        !(cond_status == "False" && !resumed && last_condition_[source].rfind("False|", 0) == 0);
    if (!cond_key.empty() && !write_condition) last_condition_[source] = cond_key;
    // RestartsOverdue: True while workloads of this policy are stale past maxStaleness, False
    // once none is (written when it differs from the object and from what this process wrote).
    const rapidjson::Value* overdue_mine = nullptr;
    if (current != nullptr && current->IsArray())
      for (const rapidjson::Value& c : current->GetArray())
        if (api::string_at(c, {"type"}) == kOverdueCondition) overdue_mine = &c;
    std::string od_status, od_reason, od_message;
    if (s.overdue > 0) {
      od_status = "True";
      od_reason = "StalePastMaxStaleness";
      od_message = std::to_string(s.overdue) + " workload" + (s.overdue == 1 ? "" : "s") +
                   " stale past maxStaleness:";
      for (const std::string& k : s.overdue_first)
        od_message += " " + k;
      if (s.overdue > static_cast<int>(s.overdue_first.size())) od_message += " ...";
    } else if (overdue_mine != nullptr && api::string_at(*overdue_mine, {"status"}) == "True") {
      od_status = "False";
      od_reason = "NoneOverdue";
      od_message = "no workload is stale past maxStaleness";
    }
    std::string od_key = od_status.empty() ? "" : od_status + "|" + od_reason + "|" + od_message;
    const bool od_on_object = overdue_mine != nullptr &&
                              api::string_at(*overdue_mine, {"status"}) == od_status &&
                              api::string_at(*overdue_mine, {"reason"}) == od_reason &&
                              api::string_at(*overdue_mine, {"message"}) == od_message;
    const bool write_overdue =
        !od_key.empty() && !od_on_object && od_key != last_overdue_condition_[source];
    if (write_condition || write_overdue) {
      rapidjson::Value conditions(rapidjson::kArrayType);
      if (current != nullptr && current->IsArray())
        for (const rapidjson::Value& c : current->GetArray()) {
          std::string type = api::string_at(c, {"type"});
          if ((write_condition && type == restart::kHaltedCondition) ||
              (write_overdue && type == kOverdueCondition))
            continue;
          conditions.PushBack(rapidjson::Value(c, a), a);
        }
      auto add = [&](std::string_view type, const rapidjson::Value* existing, const std::string& st,
                     const std::string& reason, const std::string& msg) {
        std::string transition = restart::rfc3339(now_());
        if (existing != nullptr && api::string_at(*existing, {"status"}) == st &&
            !api::string_at(*existing, {"lastTransitionTime"}).empty())
          transition = api::string_at(*existing, {"lastTransitionTime"});
        rapidjson::Value cond(rapidjson::kObjectType);
        cond.AddMember("type", api::make_string(type, a), a);
        cond.AddMember("status", api::make_string(st, a), a);
        if (const rapidjson::Value* g =
                object != nullptr ? api::find(*object, "/metadata/generation") : nullptr;
            g != nullptr && g->IsInt64())
          cond.AddMember("observedGeneration", rapidjson::Value(g->GetInt64()), a);
        cond.AddMember("lastTransitionTime", api::make_string(transition, a), a);
        cond.AddMember("reason", api::make_string(reason, a), a);
        cond.AddMember("message", api::make_string(msg, a), a);
        conditions.PushBack(cond, a);
      };
      if (write_condition)
        add(restart::kHaltedCondition, mine, cond_status, cond_reason, cond_message);
      if (write_overdue) add(kOverdueCondition, overdue_mine, od_status, od_reason, od_message);
      status.AddMember("conditions", conditions, a);
    }
    // status.restarts is compared with what this process last wrote; the condition apart.
    std::string restarts_body = api::to_json(*api::find_member(status, "restarts"));
    patch.AddMember("status", status, a);
    std::string body = api::to_json(patch);
    if (!write_condition && !write_overdue && last_status_[source] == restarts_body)
      continue;  // unchanged
    kube::PatchOptions options;
    options.subresource = "status";
    auto r = co_await client_->patch(*iop_type, ns, name, kube::PatchType::kMerge, body, options);
    if (!r && !r.error().is(kube::ErrorKind::kNotFound)) co_return api::Error{r.error().message};
    last_status_[source] = restarts_body;
    if (write_condition) {
      last_condition_[source] = cond_key;
      last_condition_at_[source] = now;
    }
    if (write_overdue) last_overdue_condition_[source] = od_key;
  }
  co_return api::ok_status();
}

kube::Task<runtime::Action> RestartsReconciler::reconcile(const std::string& /*key*/) {
  auto report = co_await pass(true);
  if (!report) co_return runtime::Action::error(report.message());
  bool busy = !report->progressing.empty() || !report->started.empty();
  for (const restart::PlanEntry& e : report->plan)
    busy = busy || e.action == Action::kDeferred || e.action == Action::kRestart;
  co_return runtime::Action::requeue_after(busy ? std::chrono::seconds(2)
                                                : std::chrono::seconds(30));
}

void setup_restarts(const OperatorSetup& setup, RestartsConfig config) {
  runtime::Cache& cache = setup.cache;
  auto observed = std::make_shared<RestartsCache>();
  using namespace kube::resources;
  for (const kube::ResourceType* t : {&kDeployments, &kStatefulSets, &kDaemonSets, &kReplicaSets,
                                      &kReplicationControllers, &kJobs, &kCronJobs})
    observed->workloads.push_back(&cache.store(watches::every(*t)));
  observed->deployments = observed->workloads.front();
  observed->pod_disruption_budgets = &cache.store(watches::every(kPodDisruptionBudgets));
  observed->nodes = &cache.store(watches::nodes());
  observed->namespaces = &cache.store(watches::namespaces());
  observed->webhook_configurations = &cache.store(watches::mutating_webhook_configurations());
  observed->istio_operators = &cache.store(watches::istio_operators());
  observed->pods = &cache.store(watches::pods());
  observed->config_maps = &cache.store(watches::control_plane_config_maps(setup.ns));
  config.cache = observed.get();
  auto reconciler = std::make_shared<RestartsReconciler>(setup.client, std::move(config),
                                                         setup.registry, setup.events);
  setup.controller("restarts")
      .singleton(kAllKey)
      .watches(watches::istio_operators())
      .watches(watches::namespaces())
      .watches(watches::mutating_webhook_configurations())
      .watches(watches::control_plane_config_maps(setup.ns))
      .complete(
          [reconciler, observed](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
