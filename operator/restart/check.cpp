#include "operator/restart/check.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/record.hpp"

namespace meshop::restart {
namespace {

using Requirement = api::LabelSelector::Requirement;
using Op = api::LabelSelector::Operator;

using api::kDataplaneModeLabel;
using api::kDeactivatedLabel;  // istioctl's NeverMatch
using api::kInjectionLabel;
using api::kRevisionLabel;
constexpr std::string_view kNameLabel = api::kNamespaceNameLabel;

std::optional<std::string> label(const rapidjson::Value* labels, std::string_view key) {
  if (labels == nullptr || !labels->IsObject()) return std::nullopt;
  const rapidjson::Value* v = api::find_member(*labels, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return std::string(api::string_view_of(*v));
}

std::string kind_of(const rapidjson::Value& o) {
  std::string kind = api::string_at(o, {"kind"});
  return kind.empty() ? "Pod" : kind;
}

std::string key_of(std::string_view kind, std::string_view ns, std::string_view name) {
  return std::string(kind) + "/" + std::string(ns) + "/" + std::string(name);
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& s : items)
    out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

bool value_listed(const Requirement& r, const std::string& v) {
  return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
}

bool positive(Op op) {
  return op == Op::kIn || op == Op::kEquals || op == Op::kDoubleEquals;
}
bool negative(Op op) {
  return op == Op::kNotIn || op == Op::kNotEquals;
}

// Whether `selector` matches `labels`, and (when it does) the first label an In/NotIn
// requirement looked at, "key=value": the label that made the difference, for people. The
// label the apiserver sets on every namespace (kubernetes.io/metadata.name) is named only when
// no other one is, and flagged as automatic injection only under NotIn (Istio's `auto.` entry,
// enableNamespacesByDefault); under In it is a list of namespaces the entry is limited to.
struct Matched {
  bool matched = false;
  std::string label;
  bool automatic = false;  // the label is kubernetes.io/metadata.name under NotIn
};
Matched matched_label(const api::LabelSelector& selector, const rapidjson::Value* labels) {
  if (!selector.matches(labels)) return {};
  Matched fallback{true, "", false};
  for (const Requirement& r : selector.requirements()) {
    if (!positive(r.op) && !negative(r.op)) continue;
    auto v = label(labels, r.key);
    if (!v) continue;
    if (r.key != kNameLabel) return {true, r.key + "=" + *v, false};
    if (fallback.label.empty()) fallback = {true, r.key + "=" + *v, negative(r.op)};
  }
  return fallback;
}

bool deactivated(const api::LabelSelector& s) {
  if (s.matches_nothing()) return true;
  for (const Requirement& r : s.requirements())
    if (r.key == kDeactivatedLabel) return true;
  return false;
}

// One configuration's verdict, as `istioctl x check-inject` words it: its first entry that
// matches injects; the first that matches one side only says which label prevents it.
WebhookVerdict explain(const std::vector<const InjectorEntry*>& hooks,
                       const rapidjson::Value* ns_labels, const rapidjson::Value* pod_labels,
                       bool* prevented) {
  WebhookVerdict v;
  v.configuration = hooks.front()->configuration;
  v.revision = hooks.front()->revision;
  v.tag = hooks.front()->tag;
  *prevented = false;
  for (const InjectorEntry* e : hooks) {
    const Matched ns = matched_label(e->namespace_selector, ns_labels);
    const Matched obj = matched_label(e->object_selector, pod_labels);
    const bool ns_match = ns.matched, pod_match = obj.matched;
    if (ns_match && pod_match) {
      v.injects = true;
      v.entry = e->entry;
      if (!ns.label.empty() && !obj.label.empty())
        v.reason =
            "Namespace label " + ns.label + " matches, and pod label " + obj.label + " matches";
      else if (!ns.label.empty())
        v.reason = "Namespace label " + ns.label + " matches" +
                   (ns.automatic ? " (automatic injection is enabled in all namespaces)" : "");
      else if (!obj.label.empty())
        v.reason = "Pod label " + obj.label + " matches";
      else
        v.reason = "Namespace and pod labels match entry " + e->entry;
      return v;
    }
    if (ns_match) {
      for (const Requirement& r : e->object_selector.requirements()) {
        auto have = label(pod_labels, r.key);
        if (!have) continue;
        if (r.op == Op::kDoesNotExist || (negative(r.op) && value_listed(r, *have))) {
          v.reason = "Pod has " + r.key + "=" + *have + " label, preventing injection";
          *prevented = true;
          return v;
        }
      }
    } else if (pod_match) {
      if (auto inj = label(ns_labels, kInjectionLabel); inj && *inj != "enabled") {
        v.reason = "Namespace has " + std::string(kInjectionLabel) + "=" + *inj +
                   " label, preventing injection";
        *prevented = true;
        return v;
      }
    }
  }
  std::vector<std::string> ns_wanted, pod_wanted;
  auto wanted = [](const api::LabelSelector& s, std::vector<std::string>& out) {
    for (const Requirement& r : s.requirements()) {
      if (!positive(r.op) || r.key == kNameLabel) continue;
      for (const std::string& value : r.values) {
        std::string kv = r.key + "=" + value;
        if (std::find(out.begin(), out.end(), kv) == out.end()) out.push_back(kv);
      }
    }
  };
  for (const InjectorEntry* e : hooks) {
    if (deactivated(e->namespace_selector) && deactivated(e->object_selector)) {
      v.reason = "The injection webhook is deactivated, and will never match labels";
      return v;
    }
    wanted(e->namespace_selector, ns_wanted);
    wanted(e->object_selector, pod_wanted);
  }
  v.reason = "No matching namespace labels (" + join(ns_wanted) + ") or pod labels (" +
             join(pod_wanted) + ")";
  return v;
}

// A stale workload or pod: the Istio message that says so, with what `meshop restart` does.
std::optional<Finding> stale_finding(const WorkloadPlan& plan, const std::string& object,
                                     const std::string& restart_says) {
  if (!plan.reason) return std::nullopt;
  Finding f{Severity::kWarning, "", "StaleSidecar", object, plan.detail};
  if (*plan.reason == StaleReason::kProxyImageChanged) {
    f.code = "IST0158";
    f.name = "PodsIstioProxyImageMismatch";
  } else if (*plan.reason == StaleReason::kInjectionEnabled) {
    f.code = "IST0103";
    f.name = "PodMissingProxy";
  }
  if (plan.stale_pods.size() > 1) f.message += " (stale pods: " + join(plan.stale_pods) + ")";
  f.message += ". " + restart_says;
  return f;
}

std::string restart_says(const PlanEntry& e) {
  return "meshop restart: " + std::string(action_name(e.action)) +
         (e.why.empty() ? "" : " (" + e.why + ")");
}

std::string entry_names(const std::vector<const InjectorEntry*>& hooks) {
  std::vector<std::string> names;
  for (const InjectorEntry* e : hooks)
    names.push_back(e->configuration + "/" + e->entry + " (revision " + e->revision +
                    (e->tag.empty() ? "" : ", tag " + e->tag) + ")");
  return join(names);
}

rapidjson::Document probe_pod(const std::string& ns) {
  rapidjson::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  pod.AddMember("apiVersion", "v1", a);
  pod.AddMember("kind", "Pod", a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("name", "meshop-check", a);
  meta.AddMember("namespace", api::make_string(ns, a), a);
  pod.AddMember("metadata", meta, a);
  rapidjson::Value container(rapidjson::kObjectType);
  container.AddMember("name", "app", a);
  container.AddMember("image", "app", a);
  rapidjson::Value containers(rapidjson::kArrayType);
  containers.PushBack(container, a);
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("containers", containers, a);
  pod.AddMember("spec", spec, a);
  return pod;
}

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "Info";
    case Severity::kWarning:
      return "Warning";
    case Severity::kError:
      return "Error";
  }
  return "Unknown";
}

bool CheckReport::ok() const {
  return std::none_of(findings.begin(), findings.end(),
                      [](const Finding& f) { return f.severity != Severity::kInfo; });
}

api::Result<CheckReport> check(const ClusterView& view, const std::vector<PlanEntry>& plan,
                               const DesiredFn& desired, const CheckTarget& target) {
  CheckReport r;
  r.ns = target.ns;
  r.pod = target.pod;

  const rapidjson::Value* ns_object = nullptr;
  for (const auto& n : view.namespaces)
    if (api::string_at(n, {"metadata", "name"}) == target.ns) ns_object = &n;
  if (ns_object == nullptr) return api::Error{"namespace \"" + target.ns + "\" not found"};
  const rapidjson::Value* ns_labels = api::find(*ns_object, "/metadata/labels");
  const std::string ns_ref = "Namespace/" + target.ns;
  std::vector<Finding>& findings = r.findings;

  // The injector entries, as plan_cluster reads them.
  rapidjson::Document configs(rapidjson::kArrayType);
  for (const auto& c : view.webhook_configurations) {
    rapidjson::Value copy;
    copy.CopyFrom(c, configs.GetAllocator());
    configs.PushBack(copy, configs.GetAllocator());
  }
  std::vector<InjectorEntry> entries;
  bool unparsed = false;
  if (auto parsed = injector_entries(configs); !parsed) {
    unparsed = true;
    findings.push_back({Severity::kError, "IST0139", "InvalidWebhook",
                        "MutatingWebhookConfiguration", parsed.message()});
  } else {
    entries = std::move(*parsed);
    if (entries.empty())
      findings.push_back(
          {Severity::kError, "", "NoInjectionWebhooks", "MutatingWebhookConfiguration",
           "no Istio injector webhook configuration (a MutatingWebhookConfiguration labelled " +
               std::string(kRevisionLabel) +
               " with a *sidecar-injector.istio.io webhook) exists: no pod is injected. "
               "Install a revision (an IstioOperator) or a tag (meshop tag set)"});
  }

  // The namespace's labels (Istio's injection analyzer).
  const auto injection = label(ns_labels, kInjectionLabel);
  const auto ns_revision = label(ns_labels, kRevisionLabel);
  {
    std::vector<std::string> istio_labels;
    if (injection) istio_labels.push_back(std::string(kInjectionLabel) + "=" + *injection);
    for (std::string_view key : {kRevisionLabel, kDataplaneModeLabel})
      if (auto v = label(ns_labels, key); v && (!injection || *injection == "enabled"))
        istio_labels.push_back(std::string(key) + "=" + *v);
    if (istio_labels.size() > 1)
      findings.push_back(
          {Severity::kWarning, "IST0123", "NamespaceMultipleInjectionLabels", ns_ref,
           "The namespace has more than one type of injection labels [" + join(istio_labels, " ") +
               "], which may lead to undefined behavior. Make sure only one injection label "
               "exists (istio-injection takes precedence in Istio's webhooks)"});
  }

  // The pod that is (or would be) injected.
  const Owners owners(view.workloads);
  const rapidjson::Value* pod = nullptr;
  const rapidjson::Value* top = nullptr;
  rapidjson::Document probe;
  if (target.pod.empty()) {
    probe = probe_pod(target.ns);
  } else {
    for (const auto& p : view.pods)
      if (api::field_string(p, "/metadata/namespace") == target.ns &&
          api::field_string(p, "/metadata/name") == target.pod)
        pod = &p;
    if (pod == nullptr)
      return api::Error{"pod \"" + target.pod + "\" not found in namespace \"" + target.ns + "\""};
    top = owners.top_of(*pod);
    const rapidjson::Value* source = top != nullptr ? top : pod;
    const rapidjson::Value* tmpl = pod_template(*source, kind_of(*source));
    probe = pod_from_template(tmpl != nullptr ? *tmpl : *pod, target.ns);
    PodState have = observe_pod(*pod);
    r.pod_injected = have.injected;
    r.pod_revision = have.revision;
    r.pod_proxy_image = have.proxy_image;
  }
  const rapidjson::Value* probe_labels = api::find(probe, "/metadata/labels");
  const std::string probe_ref = target.pod.empty() ? ns_ref : "Pod/" + target.ns + "/" + target.pod;

  // Each configuration, as check-inject shows them.
  std::string prevented_by;
  for (std::size_t i = 0; i < entries.size();) {
    std::vector<const InjectorEntry*> hooks;
    std::size_t j = i;
    for (; j < entries.size() && entries[j].configuration == entries[i].configuration; ++j)
      hooks.push_back(&entries[j]);
    bool prevented = false;
    r.webhooks.push_back(explain(hooks, ns_labels, probe_labels, &prevented));
    if (prevented && prevented_by.empty()) prevented_by = r.webhooks.back().reason;
    i = j;
  }

  // Which revision serves it, and what its engine says.
  std::set<std::string> unknown_reported;  // revisions already reported as UnknownRevision
  Route route = restart::route(entries, ns_labels, probe_labels);
  if (route.injected()) {
    r.revision = route.revision();
    r.tag = route.entry->tag;
    r.configuration = route.entry->configuration;
    r.entry = route.entry->entry;
    std::string matched;
    for (const WebhookVerdict& w : r.webhooks)
      if (w.configuration == r.configuration) matched = w.reason;
    std::string via = "webhook " + r.configuration + " (" + r.entry + ") calls revision " +
                      r.revision + (r.tag.empty() ? "" : " through tag " + r.tag);
    std::optional<Desired> d = desired(r.revision, probe);
    if (!d) {
      r.injected = true;
      unknown_reported.insert(r.revision);
      r.why = via + ": " + matched + "; but revision " + r.revision +
              " has no injector configuration to inject with";
      findings.push_back({Severity::kError, "", "UnknownRevision", probe_ref,
                          "revision " + r.revision + " (webhook " + r.configuration +
                              ") has no injector ConfigMap (" +
                              api::injector_configmap_name(r.revision) +
                              "): its webhook cannot inject"});
    } else if (d->fails) {
      r.why = via + ", whose injection fails: " + d->why;
      findings.push_back(
          {Severity::kError, "", "InjectionFails", probe_ref,
           "injection by revision " + r.revision + " fails: " + d->why +
               "; the apiserver rejects the pod (the webhooks' failurePolicy is Fail)"});
    } else if (!d->inject) {
      r.why = via + ", whose injector skips the pod: " + d->why;
    } else {
      r.injected = true;
      r.why = via + ": " + matched;
    }
  } else if (!entries.empty()) {
    r.why = !prevented_by.empty()
                ? prevented_by
                : "no injector webhook selects it (namespace labels " +
                      (ns_labels != nullptr ? api::to_json(*ns_labels) : std::string("{}")) +
                      ", pod labels " +
                      (probe_labels != nullptr ? api::to_json(*probe_labels) : std::string("{}")) +
                      "); each webhook's reason is listed";
  } else {
    r.why = unparsed ? "the injector webhook configurations do not parse (see the findings)"
                     : "no injector webhook exists";
  }
  if (route.overlap())
    findings.push_back({Severity::kError, "IST0139", "InvalidWebhook", probe_ref,
                        "webhooks overlap: " + entry_names(route.matched) +
                            " all select it, so a pod would be injected more than once. Keep "
                            "one (remove or deactivate the others, or relabel the namespace)"});

  // istio.io/rev naming nothing any webhook serves (istio-injection takes precedence).
  {
    std::set<std::string> known;
    for (const InjectorEntry& e : entries) {
      known.insert(e.revision);
      if (!e.tag.empty()) known.insert(e.tag);
    }
    auto unknown = [&](const std::optional<std::string>& rev, const std::string& where) {
      if (!rev || entries.empty() || known.count(*rev)) return;
      std::vector<std::string> names(known.begin(), known.end());
      findings.push_back({Severity::kWarning, "", "RevisionNotFound", probe_ref,
                          where + " label istio.io/rev=" + *rev +
                              " names no revision or tag an injector webhook serves (known: " +
                              join(names) + "): its pods are not injected"});
    };
    if (!injection) unknown(ns_revision, "namespace " + target.ns + ":");
    if (!injection && !ns_revision) unknown(label(probe_labels, kRevisionLabel), "pod");
  }

  // (Not with no webhooks at all: labelling the namespace would not help.)
  if (!injection && !ns_revision && !r.injected && !entries.empty() &&
      (target.pod.empty() || !r.pod_injected))
    findings.push_back({Severity::kInfo, "IST0102", "NamespaceNotInjected", ns_ref,
                        "The namespace is not enabled for Istio injection. Run 'kubectl label "
                        "namespace " +
                            target.ns + " istio-injection=enabled' to enable it, or 'kubectl " +
                            "label namespace " + target.ns +
                            " istio-injection=disabled' to explicitly mark it as not needing "
                            "injection"});

  // The workloads, from the restart plan.
  std::map<std::string, std::vector<const rapidjson::Value*>> pods_of;
  for (const auto& p : view.pods) {
    if (api::field_string(p, "/metadata/namespace") != target.ns) continue;
    const rapidjson::Value* t = owners.top_of(p);
    if (t == nullptr) continue;
    pods_of[key_of(kind_of(*t), target.ns, api::string_at(*t, {"metadata", "name"}))].push_back(&p);
  }
  std::string only_key;
  if (pod != nullptr)
    only_key = top != nullptr
                   ? key_of(kind_of(*top), target.ns, api::string_at(*top, {"metadata", "name"}))
                   : "";
  std::set<std::string> overlaps_reported;
  if (route.overlap()) overlaps_reported.insert(entry_names(route.matched));
  for (const PlanEntry& e : plan) {
    if (e.plan.ns != target.ns) continue;
    // A Pod read without TypeMeta plans with an empty kind.
    const std::string kind = e.plan.kind.empty() ? "Pod" : e.plan.kind;
    const std::string key = key_of(kind, e.plan.ns, e.plan.name);
    if (pod != nullptr && key != only_key) continue;
    WorkloadVerdict w;
    w.kind = kind;
    w.name = e.plan.name;
    std::set<std::string> sidecars;
    for (const rapidjson::Value* p : pods_of[key]) {
      PodState s = observe_pod(*p);
      sidecars.insert(s.injected ? s.revision : "none");
    }
    w.pods = pods_of[key].size();
    w.sidecars.assign(sidecars.begin(), sidecars.end());
    w.target_revision = e.plan.target_revision;
    w.verdict = e.plan.verdict;
    w.reason = e.plan.reason ? std::string(reason_name(*e.plan.reason)) : "";
    w.detail = e.plan.detail;
    w.action = e.action;
    w.action_why = e.why;
    w.stale_pods = e.plan.stale_pods;
    r.workloads.push_back(std::move(w));

    const std::string object = kind + "/" + e.plan.ns + "/" + e.plan.name;
    // Its own labels may route it elsewhere than the namespace's probe.
    const rapidjson::Value* w_object = nullptr;
    for (const auto& o : kind == "Pod" ? view.pods : view.workloads)
      if (kind_of(o) == kind && api::string_at(o, {"metadata", "name"}) == e.plan.name &&
          api::string_at(o, {"metadata", "namespace"}) == e.plan.ns)
        w_object = &o;
    if (w_object != nullptr && pod == nullptr) {
      if (const rapidjson::Value* tmpl = pod_template(*w_object, kind)) {
        Route wr = restart::route(entries, ns_labels, api::find(*tmpl, "/metadata/labels"));
        if (wr.overlap() && overlaps_reported.insert(entry_names(wr.matched)).second)
          findings.push_back(
              {Severity::kError, "IST0139", "InvalidWebhook", object,
               "webhooks overlap: " + entry_names(wr.matched) +
                   " all select its pods, so they would be injected more than once"});
      }
    }
    switch (e.plan.verdict) {
      case Verdict::kUpToDate:
      case Verdict::kConflict:  // reported as IST0139 above
        break;
      case Verdict::kUnknownRevision:
        if (unknown_reported.insert(e.plan.target_revision).second)
          findings.push_back({Severity::kError, "", "UnknownRevision", object, e.plan.detail});
        break;
      case Verdict::kInjectionFails:
        findings.push_back({Severity::kError, "", "InjectionFails", object, e.plan.detail});
        break;
      case Verdict::kStale:
      case Verdict::kManual:
        if (pod != nullptr) {
          // This pod alone: is it one of the workload's stale pods?
          PlanOptions po;
          po.include_template_changes = e.policy.include_template_changes;
          const rapidjson::Value* source = top != nullptr ? top : pod;
          WorkloadPlan mine = plan_workload(*source, ns_labels, entries, {pod}, desired, po);
          if (auto f = stale_finding(mine, probe_ref, restart_says(e))) findings.push_back(*f);
        } else if (auto f = stale_finding(e.plan, object, restart_says(e))) {
          findings.push_back(*f);
        }
        break;
    }
  }

  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return r;
}

}  // namespace meshop::restart
