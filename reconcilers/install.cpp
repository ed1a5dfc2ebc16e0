#include "reconcilers/install.hpp"

#include <algorithm>
#include <ctime>

#include "api/hash.hpp"
#include "api/istio_operator.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/manifest/render.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/ownership.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"

namespace meshop::reconcilers {
namespace {

std::string group_of(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

api::Value& ensure_object_member(api::Value& parent, std::string_view name, api::Allocator& a) {
  api::Value* v = api::find_member(parent, name);
  if (v == nullptr) {
    parent.AddMember(api::make_string(name, a), api::Value(rapidjson::kObjectType), a);
    v = api::find_member(parent, name);
  } else if (!v->IsObject()) {
    v->SetObject();
  }
  return *v;
}

void set_string_member(api::Value& object, std::string_view name, std::string_view value,
                       api::Allocator& a) {
  if (api::Value* v = api::find_member(object, name)) {
    v->SetString(value.data(), static_cast<rapidjson::SizeType>(value.size()), a);
    return;
  }
  object.AddMember(api::make_string(name, a), api::make_string(value, a), a);
}

bool annotation_true(const rapidjson::Value& object, std::string_view annotation) {
  const api::Value* metadata = api::find_member(object, "metadata");
  if (metadata == nullptr) return false;
  const api::Value* annotations = api::find_member(*metadata, "annotations");
  if (annotations == nullptr || !annotations->IsObject()) return false;
  const api::Value* v = api::find_member(*annotations, annotation);
  return v != nullptr && v->IsString() && api::string_view_of(*v) == "true";
}

std::int64_t int_at(const rapidjson::Value& root, std::initializer_list<std::string_view> names,
                    std::int64_t fallback) {
  const rapidjson::Value* v = &root;
  for (std::string_view n : names) {
    if (!v->IsObject()) return fallback;
    v = api::find_member(*v, n);
    if (v == nullptr) return fallback;
  }
  return v->IsInt64() ? v->GetInt64() : fallback;
}

std::string rfc3339_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Status keys this reconciler writes, as a JSON object (the value of "status").
struct Condition {
  std::string type, status, reason, message;
};

std::vector<Condition> conditions_for(const StatusReport& report) {
  Condition reconciled{"Reconciled", "True", "Applied", "every rendered object was applied"};
  Condition ready{"Ready", "False", "WorkloadsNotReady", report.message};
  switch (report.state) {
    case InstallState::kHealthy:
      ready = {"Ready", "True", "Healthy", "every Deployment and DaemonSet is available"};
      break;
    case InstallState::kError: {
      std::string reason = report.reason.empty() ? "Error" : report.reason;
      reconciled = {"Reconciled", "False", reason, report.message};
      ready = {"Ready", "False", reason, report.message};
      break;
    }
    case InstallState::kReconciling:
      break;
    case InstallState::kNone:
      reconciled = {"Reconciled", "False", "NotReconciled", report.message};
      ready = {"Ready", "False", "NotReconciled", report.message};
      break;
  }
  return {reconciled, ready};
}

}  // namespace

// ---- Pure parts ----

const kube::ResourceType& istio_operator_resource() {
  static const kube::ResourceType type{"install.istio.io", "v1alpha1", "istiooperators",
                                       "IstioOperator", true};
  return type;
}

void add_owner_labels(api::Value& object, api::Allocator& allocator, std::string_view iop_name,
                      std::string_view iop_namespace, std::string_view component) {
  if (!object.IsObject()) return;
  api::Value& metadata = ensure_object_member(object, "metadata", allocator);
  api::Value& labels = ensure_object_member(metadata, "labels", allocator);
  set_string_member(labels, kManagedByLabel, kManagedByValue, allocator);
  set_string_member(labels, kOwningResourceLabel, iop_name, allocator);
  set_string_member(labels, kOwningResourceNamespaceLabel, iop_namespace, allocator);
  if (!component.empty()) set_string_member(labels, kComponentLabel, component, allocator);
}

std::optional<std::string> owner_key(const rapidjson::Value& object) {
  if (!object.IsObject()) return std::nullopt;
  const api::Value* metadata = api::find_member(object, "metadata");
  if (metadata == nullptr || !metadata->IsObject()) return std::nullopt;
  const api::Value* labels = api::find_member(*metadata, "labels");
  if (labels == nullptr || !labels->IsObject()) return std::nullopt;
  std::string name = api::string_at(*labels, {kOwningResourceLabel});
  std::string ns = api::string_at(*labels, {kOwningResourceNamespaceLabel});
  if (name.empty() || ns.empty()) return std::nullopt;
  return ns + "/" + name;
}

bool install_relevant_change(const rapidjson::Value& old_iop, const rapidjson::Value& new_iop) {
  if (int_at(old_iop, {"metadata", "generation"}, 0) !=
      int_at(new_iop, {"metadata", "generation"}, 0))
    return true;
  for (const char* field : {"labels", "annotations", "finalizers", "deletionTimestamp"}) {
    const api::Value* a = api::find(old_iop, std::string("/metadata/") + field);
    const api::Value* b = api::find(new_iop, std::string("/metadata/") + field);
    if ((a == nullptr) != (b == nullptr)) return true;
    if (a != nullptr && *a != *b) return true;
  }
  return false;
}

std::string owner_selector(std::string_view iop_name, std::string_view iop_namespace) {
  return std::string(kOwningResourceLabel) + "=" + std::string(iop_name) + "," +
         std::string(kOwningResourceNamespaceLabel) + "=" + std::string(iop_namespace);
}

std::string ObjectId::to_string() const {
  std::string out = kind;
  if (!group.empty()) out += "." + group;
  out += " ";
  if (!ns.empty()) out += ns + "/";
  return out + name;
}

ObjectId object_id(const rapidjson::Value& object) {
  return {group_of(api::string_at(object, {"apiVersion"})), api::string_at(object, {"kind"}),
          api::string_at(object, {"metadata", "namespace"}),
          api::string_at(object, {"metadata", "name"})};
}

const std::vector<std::pair<std::string, std::string>>& prunable_kinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const manifest::InstalledKind& k : manifest::installed_kinds()) {
      if (k.owner != manifest::InstalledKind::Owner::kInstall) continue;
      std::string group(k.group), version(k.version);
      out.emplace_back(group.empty() ? version : group + "/" + version, std::string(k.kind));
    }
    return out;
  }();
  return kinds;
}

bool managed_kind(std::string_view kind) {
  // A kind the table does not know (an overlay's) is applied and pruned like the rest.
  using Owner = manifest::InstalledKind::Owner;
  for (const manifest::InstalledKind& k : manifest::installed_kinds())
    if (k.kind == kind) return k.owner == Owner::kInstall || k.owner == Owner::kKeep;
  return true;
}

bool prunable_kind(std::string_view kind) {
  for (const manifest::InstalledKind& k : manifest::installed_kinds())
    if (k.kind == kind) return k.owner == manifest::InstalledKind::Owner::kInstall;
  return true;
}

std::vector<ObjectId> select_prune(const std::set<ObjectId>& desired,
                                   const std::vector<ObjectId>& live) {
  std::vector<ObjectId> out;
  for (const ObjectId& id : live)
    if (!desired.contains(id) && prunable_kind(id.kind)) out.push_back(id);
  return out;
}

std::string_view to_string(InstallState state) {
  switch (state) {
    case InstallState::kNone:
      return "NONE";
    case InstallState::kReconciling:
      return "RECONCILING";
    case InstallState::kHealthy:
      return "HEALTHY";
    case InstallState::kError:
      return "ERROR";
  }
  return "NONE";
}

std::optional<std::string> workload_not_ready(const rapidjson::Value& object) {
  std::string kind = api::string_at(object, {"kind"});
  if (kind != "Deployment" && kind != "DaemonSet") return std::nullopt;
  std::string what = kind + " " + api::string_at(object, {"metadata", "namespace"}) + "/" +
                     api::string_at(object, {"metadata", "name"});
  std::int64_t generation = int_at(object, {"metadata", "generation"}, 0);
  std::int64_t observed = int_at(object, {"status", "observedGeneration"}, 0);
  if (observed < generation)
    return what + ": generation " + std::to_string(generation) + " not yet observed";
  if (kind == "Deployment") {
    std::int64_t wanted = int_at(object, {"spec", "replicas"}, 1);
    std::int64_t available = int_at(object, {"status", "availableReplicas"}, 0);
    if (available < wanted)
      return what + ": " + std::to_string(available) + "/" + std::to_string(wanted) +
             " replicas available";
    return std::string();
  }
  std::int64_t desired = int_at(object, {"status", "desiredNumberScheduled"}, 0);
  std::int64_t available = int_at(object, {"status", "numberAvailable"}, 0);
  if (available != desired)
    return what + ": " + std::to_string(available) + "/" + std::to_string(desired) +
           " pods available";
  return std::string();
}

bool has_controller_owner(const rapidjson::Value& object) {
  const api::Value* refs = api::find(object, "/metadata/ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return false;
  for (const api::Value& r : refs->GetArray())
    if (const api::Value* c = r.IsObject() ? api::find_member(r, "controller") : nullptr;
        c != nullptr && c->IsBool() && c->GetBool())
      return true;
  return false;
}

bool crd_established(const rapidjson::Value& crd) {
  const api::Value* status = api::find_member(crd, "status");
  const api::Value* conditions =
      status != nullptr && status->IsObject() ? api::find_member(*status, "conditions") : nullptr;
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const api::Value& c : conditions->GetArray())
    if (c.IsObject() && api::string_at(c, {"type"}) == "Established")
      return api::string_at(c, {"status"}) == "True";
  return false;
}

StatusReport compute_status(const std::vector<AppliedObject>& objects) {
  StatusReport report;
  std::vector<std::string> errors, waiting;
  auto append = [](std::string& to, const std::string& what) {
    to += (to.empty() ? "" : "; ") + what;
  };
  for (const AppliedObject& o : objects) {
    ComponentReport& c = report.components[o.component];
    if (c.state == InstallState::kNone) c.state = InstallState::kHealthy;
    if (o.live == nullptr) {
      c.state = InstallState::kError;
      append(c.error, o.error);
      errors.push_back(o.error);
      continue;
    }
    auto why = workload_not_ready(*o.live);
    if (!why || why->empty()) continue;
    if (c.state != InstallState::kError) c.state = InstallState::kReconciling;
    append(c.error, *why);
    waiting.push_back(*why);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v)
      out += (out.empty() ? "" : "; ") + s;
    return out;
  };
  if (!errors.empty()) {
    report.state = InstallState::kError;
    report.message = join(errors);
  } else if (!waiting.empty()) {
    report.state = InstallState::kReconciling;
    report.message = "waiting for " + join(waiting);
  } else {
    report.state = InstallState::kHealthy;
    report.message = "";
  }
  return report;
}

std::string status_patch(const StatusReport& report, std::int64_t generation,
                         const rapidjson::Value* current_status, std::string_view now) {
  api::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  auto str = [&](std::string_view s) { return api::make_string(s, a); };
  api::Value status(rapidjson::kObjectType);
  status.AddMember("status", str(to_string(report.state)), a);
  status.AddMember("message", str(report.message), a);
  status.AddMember("observedGeneration", api::Value(generation), a);

  api::Value components(rapidjson::kObjectType);
  for (const auto& [name, c] : report.components) {
    api::Value entry(rapidjson::kObjectType);
    entry.AddMember("status", str(to_string(c.state)), a);
    entry.AddMember("error", str(c.error), a);
    components.AddMember(str(name), entry, a);
  }

  // Conditions keep their lastTransitionTime while their status stays.
  const api::Value* current_conditions = current_status != nullptr && current_status->IsObject()
                                             ? api::find_member(*current_status, "conditions")
                                             : nullptr;
  auto previous = [&](const std::string& type) -> const api::Value* {
    if (current_conditions == nullptr || !current_conditions->IsArray()) return nullptr;
    for (const api::Value& c : current_conditions->GetArray())
      if (c.IsObject() && api::string_at(c, {"type"}) == type) return &c;
    return nullptr;
  };
  api::Value conditions(rapidjson::kArrayType);
  for (const Condition& c : conditions_for(report)) {
    std::string transition(now);
    if (const api::Value* p = previous(c.type); p != nullptr &&
                                                api::string_at(*p, {"status"}) == c.status &&
                                                !api::string_at(*p, {"lastTransitionTime"}).empty())
      transition = api::string_at(*p, {"lastTransitionTime"});
    api::Value cond(rapidjson::kObjectType);
    cond.AddMember("type", str(c.type), a);
    cond.AddMember("status", str(c.status), a);
    cond.AddMember("observedGeneration", api::Value(generation), a);
    cond.AddMember("lastTransitionTime", str(transition), a);
    cond.AddMember("reason", str(c.reason), a);
    cond.AddMember("message", str(c.message), a);
    conditions.PushBack(cond, a);
  }
  // Conditions of other types are other reconcilers' (the restarts reconciler's RestartsHalted):
  // written back as they are, since a merge patch replaces the whole list.
  if (current_conditions != nullptr && current_conditions->IsArray())
    for (const api::Value& c : current_conditions->GetArray()) {
      std::string type = c.IsObject() ? api::string_at(c, {"type"}) : "";
      bool ours = false;
      for (const api::Value& mine : conditions.GetArray())
        ours = ours || api::string_at(mine, {"type"}) == type;
      if (!type.empty() && !ours) conditions.PushBack(api::Value(c, a), a);
    }

  // Unchanged? Compare with what is there, key by key (other reconcilers' keys ignored).
  if (current_status != nullptr && current_status->IsObject()) {
    bool same = true;
    for (auto& m : status.GetObject()) {
      const api::Value* cur = api::find_member(*current_status, api::string_view_of(m.name));
      same = same && cur != nullptr && api::json_equal(*cur, m.value);
    }
    const api::Value* cur_components = api::find_member(*current_status, "componentStatus");
    same = same && cur_components != nullptr && api::json_equal(*cur_components, components);
    const api::Value* cur_conditions = api::find_member(*current_status, "conditions");
    same = same && cur_conditions != nullptr && api::json_equal(*cur_conditions, conditions);
    if (same) return {};
    // A merge patch merges maps: components no longer reported are removed with null.
    if (cur_components != nullptr && cur_components->IsObject())
      for (auto& m : cur_components->GetObject())
        if (!report.components.contains(std::string(api::string_view_of(m.name))))
          components.AddMember(api::Value(m.name, a), api::Value(rapidjson::kNullType), a);
  }
  status.AddMember("componentStatus", components, a);
  status.AddMember("conditions", conditions, a);
  doc.AddMember("status", status, a);
  return api::to_json(doc);
}

InstallRefusal install_refusal(const api::IstioOperatorValidation& validation,
                               const api::Error& render_error) {
  if (!validation.ok()) return {"InvalidSpec", "invalid spec: " + validation.message()};
  if (render_error.invalid()) return {"InvalidSpec", "invalid spec: " + render_error.message};
  return {"RenderFailed", "cannot render: " + render_error.message};
}

// ---- The reconciler ----

InstallReconciler::InstallReconciler(std::shared_ptr<kube::Client> client, InstallConfig config,
                                     metrics::Registry* registry,
                                     std::shared_ptr<kube::EventRecorder> events)
    : client_(std::move(client)), config_(std::move(config)), events_(std::move(events)) {
  if (registry != nullptr) {
    applied_total_ =
        &registry->counter("meshop_install_applied_objects_total",
                           "Objects server-side applied for IstioOperators.", {"kind"});
    unchanged_total_ = &registry->counter(
        "meshop_install_unchanged_objects_total",
        "Objects not applied again: unchanged since meshop applied them (resourceVersion).",
        {"kind"});
    pruned_total_ = &registry->counter(
        "meshop_install_deleted_objects_total",
        "Objects deleted for IstioOperators (pruned as no longer rendered, or uninstalled).",
        {"kind"});
  }
}

kube::Task<api::Result<kube::ResourceType>> InstallReconciler::resource_for(
    const std::string& api_version, const std::string& kind) {
  std::string key = api_version + "/" + kind;
  if (auto it = types_.find(key); it != types_.end()) co_return it->second;
  auto type = co_await client_->discover(api_version, kind);
  if (!type) co_return type.error();
  types_.emplace(key, *type);
  co_return *type;
}

void InstallReconciler::warn(const rapidjson::Value& iop, std::string reason, std::string note) {
  if (events_)
    events_->record(kube::reference_to(iop), kube::EventType::kWarning, std::move(reason),
                    "Install", std::move(note));
}

kube::Task<api::Result<api::Ok>> InstallReconciler::write_status(const rapidjson::Value& iop,
                                                                 const StatusReport& report) {
  const api::Value* current = api::find_member(iop, "status");
  std::string body =
      status_patch(report, int_at(iop, {"metadata", "generation"}, 0), current, rfc3339_now());
  if (body.empty()) co_return api::Ok{};
  kube::PatchOptions options;
  options.subresource = "status";
  const std::string ns = api::string_at(iop, {"metadata", "namespace"});
  const std::string name = api::string_at(iop, {"metadata", "name"});
  auto patched = co_await client_->patch(istio_operator_resource(), ns, name,
                                         kube::PatchType::kMerge, std::move(body), options);
  if (!patched) co_return patched.error();
  co_return api::Ok{};
}

kube::Task<api::Result<int>> InstallReconciler::delete_owned(
    const std::string& name, const std::string& ns, const std::set<ObjectId>& keep,
    const std::vector<std::pair<std::string, std::string>>& kinds, bool keep_shared) {
  int deleted = 0;
  for (const auto& [api_version, kind] : kinds) {
    auto type = co_await resource_for(api_version, kind);
    if (!type) {
      // A kind this apiserver does not serve holds nothing to delete.
      log::info("skipping kind the apiserver does not serve",
                {{"controller", "install"}, {"kind", kind}, {"reason", type.message()}});
      continue;
    }
    kube::ListOptions list_options;
    list_options.label_selector = owner_selector(name, ns);
    list_options.metadata_only = true;
    auto listed = co_await client_->list_all(*type, "", list_options);
    if (!listed) {
      if (listed.error().is(kube::ErrorKind::kNotFound)) continue;
      co_return listed.error();
    }
    const rapidjson::Value& items = listed->list["items"];
    std::vector<ObjectId> live;
    for (const rapidjson::Value& item : items.GetArray()) {
      // An object another controller made (the EndpointSlices of a rendered Service copy its
      // labels, owner labels included) is that controller's, never meshop's to delete.
      if (has_controller_owner(item)) continue;
      if (keep_shared &&
          is_shared_component(api::string_at(item, {"metadata", "labels", kComponentLabel})))
        continue;
      ObjectId id = object_id(item);
      // Metadata-only lists name the kind of the list, not always of each item.
      id.group = type->group;
      id.kind = type->kind;
      live.push_back(std::move(id));
    }
    for (const ObjectId& id : select_prune(keep, live)) {
      kube::DeleteOptions delete_options;
      delete_options.propagation = kube::PropagationPolicy::kBackground;
      auto removed = co_await client_->remove(*type, id.ns, id.name, delete_options);
      if (!removed && !removed.error().is(kube::ErrorKind::kNotFound)) co_return removed.error();
      ++deleted;
      if (pruned_total_ != nullptr) pruned_total_->with({kind}).Increment();
      log::info(
          "deleted object owned by IstioOperator",
          {{"controller", "install"}, {"object", ns + "/" + name}, {"deleted", id.to_string()}});
    }
  }
  co_return deleted;
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::reconcile_once(const std::string& key) {
  InstallOutcome outcome;
  auto slash = key.find('/');
  if (slash == std::string::npos)
    co_return api::Error{"IstioOperator key \"" + key + "\": expected <namespace>/<name>"};
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  const kube::ResourceType& iop_type = istio_operator_resource();

  // Observe.
  auto got = co_await client_->get(iop_type, ns, name);
  if (!got) {
    if (got.error().is(kube::ErrorKind::kNotFound)) {
      warned_generation_.erase(key);
      co_return outcome;  // kAbsent
    }
    co_return got.error();
  }
  const rapidjson::Value& iop = *got;
  const std::string resource_version = api::string_at(iop, {"metadata", "resourceVersion"});

  if (annotation_true(iop, kIgnoreReconcileAnnotation)) {
    log::info("IstioOperator paused by annotation; nothing written",
              {{"controller", "install"}, {"object", key}});
    outcome.kind = InstallOutcome::Kind::kIgnored;
    co_return outcome;
  }

  // Finalizer position, if present.
  int finalizer_index = -1;
  if (const api::Value* md = api::find_member(iop, "metadata")) {
    const api::Value* fin = api::find_member(*md, "finalizers");
    if (fin != nullptr && fin->IsArray())
      for (rapidjson::SizeType i = 0; i < fin->Size(); ++i)
        if ((*fin)[i].IsString() && api::string_view_of((*fin)[i]) == kUninstallFinalizer)
          finalizer_index = static_cast<int>(i);
  }
  const std::string rv_test =
      R"({"op":"test","path":"/metadata/resourceVersion","value":")" + resource_version + R"("})";

  // Deleted: uninstall, then let the object go.
  if (!api::string_at(iop, {"metadata", "deletionTimestamp"}).empty()) {
    outcome.kind = InstallOutcome::Kind::kUninstalled;
    if (finalizer_index < 0) co_return outcome;  // not ours to hold
    std::vector<std::pair<std::string, std::string>> kinds(prunable_kinds().rbegin(),
                                                           prunable_kinds().rend());
    // What every revision shares stays while another IstioOperator remains to take it over
    // (it is re-queued by the deletion and relabels it on its next pass).
    auto all = co_await client_->list_all(iop_type, "");
    if (!all) co_return all.error();
    std::vector<OperatorRef> refs;
    for (const rapidjson::Value& other : all->list["items"].GetArray())
      refs.push_back(operator_ref(other, true));
    auto successor = shared_owner(refs);
    const bool keep_shared = successor.has_value() && successor->key() != key;
    const std::set<ObjectId> keep_nothing;
    auto deleted = co_await delete_owned(name, ns, keep_nothing, kinds, keep_shared);
    if (!deleted) co_return api::with_context("uninstalling IstioOperator " + key, deleted.error());
    outcome.pruned = *deleted;
    std::string patch = "[" + rv_test + R"(,{"op":"remove","path":"/metadata/finalizers/)" +
                        std::to_string(finalizer_index) + R"("}])";
    auto patched = co_await client_->patch(iop_type, ns, name, kube::PatchType::kJson, patch);
    if (!patched && !patched.error().is(kube::ErrorKind::kNotFound)) co_return patched.error();
    log::info(
        "uninstalled IstioOperator",
        {{"controller", "install"}, {"object", key}, {"deleted", std::to_string(outcome.pruned)}});
    if (events_)
      events_->record(kube::reference_to(iop), kube::EventType::kNormal, "Uninstalled", "Uninstall",
                      "deleted " + std::to_string(outcome.pruned) + " objects owned by " + key);
    co_return outcome;
  }

  // The finalizer first: once anything is installed, deletion must come through here.
  if (finalizer_index < 0) {
    const api::Value* md = api::find_member(iop, "metadata");
    const api::Value* fin = md != nullptr ? api::find_member(*md, "finalizers") : nullptr;
    std::string add = fin != nullptr && fin->IsArray()
                          ? R"({"op":"add","path":"/metadata/finalizers/-","value":")" +
                                std::string(kUninstallFinalizer) + R"("})"
                          : R"({"op":"add","path":"/metadata/finalizers","value":[")" +
                                std::string(kUninstallFinalizer) + R"("]})";
    auto patched = co_await client_->patch(iop_type, ns, name, kube::PatchType::kJson,
                                           "[" + rv_test + "," + add + "]");
    if (!patched) co_return patched.error();
    got = std::move(patched);  // carries the new resourceVersion; status patches are unguarded
  }
  const rapidjson::Value& current = *got;

  // Validate and render: a bad spec is the user's to fix, reported and not retried.
  api::IstioOperatorValidation validation = api::validate_istio_operator(current);
  auto rendered = validation.ok() ? manifest::render_istio_operator(current)
                                  : api::Result<manifest::RenderResult>(api::Error{});
  if (!validation.ok() || !rendered) {
    InstallRefusal refusal =
        install_refusal(validation, rendered.ok() ? api::Error{} : rendered.error());
    StatusReport report;
    report.state = InstallState::kError;
    report.message = refusal.message;
    report.reason = refusal.reason;
    outcome.kind = InstallOutcome::Kind::kInvalid;
    outcome.state = InstallState::kError;
    outcome.message = refusal.message;
    warn(current, refusal.reason, refusal.message);
    log::warn("IstioOperator not installed; waiting for it to change",
              {{"controller", "install"}, {"object", key}, {"reason", refusal.message}});
    auto written = co_await write_status(current, report);
    if (!written) co_return written.error();
    co_return outcome;
  }

  // What the spec asks for that meshop ignores or cannot apply (installPackagePath, an overlay
  // path that matches nothing, ...): a Warning Event and a log line, once per generation.
  const std::int64_t generation = int_at(current, {"metadata", "generation"}, 0);
  if (auto seen = warned_generation_.find(key);
      seen == warned_generation_.end() || seen->second != generation) {
    std::vector<std::string> warnings = validation.warnings;
    warnings.insert(warnings.end(), rendered->warnings.begin(), rendered->warnings.end());
    for (const std::string& w : warnings) {
      warn(current, "RenderWarning", w);
      log::warn("IstioOperator spec partly ignored",
                {{"controller", "install"}, {"object", key}, {"warning", w}});
    }
    warned_generation_[key] = generation;
  }

  // Revision ownership: the oldest IstioOperator of a revision owns it (reconcilers/ownership).
  auto all = co_await client_->list_all(iop_type, "");
  if (!all) co_return all.error();
  std::vector<OperatorRef> refs;
  bool listed_self = false;
  for (const rapidjson::Value& other : all->list["items"].GetArray()) {
    refs.push_back(operator_ref(other, true));
    listed_self = listed_self || refs.back().key() == key;
  }
  if (!listed_self) refs.push_back(operator_ref(current, true));
  const std::string revision = revision_of(current);
  const std::optional<OperatorRef> owner = revision_owner(refs, revision);
  if (owner && owner->key() != key) {
    std::string owner_name = owner->key();
    StatusReport report;
    report.state = InstallState::kError;
    report.message = "revision \"" + revision + "\" is already installed by IstioOperator " +
                     owner_name + " (older); this one is not installed";
    outcome.kind = InstallOutcome::Kind::kConflict;
    outcome.state = InstallState::kError;
    outcome.message = report.message;
    warn(current, "RevisionConflict", report.message);
    auto written = co_await write_status(current, report);
    if (!written) co_return written.error();
    co_return outcome;
  }

  // A new generation: say so before the (possibly long) apply. Only then, so that passes over
  // an unchanged resource write no status at all.
  if (int_at(current, {"status", "observedGeneration"}, -1) != generation &&
      api::string_at(current, {"status", "status"}) != to_string(InstallState::kReconciling)) {
    std::string body = R"({"status":{"status":"RECONCILING","message":"applying generation )" +
                       std::to_string(generation) + R"("}})";
    kube::PatchOptions options;
    options.subresource = "status";
    auto patched =
        co_await client_->patch(iop_type, ns, name, kube::PatchType::kMerge, body, options);
    if (!patched) co_return patched.error();
  }

  // What every revision renders the same way is applied by its one owner only; the others
  // neither apply, relabel nor prune it.
  const std::optional<OperatorRef> shared = shared_owner(refs);
  const bool owns_shared = shared.has_value() && shared->key() == key;
  if (!owns_shared) {
    auto& objs = rendered->objects;
    objs.erase(std::remove_if(objs.begin(), objs.end(),
                              [](const manifest::RenderedObject& r) {
                                return is_shared_component(r.component);
                              }),
               objs.end());
  }

  // Desired objects, labelled.
  std::vector<manifest::RenderedObject>& objects = rendered->objects;
  std::set<ObjectId> desired;
  std::set<std::string> needed_namespaces;
  std::vector<std::pair<std::string, std::string>> kinds = prunable_kinds();
  for (manifest::RenderedObject& r : objects) {
    std::string kind = api::string_at(r.object, {"kind"});
    if (!managed_kind(kind)) continue;
    add_owner_labels(r.object, r.object.GetAllocator(), name, ns, r.component);
    desired.insert(object_id(r.object));
    std::string api_version = api::string_at(r.object, {"apiVersion"});
    if (prunable_kind(kind) &&
        std::find(kinds.begin(), kinds.end(), std::make_pair(api_version, kind)) == kinds.end())
      kinds.emplace_back(api_version, kind);
    std::string object_ns = api::string_at(r.object, {"metadata", "namespace"});
    if (!object_ns.empty()) needed_namespaces.insert(object_ns);
  }

  // Namespaces the objects need. Created ones are labelled as meshop's, never deleted (they
  // may hold what others put there, e.g. the webhook certificate Secret).
  for (const std::string& object_ns : needed_namespaces) {
    auto existing = co_await client_->get(kube::resources::kNamespaces, "", object_ns);
    if (existing) continue;
    if (!existing.error().is(kube::ErrorKind::kNotFound)) co_return existing.error();
    api::Document namespace_object(rapidjson::kObjectType);
    auto& a = namespace_object.GetAllocator();
    namespace_object.AddMember("apiVersion", "v1", a);
    namespace_object.AddMember("kind", "Namespace", a);
    api::Value md(rapidjson::kObjectType);
    md.AddMember("name", api::make_string(object_ns, a), a);
    namespace_object.AddMember("metadata", md, a);
    add_owner_labels(namespace_object, a, name, ns, "");
    auto created = co_await client_->create(kube::resources::kNamespaces, "", namespace_object);
    if (!created && !created.error().is(kube::ErrorKind::kAlreadyExists)) co_return created.error();
    outcome.created_namespaces.push_back(object_ns);
    log::info("created namespace for IstioOperator",
              {{"controller", "install"}, {"object", key}, {"namespace", object_ns}});
  }

  // Apply, in render order (CRDs first); skip what nobody changed since this reconciler
  // applied it. Nothing after the CRDs is applied until every CRD is Established, as istioctl
  // waits for them: the rest may need their kinds.
  std::vector<std::shared_ptr<const api::Document>> responses;
  responses.reserve(objects.size());
  std::vector<AppliedObject> applied;
  std::vector<std::string> pending_crds;
  for (const manifest::RenderedObject& r : objects) {
    std::string kind = api::string_at(r.object, {"kind"});
    if (!managed_kind(kind)) continue;
    const bool crd = kind == "CustomResourceDefinition";
    if (!crd && !pending_crds.empty()) break;
    AppliedObject entry;
    entry.component = r.component;
    const ObjectId id = object_id(r.object);
    const std::uint64_t rendered_hash = api::fnv1a(api::to_json(r.object));
    if (config_.live) {
      auto last = last_apply_.find(id);
      if (last != last_apply_.end() && last->second.rendered_hash == rendered_hash) {
        auto live = config_.live(id);
        // Unchanged only if it still carries this IstioOperator's owner labels: a shared
        // object another IstioOperator relabelled is taken back even if the informer has not
        // yet seen that write (its drift event goes to the other owner).
        if (live && !last->second.resource_version.empty() &&
            api::string_at(*live, {"metadata", "resourceVersion"}) ==
                last->second.resource_version &&
            owner_key(*live) == key) {
          responses.push_back(last->second.response);
          entry.live = responses.back().get();
          ++outcome.unchanged;
          if (unchanged_total_ != nullptr) unchanged_total_->with({kind}).Increment();
          applied.push_back(std::move(entry));
          continue;
        }
      }
    }
    const std::string api_version = api::string_at(r.object, {"apiVersion"});
    auto type = co_await resource_for(api_version, kind);
    if (!type) {
      entry.error = type.message();
      outcome.keep_apply_error(type.error());
      last_apply_.erase(id);
    } else {
      auto result = co_await client_->apply(*type, r.object, config_.field_manager, true);
      if (result) {
        auto response = std::make_shared<const api::Document>(std::move(*result));
        last_apply_[id] = {rendered_hash,
                           api::string_at(*response, {"metadata", "resourceVersion"}), response};
        responses.push_back(std::move(response));
        entry.live = responses.back().get();
        ++outcome.applied;
        if (applied_total_ != nullptr) applied_total_->with({kind}).Increment();
      } else {
        entry.error = result.error().message;
        outcome.keep_apply_error(result.error());
        last_apply_.erase(id);
      }
    }
    if (crd && entry.live != nullptr && !crd_established(*entry.live))
      pending_crds.push_back(api::string_at(r.object, {"metadata", "name"}));
    applied.push_back(std::move(entry));
  }
  StatusReport report = compute_status(applied);
  if (!pending_crds.empty() && report.state != InstallState::kError) {
    report.state = InstallState::kReconciling;
    std::string names;
    for (const std::string& n : pending_crds)
      names += (names.empty() ? "" : ", ") + n;
    report.message = "waiting for CustomResourceDefinitions to be Established: " + names;
  }

  // Prune only after a complete apply.
  if (report.state != InstallState::kError && pending_crds.empty()) {
    auto pruned = co_await delete_owned(name, ns, desired, kinds, !owns_shared);
    if (!pruned) co_return api::with_context("pruning for IstioOperator " + key, pruned.error());
    outcome.pruned = *pruned;
  }

  // Report.
  outcome.state = report.state;
  outcome.message = report.message;
  outcome.kind = report.state == InstallState::kError ? InstallOutcome::Kind::kApplyFailed
                                                      : InstallOutcome::Kind::kApplied;
  if (report.state == InstallState::kError) {
    warn(current, "ApplyFailed", report.message);
    log::warn("applying IstioOperator failed; retrying with backoff",
              {{"controller", "install"}, {"object", key}, {"reason", report.message}});
  }
  auto written = co_await write_status(current, report);
  if (!written) co_return written.error();
  co_return outcome;
}

kube::Task<void> InstallReconciler::report_failure(std::string key, std::string message) {
  // An API error (Forbidden, unreachable, conflict) ended the pass: say so where users look,
  // status ERROR with the apiserver's message (it names the verb and resource) and a Warning
  // Event, instead of leaving the last status (e.g. RECONCILING) standing. Best effort: the
  // status write may fail for the same reason; the error is retried with backoff either way.
  auto slash = key.find('/');
  if (slash == std::string::npos) co_return;
  auto got =
      co_await client_->get(istio_operator_resource(), key.substr(0, slash), key.substr(slash + 1));
  if (!got) co_return;
  const bool deleting = !api::string_at(*got, {"metadata", "deletionTimestamp"}).empty();
  StatusReport report;
  report.state = InstallState::kError;
  report.message = (deleting ? "uninstall blocked (finalizer " + std::string(kUninstallFinalizer) +
                                   " kept; retrying): "
                             : "install failed (retrying): ") +
                   message;
  warn(*got, deleting ? "UninstallBlocked" : "ReconcileFailed", report.message);
  auto written = co_await write_status(*got, report);
  if (!written)
    log::warn("cannot write the IstioOperator's ERROR status",
              {{"controller", "install"}, {"object", key}, {"reason", written.message()}});
}

kube::Task<runtime::Action> InstallReconciler::reconcile(const std::string& key) {
  auto outcome = co_await reconcile_once(key);
  if (!outcome && outcome.error().conflict()) co_return error_action(outcome.error());
  if (!outcome) {
    std::string message = outcome.message();
    co_await report_failure(key, message);
    co_return error_action(outcome.error());
  }
  using Kind = InstallOutcome::Kind;
  switch (outcome->kind) {
    case Kind::kAbsent:
    case Kind::kIgnored:
    case Kind::kUninstalled:
      co_return runtime::Action::done();
    case Kind::kInvalid:
      co_return runtime::Action::terminal_error(outcome->message);
    case Kind::kConflict:
      co_return runtime::Action::requeue_after(config_.conflict_requeue);
    case Kind::kApplyFailed: {
      // Requeued as the failed apply's kind asks (e.g. Forbidden: slowly; 429: after
      // Retry-After), reported with the whole status message.
      api::Error e = outcome->apply_error.value_or(api::Error{});
      e.message = outcome->message;
      co_return error_action(e);
    }
    case Kind::kApplied:
      break;
  }
  co_return runtime::Action::requeue_after(outcome->state == InstallState::kHealthy
                                               ? config_.healthy_requeue
                                               : config_.not_ready_requeue);
}

void setup_install(const OperatorSetup& setup, InstallConfig config) {
  runtime::ControllerBuilder builder = setup.controller("install");
  builder.workers(2);
  builder.handlers(
      watches::istio_operators(), [](runtime::WorkQueue& queue, const runtime::Store& iops) {
        auto every_one = [&queue, &iops](const runtime::Object& o) {
          queue.add(runtime::object_key(*o));
          for (const std::string& k : iops.keys())
            queue.add(k);
        };
        return runtime::StoreHandlers{
            .on_add = every_one,
            .on_update =
                [every_one](const runtime::Object& old_object, const runtime::Object& new_object) {
                  if (install_relevant_change(*old_object, *new_object)) every_one(new_object);
                },
            .on_delete = every_one};
      });
  auto owner_of = [](const rapidjson::Value& o) {
    std::vector<std::string> keys;
    if (auto k = owner_key(o)) keys.push_back(*k);
    return keys;
  };
  struct Watched {
    const manifest::InstalledKind* kind;
    const runtime::Store* store;
  };
  std::vector<Watched> watched;
  for (const manifest::InstalledKind& k : manifest::installed_kinds()) {
    std::optional<runtime::WatchSpec> spec = watches::installed(k, setup.ns);
    if (!spec) continue;
    builder.watches(*spec, owner_of);
    watched.push_back({&k, &setup.cache.store(*spec)});
  }
  if (!config.live) {
    config.live = [watched, ns = setup.ns](const ObjectId& id) -> runtime::Object {
      for (const Watched& w : watched) {
        if (w.kind->group != id.group || w.kind->kind != id.kind) continue;
        if (w.kind->watch == manifest::InstalledKind::Watch::kOperatorNamespace && id.ns != ns)
          return nullptr;
        if (!w.store->has_synced()) return nullptr;
        return w.store->get(runtime::make_key(id.ns, id.name));
      }
      return nullptr;
    };
  }
  auto reconciler = std::make_shared<InstallReconciler>(setup.client, std::move(config),
                                                        setup.registry, setup.events);
  builder.complete([reconciler](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
