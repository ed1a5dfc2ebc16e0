#include "reconcilers/revisions.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/record.hpp"
#include "api/time.hpp"
#include "operator/log/log.hpp"
#include "operator/restart/planner.hpp"
#include "operator/runtime/object.hpp"
#include "reconcilers/conditions.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/ownership.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"

namespace meshop::reconcilers {
namespace {

constexpr std::string_view kRevLabel = api::kRevisionLabel;
using api::kInjectionLabel;

// The revision `name` (an istio.io/rev value) resolves to: a tag's target, else a revision
// with entries of its own; "" when no configuration knows the name.
std::string resolve(const std::vector<restart::InjectorEntry>& entries, const std::string& name) {
  for (const restart::InjectorEntry& e : entries)
    if (!e.tag.empty() && e.tag == name) return e.revision;
  for (const restart::InjectorEntry& e : entries)
    if (e.tag.empty() && e.revision == name) return name;
  return {};
}

// "revision canary through tag prod (webhook istio-revision-tag-prod)".
std::string serving_text(const NamespaceVerdict& v) {
  std::string out = "revision " + v.revision;
  if (!v.tag.empty()) out += " through tag " + v.tag;
  return out + " (webhook " + v.configuration + ")";
}

// What happens to new pods, from the route alone.
std::string effect(const NamespaceVerdict& v) {
  return v.revision.empty() ? "new pods are not injected"
                            : "new pods are injected by " + serving_text(v);
}

// "canary (istio-revision-tag-default), default (istio-sidecar-injector)": each revision the
// apiserver calls, with the configurations whose entries select the namespace.
std::string claimants(const std::vector<restart::InjectorEntry>& entries,
                      const std::vector<std::string>& revisions, const rapidjson::Value* labels) {
  std::string out;
  for (const std::string& rev : revisions) {
    std::vector<std::string> configurations;
    for (const restart::InjectorEntry& e : entries) {
      if (e.revision != rev || !e.namespace_selector.matches(labels) ||
          !e.object_selector.matches(nullptr))
        continue;
      if (std::find(configurations.begin(), configurations.end(), e.configuration) ==
          configurations.end())
        configurations.push_back(e.configuration);
    }
    std::string joined;
    for (const std::string& c : configurations)
      joined += (joined.empty() ? "" : " and ") + c;
    out += (out.empty() ? "" : ", ") + rev + " (" + joined + ")";
  }
  return out;
}

std::string label_text(std::string_view key, const std::string& value) {
  return std::string(key) + "=" + value;
}

std::string message_for(const NamespaceVerdict& v,
                        const std::vector<restart::InjectorEntry>& entries,
                        const rapidjson::Value* labels) {
  const std::string rev_label = label_text(kRevLabel, v.requested);
  const std::string injection = label_text(kInjectionLabel, v.injection_label);
  switch (v.reason) {
    case NamespaceReason::kRevisionConflict:
      return "the injector webhooks of several revisions select this namespace: revisions " +
             claimants(entries, v.revisions, labels) +
             "; the apiserver calls each of them for every new pod, so which sidecar a pod "
             "ends up with depends on the call order";
    case NamespaceReason::kConflictingInjectionLabels: {
      std::string m = "the namespace has both " + injection + " and " + rev_label +
                      ": every revision webhook requires " + std::string(kInjectionLabel) +
                      " to be absent, so " + std::string(kRevLabel) + " is ignored";
      if (v.requested_revision.empty()) m += " (it names no known revision or tag anyway)";
      if (!v.revision.empty()) {
        m += "; " + effect(v);
        if (!v.requested_revision.empty())
          m += v.revision == v.requested_revision
                   ? ", the revision " + rev_label + " asks for: remove one of the labels"
                   : ", not by revision " + v.requested_revision + " as " + rev_label + " asks";
      } else if (v.injection_label != "enabled") {
        m += "; " + injection +
             " is not \"enabled\", which turns injection off for the whole namespace: new pods "
             "are not injected";
      } else {
        m += "; no webhook selects " + injection +
             " (no default revision, no `default` tag): new pods are not injected";
      }
      return m;
    }
    case NamespaceReason::kUnknownRevision:
      return rev_label + " names no revision or tag: no MutatingWebhookConfiguration labelled " +
             rev_label + " or " + label_text(api::kTagLabel, v.requested) +
             " has injector entries, so " + effect(v);
    case NamespaceReason::kServed:
      return effect(v);
    case NamespaceReason::kNotInjected:
      if (v.has_injection_label && v.injection_label != "enabled")
        return injection + " turns injection off for this namespace: new pods are not injected";
      if (!v.requested.empty())
        return rev_label + " names revision " + v.requested_revision +
               ", but none of its webhook entries select this namespace (deactivated?): new "
               "pods are not injected";
      return "no injector webhook selects this namespace: new pods are not injected";
  }
  return {};
}

kube::ObjectReference iop_reference(const rapidjson::Value& iop) {
  kube::ObjectReference r = kube::reference_to(iop);
  if (r.api_version.empty()) r.api_version = std::string(api::kIstioOperatorApiVersion);
  if (r.kind.empty()) r.kind = "IstioOperator";
  return r;
}

std::string owner_revision(const RevisionsReport& report, const std::string& key) {
  auto it = report.owners.find(key);
  return it == report.owners.end() ? std::string() : it->second;
}

bool terminating(const rapidjson::Value& object) {
  return api::field(object, "/metadata/deletionTimestamp") != nullptr;
}

std::string key_of(const rapidjson::Value& object) {
  return api::string_at(object, {"metadata", "namespace"}) + "/" +
         api::string_at(object, {"metadata", "name"});
}

// Compact copies (runtime::compact_object): a default Document holds a 64 KiB pool chunk.
void take_items(rapidjson::Document& list, restart::ObjectList& out) {
  rapidjson::Value* items = api::find_member(list, "items");
  if (items == nullptr || !items->IsArray()) return;
  out.reserve(out.size() + items->Size());
  for (rapidjson::Value& item : items->GetArray())
    if (item.IsObject()) out.push_back(runtime::compact_object(item));
}

// The objects of `store`, sorted by namespace and name as a LIST answers.
std::vector<runtime::Object> sorted_list(const runtime::Store& store) {
  std::vector<runtime::Object> objects = store.list();
  std::sort(objects.begin(), objects.end(), [](const runtime::Object& a, const runtime::Object& b) {
    return std::pair(runtime::namespace_of(*a), runtime::name_of(*a)) <
           std::pair(runtime::namespace_of(*b), runtime::name_of(*b));
  });
  return objects;
}

rapidjson::Value string_array(const std::vector<std::string>& values,
                              rapidjson::Document::AllocatorType& a) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const std::string& s : values)
    out.PushBack(api::make_string(s, a), a);
  return out;
}

}  // namespace

std::string_view reason_name(NamespaceReason r) {
  switch (r) {
    case NamespaceReason::kServed:
      return "Served";
    case NamespaceReason::kNotInjected:
      return "NotInjected";
    case NamespaceReason::kRevisionConflict:
      return "RevisionConflict";
    case NamespaceReason::kConflictingInjectionLabels:
      return "ConflictingInjectionLabels";
    case NamespaceReason::kUnknownRevision:
      return "UnknownRevision";
  }
  return "Unknown";
}

bool is_warning(NamespaceReason r) {
  return r == NamespaceReason::kRevisionConflict ||
         r == NamespaceReason::kConflictingInjectionLabels ||
         r == NamespaceReason::kUnknownRevision;
}

NamespaceVerdict evaluate_namespace(const rapidjson::Value& ns,
                                    const std::vector<restart::InjectorEntry>& entries) {
  NamespaceVerdict v;
  v.name = api::string_at(ns, {"metadata", "name"});
  const rapidjson::Value* labels = api::find(ns, "/metadata/labels");
  if (labels != nullptr && !labels->IsObject()) labels = nullptr;
  bool has_rev = false;
  if (labels != nullptr) {
    if (const rapidjson::Value* l = api::find_member(*labels, kRevLabel); l != nullptr) {
      has_rev = true;
      v.requested = l->IsString() ? std::string(api::string_view_of(*l)) : std::string();
    }
    if (const rapidjson::Value* l = api::find_member(*labels, kInjectionLabel); l != nullptr) {
      v.has_injection_label = true;
      v.injection_label = l->IsString() ? std::string(api::string_view_of(*l)) : std::string();
    }
  }
  if (has_rev) v.requested_revision = resolve(entries, v.requested);

  // A pod with no labels of its own: only the namespace-level entries can match.
  restart::Route r = restart::route(entries, labels, nullptr);
  v.revisions = r.revisions;
  if (r.entry != nullptr) v.configuration = r.entry->configuration;
  if (r.injected() && !r.conflict()) {
    v.revision = r.revision();
    v.tag = r.entry->tag;
  }

  if (r.conflict())
    v.reason = NamespaceReason::kRevisionConflict;
  else if (has_rev && v.has_injection_label)
    v.reason = NamespaceReason::kConflictingInjectionLabels;
  else if (has_rev && v.requested_revision.empty())
    v.reason = NamespaceReason::kUnknownRevision;
  else
    v.reason = r.injected() ? NamespaceReason::kServed : NamespaceReason::kNotInjected;
  v.message = message_for(v, entries, labels);
  return v;
}

api::Result<RevisionsReport> evaluate(const RevisionsView& view) {
  auto entries = restart::injector_entries(view.webhook_configurations);
  if (!entries) return entries.error();
  RevisionsReport report;

  // Revisions and their tags, from the webhooks.
  std::map<std::string, std::set<std::string>> tags;
  for (const restart::InjectorEntry& e : *entries) {
    report.revisions[e.revision];
    if (!e.tag.empty()) tags[e.revision].insert(e.tag);
  }
  for (auto& [rev, set] : tags)
    report.revisions[rev].tags.assign(set.begin(), set.end());

  // Owners: the oldest IstioOperator of each revision (reconcilers/ownership.hpp).
  std::vector<OperatorRef> refs;
  for (const rapidjson::Value& iop : view.istio_operators) {
    refs.push_back(operator_ref(iop));
    report.revisions[refs.back().revision];
  }
  for (const OperatorRef& r : refs) {
    auto owner = revision_owner(refs, r.revision);
    report.owners[r.key()] = owner && owner->key() == r.key() ? r.revision : std::string();
  }

  // Namespaces.
  for (const rapidjson::Value& ns : view.namespaces)
    report.namespaces.push_back(evaluate_namespace(ns, *entries));
  std::sort(report.namespaces.begin(), report.namespaces.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<std::string, const NamespaceVerdict*> by_name;
  for (const NamespaceVerdict& v : report.namespaces) {
    by_name[v.name] = &v;
    if (!v.revision.empty()) report.revisions[v.revision].namespaces.push_back(v.name);
    std::set<std::string> concerned;
    if (v.reason == NamespaceReason::kRevisionConflict)
      concerned.insert(v.revisions.begin(), v.revisions.end());
    if (v.reason == NamespaceReason::kConflictingInjectionLabels) {
      if (!v.revision.empty()) concerned.insert(v.revision);
      if (!v.requested_revision.empty()) concerned.insert(v.requested_revision);
    }
    for (const std::string& rev : concerned)
      report.revisions[rev].conflicts.push_back(
          {v.name, std::string(reason_name(v.reason)), v.message});
  }

  // Namespaces asking for a revision by label that it does not serve.
  for (const NamespaceVerdict& v : report.namespaces)
    if (!v.requested_revision.empty() && v.requested_revision != v.revision)
      report.revisions[v.requested_revision].requested_by.push_back(v.name);

  // Pods: running the revision that serves their namespace, and carrying a revision at all.
  for (const rapidjson::Value& pod : view.pods) {
    if (pod_gone(pod)) continue;
    restart::PodState state = restart::observe_pod(pod);
    std::string carried = state.injected ? state.revision : std::string();
    const rapidjson::Value* labels = api::field(pod, "/metadata/labels");
    // The revision's own components (istiod, its gateways) carry istio.io/rev: they go with
    // the revision and do not keep it in use.
    if (labels != nullptr && labels->IsObject() &&
        api::find_member(*labels, api::kComponentLabel) != nullptr)
      carried.clear();
    else if (carried.empty()) {
      const rapidjson::Value* l =
          labels != nullptr && labels->IsObject() ? api::find_member(*labels, kRevLabel) : nullptr;
      if (l != nullptr && l->IsString())
        carried = resolve(*entries, std::string(api::string_view_of(*l)));
    }
    if (!carried.empty()) {
      auto known = report.revisions.find(carried);
      if (known != report.revisions.end()) ++known->second.running_pods;
    }
    auto it = by_name.find(std::string(api::field_string(pod, "/metadata/namespace")));
    if (it == by_name.end() || it->second->revision.empty()) continue;
    if (state.injected && state.revision == it->second->revision)
      ++report.revisions[state.revision].pods;
  }
  return report;
}

bool pod_gone(const rapidjson::Value& pod) {
  if (terminating(pod)) return true;
  std::string_view phase = api::field_string(pod, "/status/phase");
  return phase == "Succeeded" || phase == "Failed";
}

namespace {

std::string count_text(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string list_text(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 5; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += ", ...";
  return out;
}

}  // namespace

InUseDecision decide_in_use(const InUseInput& in) {
  InUseDecision d;
  const RevisionUsage& u = in.usage;
  std::vector<std::string> routing = u.namespaces;
  routing.insert(routing.end(), u.requested_by.begin(), u.requested_by.end());
  for (const RevisionConflict& c : u.conflicts)
    if (std::find(routing.begin(), routing.end(), c.ns) == routing.end()) routing.push_back(c.ns);
  std::sort(routing.begin(), routing.end());
  d.in_use = !routing.empty() || u.running_pods > 0 || !u.tags.empty();
  d.status = d.in_use ? "True" : "False";
  d.reason = d.in_use ? "Used" : "Unused";
  d.last_transition = in.current_status == d.status && !in.current_transition.empty()
                          ? in.current_transition
                          : api::rfc3339(in.now);
  if (d.in_use) {
    std::vector<std::string> parts;
    if (!routing.empty())
      parts.push_back(count_text(routing.size(), "namespace", "namespaces") + " (" +
                      list_text(routing) + ")");
    if (u.running_pods > 0)
      parts.push_back(count_text(u.running_pods, "running pod", "running pods"));
    if (!u.tags.empty())
      parts.push_back(count_text(u.tags.size(), "tag", "tags") + " (" + list_text(u.tags) + ")");
    d.message = "revision " + in.revision + " is used by ";
    for (std::size_t i = 0; i < parts.size(); ++i)
      d.message += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  } else {
    d.unused_since = api::parse_rfc3339(d.last_transition);
    d.message = "revision " + in.revision +
                " is unused: no namespace routes to it, no running pod carries it, no tag "
                "points at it (since " +
                d.last_transition + ")";
  }

  if (!in.uninstall_after) return d;
  const std::string annotation = std::string(kUninstallWhenUnusedAnnotation);
  auto grace = restart::parse_go_duration(*in.uninstall_after);
  if (!grace || grace->count() <= 0) {
    d.annotation_error = "annotation " + annotation + ": \"" + *in.uninstall_after +
                         "\" is not a positive Go duration (e.g. 1h, 30m); ignored, nothing is "
                         "uninstalled";
    d.message += "; " + d.annotation_error;
    return d;
  }
  d.uninstall_after = *grace;
  const std::string grace_text =
      restart::go_duration(std::chrono::duration_cast<std::chrono::seconds>(*grace));
  if (in.revision == api::kDefaultRevision) {
    d.message +=
        "; the default revision is never uninstalled automatically (" + annotation + " ignored)";
    return d;
  }
  if (d.in_use) {
    d.message += "; uninstalled once unused for " + grace_text + " (" + annotation + ")";
    return d;
  }
  if (!d.unused_since) return d;
  d.uninstall_at = *d.unused_since + std::chrono::duration_cast<std::chrono::seconds>(*grace);
  d.message += "; uninstalled at " + api::rfc3339(*d.uninstall_at) + " if still unused (" +
               annotation + ": " + grace_text + ")";
  // Only a time the object already holds counts (it survives a restart of meshop).
  d.uninstall = in.current_status == "False" && in.now >= *d.uninstall_at;
  return d;
}

std::optional<InUseDecision> in_use_of(const RevisionsReport& report, const rapidjson::Value& iop,
                                       restart::SystemTime now,
                                       const std::pair<std::string, std::string>* written) {
  auto owner = report.owners.find(key_of(iop));
  if (owner == report.owners.end() || owner->second.empty()) return std::nullopt;
  InUseInput in;
  in.revision = owner->second;
  if (auto u = report.revisions.find(in.revision); u != report.revisions.end())
    in.usage = u->second;
  if (const rapidjson::Value* ann = api::find(iop, "/metadata/annotations");
      ann != nullptr && ann->IsObject())
    if (const rapidjson::Value* v = api::find_member(*ann, kUninstallWhenUnusedAnnotation);
        v != nullptr)
      in.uninstall_after = v->IsString() ? std::string(api::string_view_of(*v)) : std::string();
  if (const rapidjson::Value* conds = api::find(iop, "/status/conditions");
      conds != nullptr && conds->IsArray())
    for (const rapidjson::Value& c : conds->GetArray())
      if (c.IsObject() && api::string_at(c, {"type"}) == kInUseCondition) {
        in.current_status = api::string_at(c, {"status"});
        in.current_transition = api::string_at(c, {"lastTransitionTime"});
      }
  if (written != nullptr) std::tie(in.current_status, in.current_transition) = *written;
  in.now = now;
  return decide_in_use(in);
}

rapidjson::Document status_revisions(const RevisionsReport& report, const std::string& key) {
  rapidjson::Document out(rapidjson::kArrayType);
  auto& a = out.GetAllocator();
  auto owner = report.owners.find(key);
  if (owner == report.owners.end() || owner->second.empty()) return out;
  const std::string& rev = owner->second;
  auto usage = report.revisions.find(rev);
  RevisionUsage empty;
  const RevisionUsage& u = usage == report.revisions.end() ? empty : usage->second;
  rapidjson::Value item(rapidjson::kObjectType);
  item.AddMember("revision", api::make_string(rev, a), a);
  item.AddMember("tags", string_array(u.tags, a), a);
  item.AddMember("namespaces", string_array(u.namespaces, a), a);
  item.AddMember("pods", u.pods, a);
  rapidjson::Value conflicts(rapidjson::kArrayType);
  for (const RevisionConflict& c : u.conflicts) {
    rapidjson::Value o(rapidjson::kObjectType);
    o.AddMember("namespace", api::make_string(c.ns, a), a);
    o.AddMember("reason", api::make_string(c.reason, a), a);
    o.AddMember("message", api::make_string(c.message, a), a);
    conflicts.PushBack(o, a);
  }
  item.AddMember("conflicts", conflicts, a);
  item.AddMember("requestedBy", string_array(u.requested_by, a), a);
  item.AddMember("runningPods", u.running_pods, a);
  InUseInput in;
  in.revision = rev;
  in.usage = u;
  item.AddMember("inUse", decide_in_use(in).in_use, a);
  out.PushBack(item, a);
  return out;
}

RevisionsReconciler::RevisionsReconciler(std::shared_ptr<kube::Client> client,
                                         RevisionsConfig config, metrics::Registry* registry,
                                         std::shared_ptr<kube::EventRecorder> events,
                                         runtime::Clock* clock)
    : RevisionsReconciler(kube::client_reader(client),
                          kube::client_writer(client, std::move(events)), std::move(config),
                          registry, clock) {}

RevisionsReconciler::RevisionsReconciler(std::shared_ptr<kube::Reader> reader,
                                         std::shared_ptr<kube::Writer> writer,
                                         RevisionsConfig config, metrics::Registry* registry,
                                         runtime::Clock* clock)
    : reader_(std::move(reader)),
      writer_(std::move(writer)),
      config_(std::move(config)),
      clock_(clock != nullptr ? clock : &runtime::steady_clock()) {
  if (registry != nullptr)
    namespaces_gauge_ =
        &registry->gauge("meshop_namespaces",
                         "Namespaces whose new pods are injected by each revision.", {"revision"});
}

api::Result<RevisionsView> revisions_view_from(const RevisionsCache& cache,
                                               const RevisionsConfig& config) {
  const std::pair<const char*, const runtime::Store*> stores[] = {
      {"namespaces", cache.namespaces},
      {"mutatingwebhookconfigurations", cache.webhook_configurations},
      {"istiooperators", cache.istio_operators},
      {"pods", cache.pods},
  };
  for (const auto& [name, store] : stores) {
    if (store == nullptr) return api::Error{std::string("revisions: no informer store of ") + name};
    if (!store->has_synced())
      return api::Error{std::string("revisions: the informer of ") + name + " has not synced"};
  }
  RevisionsView view;
  std::set<std::string, std::less<>> names;
  for (runtime::Object& ns : sorted_list(*cache.namespaces)) {
    if (!config.namespace_filter.empty() && runtime::name_of(*ns) != config.namespace_filter)
      continue;
    names.insert(std::string(runtime::name_of(*ns)));
    view.namespaces.push_back(std::move(ns));
  }
  auto& a = view.webhook_configurations.GetAllocator();
  for (const runtime::Object& mwc : sorted_list(*cache.webhook_configurations))
    view.webhook_configurations.PushBack(rapidjson::Value(*mwc, a), a);
  for (runtime::Object& iop : sorted_list(*cache.istio_operators))
    if (config.operator_namespace.empty() ||
        runtime::namespace_of(*iop) == config.operator_namespace)
      view.istio_operators.push_back(std::move(iop));
  for (runtime::Object& pod : cache.pods->list())
    if (config.namespace_filter.empty() || names.count(runtime::namespace_of(*pod)) > 0)
      view.pods.push_back(std::move(pod));
  return view;
}

kube::Task<api::Result<RevisionsView>> RevisionsReconciler::observe() {
  if (config_.cache != nullptr && config_.namespace_selector.empty() &&
      config_.webhook_selector.empty())
    co_return revisions_view_from(*config_.cache, config_);
  RevisionsView view;
  kube::ListOptions ns_options;
  ns_options.label_selector = config_.namespace_selector;
  if (!config_.namespace_filter.empty())
    ns_options.field_selector = "metadata.name=" + config_.namespace_filter;
  auto namespaces = co_await reader_->list_all(kube::resources::kNamespaces, "", ns_options);
  if (!namespaces) co_return api::with_context("listing namespaces", namespaces.error());
  take_items(namespaces->list, view.namespaces);

  kube::ListOptions mwc_options;
  mwc_options.label_selector = config_.webhook_selector;
  auto webhooks =
      co_await reader_->list_all(kube::resources::kMutatingWebhookConfigurations, "", mwc_options);
  if (!webhooks)
    co_return api::with_context("listing mutatingwebhookconfigurations", webhooks.error());
  rapidjson::Value* items = api::find_member(webhooks->list, "items");
  if (items != nullptr && items->IsArray())
    for (rapidjson::Value& item : items->GetArray())
      view.webhook_configurations.PushBack(
          rapidjson::Value(item, view.webhook_configurations.GetAllocator()),
          view.webhook_configurations.GetAllocator());

  auto iop_type = co_await reader_->discover(std::string(api::kIstioOperatorApiVersion),
                                             std::string(api::kIstioOperatorKind));
  if (iop_type) {
    auto iops =
        co_await reader_->list_all(*iop_type, config_.operator_namespace, kube::ListOptions());
    if (!iops) co_return api::with_context("listing istiooperators", iops.error());
    take_items(iops->list, view.istio_operators);
  }  // no CRD: no IstioOperators to report on

  // Pods: from the operator's pod store when there is one (restart::project_pod keeps what is
  // read here: namespace, deletionTimestamp and the status annotation), not listed.
  const bool chosen = !config_.namespace_filter.empty() || !config_.namespace_selector.empty();
  if (config_.cache != nullptr && config_.cache->pods != nullptr &&
      config_.cache->pods->has_synced()) {
    std::set<std::string, std::less<>> names;
    for (const rapidjson::Value& ns : view.namespaces)
      names.insert(api::string_at(ns, {"metadata", "name"}));
    for (runtime::Object& pod : config_.cache->pods->list())
      if (!chosen || names.count(runtime::namespace_of(*pod)) > 0)
        view.pods.push_back(std::move(pod));
    co_return view;
  }
  // Else metadata only (the status annotation is all that is read). Per namespace when the
  // namespaces are a chosen few; one cluster-wide list otherwise.
  kube::ListOptions pod_options;
  pod_options.metadata_only = true;
  std::vector<std::string> pod_namespaces;
  if (chosen) {
    for (const rapidjson::Value& ns : view.namespaces)
      pod_namespaces.push_back(api::string_at(ns, {"metadata", "name"}));
  } else {
    pod_namespaces.push_back("");
  }
  for (const std::string& ns : pod_namespaces) {
    auto pods = co_await reader_->list_all(kube::resources::kPods, ns, pod_options);
    if (!pods) co_return api::with_context("listing pods", pods.error());
    take_items(pods->list, view.pods);
  }
  co_return view;
}

kube::Task<api::Result<RevisionsReport>> RevisionsReconciler::pass() {
  auto view = co_await observe();
  if (!view) co_return view.error();
  auto report = evaluate(*view);
  if (!report) co_return report.error();

  record_events(*report, *view);
  auto status = co_await write_status(*report, *view);
  if (!status) co_return status.error();

  if (namespaces_gauge_ != nullptr) {
    std::map<std::string, int> counts;
    for (const std::string& rev : gauge_revisions_)
      counts[rev] = 0;  // a revision that served before and serves nothing now reads 0
    for (const NamespaceVerdict& v : report->namespaces)
      if (!v.revision.empty()) ++counts[v.revision];
    for (const auto& [rev, n] : counts) {
      namespaces_gauge_->with({rev}).Set(n);
      gauge_revisions_.insert(rev);
    }
  }
  co_return std::move(*report);
}

void RevisionsReconciler::record_events(const RevisionsReport& report, const RevisionsView& view) {
  std::map<std::string, const rapidjson::Value*> objects;
  for (const rapidjson::Value& ns : view.namespaces)
    objects[api::string_at(ns, {"metadata", "name"})] = &ns;
  for (auto it = last_state_.begin(); it != last_state_.end();)
    it = objects.count(it->first) ? std::next(it) : last_state_.erase(it);  // namespace gone

  for (const NamespaceVerdict& v : report.namespaces) {
    std::string state =
        is_warning(v.reason) ? std::string(reason_name(v.reason)) + ": " + v.message : "";
    std::string& last = last_state_[v.name];
    if (last == state) continue;
    last = state;
    if (state.empty()) {
      log::info(
          "namespace injection problem resolved",
          {{"controller", "revisions"}, {"object", v.name}, {"reason", reason_name(v.reason)}});
      continue;
    }
    log::warn("namespace injection problem", {{"controller", "revisions"},
                                              {"object", v.name},
                                              {"reason", reason_name(v.reason)},
                                              {"detail", v.message}});
    const rapidjson::Value& ns = *objects[v.name];
    kube::ObjectReference ref;
    ref.api_version = "v1";
    ref.kind = "Namespace";
    ref.name = v.name;
    ref.uid = api::string_at(ns, {"metadata", "uid"});
    ref.resource_version = api::string_at(ns, {"metadata", "resourceVersion"});
    writer_->event(ref, kube::EventType::kWarning, std::string(reason_name(v.reason)),
                   "EvaluateInjection", v.message);
  }
}

namespace {

// The InUse condition `use` says.
Condition in_use_condition(const InUseDecision& use) {
  return {std::string(kInUseCondition), use.status, use.reason, use.message, use.last_transition};
}

// The merge patch of the status subresource for `iop` as read: status.revisions when it differs
// from `revisions`, and the InUse condition `use` when the object does not show it, merged into
// the object's list (the other reconcilers' conditions kept as they are: a merge patch replaces
// the whole list) and guarded by the object's resourceVersion (reconcilers/conditions.hpp).
// nullopt when the object says both.
std::optional<std::string> revisions_status_patch(const rapidjson::Value& iop,
                                                  const rapidjson::Value& revisions,
                                                  const std::optional<InUseDecision>& use,
                                                  std::string_view now) {
  const rapidjson::Value* current = api::find(iop, "/status/revisions");
  const bool revisions_same = current != nullptr && api::json_equal(*current, revisions);
  const bool write_condition =
      use && !condition_shows(find_condition(iop, kInUseCondition), in_use_condition(*use));
  if (revisions_same && !write_condition) return std::nullopt;
  rapidjson::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("revisions", rapidjson::Value(revisions, a), a);
  if (write_condition) {
    status.AddMember("conditions", merge_conditions(iop, {in_use_condition(*use)}, now, a), a);
    guard_with_resource_version(patch, iop);
  }
  patch.AddMember("status", status, a);
  return api::to_json(patch);
}

}  // namespace

kube::Task<api::Status> RevisionsReconciler::write_status(const RevisionsReport& report,
                                                          const RevisionsView& view) {
  const restart::SystemTime now = clock_->wall_now();
  next_deadline_.reset();
  watching_unused_ = false;
  std::set<std::string> seen;
  for (const rapidjson::Value& iop : view.istio_operators) {
    seen.insert(key_of(iop));
    std::optional<InUseDecision> use;
    if (auto written = co_await write_one_status(report, iop, now, use); !written)
      co_return written;
    if (use && use->uninstall && !terminating(iop))
      if (auto removed = co_await uninstall_unused(report, iop, *use); !removed) co_return removed;
  }
  for (auto it = last_in_use_.begin(); it != last_in_use_.end();)
    it = seen.count(it->first) ? std::next(it) : last_in_use_.erase(it);
  co_return api::ok_status();
}

kube::Task<api::Status> RevisionsReconciler::write_one_status(const RevisionsReport& report,
                                                              const rapidjson::Value& iop,
                                                              restart::SystemTime now,
                                                              std::optional<InUseDecision>& use) {
  const std::string key = key_of(iop);
  const rapidjson::Document desired = status_revisions(report, key);

  // The InUse condition. What this process last wrote wins over the object's condition for
  // the transition time: an object read before that write landed holds an older InUse.
  auto last = last_in_use_.find(key);
  const std::pair<std::string, std::string>* written =
      last != last_in_use_.end() ? &last->second : nullptr;
  use = in_use_of(report, iop, now, written);
  if (use) {
    if (use->uninstall_after && owner_revision(report, key) != api::kDefaultRevision)
      watching_unused_ = true;  // its pods may go at any time
    if (use->uninstall_at && !use->uninstall &&
        (!next_deadline_ || *use->uninstall_at < *next_deadline_))
      next_deadline_ = use->uninstall_at;
  }

  // Written against the object as read (the store's copy); after a 409, against the object as
  // the apiserver holds it, the decision taken again from that one.
  const std::string now_text = api::rfc3339(now);
  std::optional<InUseDecision> sent;  // the InUse of the patch last built, when it carries one
  const StatusPatch body = [&](const rapidjson::Value& object) -> std::optional<std::string> {
    std::optional<InUseDecision> u =
        &object == &iop ? use : in_use_of(report, object, now, written);
    sent.reset();
    if (u && !condition_shows(find_condition(object, kInUseCondition), in_use_condition(*u)))
      sent = u;
    return revisions_status_patch(object, desired, u, now_text);
  };
  auto r = co_await patch_status(*writer_, reader_.get(), istio_operator_resource(), iop, body);
  if (!r && r.error().is(kube::ErrorKind::kNotFound)) co_return api::ok_status();
  if (!r) co_return api::with_context("istiooperator " + key + ": status.revisions", r.error());
  if (!*r || !sent) co_return api::ok_status();

  // A change between True and False: from what this process wrote last, else (first pass)
  // from the object; not a first report, not a rewrite of the same.
  const rapidjson::Value* mine = find_condition(iop, kInUseCondition);
  const std::string before =
      written != nullptr ? written->first
                         : (mine != nullptr ? api::string_at(*mine, {"status"}) : std::string());
  const bool changed = (before == "True" || before == "False") && before != sent->status;
  if (changed) {
    writer_->event(iop_reference(iop), kube::EventType::kNormal,
                   sent->in_use ? "RevisionInUse" : "RevisionUnused", "EvaluateUsage",
                   sent->message);
    log::info(sent->in_use ? "revision in use again" : "revision unused",
              {{"controller", "revisions"}, {"object", key}, {"detail", sent->message}});
  }
  last_in_use_[key] = {sent->status, sent->last_transition};
  co_return api::ok_status();
}

kube::Task<api::Status> RevisionsReconciler::uninstall_unused(const RevisionsReport& report,
                                                              const rapidjson::Value& iop,
                                                              const InUseDecision& use) {
  // The object already holds InUse=False long enough (decide_in_use): delete it, and its
  // finalizer (the install reconciler's) uninstalls the revision.
  const std::string key = key_of(iop);
  std::string why =
      "revision " + owner_revision(report, key) + " has been unused since " + use.last_transition +
      ", longer than " + std::string(kUninstallWhenUnusedAnnotation) + " (" +
      restart::go_duration(std::chrono::duration_cast<std::chrono::seconds>(*use.uninstall_after)) +
      "): deleting IstioOperator " + key + " (its finalizer uninstalls it)";
  log::info("uninstalling unused revision",
            {{"controller", "revisions"}, {"object", key}, {"detail", why}});
  writer_->event(iop_reference(iop), kube::EventType::kNormal, "UninstallUnused", "Uninstall", why);
  const std::string ns = api::string_at(iop, {"metadata", "namespace"});
  const std::string name = api::string_at(iop, {"metadata", "name"});
  auto r = co_await writer_->remove(istio_operator_resource(), ns, name, kube::DeleteOptions());
  if (!r && !r.error().is(kube::ErrorKind::kNotFound))
    co_return api::with_context("istiooperator " + key + ": uninstalling unused revision",
                                r.error());
  co_return api::ok_status();
}

kube::Task<runtime::Action> RevisionsReconciler::reconcile(const std::string& /*key*/) {
  auto report = co_await pass();
  if (!report) co_return error_action(report.error());
  // Pods are not watched (a pass per pod change would be costly): while a non-default
  // IstioOperator carries a valid uninstall annotation, the stores are read again every 10 s
  // (no API call), and at the uninstall deadline.
  std::chrono::nanoseconds after = std::chrono::minutes(5);
  if (watching_unused_) after = std::chrono::seconds(10);
  if (next_deadline_) {
    auto until = *next_deadline_ - clock_->wall_now() + std::chrono::seconds(1);
    if (until < after) after = std::max<std::chrono::nanoseconds>(until, std::chrono::seconds(1));
  }
  co_return runtime::Action::requeue_after(std::chrono::duration_cast<runtime::Duration>(after));
}

void setup_revisions(const OperatorSetup& setup, RevisionsConfig config) {
  runtime::Cache& cache = setup.cache;
  auto observed = std::make_shared<RevisionsCache>();
  observed->namespaces = &cache.store(watches::namespaces());
  observed->webhook_configurations = &cache.store(watches::mutating_webhook_configurations());
  observed->istio_operators = &cache.store(watches::istio_operators());
  observed->pods = &cache.store(watches::pods());
  config.cache = observed.get();
  auto reconciler = std::make_shared<RevisionsReconciler>(
      setup.reader(), setup.writer(), std::move(config), setup.registry, &setup.manager.clock());
  setup.controller("revisions")
      .singleton(kAllKey)
      .watches(watches::istio_operators())
      .watches(watches::namespaces())
      .watches(watches::mutating_webhook_configurations())
      .complete(
          [reconciler, observed](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
