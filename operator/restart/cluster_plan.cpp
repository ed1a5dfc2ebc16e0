#include "operator/restart/cluster_plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "api/json.hpp"

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

const rapidjson::Value* controller_owner(const rapidjson::Value& o) {
  const rapidjson::Value* owners = api::find(o, "/metadata/ownerReferences");
  if (owners == nullptr || !owners->IsArray()) return nullptr;
  for (const rapidjson::Value& ref : owners->GetArray()) {
    const rapidjson::Value* c = api::find_member(ref, "controller");
    if (c != nullptr && c->IsBool() && c->GetBool()) return &ref;
  }
  return nullptr;
}

// metadata.name without a copy ("" when absent).
std::string_view name_of(const rapidjson::Value& o) {
  const rapidjson::Value* meta = api::find_member(o, "metadata");
  const rapidjson::Value* name = meta != nullptr ? api::find_member(*meta, "name") : nullptr;
  return name != nullptr && name->IsString() ? api::string_view_of(*name) : std::string_view();
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

Owners::Owners(const ObjectList& workloads) {
  for (const auto& w : workloads)
    by_uid_[api::string_at(w, {"metadata", "uid"})] = &w;
}

const rapidjson::Value* Owners::top_of(const rapidjson::Value& o) const {
  const rapidjson::Value* cur = &o;
  for (int depth = 0; depth < 3; ++depth) {
    const rapidjson::Value* ref = controller_owner(*cur);
    if (ref == nullptr) return cur;
    auto it = by_uid_.find(api::string_at(*ref, {"uid"}));
    if (it == by_uid_.end()) return cur == &o ? nullptr : cur;  // owner not in the view
    cur = it->second;
  }
  return cur;
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
  std::map<std::string, const rapidjson::Value*, std::less<>> namespaces;
  for (const auto& n : view.namespaces)
    namespaces[api::string_at(n, {"metadata", "name"})] = &n;

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
  auto policy_for = [&](const std::string& revision) {
    auto it = policies.find(revision);
    if (it != policies.end()) return it->second;
    RevisionPolicy rp;
    rp.policy = Policy();
    return rp;
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
  // CronJob, pod → StatefulSet/DaemonSet/ReplicationController, or the pod itself).
  const Owners owners(view.workloads);
  std::map<std::string, std::vector<const rapidjson::Value*>> pods_of;
  std::vector<const rapidjson::Value*> targets;
  for (const auto& w : view.workloads)
    if (controller_owner(w) == nullptr) targets.push_back(&w);
  for (const auto& p : view.pods) {
    const rapidjson::Value* top = owners.top_of(p);
    if (top == nullptr) continue;  // owned by something we do not plan (e.g. a custom resource)
    if (top == &p) targets.push_back(&p);
    pods_of[key_of(api::string_at(*top, {"kind"}).empty() ? "Pod" : api::string_at(*top, {"kind"}),
                   api::string_at(*top, {"metadata", "namespace"}),
                   api::string_at(*top, {"metadata", "name"}))]
        .push_back(&p);
  }
  // The first differing pod names the reason: by pod name, whatever order the view has (a
  // LIST answers in name order, a store in none).
  for (auto& [key, pods] : pods_of)
    std::sort(pods.begin(), pods.end(), [](const rapidjson::Value* a, const rapidjson::Value* b) {
      return name_of(*a) < name_of(*b);
    });

  // minInterval: the later of the template's record and the caller's memory.
  auto last_restart = [&](const rapidjson::Value& w, const std::string& kind,
                          const std::string& ns) -> std::optional<LastRestart> {
    std::optional<LastRestart> last = last_restart_of(w);
    auto it = options.last_restarts.find(key_of(kind, ns, name_of(w)));
    if (it != options.last_restarts.end() && (!last || it->second.at > last->at)) last = it->second;
    return last;
  };

  for (const rapidjson::Value* w : targets) {
    std::string ns = api::string_at(*w, {"metadata", "namespace"});
    if (!options.namespace_filter.empty() && ns != options.namespace_filter) continue;
    std::string kind = api::string_at(*w, {"kind"});
    if (kind.empty()) kind = "Pod";
    const rapidjson::Value* ns_object = nullptr;
    if (auto it = namespaces.find(ns); it != namespaces.end()) ns_object = it->second;
    const rapidjson::Value* ns_labels =
        ns_object != nullptr ? api::find(*ns_object, "/metadata/labels") : nullptr;

    PlanEntry e;
    if (!entries) {
      e.plan.kind = kind;
      e.plan.ns = ns;
      e.plan.name = api::string_at(*w, {"metadata", "name"});
      e.action = Action::kBlocked;
      e.why = entries.message();
      out.push_back(std::move(e));
      continue;
    }
    // The policy decides whether template changes count, so look it up before planning:
    // by the revision the pods would get now, else by the one they have.
    const auto& pods = pods_of[key_of(kind, ns, api::string_at(*w, {"metadata", "name"}))];
    WorkloadPlan first = plan_workload(*w, ns_labels, *entries, pods, desired);
    std::string policy_revision =
        !first.target_revision.empty() ? first.target_revision : first.current_revision;
    RevisionPolicy rp = policy_for(policy_revision.empty() ? "default" : policy_revision);
    e.policy_source = rp.source;
    if (rp.policy) e.policy = *rp.policy;
    if (rp.policy && rp.policy->include_template_changes) {
      PlanOptions po;
      po.include_template_changes = true;
      e.plan = plan_workload(*w, ns_labels, *entries, pods, desired, po);
    } else {
      e.plan = std::move(first);
    }

    // Evict: where the wave stands (also for a workload up to date, whose last replacement may
    // not be Ready yet).
    if (rp.policy && rp.policy->strategy == Strategy::kEvict && restartable_kind(kind))
      e.evict = evict_step(*w, pods, e.plan.stale_pods, now, rp.policy->rollout_timeout);

    switch (e.plan.verdict) {
      case Verdict::kUpToDate:
        e.action = Action::kNone;
        if (const rapidjson::Value* ann = api::find(*w, "/metadata/annotations");
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

  std::sort(out.begin(), out.end(), [](const PlanEntry& a, const PlanEntry& b) {
    return std::tie(a.plan.ns, a.plan.kind, a.plan.name) <
           std::tie(b.plan.ns, b.plan.kind, b.plan.name);
  });
  return out;
}

}  // namespace meshop::restart
