#include "reconcilers/restarts.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>
#include <set>
#include <unordered_map>

#include <openssl/evp.h>
#include <rapidjson/writer.h>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/record.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/restart/rollout.hpp"
#include "operator/runtime/object.hpp"
#include "operator/webhook/configmap_source.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/install.hpp"
#include "reconcilers/restarts_status.hpp"
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
  out.append(std::move(objects));
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

// The workload an entry plans, as the view held it; null for a bare Pod (planned, reported, never
// restarted: no rollout to follow and no Event).
const rapidjson::Value* workload_of(const restart::PlanEntry& e) {
  return e.plan.kind == "Pod" ? nullptr : e.object.get();
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
  if (api::field(pod, "/metadata/deletionTimestamp") != nullptr) return false;
  const rapidjson::Value* conds = api::field(pod, "/status/conditions");
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const rapidjson::Value& c : conds->GetArray())
    if (api::string_at(c, {"type"}) == "Ready") return api::string_at(c, {"status"}) == "True";
  return false;
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

// An IstioOperator known by "<namespace>/<name>" alone.
rapidjson::Document iop_named(const std::string& source) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  const auto slash = source.find('/');
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("namespace", api::make_string(source.substr(0, slash), a), a);
  meta.AddMember("name", api::make_string(source.substr(slash + 1), a), a);
  d.AddMember("metadata", meta, a);
  return d;
}

kube::ObjectReference iop_reference(const rapidjson::Value& iop) {
  kube::ObjectReference r = kube::reference_to(iop);
  if (r.api_version.empty()) r.api_version = std::string(api::kIstioOperatorApiVersion);
  if (r.kind.empty()) r.kind = std::string(api::kIstioOperatorKind);
  return r;
}

}  // namespace

// Who owns which pods in a view: the pods by controller (the view's groups, else grouped on
// first use) and the ReplicaSets by owner. Built once per pass, on first use (only the
// workloads being restarted ask).
class OwnedIndex {
 public:
  explicit OwnedIndex(const restart::ClusterView& view) : view_(view) {}

  // The pods `workload` controls, by name (the first one created before the restart is the
  // next to go, whatever order the view has).
  std::vector<const rapidjson::Value*> pods_of(const rapidjson::Value& workload) {
    build();
    std::vector<const rapidjson::Value*> out;
    add(out, runtime::uid_of(workload));
    return by_name(std::move(out));
  }
  // The pods of `workload`, directly or through the ReplicaSets it owns (a Deployment's).
  std::vector<const rapidjson::Value*> workload_pods(const rapidjson::Value& workload) {
    build();
    std::vector<const rapidjson::Value*> out;
    const std::string_view uid = runtime::uid_of(workload);
    add(out, uid);
    if (api::string_at(workload, {"kind"}) == "Deployment")
      if (auto it = replica_sets_.find(uid); it != replica_sets_.end())
        for (const rapidjson::Value* rs : it->second)
          add(out, runtime::uid_of(*rs));
    return by_name(std::move(out));
  }

 private:
  void build() {
    if (groups_ != nullptr) return;
    groups_ = view_.pod_groups;
    if (groups_ == nullptr)
      groups_ = std::make_shared<const restart::PodGroups>(restart::group_pods(view_.pods));
    for (const rapidjson::Value& w : view_.workloads) {
      if (api::string_at(w, {"kind"}) != "ReplicaSet") continue;
      const rapidjson::Value* meta = api::find_member(w, "metadata");
      const rapidjson::Value* refs =
          meta != nullptr ? api::find_member(*meta, "ownerReferences") : nullptr;
      if (refs == nullptr || !refs->IsArray()) continue;
      for (const rapidjson::Value& r : refs->GetArray())
        if (const rapidjson::Value* uid = api::find_member(r, "uid"); uid && uid->IsString())
          replica_sets_[api::string_view_of(*uid)].push_back(&w);
    }
  }
  void add(std::vector<const rapidjson::Value*>& out, std::string_view uid) const {
    if (uid.empty()) return;
    if (auto it = groups_->find(std::string(uid)); it != groups_->end())
      for (const runtime::Object& p : it->second->pods)
        out.push_back(p.get());
  }
  static std::vector<const rapidjson::Value*> by_name(std::vector<const rapidjson::Value*> pods) {
    std::sort(pods.begin(), pods.end());
    pods.erase(std::unique(pods.begin(), pods.end()), pods.end());
    std::sort(pods.begin(), pods.end(), [](const rapidjson::Value* a, const rapidjson::Value* b) {
      return runtime::name_of(*a) < runtime::name_of(*b);
    });
    return pods;
  }

  const restart::ClusterView& view_;
  std::shared_ptr<const restart::PodGroups> groups_;
  std::unordered_map<std::string_view, std::vector<const rapidjson::Value*>> replica_sets_;
};

struct PodIndex::State {
  // The groups, copied on write: a snapshot handed out is `current` itself until the next
  // change, which first copies it (the holders of the snapshot keep theirs), so an index that
  // did not change since the last pass keeps one map, not two.
  std::shared_ptr<restart::PodGroups> current = std::make_shared<restart::PodGroups>();
  std::shared_ptr<const restart::PodGroups> snapshot;  // null after a change

  // The groups to change: `current`, made private first when it was handed out.
  restart::PodGroups& writable() {
    if (snapshot != nullptr) {
      current = std::make_shared<restart::PodGroups>(*current);
      snapshot.reset();
    }
    return *current;
  }

  void add(const runtime::Object& pod) {
    auto& group = writable()[std::string(restart::controller_uid(*pod))];
    auto next = std::make_shared<restart::PodGroup>();
    if (group != nullptr) {
      next->pods.reserve(group->pods.size() + 1);
      next->pods.insert(next->pods.end(), group->pods.begin(), group->pods.end());
    }
    next->pods.push_back(pod);
    group = std::move(next);
  }
  // Removes the pod of `pod`'s namespace and name from `group`; false when it is not there.
  bool remove_from(restart::PodGroups::iterator group, const runtime::Object& pod) {
    const std::string_view ns = runtime::namespace_of(*pod), name = runtime::name_of(*pod);
    const auto& pods = group->second->pods;
    auto same = [&](const runtime::Object& p) {
      return runtime::name_of(*p) == name && runtime::namespace_of(*p) == ns;
    };
    if (std::none_of(pods.begin(), pods.end(), same)) return false;
    auto next = std::make_shared<restart::PodGroup>();
    next->pods.reserve(pods.size());
    for (const runtime::Object& p : pods)
      if (!same(p)) next->pods.push_back(p);
    // `group` points into `current`, which writable() may replace by a copy: found again there.
    const std::string uid = group->first;
    restart::PodGroups& groups = writable();
    if (next->pods.empty())
      groups.erase(uid);
    else
      groups[uid] = std::move(next);
    return true;
  }
  // `pod` as the store held it (its controller names its group); a deletion's final state may
  // name another controller than the stored one did: then every group is searched.
  void remove(const runtime::Object& pod) {
    restart::PodGroups& groups = *current;
    auto group = groups.find(std::string(restart::controller_uid(*pod)));
    if (group != groups.end() && remove_from(group, pod)) return;
    for (auto it = groups.begin(); it != groups.end(); ++it)
      if (remove_from(it, pod)) return;
  }
};

PodIndex::PodIndex(runtime::Store& pods) : state_(std::make_shared<State>()) {
  std::weak_ptr<State> state = state_;
  pods.add_handlers({
      .on_add =
          [state](const runtime::Object& o) {
            if (auto s = state.lock()) s->add(o);
          },
      .on_update =
          [state](const runtime::Object& old_object, const runtime::Object& new_object) {
            if (auto s = state.lock()) {
              s->remove(old_object);
              s->add(new_object);
            }
          },
      .on_delete =
          [state](const runtime::Object& o) {
            if (auto s = state.lock()) s->remove(o);
          },
  });
}

std::shared_ptr<const restart::PodGroups> PodIndex::groups() {
  if (state_->snapshot == nullptr) state_->snapshot = state_->current;
  return state_->snapshot;
}

kube::Task<api::Result<restart::ClusterView>> load_cluster_view(
    std::shared_ptr<kube::Client> client, RestartsConfig config) {
  restart::ClusterView view;
  const std::string ns = config.namespace_filter;

  auto namespaces = co_await client->list_all(kube::resources::kNamespaces, "");
  if (!namespaces) co_return api::with_context("listing namespaces", namespaces.error());
  take_items(namespaces->list, "Namespace", view.namespaces);

  auto webhooks = co_await client->list_all(kube::resources::kMutatingWebhookConfigurations, "");
  if (!webhooks)
    co_return api::with_context("listing mutatingwebhookconfigurations", webhooks.error());
  take_items(webhooks->list, "MutatingWebhookConfiguration", view.webhook_configurations);

  auto iop_type = co_await client->discover(std::string(api::kIstioOperatorApiVersion),
                                            std::string(api::kIstioOperatorKind));
  if (iop_type) {
    auto iops = co_await client->list_all(*iop_type, "");
    if (!iops) co_return api::with_context("listing istiooperators", iops.error());
    take_items(iops->list, api::kIstioOperatorKind, view.istio_operators);
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
    if (!page) co_return api::with_context("listing " + type->display(), page.error());
    take_items(page->list, kind, view.workloads);
  }
  auto pods = co_await client->list_all(kube::resources::kPods, ns);
  if (!pods) co_return api::with_context("listing pods", pods.error());
  take_items(pods->list, "Pod", view.pods);
  auto pdbs = co_await client->list_all(kube::resources::kPodDisruptionBudgets, ns);
  if (!pdbs) co_return api::with_context("listing poddisruptionbudgets", pdbs.error());
  take_items(pdbs->list, "PodDisruptionBudget", view.pod_disruption_budgets);

  auto control =
      co_await client->list_all(kube::resources::kDeployments, config.control_plane_namespace);
  if (!control)
    co_return api::with_context("listing the control planes' deployments", control.error());
  take_items(control->list, "Deployment", view.control_plane_deployments);
  auto config_maps =
      co_await client->list_all(kube::resources::kConfigMaps, config.control_plane_namespace);
  if (!config_maps)
    co_return api::with_context("listing the control-plane configmaps", config_maps.error());
  take_items(config_maps->list, "ConfigMap", view.config_maps);

  auto nodes = co_await client->list_all(kube::resources::kNodes, "");
  if (!nodes) co_return api::with_context("listing nodes", nodes.error());
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
  if (cache.pod_index != nullptr && ns.empty())
    view.pod_groups = cache.pod_index->groups();
  else
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

namespace {

// The revisions the view's webhook configurations serve (their istio.io/rev label).
std::set<std::string> webhook_revisions(const restart::ClusterView& view) {
  std::set<std::string> revisions;
  for (const auto& mwc : view.webhook_configurations) {
    std::string r = api::string_at(mwc, {"metadata", "labels", api::kRevisionLabel});
    if (!r.empty()) revisions.insert(r);
  }
  return revisions;
}

// Builds revision `r`'s engine from the view's ConfigMaps, as the webhook builds it
// (webhook::configmap_sources), into `engines`, or says there why not.
void build_revision(const restart::ClusterView& view, const RestartsConfig& config,
                    const std::string& r, Engines& engines) {
  const std::string injector_name = webhook::injector_configmap_name(r);
  const std::string mesh_name = webhook::mesh_configmap_name(r);
  const rapidjson::Value* injector = nullptr;
  const rapidjson::Value* mesh = nullptr;
  for (const auto& cm : view.config_maps) {
    std::string_view name = runtime::name_of(cm);
    if (name == injector_name) injector = &cm;
    if (name == mesh_name) mesh = &cm;
  }
  const std::string where = "ConfigMap " + config.control_plane_namespace + "/" + injector_name;
  if (injector == nullptr) {
    engines.errors[r] = where + " not found";
    return;
  }
  inject::SnapshotSources defaults;
  defaults.native_sidecars = config.native_sidecars;
  defaults.node_kubelet_versions = view.kubelet_versions;
  inject::SnapshotSources sources = webhook::configmap_sources(r, *injector, mesh, defaults);
  auto snapshot = inject::build_snapshot(sources);
  if (!snapshot) {
    engines.errors[r] = where + ": " + snapshot.message();
    return;
  }
  engines.snapshots[r] = *snapshot;
  std::string key = inject::injector_fingerprint(sources);
  key += '|';
  key += std::to_string(static_cast<int>(sources.native_sidecars));
  for (const std::string& v : sources.node_kubelet_versions)
    key += '|' + v;
  engines.engine_keys[r] = std::move(key);
}

}  // namespace

Engines build_engines(const restart::ClusterView& view, const RestartsConfig& config) {
  Engines engines;
  for (const std::string& r : webhook_revisions(view))
    build_revision(view, config, r, engines);
  return engines;
}

Engines engines_from(const webhook::RevisionStore& revisions, const restart::ClusterView& view,
                     const RestartsConfig& config) {
  Engines engines;
  for (const std::string& r : webhook_revisions(view)) {
    std::shared_ptr<const webhook::RevisionConfig> published = revisions.get(r);
    if (published != nullptr && published->snapshot != nullptr) {
      engines.snapshots[r] = published->snapshot;
      engines.engine_keys[r] = "webhook#" + std::to_string(published->generation);
      continue;
    }
    // Not published (yet: the webhook's ConfigMapSource builds after the change that woke this
    // pass, or never: the ConfigMap does not build): built here the same way.
    build_revision(view, config, r, engines);
  }
  return engines;
}

std::shared_ptr<const Engines> RestartsReconciler::engines_for(const restart::ClusterView& view) {
  std::vector<restart::ObjectList::Item> sources;
  sources.reserve(view.config_maps.size() + view.webhook_configurations.size());
  for (std::size_t i = 0; i < view.config_maps.size(); ++i)
    sources.push_back(view.config_maps.item(i));
  for (std::size_t i = 0; i < view.webhook_configurations.size(); ++i)
    sources.push_back(view.webhook_configurations.item(i));
  // With the webhook's store: which configuration each revision has there now.
  std::string published;
  if (config_.revisions != nullptr)
    for (const std::string& r : webhook_revisions(view)) {
      auto c = config_.revisions->get(r);
      published += r + "=" + (c != nullptr ? std::to_string(c->generation) : "-") + ";";
    }
  if (engines_ != nullptr && sources == engine_sources_ &&
      view.kubelet_versions == engine_kubelets_ && published == engine_published_)
    return engines_;
  engines_ = std::make_shared<const Engines>(config_.revisions != nullptr
                                                 ? engines_from(*config_.revisions, view, config_)
                                                 : build_engines(view, config_));
  engine_sources_ = std::move(sources);
  engine_kubelets_ = view.kubelet_versions;
  engine_published_ = std::move(published);
  return engines_;
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
  it->second.used = pass_;
  return it->second.desired.get();
}

std::shared_ptr<const restart::Desired> DecisionCache::intern(restart::Desired d) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const std::string* s : {&d.revision, &d.proxy_image, &d.fingerprint, &d.why})
    h = (h ^ std::hash<std::string>{}(*s)) * 1099511628211ULL;
  h = (h ^ (d.inject ? 1u : 0u) ^ (d.fails ? 2u : 0u)) * 1099511628211ULL;
  auto [first, last] = values_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (auto v = it->second.lock(); v != nullptr && v->inject == d.inject && v->fails == d.fails &&
                                    v->revision == d.revision && v->proxy_image == d.proxy_image &&
                                    v->fingerprint == d.fingerprint && v->why == d.why)
      return v;
  auto v = std::make_shared<const restart::Desired>(std::move(d));
  values_.emplace(h, v);
  return v;
}

void DecisionCache::put(const Key& key, restart::Desired desired) {
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second = Entry{intern(std::move(desired)), pass_};
    return;
  }
  if (entries_.size() >= max_entries_) return;
  entries_.emplace(key, Entry{intern(std::move(desired)), pass_});
}

void DecisionCache::begin_pass() {
  std::erase_if(entries_, [&](const auto& e) { return pass_ - e.second.used >= keep_passes_; });
  std::erase_if(values_, [](const auto& v) { return v.second.expired(); });
  ++pass_;
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
    : RestartsReconciler(std::move(config), kube::client_writer(client, std::move(events)), client,
                         registry, std::move(now)) {}

RestartsReconciler::RestartsReconciler(RestartsConfig config, std::shared_ptr<kube::Writer> writer,
                                       std::shared_ptr<kube::Reader> gets, Now now)
    : RestartsReconciler(std::move(config), std::move(writer), std::shared_ptr<kube::Client>(),
                         nullptr, std::move(now)) {
  reader_ = std::move(gets);
}

RestartsReconciler::RestartsReconciler(RestartsConfig config, std::shared_ptr<kube::Writer> writer,
                                       std::shared_ptr<kube::Client> reads,
                                       metrics::Registry* registry, Now now)
    : client_(std::move(reads)),
      writer_(std::move(writer)),
      reader_(client_ != nullptr ? kube::client_reader(client_) : nullptr),
      config_(std::move(config)),
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

namespace {

// maxConcurrent and maxConcurrentPerNamespace: the restarts under way, cluster-wide and per
// namespace, and whether an entry may start now.
struct Slots {
  int running = 0;
  std::map<std::string, int> per_namespace;

  void take(const std::string& ns) {
    ++running;
    ++per_namespace[ns];
  }
  bool admits(const restart::PlanEntry& e) const {
    if (running >= e.policy.max_concurrent) return false;
    if (!e.policy.max_concurrent_per_namespace) return true;
    auto it = per_namespace.find(e.plan.ns);
    return (it == per_namespace.end() ? 0 : it->second) < *e.policy.max_concurrent_per_namespace;
  }
};

// A restart that failed; under failurePolicy Pause (the default) nothing more starts this pass.
void fail_entry(PassReport& report, const std::string& key, const restart::PlanEntry& e,
                const std::string& message) {
  report.failed.push_back({key, message});
  if (e.policy.failure_policy == restart::FailurePolicy::kPause && !report.paused) {
    report.paused = true;
    report.pause_reason = "restart of " + key + " failed (" + message +
                          "); failurePolicy Pause: no further restarts start";
  }
}

// Where a Rollout-strategy restart started earlier stands (pure). `w` is the workload, `pods`
// its pods by name. Kinds that do not roll on a template change (rolls_pod_by_pod) get one pod
// created before the restart deleted at a time, once every pod is Ready: `delete_pod` names it
// (only when `execute`).
struct FollowDecision {
  restart::RolloutStatus status;
  std::string delete_pod;
};
FollowDecision follow_rollout(const restart::PlanEntry& e, const rapidjson::Value& w,
                              const std::vector<const rapidjson::Value*>& pods, SystemTime now,
                              bool execute) {
  std::string restarted_at = api::string_at(
      w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation});
  SystemTime started = parse_rfc3339(restarted_at).value_or(now);
  FollowDecision d;
  if (!restart::rolls_pod_by_pod(w)) {
    d.status = restart::rollout_status(w, started, now, e.policy.rollout_timeout);
    // The rollout finished but the pods still do not match (e.g. the webhook was not
    // called): keep waiting until the timeout, then call it failed.
    if (d.status.state == restart::RolloutState::kComplete) {
      if (now - started >= e.policy.rollout_timeout)
        d.status = {restart::RolloutState::kFailed,
                    "rollout completed but the pods still do not match: " + e.plan.detail};
      else
        d.status = {restart::RolloutState::kProgressing, "waiting for the new pods to show up"};
    }
    return d;
  }
  bool all_ready = std::all_of(pods.begin(), pods.end(),
                               [](const rapidjson::Value* p) { return pod_ready(*p); });
  const rapidjson::Value* victim = nullptr;
  for (const rapidjson::Value* p : pods) {
    auto created = parse_rfc3339(std::string(api::field_string(*p, "/metadata/creationTimestamp")));
    if (created && *created < started && api::field(*p, "/metadata/deletionTimestamp") == nullptr) {
      victim = p;
      break;
    }
  }
  if (now - started >= e.policy.rollout_timeout) {
    d.status = {restart::RolloutState::kFailed,
                "pods were not all replaced and Ready within " +
                    std::to_string(e.policy.rollout_timeout.count()) + "s"};
  } else if (victim != nullptr && all_ready && execute) {
    d.delete_pod = std::string(api::field_string(*victim, "/metadata/name"));
    d.status = {restart::RolloutState::kProgressing, "deleted pod " + d.delete_pod};
  } else {
    d.status = {restart::RolloutState::kProgressing,
                victim == nullptr ? "waiting for replaced pods to become Ready"
                                  : "waiting for every pod to be Ready before the next one"};
  }
  return d;
}

// The merge patch that records (or, `remove`, removes) meshop.io/stale-since on a workload.
std::string stale_since_patch(const restart::PlanEntry& e, bool remove) {
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
  return api::to_json(patch);
}

}  // namespace

// What the steps of one pass share.
struct RestartsReconciler::PassState {
  explicit PassState(bool execute_, SystemTime now_) : execute(execute_), now(now_) {}
  const bool execute;
  const SystemTime now;
  restart::ClusterView view;
  std::shared_ptr<const Engines> engines;
  std::optional<OwnedIndex> owned;  // over `view`
  PassReport report;
  Slots slots;
  // Restarts this process started that the store does not show yet (unseen_restarts_).
  std::set<std::string> unseen;
};

kube::Task<api::Result<PassReport>> RestartsReconciler::pass(bool execute) {
  PassState st(execute, now_());
  api::Status observed = co_await observe(st);
  if (!observed) co_return observed.error();
  api::Status followed = co_await follow_rollouts(st);
  if (!followed) co_return followed.error();
  // 1b./1c. The health watch after every restart, then each IstioOperator's wave.
  watch_health(st.report, *st.owned,
               [&st](const std::string& key, const restart::PlanEntry& e,
                     const std::string& message) { fail_entry(st.report, key, e, message); });
  decide_waves(st.report, st.view, *st.owned, execute);
  api::Status evictions = co_await continue_evictions(st);
  if (!evictions) co_return evictions.error();
  api::Status recorded = co_await record_staleness(st);
  if (!recorded) co_return recorded.error();
  api::Status started = co_await start_admitted(st);
  if (!started) co_return started.error();
  api::Status reported = co_await report_results(st);
  if (!reported) co_return reported.error();
  st.owned.reset();
  st.report.engines = std::move(st.engines);
  st.report.view = std::make_shared<const restart::ClusterView>(std::move(st.view));
  co_return std::move(st.report);
}

kube::Task<api::Status> RestartsReconciler::observe(PassState& st) {
  const SystemTime now = st.now;
  api::Result<restart::ClusterView> loaded =
      api::Error{"restarts: nothing to read the cluster from"};
  if (config_.cache != nullptr)
    loaded = cluster_view_from(*config_.cache, config_);
  else if (client_ != nullptr)
    loaded = co_await load_cluster_view(client_, config_);
  if (!loaded) co_return loaded.error();
  st.view = std::move(*loaded);
  st.engines = engines_for(st.view);
  st.owned.emplace(st.view);
  PassReport& report = st.report;
  report.engine_errors = st.engines->errors;
  for (const auto& iop : st.view.istio_operators)
    report.istio_operators.push_back(source_of(iop));

  restart::ClusterPlanOptions plan_options;
  plan_options.namespace_filter = config_.namespace_filter;
  plan_options.control_plane_namespace = config_.control_plane_namespace;
  plan_options.default_istio_version = config_.default_istio_version;
  std::erase_if(evict_restarts_,
                [&](const auto& kv) { return now - kv.second.at > std::chrono::hours(24); });
  plan_options.last_restarts = evict_restarts_;
  // The plans of unchanged workloads are reused while the engines are the same. Only over
  // informer stores: lists give new objects every pass, and the memo would keep the previous
  // pass's alive for nothing.
  if (config_.cache != nullptr) plan_options.memo = &plans_;
  for (const auto& [revision, key] : st.engines->engine_keys)
    plan_options.desired_key += revision + "=" + key + ";";
  for (const auto& [revision, error] : st.engines->errors)
    plan_options.desired_key += revision + "!" + error + ";";
  decisions_.begin_pass();
  report.plan = restart::plan_cluster(st.view, st.engines->desired(&decisions_), now, plan_options);

  // Restarts this process started that the store does not show yet are in progress, whatever
  // the store's older copy of the workload says (unseen_restarts_).
  if (!unseen_restarts_.empty()) {
    std::set<std::string> planned;
    for (restart::PlanEntry& e : report.plan) {
      const std::string key = workload_key(e.plan);
      planned.insert(key);
      auto it = unseen_restarts_.find(key);
      if (it == unseen_restarts_.end()) continue;
      const rapidjson::Value* w = workload_of(e);
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
      st.unseen.insert(key);
    }
    std::erase_if(unseen_restarts_, [&](const auto& kv) { return !planned.count(kv.first); });
  }
  // Causes waiting (minInterval, or any other gate) are coalesced into the next restart.
  for (const restart::PlanEntry& e : report.plan) {
    if (e.action == Action::kNone) {
      if (!deferred_causes_.empty()) deferred_causes_.erase(workload_key(e.plan));
      continue;
    }
    if (e.action != Action::kDeferred || e.cause.empty()) continue;
    // An Evict wave between its first eviction and the replacement is its own cause, not a
    // new one (evict_running keeps it going).
    if (auto it = evict_restarts_.find(workload_key(e.plan));
        it != evict_restarts_.end() && it->second.cause == e.cause)
      continue;
    auto& causes = deferred_causes_[workload_key(e.plan)];
    if (std::find(causes.begin(), causes.end(), e.cause) == causes.end()) causes.push_back(e.cause);
  }
  co_return api::ok_status();
}

std::string RestartsReconciler::coalesced(const restart::PlanEntry& e) {
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
}

kube::Task<api::Status> RestartsReconciler::follow_rollouts(PassState& st) {
  const SystemTime now = st.now;
  PassReport& report = st.report;
  std::erase_if(evicted_at_,
                [&](const auto& kv) { return now - kv.second > std::chrono::hours(1); });
  for (restart::PlanEntry& e : report.plan) {
    if (e.policy.strategy == restart::Strategy::kEvict) {
      if (e.action == Action::kNone && evicted_at_.empty()) continue;
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
          fail_entry(report, key, e, e.evict.failed);
          continue;
        }
        report.progressing.push_back({key, e.evict.waiting});
        st.slots.take(e.plan.ns);
        continue;
      }
      if (!evict_running(e, now)) continue;
      e.action = Action::kInProgress;
      if (!e.evict.failed.empty()) {
        fail_entry(report, key, e, e.evict.failed);
        continue;
      }
      report.progressing.push_back(
          {key, e.evict.next.empty() ? e.evict.waiting : "evicting pod " + e.evict.next});
      st.slots.take(e.plan.ns);
      continue;
    }
    if (e.action != Action::kInProgress) continue;
    const rapidjson::Value* w = workload_of(e);
    if (w == nullptr) continue;
    std::string key = workload_key(e.plan);
    if (st.unseen.count(key)) {  // the store's copy predates the restart: nothing to judge by
      report.progressing.push_back({key, e.why});
      st.slots.take(e.plan.ns);
      continue;
    }
    FollowDecision d =
        follow_rollout(e, *w,
                       restart::rolls_pod_by_pod(*w) ? st.owned->pods_of(*w)
                                                     : std::vector<const rapidjson::Value*>{},
                       now, st.execute);
    if (!d.delete_pod.empty()) {
      auto deleted = co_await writer_->remove(kube::resources::kPods, e.plan.ns, d.delete_pod);
      if (!deleted && !deleted.error().is(kube::ErrorKind::kNotFound))
        co_return api::with_context("deleting pod " + e.plan.ns + "/" + d.delete_pod,
                                    deleted.error());
      report.pods_deleted.push_back(e.plan.ns + "/" + d.delete_pod);
    }
    if (d.status.state == restart::RolloutState::kFailed) {
      fail_entry(report, key, e, d.status.message);
    } else {
      report.progressing.push_back({key, d.status.message});
      st.slots.take(e.plan.ns);
    }
  }
  co_return api::ok_status();
}

kube::Task<api::Status> RestartsReconciler::continue_evictions(PassState& st) {
  PassReport& report = st.report;
  // Waves under way: the next pod goes once the previous replacement is Ready (evict_step), and
  // none while a failure pauses the restarts.
  if (st.execute && !report.paused) {
    for (restart::PlanEntry& e : report.plan)
      if (e.policy.strategy == restart::Strategy::kEvict && e.action == Action::kInProgress &&
          !e.evict.next.empty()) {
        auto s = co_await evict_next(e, false, report);
        if (!s) co_return s.error();
      }
  }
  // A pass that executes nothing asks the apiserver whether each next eviction would go.
  if (!st.execute) {
    for (restart::PlanEntry& e : report.plan) {
      bool would = e.action == Action::kRestart || e.action == Action::kInProgress ||
                   e.action == Action::kWouldRestart;
      if (e.policy.strategy == restart::Strategy::kEvict && would && !e.evict.next.empty()) {
        auto s = co_await evict_next(e, true, report);
        if (!s) co_return s.error();
      }
    }
  }
  co_return api::ok_status();
}

kube::Task<api::Status> RestartsReconciler::record_staleness(PassState& st) {
  // Deadlines (spec.restarts.maxStaleness): the first pass that sees a stale cause records when,
  // on the workload's metadata (meshop.io/stale-since; the pod template is not touched), so the
  // deadline survives meshop's restarts and leader changes. Written once per cause by this
  // process, whatever a lagging store shows meanwhile; removed once the workload is up to date
  // (a record left behind would date the next episode of the same cause).
  if (!st.execute) co_return api::ok_status();
  for (const restart::PlanEntry& e : st.report.plan) {
    const bool remove = e.stale_since_left;
    if (!remove && e.plan.verdict == restart::Verdict::kUpToDate) {
      if (!stale_since_written_.empty())
        stale_since_written_.erase(workload_key(e.plan));  // no record left: forget it
      continue;
    }
    if (!remove && (e.plan.verdict != restart::Verdict::kStale || !e.policy.max_staleness ||
                    e.stale_since_recorded || e.cause.empty()))
      continue;
    const std::string key = workload_key(e.plan);
    // The cause written, or "" for a removal sent that the store does not show yet.
    const std::string record = remove ? std::string() : e.cause;
    if (auto it = stale_since_written_.find(key);
        it != stale_since_written_.end() && it->second == record)
      continue;
    const kube::ResourceType* type = resource_of(e.plan.kind);
    if (type == nullptr) continue;
    auto r = co_await writer_->patch(*type, e.plan.ns, e.plan.name, kube::PatchType::kMerge,
                                     stale_since_patch(e, remove));
    if (!r && !r.error().is(kube::ErrorKind::kNotFound))
      co_return api::with_context("recording when " + key + " became stale", r.error());
    stale_since_written_[key] = record;
  }
  co_return api::ok_status();
}

kube::Task<api::Status> RestartsReconciler::start_admitted(PassState& st) {
  // 2./3. Start the admitted restarts, unless a failure paused them.
  PassReport& report = st.report;
  if (!st.execute || report.paused) co_return api::ok_status();
  for (restart::PlanEntry& e : report.plan) {
    bool wanted = e.action == Action::kRestart ||
                  (e.action == Action::kWouldRestart && config_.run_dry_run_entries);
    if (!wanted || !st.slots.admits(e)) continue;
    const std::string key = workload_key(e.plan);
    if (e.policy.strategy == restart::Strategy::kEvict) {
      if (e.evict.next.empty()) continue;
      std::size_t evicted = report.pods_evicted.size();
      auto s = co_await evict_next(e, false, report);
      if (!s) co_return s.error();
      if (report.pods_evicted.size() == evicted) continue;  // refused: Deferred, not started
      report.started.push_back(key);
      evict_restarts_[key] = {st.now, e.cause};
      st.slots.take(e.plan.ns);
      if (restarts_total_ != nullptr)
        restarts_total_->with({std::string(restart::reason_name(*e.plan.reason)), "started"})
            .Increment();
      std::string also = coalesced(e);
      if (const rapidjson::Value* w = workload_of(e); w != nullptr)
        writer_->event(
            kube::reference_to(*w), kube::EventType::kNormal, "Restarted", "Restart",
            e.plan.detail + "; restarting by eviction, pod by pod (" + e.cause + ")" + also);
      continue;
    }
    const kube::ResourceType* type = resource_of(e.plan.kind);
    if (type == nullptr) continue;
    // Only the copy the plan judged is restarted: a store lagging behind another writer
    // (a previous leader's restart it has not shown yet) gets a 409, not a second restart.
    const rapidjson::Value* planned = workload_of(e);
    std::string patch = restart::restart_patch(
        e.cause, st.now,
        planned != nullptr ? api::string_at(*planned, {"metadata", "resourceVersion"}) : "");
    auto patched = co_await writer_->patch(*type, e.plan.ns, e.plan.name,
                                           kube::PatchType::kStrategicMerge, patch);
    if (!patched && patched.error().is(kube::ErrorKind::kConflict)) {
      log::info("workload changed since the plan read it; not restarted, planned again next pass",
                {{"workload", key}, {"cause", e.cause}});
      continue;
    }
    if (!patched) co_return api::with_context("restarting " + key, patched.error());
    unseen_restarts_[key] = {e.cause, api::string_at(*patched, {"metadata", "uid"}),
                             generation_of(*patched), st.now};
    report.started.push_back(key);
    st.slots.take(e.plan.ns);
    log::info("restarted workload",
              {{"workload", key}, {"cause", e.cause}, {"detail", e.plan.detail}});
    if (restarts_total_ != nullptr)
      restarts_total_->with({std::string(restart::reason_name(*e.plan.reason)), "started"})
          .Increment();
    std::string also = coalesced(e);
    writer_->event(kube::reference_to(*patched), kube::EventType::kNormal, "Restarted", "Restart",
                   e.plan.detail + "; restarted (" + e.cause + ")" + also);
  }
  co_return api::ok_status();
}

kube::Task<api::Status> RestartsReconciler::report_results(PassState& st) {
  // 4. Report: metrics; when executing, Events, status.restarts and the waves' clean-up.
  const PassReport& report = st.report;
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
  if (!st.execute) co_return api::ok_status();
  record_transitions(report);
  auto status = co_await report_status(report, st.view);
  if (!status) co_return status.error();
  auto waves = co_await apply_waves(report, st.view);
  if (!waves) co_return waves.error();
  co_return api::ok_status();
}

void RestartsReconciler::watch_health(
    PassReport& report, OwnedIndex& owned,
    const std::function<void(const std::string&, const restart::PlanEntry&, const std::string&)>&
        fail) {
  const SystemTime now = now_();
  std::erase_if(completed_at_,
                [&](const auto& kv) { return now - kv.second > std::chrono::hours(2); });
  std::set<std::string> failed;
  for (const RolloutReport& f : report.failed)
    failed.insert(f.key);
  for (restart::PlanEntry& e : report.plan) {
    // Only restarts rolling, or completed and soaking, are watched.
    if (e.action != Action::kInProgress && (e.action != Action::kNone || completed_at_.empty()))
      continue;
    const std::string key = workload_key(e.plan);
    // (A restart the store does not show yet has no new pods to judge.)
    if (failed.count(key) || unseen_restarts_.count(key)) continue;
    bool rolling = e.action == Action::kInProgress;
    auto done = completed_at_.find(key);
    bool soaking = e.action == Action::kNone && done != completed_at_.end() &&
                   now - done->second < soak_of(e.policy);
    if (!rolling && !soaking) continue;
    const rapidjson::Value* w = workload_of(e);
    if (w == nullptr) continue;
    std::optional<SystemTime> since;
    if (e.policy.strategy == restart::Strategy::kEvict) {
      if (auto it = evict_restarts_.find(key); it != evict_restarts_.end()) since = it->second.at;
    } else {
      since = parse_rfc3339(api::string_at(
          *w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation}));
    }
    restart::Health h =
        restart::workload_health(*w, owned.workload_pods(*w), e.plan.stale_pods, since, soaking);
    if (!h.regressed) continue;
    std::erase_if(report.progressing, [&](const RolloutReport& r) { return r.key == key; });
    fail(key, e, "its new pods regressed: " + h.what);
  }
}

void RestartsReconciler::decide_waves(PassReport& report, const restart::ClusterView& view,
                                      OwnedIndex& owned, bool execute) {
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
        const rapidjson::Value* w = workload_of(e);
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
      const rapidjson::Value* w = workload_of(*e->second);
      if (w == nullptr) continue;
      std::optional<SystemTime> since;
      if (e->second->policy.strategy == restart::Strategy::kEvict) {
        if (auto it = evict_restarts_.find(key); it != evict_restarts_.end()) since = it->second.at;
      } else {
        since = parse_rfc3339(api::string_at(
            *w, {"spec", "template", "metadata", "annotations", restart::kRestartedAtAnnotation}));
      }
      m->second.health =
          restart::workload_health(*w, owned.workload_pods(*w), e->second->plan.stale_pods, since,
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
      writer_->event(
          iop_reference(iop), kube::EventType::kWarning, "RestartsHalted", "Restart",
          d.next.message + "; nothing more starts until `meshop restart resume` or a spec change");
      if (restarts_total_ != nullptr) {
        // The stale reason the canary was restarted for (its cause record, once rolled out).
        std::string reason;
        for (const restart::PlanEntry& e : report.plan) {
          if (workload_key(e.plan) != d.next.halted_workload) continue;
          if (e.plan.reason) {
            reason = restart::reason_name(*e.plan.reason);
          } else if (const rapidjson::Value* w = workload_of(e)) {
            if (auto last = restart::last_restart_of(*w))
              reason = last->cause.substr(0, last->cause.find('/'));
          }
        }
        restarts_total_->with({reason, "halted"}).Increment();
      }
    }
    if (d.resumed_now) {
      log::info("restart wave resumed", {{"istio_operator", source}, {"by", d.resumed_by}});
      writer_->event(iop_reference(iop), kube::EventType::kNormal, "RestartsResumed", "Restart",
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
      if (!pause.empty())
        writer_->event(iop_reference(iop), kube::EventType::kNormal, "RestartsPaused", "Restart",
                       "restarts paused by hand (" + std::string(restart::kPauseAnnotation) + ": " +
                           pause + ")");
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
  const kube::ResourceType* iop_type = &istio_operator_resource();
  const std::string body = remove_resume_patch();
  for (const auto& [source, value] : resumed) {
    auto slash = source.find('/');
    auto r = co_await writer_->patch(*iop_type, source.substr(0, slash), source.substr(slash + 1),
                                     kube::PatchType::kMerge, body);
    if (!r && !r.error().is(kube::ErrorKind::kNotFound)) {
      resumed_.erase(source);
      co_return api::with_context("removing the resume annotation of IstioOperator " + source,
                                  r.error());
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

kube::Task<api::Status> RestartsReconciler::evict_next(restart::PlanEntry& e, bool dry_run,
                                                       PassReport& report) {
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
  auto evicted = co_await writer_->evict(e.plan.ns, pod, dry_run);
  if (evicted) {
    if (dry_run) co_return api::ok_status();
    evict_backoff_.erase(key);
    evicted_at_[key] = now;
    report.pods_evicted.push_back(e.plan.ns + "/" + pod);
    log::info("evicted pod", {{"workload", key}, {"pod", pod}, {"cause", e.cause}});
    if (const rapidjson::Value* w = workload_of(e); w != nullptr)
      writer_->event(kube::reference_to(*w), kube::EventType::kNormal, "Evicted", "Restart",
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
  co_return api::with_context("evicting pod " + e.plan.ns + "/" + pod, err);
}

void RestartsReconciler::record_transitions(const PassReport& report) {
  auto note = [&](const std::string& key, const std::string& state, const rapidjson::Value* object,
                  kube::EventType type, const char* reason, const std::string& message) {
    auto& last = last_state_[key];
    if (last == state) return;
    last = state;
    if (object != nullptr)
      writer_->event(kube::reference_to(*object), type, reason, "Restart", message);
  };
  for (const restart::PlanEntry& e : report.plan) {
    const rapidjson::Value* w = workload_of(e);
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
        note(f.key + "#failed", f.message, workload_of(e), kube::EventType::kWarning,
             "RestartFailed", f.message);
  }
}

kube::Task<api::Status> RestartsReconciler::report_status(const PassReport& report,
                                                          const restart::ClusterView& view) {
  // Computed (restarts_status.hpp), then one write per IstioOperator: status.restarts when it
  // changed since this process wrote it, with the conditions the object does not show merged
  // into its list, guarded by its resourceVersion (a 409 reads it again: conditions.hpp).
  std::map<std::string, const rapidjson::Value*> objects;
  for (const auto& iop : view.istio_operators)
    objects[source_of(iop)] = &iop;
  const std::string now = restart::rfc3339(now_());
  const std::map<std::string, RestartsSummary> summaries = summarize_restarts(report);
  for (const auto& per_iop : summaries) {
    const std::string& source = per_iop.first;
    const RestartsSummary& summary = per_iop.second;
    rapidjson::Document restarts_doc;
    rapidjson::Value restarts =
        restarts_status(summary, report, source, restarts_doc.GetAllocator());
    std::string& last_written = last_status_[source];
    // An IstioOperator the view does not hold (never, in practice): status.restarts alone.
    rapidjson::Document named = iop_named(source);
    auto found = objects.find(source);
    const rapidjson::Value& iop = found != objects.end() ? *found->second : named;
    const bool in_view = found != objects.end();
    StatusPatch body = [&](const rapidjson::Value& object) -> std::optional<std::string> {
      std::vector<Condition> wanted;
      if (in_view) {
        if (auto c = halted_condition(report, source, &object)) wanted.push_back(std::move(*c));
        if (auto c = overdue_condition(summary, &object)) wanted.push_back(std::move(*c));
      }
      return restarts_status_patch(object, restarts, wanted, last_written, now);
    };
    auto r = co_await patch_status(*writer_, reader_.get(), istio_operator_resource(), iop, body);
    if (!r && !r.error().is(kube::ErrorKind::kNotFound))
      co_return api::with_context("writing status.restarts of IstioOperator " + source, r.error());
    if (!r || *r) last_written = api::to_json(restarts);
  }
  co_return api::ok_status();
}

kube::Task<runtime::Action> RestartsReconciler::reconcile(const std::string& /*key*/) {
  auto report = co_await pass(true);
  if (!report) co_return error_action(report.error());
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
  runtime::Store& pods = cache.store(watches::pods());
  observed->pods = &pods;
  observed->pod_index = std::make_shared<PodIndex>(pods);
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
