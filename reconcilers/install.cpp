#include "reconcilers/install.hpp"

#include <algorithm>
#include <variant>

#include "api/hash.hpp"
#include "api/istio_operator.hpp"
#include "api/time.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/manifest/render.hpp"
#include "reconcilers/conditions.hpp"
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

bool annotation_true(const rapidjson::Value& object, std::string_view annotation) {
  const api::Value* metadata = api::find_member(object, "metadata");
  if (metadata == nullptr) return false;
  const api::Value* annotations = api::find_member(*metadata, "annotations");
  if (annotations == nullptr || !annotations->IsObject()) return false;
  const api::Value* v = api::find_member(*annotations, annotation);
  return v != nullptr && v->IsString() && api::string_view_of(*v) == "true";
}

// The index of meshop's finalizer in metadata.finalizers, -1 when absent.
int finalizer_index(const rapidjson::Value& iop) {
  const api::Value* fin = api::find(iop, "/metadata/finalizers");
  if (fin == nullptr || !fin->IsArray()) return -1;
  for (rapidjson::SizeType i = 0; i < fin->Size(); ++i)
    if ((*fin)[i].IsString() && api::string_view_of((*fin)[i]) == kUninstallFinalizer)
      return static_cast<int>(i);
  return -1;
}

// The JSON patch test that makes a finalizer edit fail (409) if the object changed since read.
std::string resource_version_test(const rapidjson::Value& iop) {
  std::string test = R"({"op":"test","path":"/metadata/resourceVersion","value":)";
  api::append_json_string(test, api::string_at(iop, {"metadata", "resourceVersion"}));
  return test + "}";
}

std::string add_finalizer_patch(const rapidjson::Value& iop) {
  const api::Value* fin = api::find(iop, "/metadata/finalizers");
  std::string add = fin != nullptr && fin->IsArray()
                        ? R"({"op":"add","path":"/metadata/finalizers/-","value":")" +
                              std::string(kUninstallFinalizer) + R"("})"
                        : R"({"op":"add","path":"/metadata/finalizers","value":[")" +
                              std::string(kUninstallFinalizer) + R"("]})";
  return "[" + resource_version_test(iop) + "," + add + "]";
}

std::string remove_finalizer_patch(const rapidjson::Value& iop, int index) {
  return "[" + resource_version_test(iop) + R"(,{"op":"remove","path":"/metadata/finalizers/)" +
         std::to_string(index) + R"("}])";
}

// The conditions this reconciler owns (Reconciled, Ready), as status_patch writes them.
struct InstallCondition {
  std::string type, status, reason, message;
};

std::vector<InstallCondition> conditions_for(const StatusReport& report) {
  InstallCondition reconciled{"Reconciled", "True", "Applied", "every rendered object was applied"};
  InstallCondition ready{"Ready", "False", "WorkloadsNotReady", report.message};
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

void add_owner_labels(api::Value& object, api::Allocator& allocator, std::string_view iop_name,
                      std::string_view iop_namespace, std::string_view component) {
  if (!object.IsObject()) return;
  api::Value& metadata = api::ensure_object_member(object, "metadata", allocator);
  api::Value& labels = api::ensure_object_member(metadata, "labels", allocator);
  api::set_string_member(labels, kManagedByLabel, kManagedByValue, allocator);
  api::set_string_member(labels, kOwningResourceLabel, iop_name, allocator);
  api::set_string_member(labels, kOwningResourceNamespaceLabel, iop_namespace, allocator);
  if (!component.empty()) api::set_string_member(labels, kComponentLabel, component, allocator);
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
  if (api::int_at(old_iop, {"metadata", "generation"}, 0) !=
      api::int_at(new_iop, {"metadata", "generation"}, 0))
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
  std::int64_t generation = api::int_at(object, {"metadata", "generation"}, 0);
  std::int64_t observed = api::int_at(object, {"status", "observedGeneration"}, 0);
  if (observed < generation)
    return what + ": generation " + std::to_string(generation) + " not yet observed";
  if (kind == "Deployment") {
    std::int64_t wanted = api::int_at(object, {"spec", "replicas"}, 1);
    std::int64_t available = api::int_at(object, {"status", "availableReplicas"}, 0);
    if (available < wanted)
      return what + ": " + std::to_string(available) + "/" + std::to_string(wanted) +
             " replicas available";
    return std::string();
  }
  std::int64_t desired = api::int_at(object, {"status", "desiredNumberScheduled"}, 0);
  std::int64_t available = api::int_at(object, {"status", "numberAvailable"}, 0);
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
  for (const InstallCondition& c : conditions_for(report)) {
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

// One pass over one IstioOperator: what the steps of reconcile_once share.
struct InstallReconciler::Pass {
  std::string key, ns, name;
  // The IstioOperator as read, or as the last write of this pass returned it (the finalizer
  // patch; the status write is guarded by its resourceVersion and re-reads on a 409).
  api::Document iop;
  // Every IstioOperator's ownership facts, this one included (after list_operators()).
  std::vector<OperatorRef> refs;
  InstallOutcome outcome;
};

// What a pass installs: the rendered objects of managed kinds, owner-labelled, in render order.
struct InstallReconciler::Desired {
  std::vector<manifest::RenderedObject> objects;
  std::set<ObjectId> ids;
  std::set<std::string> namespaces;  // the namespaces the objects live in
  // The kinds to prune: prunable_kinds() plus any other prunable kind rendered (an overlay's).
  std::vector<std::pair<std::string, std::string>> prune_kinds;
  bool owns_shared = false;  // this IstioOperator applies the shared (Base) objects
};

// What applying the desired objects gave.
struct InstallReconciler::Applied {
  std::vector<std::shared_ptr<const api::Document>> responses;  // kept alive for `objects`
  std::vector<AppliedObject> objects;
  std::vector<std::string> pending_crds;  // applied CRDs not yet Established
};

bool install_paused(const rapidjson::Value& iop) {
  return annotation_true(iop, kIgnoreReconcileAnnotation);
}

InstallReconciler::InstallReconciler(std::shared_ptr<kube::Client> client, InstallConfig config,
                                     metrics::Registry* registry,
                                     std::shared_ptr<kube::EventRecorder> events)
    : InstallReconciler(kube::client_reader(client), kube::client_writer(client, std::move(events)),
                        std::move(config), registry) {}

InstallReconciler::InstallReconciler(std::shared_ptr<kube::Reader> reader,
                                     std::shared_ptr<kube::Writer> writer, InstallConfig config,
                                     metrics::Registry* registry)
    : reader_(std::move(reader)),
      writer_(std::move(writer)),
      config_(std::move(config)),
      clock_(config_.clock != nullptr ? config_.clock : &runtime::steady_clock()) {
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
  auto type = co_await reader_->discover(api_version, kind);
  if (!type) co_return type.error();
  types_.emplace(key, *type);
  co_return *type;
}

void InstallReconciler::warn(const rapidjson::Value& iop, std::string reason, std::string note) {
  writer_->event(kube::reference_to(iop), kube::EventType::kWarning, std::move(reason), "Install",
                 std::move(note));
}

kube::Task<api::Result<api::Ok>> InstallReconciler::write_status(const rapidjson::Value& iop,
                                                                 const StatusReport& report) {
  // The conditions list is shared with restarts and revisions (conditions.hpp): the patch
  // carries the object's resourceVersion, and a 409 re-reads the object and merges into that,
  // so a copy read before another reconciler's write never erases that write.
  const std::string now = api::rfc3339(clock_->wall_now());
  StatusPatch body = [&report, &now](const rapidjson::Value& object) -> std::optional<std::string> {
    std::string patch = status_patch(report, api::int_at(object, {"metadata", "generation"}, 0),
                                     api::find_member(object, "status"), now);
    if (patch.empty()) return std::nullopt;
    auto doc = api::parse_json(patch);
    if (!doc.ok()) return patch;  // not reached: status_patch writes JSON
    guard_with_resource_version(*doc, object);
    return api::to_json(*doc);
  };
  auto written = co_await patch_status(*writer_, reader_.get(), istio_operator_resource(), iop,
                                       std::move(body));
  if (!written) co_return written.error();
  co_return api::Ok{};
}

kube::Task<api::Result<int>> InstallReconciler::delete_owned(
    const std::string& name, const std::string& ns, const std::set<ObjectId>& keep,
    const std::vector<std::pair<std::string, std::string>>& kinds, bool keep_shared,
    bool uninstalling) {
  kube::Reader& reader =
      uninstalling && config_.uninstall_reader ? *config_.uninstall_reader : *reader_;
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
    // meshop's objects only (what it applied carries kManagedByLabel, add_owner_labels): the
    // watches of installed kinds select on it, so the cache answers this list (issue 13).
    list_options.label_selector =
        std::string(api::kManagedSelector) + "," + owner_selector(name, ns);
    list_options.metadata_only = true;
    auto listed = co_await reader.list_all(*type, "", list_options);
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
      auto removed = co_await writer_->remove(*type, id.ns, id.name, delete_options);
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

// ---- The steps of one pass, in order ----

kube::Task<api::Result<std::optional<InstallReconciler::Pass>>> InstallReconciler::observe(
    std::string key) {
  auto slash = key.find('/');
  if (slash == std::string::npos)
    co_return api::Error{"IstioOperator key \"" + key + "\": expected <namespace>/<name>"};
  Pass pass;
  pass.key = key;
  pass.ns = key.substr(0, slash);
  pass.name = key.substr(slash + 1);
  auto got = co_await reader_->get(istio_operator_resource(), pass.ns, pass.name);
  if (!got) {
    if (got.error().is(kube::ErrorKind::kNotFound)) co_return std::optional<Pass>();
    co_return got.error();
  }
  pass.iop = std::move(*got);
  co_return std::optional<Pass>(std::move(pass));
}

kube::Task<api::Result<api::Ok>> InstallReconciler::list_operators(Pass& pass) {
  auto all = co_await reader_->list_all(istio_operator_resource(), "", kube::ListOptions());
  if (!all) co_return all.error();
  pass.refs.clear();
  bool listed_self = false;
  for (const rapidjson::Value& other : all->list["items"].GetArray()) {
    pass.refs.push_back(operator_ref(other, true));
    listed_self = listed_self || pass.refs.back().key() == pass.key;
  }
  if (!listed_self) pass.refs.push_back(operator_ref(pass.iop, true));
  co_return api::Ok{};
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::uninstall(Pass& pass) {
  pass.outcome.kind = InstallOutcome::Kind::kUninstalled;
  const int finalizer = finalizer_index(pass.iop);
  if (finalizer < 0) co_return pass.outcome;  // not ours to hold
  // What every revision shares stays while another IstioOperator remains to take it over (it
  // is re-queued by the deletion and relabels it on its next pass).
  if (auto listed = co_await list_operators(pass); !listed) co_return listed.error();
  const std::optional<OperatorRef> successor = shared_owner(pass.refs);
  const bool keep_shared = successor.has_value() && successor->key() != pass.key;
  const std::vector<std::pair<std::string, std::string>> kinds(prunable_kinds().rbegin(),
                                                               prunable_kinds().rend());
  const std::set<ObjectId> keep_nothing;
  auto deleted = co_await delete_owned(pass.name, pass.ns, keep_nothing, kinds, keep_shared, true);
  if (!deleted)
    co_return api::with_context("uninstalling IstioOperator " + pass.key, deleted.error());
  pass.outcome.pruned = *deleted;
  auto patched =
      co_await writer_->patch(istio_operator_resource(), pass.ns, pass.name, kube::PatchType::kJson,
                              remove_finalizer_patch(pass.iop, finalizer), kube::PatchOptions());
  if (!patched && !patched.error().is(kube::ErrorKind::kNotFound)) co_return patched.error();
  log::info("uninstalled IstioOperator", {{"controller", "install"},
                                          {"object", pass.key},
                                          {"deleted", std::to_string(pass.outcome.pruned)}});
  writer_->event(
      kube::reference_to(pass.iop), kube::EventType::kNormal, "Uninstalled", "Uninstall",
      "deleted " + std::to_string(pass.outcome.pruned) + " objects owned by " + pass.key);
  co_return pass.outcome;
}

kube::Task<api::Result<api::Ok>> InstallReconciler::ensure_finalizer(Pass& pass) {
  if (finalizer_index(pass.iop) >= 0) co_return api::Ok{};
  auto patched =
      co_await writer_->patch(istio_operator_resource(), pass.ns, pass.name, kube::PatchType::kJson,
                              add_finalizer_patch(pass.iop), kube::PatchOptions());
  if (!patched) co_return patched.error();
  pass.iop = std::move(*patched);
  co_return api::Ok{};
}

std::variant<manifest::RenderResult, InstallRefusal> InstallReconciler::validate_and_render(
    const Pass& pass) {
  const api::IstioOperatorValidation validation = api::validate_istio_operator(pass.iop);
  if (!validation.ok()) return install_refusal(validation, api::Error{});
  auto rendered = manifest::render_istio_operator(pass.iop);
  if (!rendered) return install_refusal(validation, rendered.error());

  // What the spec asks for that meshop ignores or cannot apply (installPackagePath, an overlay
  // path that matches nothing, ...): a Warning Event and a log line, once per generation.
  const std::int64_t generation = api::int_at(pass.iop, {"metadata", "generation"}, 0);
  if (auto seen = warned_generation_.find(pass.key);
      seen == warned_generation_.end() || seen->second != generation) {
    std::vector<std::string> warnings = validation.warnings;
    warnings.insert(warnings.end(), rendered->warnings.begin(), rendered->warnings.end());
    for (const std::string& w : warnings) {
      warn(pass.iop, "RenderWarning", w);
      log::warn("IstioOperator spec partly ignored",
                {{"controller", "install"}, {"object", pass.key}, {"warning", w}});
    }
    warned_generation_[pass.key] = generation;
  }
  return std::move(*rendered);
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::refuse(Pass& pass,
                                                                  InstallRefusal refusal) {
  StatusReport report;
  report.state = InstallState::kError;
  report.message = refusal.message;
  report.reason = refusal.reason;
  pass.outcome.kind = InstallOutcome::Kind::kInvalid;
  pass.outcome.state = InstallState::kError;
  pass.outcome.message = refusal.message;
  warn(pass.iop, refusal.reason, refusal.message);
  log::warn("IstioOperator not installed; waiting for it to change",
            {{"controller", "install"}, {"object", pass.key}, {"reason", refusal.message}});
  auto written = co_await write_status(pass.iop, report);
  if (!written) co_return written.error();
  co_return pass.outcome;
}

std::optional<OperatorRef> InstallReconciler::other_owner(const Pass& pass) {
  std::optional<OperatorRef> owner = revision_owner(pass.refs, revision_of(pass.iop));
  if (owner && owner->key() != pass.key) return owner;
  return std::nullopt;
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::report_not_owner(
    Pass& pass, const OperatorRef& owner) {
  StatusReport report;
  report.state = InstallState::kError;
  report.message = "revision \"" + owner.revision + "\" is already installed by IstioOperator " +
                   owner.key() + " (older); this one is not installed";
  pass.outcome.kind = InstallOutcome::Kind::kConflict;
  pass.outcome.state = InstallState::kError;
  pass.outcome.message = report.message;
  warn(pass.iop, "RevisionConflict", report.message);
  auto written = co_await write_status(pass.iop, report);
  if (!written) co_return written.error();
  co_return pass.outcome;
}

kube::Task<api::Result<api::Ok>> InstallReconciler::mark_reconciling(Pass& pass) {
  // Only for a new generation, so that passes over an unchanged resource write no status.
  const std::int64_t generation = api::int_at(pass.iop, {"metadata", "generation"}, 0);
  if (api::int_at(pass.iop, {"status", "observedGeneration"}, -1) == generation ||
      api::string_at(pass.iop, {"status", "status"}) == to_string(InstallState::kReconciling))
    co_return api::Ok{};
  std::string body = R"({"status":{"status":"RECONCILING","message":"applying generation )" +
                     std::to_string(generation) + R"("}})";
  kube::PatchOptions options;
  options.subresource = "status";
  auto patched = co_await writer_->patch(istio_operator_resource(), pass.ns, pass.name,
                                         kube::PatchType::kMerge, std::move(body), options);
  if (!patched) co_return patched.error();
  co_return api::Ok{};
}

InstallReconciler::Desired InstallReconciler::desired_objects(const Pass& pass,
                                                              manifest::RenderResult rendered) {
  Desired desired;
  // What every revision renders the same way is applied by its one owner only; the others
  // neither apply, relabel nor prune it.
  const std::optional<OperatorRef> shared = shared_owner(pass.refs);
  desired.owns_shared = shared.has_value() && shared->key() == pass.key;
  desired.prune_kinds = prunable_kinds();
  for (manifest::RenderedObject& r : rendered.objects) {
    if (!desired.owns_shared && is_shared_component(r.component)) continue;
    const std::string kind = api::string_at(r.object, {"kind"});
    if (!managed_kind(kind)) continue;
    add_owner_labels(r.object, r.object.GetAllocator(), pass.name, pass.ns, r.component);
    desired.ids.insert(object_id(r.object));
    auto kind_pair = std::make_pair(api::string_at(r.object, {"apiVersion"}), kind);
    if (prunable_kind(kind) && std::find(desired.prune_kinds.begin(), desired.prune_kinds.end(),
                                         kind_pair) == desired.prune_kinds.end())
      desired.prune_kinds.push_back(std::move(kind_pair));
    std::string object_ns = api::string_at(r.object, {"metadata", "namespace"});
    if (!object_ns.empty()) desired.namespaces.insert(std::move(object_ns));
    desired.objects.push_back(std::move(r));
  }
  return desired;
}

kube::Task<api::Result<api::Ok>> InstallReconciler::create_namespaces(Pass& pass,
                                                                      const Desired& desired) {
  // Created ones are labelled as meshop's and never deleted (they may hold what others put
  // there, e.g. the webhook certificate Secret).
  for (const std::string& object_ns : desired.namespaces) {
    auto existing = co_await reader_->get(kube::resources::kNamespaces, "", object_ns);
    if (existing) continue;
    if (!existing.error().is(kube::ErrorKind::kNotFound)) co_return existing.error();
    api::Document namespace_object(rapidjson::kObjectType);
    auto& a = namespace_object.GetAllocator();
    namespace_object.AddMember("apiVersion", "v1", a);
    namespace_object.AddMember("kind", "Namespace", a);
    api::Value md(rapidjson::kObjectType);
    md.AddMember("name", api::make_string(object_ns, a), a);
    namespace_object.AddMember("metadata", md, a);
    add_owner_labels(namespace_object, a, pass.name, pass.ns, "");
    auto created = co_await writer_->create(kube::resources::kNamespaces, "", namespace_object);
    if (!created && !created.error().is(kube::ErrorKind::kAlreadyExists)) co_return created.error();
    pass.outcome.created_namespaces.push_back(object_ns);
    log::info("created namespace for IstioOperator",
              {{"controller", "install"}, {"object", pass.key}, {"namespace", object_ns}});
  }
  co_return api::Ok{};
}

std::shared_ptr<const api::Document> InstallReconciler::unchanged_since_last_apply(
    const Pass& pass, const ObjectId& id, std::uint64_t rendered_hash) const {
  if (!config_.live) return nullptr;
  auto last = last_apply_.find(id);
  if (last == last_apply_.end() || last->second.rendered_hash != rendered_hash ||
      last->second.resource_version.empty())
    return nullptr;
  auto live = config_.live(id);
  // Unchanged only if it still carries this IstioOperator's owner labels: a shared object
  // another IstioOperator relabelled is taken back even if the informer has not yet seen that
  // write (its drift event goes to the other owner).
  if (!live ||
      api::string_at(*live, {"metadata", "resourceVersion"}) != last->second.resource_version ||
      owner_key(*live) != pass.key)
    return nullptr;
  return last->second.response;
}

kube::Task<api::Result<InstallReconciler::Applied>> InstallReconciler::apply_objects(
    Pass& pass, const Desired& desired) {
  Applied out;
  // In render order (CRDs first). Nothing after the CRDs is applied until every CRD is
  // Established, as istioctl waits for them: the rest may need their kinds.
  out.responses.reserve(desired.objects.size());
  for (const manifest::RenderedObject& r : desired.objects) {
    const std::string kind = api::string_at(r.object, {"kind"});
    const bool crd = kind == "CustomResourceDefinition";
    if (!crd && !out.pending_crds.empty()) break;
    AppliedObject entry;
    entry.component = r.component;
    const ObjectId id = object_id(r.object);
    const std::uint64_t rendered_hash = api::fnv1a(api::to_json(r.object));
    if (auto response = unchanged_since_last_apply(pass, id, rendered_hash)) {
      out.responses.push_back(std::move(response));
      entry.live = out.responses.back().get();
      ++pass.outcome.unchanged;
      if (unchanged_total_ != nullptr) unchanged_total_->with({kind}).Increment();
      out.objects.push_back(std::move(entry));
      continue;
    }
    const std::string api_version = api::string_at(r.object, {"apiVersion"});
    auto type = co_await resource_for(api_version, kind);
    if (!type) {
      entry.error = type.message();
      pass.outcome.keep_apply_error(type.error());
      last_apply_.erase(id);
    } else {
      auto result = co_await writer_->apply(*type, r.object, config_.field_manager, true);
      if (result) {
        auto response = std::make_shared<const api::Document>(std::move(*result));
        last_apply_[id] = {rendered_hash,
                           api::string_at(*response, {"metadata", "resourceVersion"}), response};
        out.responses.push_back(std::move(response));
        entry.live = out.responses.back().get();
        ++pass.outcome.applied;
        if (applied_total_ != nullptr) applied_total_->with({kind}).Increment();
      } else {
        last_apply_.erase(id);
        // A lost race, a server asking to wait, a refusal of meshop's role: the pass ends and
        // the error policy retries it (errors.hpp). Anything else (an object the apiserver
        // refuses as invalid, a 5xx) is this object's failure: the others are still applied,
        // and the error's kind chooses the requeue (reconcile()).
        api::Error error = api::with_context("applying " + id.to_string(), result.error());
        if (error.conflict() || error.retry_after || error.forbidden()) co_return error;
        entry.error = result.error().message;
        pass.outcome.keep_apply_error(result.error());
      }
    }
    if (crd && entry.live != nullptr && !crd_established(*entry.live))
      out.pending_crds.push_back(api::string_at(r.object, {"metadata", "name"}));
    out.objects.push_back(std::move(entry));
  }
  co_return out;
}

kube::Task<api::Result<api::Ok>> InstallReconciler::prune(Pass& pass, const Desired& desired) {
  auto pruned = co_await delete_owned(pass.name, pass.ns, desired.ids, desired.prune_kinds,
                                      !desired.owns_shared);
  if (!pruned) co_return api::with_context("pruning for IstioOperator " + pass.key, pruned.error());
  pass.outcome.pruned = *pruned;
  co_return api::Ok{};
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::report(Pass& pass,
                                                                  const StatusReport& report) {
  pass.outcome.state = report.state;
  pass.outcome.message = report.message;
  pass.outcome.kind = report.state == InstallState::kError ? InstallOutcome::Kind::kApplyFailed
                                                           : InstallOutcome::Kind::kApplied;
  if (report.state == InstallState::kError) {
    warn(pass.iop, "ApplyFailed", report.message);
    log::warn("applying IstioOperator failed; retrying with backoff",
              {{"controller", "install"}, {"object", pass.key}, {"reason", report.message}});
  }
  auto written = co_await write_status(pass.iop, report);
  if (!written) co_return written.error();
  co_return pass.outcome;
}

kube::Task<api::Result<InstallOutcome>> InstallReconciler::reconcile_once(const std::string& key) {
  // Observe.
  auto observed = co_await observe(key);
  if (!observed) co_return observed.error();
  if (!observed->has_value()) {
    warned_generation_.erase(key);
    co_return InstallOutcome{};  // kAbsent
  }
  Pass& pass = **observed;
  if (install_paused(pass.iop)) {
    log::info("IstioOperator paused by annotation; nothing written",
              {{"controller", "install"}, {"object", key}});
    pass.outcome.kind = InstallOutcome::Kind::kIgnored;
    co_return pass.outcome;
  }

  // Finalize: a deleted resource is uninstalled, then let go.
  if (!api::string_at(pass.iop, {"metadata", "deletionTimestamp"}).empty())
    co_return co_await uninstall(pass);
  // Validate and render: a bad spec is the user's to fix, reported and not retried.
  auto rendered = validate_and_render(pass);
  if (auto* refusal = std::get_if<InstallRefusal>(&rendered))
    co_return co_await refuse(pass, std::move(*refusal));

  // Check the owner: the oldest IstioOperator of a revision owns it (reconcilers/ownership).
  if (auto listed = co_await list_operators(pass); !listed) co_return listed.error();
  if (std::optional<OperatorRef> owner = other_owner(pass))
    co_return co_await report_not_owner(pass, *owner);

  // Apply. The finalizer first: once anything is installed, deletion must come through here
  // (a refused or not-owning IstioOperator installs nothing and is not held).
  if (auto ensured = co_await ensure_finalizer(pass); !ensured) co_return ensured.error();
  if (auto marked = co_await mark_reconciling(pass); !marked) co_return marked.error();
  const Desired desired =
      desired_objects(pass, std::move(std::get<manifest::RenderResult>(rendered)));
  if (auto made = co_await create_namespaces(pass, desired); !made) co_return made.error();
  auto applying = co_await apply_objects(pass, desired);
  if (!applying) co_return applying.error();
  const Applied& applied = *applying;
  StatusReport status = compute_status(applied.objects);
  if (!applied.pending_crds.empty() && status.state != InstallState::kError) {
    status.state = InstallState::kReconciling;
    std::string names;
    for (const std::string& n : applied.pending_crds)
      names += (names.empty() ? "" : ", ") + n;
    status.message = "waiting for CustomResourceDefinitions to be Established: " + names;
  }

  // Prune, only after a complete apply (a partial render must not delete the rest).
  if (status.state != InstallState::kError && applied.pending_crds.empty())
    if (auto pruned = co_await prune(pass, desired); !pruned) co_return pruned.error();

  // Report.
  co_return co_await report(pass, status);
}

kube::Task<void> InstallReconciler::report_failure(std::string key, std::string message) {
  // An API error (Forbidden, unreachable, conflict) ended the pass: say so where users look,
  // status ERROR with the apiserver's message (it names the verb and resource) and a Warning
  // Event, instead of leaving the last status (e.g. RECONCILING) standing. Best effort: the
  // status write may fail for the same reason; the error is retried with backoff either way.
  auto slash = key.find('/');
  if (slash == std::string::npos) co_return;
  auto got =
      co_await reader_->get(istio_operator_resource(), key.substr(0, slash), key.substr(slash + 1));
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
  if (!outcome) {
    // A lost resourceVersion race is retried at once and reported to nobody (errors.hpp).
    runtime::Action action = error_action(outcome.error());
    if (action.kind != runtime::Action::Kind::kConflict)
      co_await report_failure(key, outcome.message());
    co_return action;
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
      // Requeued as the failed apply's kind asks (an apiserver's 422: only an edit of the spec
      // fixes it), reported with the whole status message.
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
    // Prune and uninstall list every namespace (delete_owned): a kind watched in meshop's
    // namespace only also gets a cluster-wide, metadata-only watch of what meshop installed,
    // so that list is answered by the cache too.
    if (k.watch == manifest::InstalledKind::Watch::kOperatorNamespace) {
      manifest::InstalledKind everywhere = k;
      everywhere.watch = manifest::InstalledKind::Watch::kMetadata;
      setup.cache.store(*watches::installed(everywhere, setup.ns));
    }
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
  if (config.clock == nullptr) config.clock = &setup.manager.clock();
  if (setup.cached_reader && !config.uninstall_reader)
    config.uninstall_reader = kube::client_reader(setup.client);
  auto reconciler = std::make_shared<InstallReconciler>(setup.reader(), setup.writer(),
                                                        std::move(config), setup.registry);
  builder.complete([reconciler](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
