#include "operator/restart/cluster_plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "api/json.hpp"
#include "api/record.hpp"

namespace meshop::restart {
namespace {

struct RevisionPolicy {
  std::optional<Policy> policy;  // nullopt: the IstioOperator's spec.restarts is invalid
  std::string error;
  std::string source = "defaults";
  std::string status;    // the IstioOperator's status.status ("" when none)
  std::string version;   // the Istio version it installs ("" when unknown): install_version
  std::string approved;  // its meshop.io/restart-approved annotation
};

// The Istio version an IstioOperator installs, as the install pipeline picks its chart set:
// spec.version; else spec.installPackagePath, whose version is unknown here (a release's
// manifests/ of any version) unless it names a bundled set ("bundled:1.30"); else the bundled
// default.
std::string install_version(const rapidjson::Value& iop, const std::string& default_version) {
  std::string version = api::string_at(iop, {"spec", "version"});
  if (!version.empty()) return version;
  std::string package = api::string_at(iop, {"spec", "installPackagePath"});
  if (package.empty()) return default_version;
  constexpr std::string_view kBundled = "bundled:";
  return package.starts_with(kBundled) ? package.substr(kBundled.size()) : std::string();
}

std::string revision_of_iop(const rapidjson::Value& iop) {
  std::string r = api::string_at(iop, {"spec", "revision"});
  return r.empty() ? "default" : r;
}

// metadata of a whole object, or of a record's base (api/record.hpp: without its own fields).
const rapidjson::Value* metadata_of(const rapidjson::Value& o) {
  return api::find_member(api::is_record(o) ? o[api::kRecordBase] : o, "metadata");
}

const rapidjson::Value* controller_owner(const rapidjson::Value& o) {
  const rapidjson::Value* meta = metadata_of(o);
  const rapidjson::Value* owners =
      meta != nullptr ? api::find_member(*meta, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->IsArray()) return nullptr;
  for (const rapidjson::Value& ref : owners->GetArray()) {
    const rapidjson::Value* c = api::find_member(ref, "controller");
    if (c != nullptr && c->IsBool() && c->GetBool()) return &ref;
  }
  return nullptr;
}

std::string_view member_string(const rapidjson::Value& o, std::string_view name) {
  const rapidjson::Value* v = api::find_member(o, name);
  return v != nullptr && v->IsString() ? api::string_view_of(*v) : std::string_view();
}

std::string_view runtime_namespace(const rapidjson::Value& o) {
  const rapidjson::Value* meta = metadata_of(o);
  return meta != nullptr ? member_string(*meta, "namespace") : std::string_view();
}

std::string_view uid_of(const rapidjson::Value& o) {
  const rapidjson::Value* meta = metadata_of(o);
  return meta != nullptr ? member_string(*meta, "uid") : std::string_view();
}

// metadata.name without a copy ("" when absent).
std::string_view name_of(const rapidjson::Value& o) {
  return api::field_string(o, "/metadata/name");
}

std::string key_of(std::string_view kind, std::string_view ns, std::string_view name) {
  return std::string(kind) + "/" + std::string(ns) + "/" + std::string(name);
}

// What an Evict entry does next, for people.
std::string evict_progress(const EvictStep& step) {
  std::string left = std::to_string(step.stale_left) + " of " + std::to_string(step.desired) +
                     " pods to replace by eviction";
  if (!step.failed.empty()) return left + "; " + step.failed;
  if (step.next.empty()) return left + "; " + step.waiting;
  return left + "; evicting pod " + step.next;
}

}  // namespace

std::string_view controller_uid(const rapidjson::Value& object) {
  const rapidjson::Value* ref = controller_owner(object);
  return ref != nullptr ? member_string(*ref, "uid") : std::string_view();
}

Owners::Owners(const ObjectList& workloads) {
  by_uid_.reserve(workloads.size());
  for (const auto& w : workloads)
    by_uid_[uid_of(w)] = &w;
}

const rapidjson::Value* Owners::find(std::string_view uid) const {
  auto it = by_uid_.find(uid);
  return it != by_uid_.end() ? it->second : nullptr;
}

const rapidjson::Value* Owners::top_of(const rapidjson::Value& o) const {
  const rapidjson::Value* cur = &o;
  for (int depth = 0; depth < 3; ++depth) {
    const rapidjson::Value* ref = controller_owner(*cur);
    if (ref == nullptr) return cur;
    auto it = by_uid_.find(member_string(*ref, "uid"));
    if (it == by_uid_.end()) return cur == &o ? nullptr : cur;  // owner not in the view
    cur = it->second;
  }
  return cur;
}

PodGroups group_pods(const ObjectList& pods) {
  std::unordered_map<std::string_view, std::shared_ptr<PodGroup>> by_uid;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    auto& group = by_uid[controller_uid(pods[i])];
    if (group == nullptr) group = std::make_shared<PodGroup>();
    group->pods.push_back(pods.item(i));
  }
  PodGroups out;
  out.reserve(by_uid.size());
  for (auto& [uid, group] : by_uid)
    out.emplace(std::string(uid), std::move(group));
  return out;
}

void ObjectList::append(std::vector<Item> objects) {
  if (items_.empty()) {
    items_ = std::move(objects);
    return;
  }
  items_.reserve(items_.size() + objects.size());
  for (Item& o : objects)
    items_.push_back(std::move(o));
}

rapidjson::Document& ObjectList::edit(std::size_t i) {
  auto copy = std::make_shared<rapidjson::Document>();
  copy->CopyFrom(*items_[i], copy->GetAllocator());
  rapidjson::Document& out = *copy;
  items_[i] = std::move(copy);
  return out;
}

std::string_view action_name(Action a) {
  switch (a) {
    case Action::kNone:
      return "None";
    case Action::kRestart:
      return "Restart";
    case Action::kWouldRestart:
      return "WouldRestart";
    case Action::kDeferred:
      return "Deferred";
    case Action::kSkipped:
      return "Skipped";
    case Action::kInProgress:
      return "InProgress";
    case Action::kManual:
      return "ManualRestartNeeded";
    case Action::kBlocked:
      return "Blocked";
    case Action::kApprovalNeeded:
      return "ApprovalNeeded";
    case Action::kHalted:
      return "Halted";
    case Action::kPaused:
      return "Paused";
  }
  return "Unknown";
}

namespace {
void hash_text(std::uint64_t& h, std::string_view s) {
  h = (h ^ std::hash<std::string_view>{}(s)) * 1099511628211ULL;
}
}  // namespace

std::shared_ptr<const WorkloadPlan> PlanMemo::intern(WorkloadPlan plan) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const std::string* s : {&plan.kind, &plan.ns, &plan.name, &plan.current_revision,
                               &plan.target_revision, &plan.detail, &plan.current_proxy_image,
                               &plan.target_proxy_image, &plan.target_fingerprint})
    hash_text(h, *s);
  for (const std::string& p : plan.stale_pods)
    hash_text(h, p);
  h = (h ^ static_cast<std::uint64_t>(plan.verdict)) * 1099511628211ULL;
  h = (h ^ (plan.reason ? 1 + static_cast<std::uint64_t>(*plan.reason) : 0)) * 1099511628211ULL;
  auto same = [&](const WorkloadPlan& o) {
    return o.kind == plan.kind && o.ns == plan.ns && o.name == plan.name &&
           o.verdict == plan.verdict && o.reason == plan.reason &&
           o.current_revision == plan.current_revision &&
           o.target_revision == plan.target_revision && o.detail == plan.detail &&
           o.current_proxy_image == plan.current_proxy_image &&
           o.target_proxy_image == plan.target_proxy_image &&
           o.target_fingerprint == plan.target_fingerprint && o.stale_pods == plan.stale_pods;
  };
  auto [first, last] = plans_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (auto kept = it->second.lock(); kept != nullptr && same(*kept)) return kept;
  auto kept = std::make_shared<const WorkloadPlan>(std::move(plan));
  plans_.emplace(h, kept);
  return kept;
}

std::vector<PlanEntry> plan_cluster(const ClusterView& view, const DesiredFn& desired,
                                    SystemTime now, const ClusterPlanOptions& options) {
  std::vector<PlanEntry> out;

  // Webhook routes.
  rapidjson::Document configs(rapidjson::kArrayType);
  for (const auto& c : view.webhook_configurations) {
    rapidjson::Value copy;
    copy.CopyFrom(c, configs.GetAllocator());
    configs.PushBack(copy, configs.GetAllocator());
  }
  auto entries = injector_entries(configs);

  // Namespaces.
  std::unordered_map<std::string_view, const ObjectList::Item*> namespaces;
  for (std::size_t i = 0; i < view.namespaces.size(); ++i)
    namespaces[name_of(view.namespaces[i])] = &view.namespaces.item(i);

  // Policies per revision.
  std::map<std::string, RevisionPolicy> policies;
  for (const auto& iop : view.istio_operators) {
    RevisionPolicy rp;
    rp.source = api::string_at(iop, {"metadata", "namespace"}) + "/" +
                api::string_at(iop, {"metadata", "name"});
    rp.status = api::string_at(iop, {"status", "status"});
    rp.version = install_version(iop, options.default_istio_version);
    if (const rapidjson::Value* ann = api::find(iop, "/metadata/annotations"))
      rp.approved = api::string_at(*ann, {kRestartApprovedAnnotation});
    auto p = parse_policy(api::find(iop, "/spec/restarts"));
    if (p)
      rp.policy = *p;
    else
      rp.error = "IstioOperator " + rp.source + ": " + p.message();
    policies[revision_of_iop(iop)] = std::move(rp);
  }
  RevisionPolicy default_policy;
  default_policy.policy = Policy();
  auto policy_for = [&](const std::string& revision) -> const RevisionPolicy& {
    auto it = policies.find(revision);
    return it != policies.end() ? it->second : default_policy;
  };
  auto control_plane_healthy = [&](const std::string& revision, std::string& why) {
    auto it = policies.find(revision);
    if (it != policies.end() && !it->second.status.empty()) {
      if (it->second.status == "HEALTHY") return true;
      why = "the control plane of revision " + revision + " is " + it->second.status +
            " (IstioOperator " + it->second.source + ")";
      return false;
    }
    std::string name = revision == "default" ? "istiod" : "istiod-" + revision;
    for (const auto& d : view.control_plane_deployments) {
      if (api::string_at(d, {"metadata", "name"}) != name ||
          api::string_at(d, {"metadata", "namespace"}) != options.control_plane_namespace)
        continue;
      const rapidjson::Value* available = api::find(d, "/status/availableReplicas");
      if (available != nullptr && available->IsInt() && available->GetInt() > 0) return true;
      why = "Deployment " + options.control_plane_namespace + "/" + name +
            " has no available replica";
      return false;
    }
    why = "no control plane found for revision " + revision;
    return false;
  };

  // Workloads, and which pods belong to which (pod → ReplicaSet → Deployment, pod → Job →
  // CronJob, pod → StatefulSet/DaemonSet/ReplicationController, or the pod itself): the pods
  // grouped by their controller (the view's groups, else grouped here), each group then by the
  // top of its controller's chain.
  using Item = ObjectList::Item;
  using Group = std::shared_ptr<const PodGroup>;
  using Target = PlanMemo::Target;
  std::shared_ptr<const PodGroups> groups = view.pod_groups;
  PlanMemo* memo = options.desired_key.empty() ? nullptr : options.memo;
  bool same_layout = memo != nullptr && groups != nullptr && memo->layout_groups_ == groups &&
                     memo->layout_workloads_.size() == view.workloads.size();
  for (std::size_t i = 0; same_layout && i < view.workloads.size(); ++i)
    same_layout = memo->layout_workloads_[i] == view.workloads.item(i);
  if (groups == nullptr) {
    PodGroups fresh = group_pods(view.pods);
    // With a memo, a group of the same pods as in the previous pass is that pass's group (the
    // memo's test of "unchanged" is the group's identity).
    if (memo != nullptr) {
      for (auto& [uid, group] : fresh) {
        auto it = memo->groups_.find(uid);
        if (it != memo->groups_.end() && it->second->pods.size() == group->pods.size() &&
            std::equal(group->pods.begin(), group->pods.end(), it->second->pods.begin()))
          group = it->second;
      }
      memo->groups_ = fresh;
    }
    groups = std::make_shared<const PodGroups>(std::move(fresh));
  }
  std::vector<Target> fresh_layout;
  if (!same_layout) {
    const Owners owners(view.workloads);
    std::unordered_map<const rapidjson::Value*, std::size_t> index;
    for (std::size_t i = 0; i < view.workloads.size(); ++i)
      if (controller_owner(view.workloads[i]) == nullptr) {
        const rapidjson::Value& w = view.workloads[i];
        index[&w] = fresh_layout.size();
        Target t;
        t.ns = runtime_namespace(w);
        t.kind = member_string(w, "kind");
        t.name = name_of(w);
        t.workload = i;
        fresh_layout.push_back(std::move(t));
      }
    for (const auto& [uid, group] : *groups) {
      if (uid.empty()) {  // bare pods: each its own workload
        for (const Item& p : group->pods) {
          Target t;
          t.ns = runtime_namespace(*p);
          t.kind = member_string(*p, "kind");
          t.name = name_of(*p);
          t.pod = &p;
          fresh_layout.push_back(std::move(t));
        }
        continue;
      }
      const rapidjson::Value* owner = owners.find(uid);
      if (owner == nullptr) continue;  // owned by something we do not plan (a custom resource)
      if (auto it = index.find(owners.top_of(*owner)); it != index.end())
        fresh_layout[it->second].groups.push_back(&group);
    }
    // In the plan's order (namespace, kind, name): sorting the targets is cheaper than sorting
    // the entries.
    std::sort(fresh_layout.begin(), fresh_layout.end(), [](const Target& a, const Target& b) {
      return std::tie(a.ns, a.kind, a.name) < std::tie(b.ns, b.kind, b.name);
    });
    for (Target& t : fresh_layout)
      std::sort(t.groups.begin(), t.groups.end(),
                [](const Group* a, const Group* b) { return a->get() < b->get(); });
    if (memo != nullptr && view.pod_groups != nullptr) {
      memo->layout_ = std::move(fresh_layout);
      memo->layout_.shrink_to_fit();  // kept until the workloads change: not the growth's slack
      memo->layout_groups_ = view.pod_groups;
      memo->layout_workloads_.clear();
      for (std::size_t i = 0; i < view.workloads.size(); ++i)
        memo->layout_workloads_.push_back(view.workloads.item(i));
      same_layout = true;
    }
  }
  const std::vector<Target>& order = same_layout ? memo->layout_ : fresh_layout;

  // The memo of earlier passes' verdicts: usable for the same engines and webhook routes.
  if (memo != nullptr) {
    ++memo->pass_;
    memo->hits_ = memo->misses_ = 0;
    bool same_routes = memo->desired_key_ == options.desired_key &&
                       memo->webhooks_.size() == view.webhook_configurations.size();
    for (std::size_t i = 0; same_routes && i < view.webhook_configurations.size(); ++i)
      same_routes = memo->webhooks_[i] == view.webhook_configurations.item(i);
    if (!same_routes) {
      memo->entries_.clear();
      memo->desired_key_ = options.desired_key;
      memo->webhooks_.clear();
      for (std::size_t i = 0; i < view.webhook_configurations.size(); ++i)
        memo->webhooks_.push_back(view.webhook_configurations.item(i));
    }
  }
  auto by_name = [](const rapidjson::Value* a, const rapidjson::Value* b) {
    return name_of(*a) < name_of(*b);
  };

  // minInterval: the later of the template's record and the caller's memory.
  auto last_restart = [&](const rapidjson::Value& w, const std::string& kind,
                          const std::string& ns) -> std::optional<LastRestart> {
    std::optional<LastRestart> last = last_restart_of(w);
    auto it = options.last_restarts.find(key_of(kind, ns, name_of(w)));
    if (it != options.last_restarts.end() && (!last || it->second.at > last->at)) last = it->second;
    return last;
  };

  out.reserve(order.size());
  for (const Target& target : order) {
    const Item* item = target.pod != nullptr ? target.pod : &view.workloads.item(target.workload);
    const rapidjson::Value* w = item->get();
    if (!options.namespace_filter.empty() && target.ns != options.namespace_filter) continue;
    const std::string ns(target.ns);
    const std::string kind = target.kind.empty() ? "Pod" : std::string(target.kind);
    const ObjectList::Item* ns_item = nullptr;
    if (auto it = namespaces.find(target.ns); it != namespaces.end()) ns_item = it->second;
    const rapidjson::Value* ns_object = ns_item != nullptr ? ns_item->get() : nullptr;
    const rapidjson::Value* ns_labels = nullptr;
    if (ns_object != nullptr)
      if (const rapidjson::Value* meta = api::find_member(*ns_object, "metadata"))
        ns_labels = api::find_member(*meta, "labels");

    PlanEntry e;
    e.object = *item;
    if (!entries) {
      e.plan.kind = kind;
      e.plan.ns = ns;
      e.plan.name = api::string_at(*w, {"metadata", "name"});
      e.action = Action::kBlocked;
      e.why = entries.message();
      out.push_back(std::move(e));
      continue;
    }
    // Its pod groups, by address (the memo's comparison), and its pods by name when planned:
    // the first differing pod names the reason, whatever order the view has (a LIST answers in
    // name order, a store in none).
    const std::vector<const Group*>& own = target.groups;  // by address
    const bool bare = kind == "Pod";
    std::vector<const rapidjson::Value*> pods;
    bool pods_named = false;
    auto named_pods = [&]() -> const std::vector<const rapidjson::Value*>& {
      if (!pods_named) {
        pods_named = true;
        if (bare) pods.push_back(w);
        for (const Group* g : own)
          for (const Item& p : (*g)->pods)
            pods.push_back(p.get());
        std::sort(pods.begin(), pods.end(), by_name);
      }
      return pods;
    };
    PlanMemo::Entry* known = nullptr;
    if (memo != nullptr) {
      auto it = memo->entries_.find(w);
      if (it != memo->entries_.end() && it->second.workload.get() == w &&
          it->second.ns_object.get() == ns_object && it->second.groups.size() == own.size() &&
          std::equal(own.begin(), own.end(), it->second.groups.begin(),
                     [](const Group* a, const Group& b) { return a->get() == b.get(); })) {
        known = &it->second;
        ++memo->hits_;
      } else {
        ++memo->misses_;
        PlanMemo::Entry fresh;
        fresh.workload = *item;
        if (ns_item != nullptr) fresh.ns_object = *ns_item;
        fresh.groups.reserve(own.size());
        for (const Group* g : own)
          fresh.groups.push_back(*g);
        if (it != memo->entries_.end()) memo->entries_.erase(it);
        known = &memo->entries_.emplace(w, std::move(fresh)).first->second;
      }
      known->pass = memo->pass_;
    }
    auto plan_with = [&](const PlanOptions& po) {
      std::shared_ptr<const WorkloadPlan>* slot = nullptr;
      if (known != nullptr)
        slot = po.include_template_changes ? &known->with_templates : &known->plain;
      if (slot != nullptr && *slot) {
        WorkloadPlan plan = **slot;
        // As plan_workload names it: the workload's kind, metadata.namespace and name.
        plan.kind = target.kind;
        plan.ns = target.ns;
        plan.name = target.name;
        return plan;
      }
      WorkloadPlan plan = plan_workload(*w, ns_labels, *entries, named_pods(), desired, po);
      if (slot != nullptr) {
        WorkloadPlan kept = plan;
        kept.kind.clear();
        kept.ns.clear();
        kept.name.clear();
        *slot = memo->intern(std::move(kept));
      }
      return plan;
    };
    // The policy decides whether template changes count, so look it up before planning:
    // by the revision the pods would get now, else by the one they have.
    WorkloadPlan first = plan_with(PlanOptions{});
    std::string policy_revision =
        !first.target_revision.empty() ? first.target_revision : first.current_revision;
    const RevisionPolicy& rp = policy_for(policy_revision.empty() ? "default" : policy_revision);
    e.policy_source = rp.source;
    if (rp.policy) e.policy = *rp.policy;
    if (rp.policy && rp.policy->include_template_changes) {
      PlanOptions po;
      po.include_template_changes = true;
      e.plan = plan_with(po);
    } else {
      e.plan = std::move(first);
    }

    // Evict: where the wave stands (also for a workload up to date, whose last replacement may
    // not be Ready yet).
    if (rp.policy && rp.policy->strategy == Strategy::kEvict && restartable_kind(kind))
      e.evict = evict_step(*w, named_pods(), e.plan.stale_pods, now, rp.policy->rollout_timeout);

    switch (e.plan.verdict) {
      case Verdict::kUpToDate:
        e.action = Action::kNone;
        if (const rapidjson::Value* meta = api::find_member(*w, "metadata"))
          if (const rapidjson::Value* ann = api::find_member(*meta, "annotations");
              ann != nullptr && api::find_member(*ann, kStaleSinceAnnotation) != nullptr)
            e.stale_since_left = true;
        break;
      case Verdict::kManual:
        e.action = Action::kManual;
        e.why = e.plan.detail;
        break;
      case Verdict::kConflict:
      case Verdict::kUnknownRevision:
      case Verdict::kInjectionFails:
        e.action = Action::kBlocked;
        e.why = e.plan.detail;
        break;
      case Verdict::kStale: {
        // A proxy image or template change recurs for the same revision (every upgrade): the
        // cause names what the restart is for, so that the record a previous restart left on
        // the pod template is not taken for this one (already_restarted_for).
        std::string_view detail_key;
        if (e.plan.reason == StaleReason::kProxyImageChanged)
          detail_key = e.plan.target_proxy_image;
        else if (e.plan.reason == StaleReason::kTemplateChanged)
          detail_key = e.plan.target_fingerprint;
        e.cause = restart_cause(e.plan, detail_key);
        // Versions of the move: the proxy images' tags, else what the revisions' IstioOperators
        // install (unknown for a revision without one).
        auto version_of = [&](const std::string& image, const std::string& revision) {
          std::string v = version_of_image(image);
          if (!v.empty() || revision.empty()) return v;
          auto it = policies.find(revision);
          return it != policies.end() ? it->second.version : std::string();
        };
        e.current_version = version_of(e.plan.current_proxy_image, e.plan.current_revision);
        e.target_version = version_of(e.plan.target_proxy_image, e.plan.target_revision);
        bool approved = false;
        if (!e.plan.target_revision.empty()) {
          const rapidjson::Value* ann = api::find(*w, "/metadata/annotations");
          approved = (ann != nullptr &&
                      approval_matches(api::string_at(*ann, {kRestartApprovedAnnotation}),
                                       e.plan.target_revision, e.target_version)) ||
                     approval_matches(rp.approved, e.plan.target_revision, e.target_version);
        }
        if (auto since = stale_since_of(*w, e.cause)) {
          e.stale_since = *since;
          e.stale_since_recorded = true;
        } else {
          e.stale_since = now;
        }
        e.overdue = rp.policy && overdue(e.stale_since, *rp.policy, now);
        const bool past_deadline = e.overdue && rp.policy->restart_after_deadline;
        std::optional<std::string> gate;
        std::string why, blocking;
        std::vector<const rapidjson::Value*> pdbs;
        for (const auto& pdb : view.pod_disruption_budgets)
          if (api::string_at(pdb, {"metadata", "namespace"}) == ns) pdbs.push_back(&pdb);
        const rapidjson::Value* tmpl_labels = api::find(*w, "/spec/template/metadata/labels");
        const bool evict = rp.policy && rp.policy->strategy == Strategy::kEvict;
        if (!rp.policy) {
          e.action = Action::kBlocked;
          e.why = rp.error;
        } else if (rp.policy->mode == Mode::kOff) {
          e.action = Action::kSkipped;
          e.why = "restart mode is Off (" + rp.source + ")";
        } else if (opted_out(*w, ns_object)) {
          e.action = Action::kSkipped;
          e.why = opted_out(*w, nullptr) ? "opted out: meshop.io/restart=false on the workload"
                                         : "opted out: meshop.io/restart=false on namespace " + ns;
        } else if (already_restarted_for(*w, e.cause)) {
          e.action = Action::kInProgress;
          e.why = "already restarted for " + e.cause + "; waiting for its pods to roll";
        } else if (evict && !e.evict.blocked.empty()) {
          e.action = Action::kBlocked;
          e.why = e.evict.blocked;
        } else if (evict && e.evict.started && rp.policy->mode == Mode::kAuto) {
          // A wave under way goes on (as a started rollout does) outside the window too, but
          // no pod goes while the target control plane is unhealthy.
          e.action = Action::kInProgress;
          if (!e.plan.target_revision.empty() &&
              !control_plane_healthy(e.plan.target_revision, why)) {
            e.evict.next.clear();
            e.evict.waiting = why;
          }
          e.why = evict_progress(e.evict);
        } else if ((gate = version_gate(e.current_version, e.target_version,
                                        rp.policy->max_version_skew, approved))) {
          e.action = Action::kApprovalNeeded;
          e.why = *gate + " " + kind + "/" + e.plan.name + " -n " + ns;
        } else if (auto flap = flap_deferral(last_restart(*w, kind, ns), *rp.policy, now)) {
          e.action = Action::kDeferred;
          e.why = *flap;
        } else if (!evict && !(blocking = blocking_pdb(pdbs, tmpl_labels)).empty()) {
          e.action = Action::kDeferred;
          e.why = "PodDisruptionBudget " + blocking + " allows no disruption now";
        } else if (!e.plan.target_revision.empty() &&
                   !control_plane_healthy(e.plan.target_revision, why)) {
          e.action = Action::kDeferred;
          e.why = why;
        } else if (rp.policy->maintenance_window && !rp.policy->maintenance_window->allows(now) &&
                   !past_deadline) {
          e.action = Action::kDeferred;
          e.why = "outside the maintenance window; it opens at " +
                  rfc3339(rp.policy->maintenance_window->next_open(now));
        } else if (rp.policy->mode == Mode::kDryRun) {
          e.action = Action::kWouldRestart;
          e.why = "restart mode is DryRun (" + rp.source + ")";
          if (evict) e.why += "; " + evict_progress(e.evict);
        } else if (evict && e.evict.next.empty()) {
          e.action = Action::kDeferred;
          e.why = e.evict.waiting;
        } else {
          e.action = Action::kRestart;
          if (evict) e.why = evict_progress(e.evict);
        }
        if (past_deadline && rp.policy->maintenance_window &&
            !rp.policy->maintenance_window->allows(now) &&
            (e.action == Action::kRestart || e.action == Action::kWouldRestart)) {
          std::string note = "stale since " + rfc3339(e.stale_since) + ", past maxStaleness " +
                             go_duration(*rp.policy->max_staleness) +
                             ": restarted outside the maintenance window";
          e.why = e.why.empty() ? note : e.why + "; " + note;
        }
        break;
      }
    }
    out.push_back(std::move(e));
  }

  if (memo != nullptr) {
    std::erase_if(memo->entries_, [&](const auto& kv) { return kv.second.pass != memo->pass_; });
    std::erase_if(memo->plans_, [](const auto& kv) { return kv.second.expired(); });
  }

  return out;
}

}  // namespace meshop::restart
