#include "operator/restart/projection.hpp"

#include <initializer_list>

#include "api/json.hpp"
#include "api/record.hpp"

namespace meshop::restart {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

void set_type(rapidjson::Document& o, std::string_view api_version, std::string_view kind) {
  auto& a = o.GetAllocator();
  if (!o.HasMember("apiVersion")) o.AddMember("apiVersion", api::make_string(api_version, a), a);
  if (!o.HasMember("kind")) o.AddMember("kind", api::make_string(kind, a), a);
}

void strip_metadata(rapidjson::Value& meta) {
  meta.RemoveMember("managedFields");
  rapidjson::Value* ann = api::find_member(meta, "annotations");
  if (ann != nullptr && ann->IsObject())
    ann->RemoveMember("kubectl.kubernetes.io/last-applied-configuration");
}

// A copy of the members `names` of `from` (those present), in that order.
rapidjson::Value pick(const rapidjson::Value& from, std::initializer_list<std::string_view> names,
                      Allocator& a) {
  rapidjson::Value out(rapidjson::kObjectType);
  for (std::string_view n : names) {
    const rapidjson::Value* v = api::find_member(from, n);
    if (v != nullptr) out.AddMember(api::make_string(n, a), rapidjson::Value(*v, a), a);
  }
  return out;
}

// Adds to `out` the owner references of `meta` (their members `names`, when present), when it
// has any.
void add_owner_references(const rapidjson::Value& meta, rapidjson::Value& out, Allocator& a,
                          std::initializer_list<std::string_view> names) {
  const rapidjson::Value* refs = api::find_member(meta, "ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return;
  rapidjson::Value kept(rapidjson::kArrayType);
  for (const rapidjson::Value& r : refs->GetArray())
    kept.PushBack(pick(r, names, a), a);
  out.AddMember("ownerReferences", kept, a);
}

bool has_controller(const rapidjson::Value& meta) {
  const rapidjson::Value* refs = api::find_member(meta, "ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return false;
  for (const rapidjson::Value& r : refs->GetArray()) {
    const rapidjson::Value* c = api::find_member(r, "controller");
    if (c != nullptr && c->IsBool() && c->GetBool()) return true;
  }
  return false;
}

// [{name, image}] of a container list.
rapidjson::Value names_and_images(const rapidjson::Value& containers, Allocator& a) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const rapidjson::Value& c : containers.GetArray())
    out.PushBack(pick(c, {"name", "image"}, a), a);
  return out;
}

}  // namespace

void project_whole(rapidjson::Document& object, std::string_view api_version,
                   std::string_view kind) {
  if (!object.IsObject()) return;
  if (rapidjson::Value* meta = api::find_member(object, "metadata");
      meta != nullptr && meta->IsObject())
    strip_metadata(*meta);
  set_type(object, api_version, kind);
}

void project_workload(rapidjson::Document& object, std::string_view api_version,
                      std::string_view kind) {
  project_whole(object, api_version, kind);
  if (!object.IsObject()) return;
  rapidjson::Value* meta = api::find_member(object, "metadata");
  if (meta == nullptr || !meta->IsObject()) return;
  if (kind == "ReplicaSet" && has_controller(*meta)) {
    // Only a link from its pods to its Deployment: what the ownership walk reads (its uid, its
    // owners' uids and which is the controller; cluster_plan Owners, the restarts executor's
    // OwnedIndex), its key and version (the store) and its kind (the planners and OwnedIndex
    // tell workloads apart by kind). A controlled workload is never a plan target, so nothing
    // names it in a patch or an Event: no apiVersion, and its references keep no apiVersion,
    // kind or name (no builder maps a ReplicaSet to its owner: the restarts controller is a
    // singleton).
    rapidjson::Document out(rapidjson::kObjectType);
    auto& a = out.GetAllocator();
    out.AddMember("kind", api::make_string(kind, a), a);
    rapidjson::Value m = pick(*meta, {"name", "namespace", "uid", "resourceVersion"}, a);
    add_owner_references(*meta, m, a, {"uid", "controller"});
    out.AddMember("metadata", m, a);
    object.Swap(out);
    return;
  }
  // No planner, rollout follower or executor reads a workload's creation time (only its pods').
  meta->RemoveMember("creationTimestamp");
  // The deployment controller's bookkeeping (deployment.kubernetes.io/revision, ...).
  if (rapidjson::Value* ann = api::find_member(*meta, "annotations");
      ann != nullptr && ann->IsObject()) {
    for (auto m = ann->MemberBegin(); m != ann->MemberEnd();)
      if (api::string_view_of(m->name).starts_with("deployment.kubernetes.io/"))
        m = ann->EraseMember(m);
      else
        ++m;
    if (ann->MemberCount() == 0) meta->RemoveMember("annotations");
  }
  // Conditions are read by type, status and reason, and a condition that is not True by its
  // message too (a stalled rollout's Progressing: halt.cpp). Their times, and a True one's
  // message ("ReplicaSet \"web-5d8c\" has successfully progressed."), are read by nobody and
  // would make each workload's status its own instead of one shared part.
  if (rapidjson::Value* conds = api::find(object, "/status/conditions");
      conds != nullptr && conds->IsArray())
    for (rapidjson::Value& c : conds->GetArray())
      if (c.IsObject()) {
        c.RemoveMember("lastUpdateTime");
        c.RemoveMember("lastTransitionTime");
        if (api::string_at(c, {"status"}) == "True") c.RemoveMember("message");
      }
}

void project_pod(rapidjson::Document& pod) {
  if (!pod.IsObject()) return;
  const rapidjson::Value* meta = api::find_member(pod, "metadata");
  if (meta == nullptr || !meta->IsObject() || !has_controller(*meta)) {
    project_whole(pod, "v1", "Pod");  // its own workload: the engine reads all of it
    return;
  }
  rapidjson::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  rapidjson::Value m = pick(
      *meta,
      {"name", "namespace", "resourceVersion", "creationTimestamp", "deletionTimestamp", "labels"},
      a);
  // blockOwnerDeletion dropped; the rest maps a pod to its owner (runtime::owner_keys).
  add_owner_references(*meta, m, a, {"apiVersion", "kind", "name", "uid", "controller"});
  if (const rapidjson::Value* ann = api::find_member(*meta, "annotations");
      ann != nullptr && ann->IsObject()) {
    rapidjson::Value kept =
        pick(*ann, {"sidecar.istio.io/status", "meshop.io/injector-fingerprint"}, a);
    if (kept.MemberCount() > 0) m.AddMember("annotations", kept, a);
  }
  out.AddMember("metadata", m, a);
  if (const rapidjson::Value* spec = api::find_member(pod, "spec");
      spec != nullptr && spec->IsObject()) {
    rapidjson::Value s(rapidjson::kObjectType);
    for (const char* list : {"initContainers", "containers"}) {
      const rapidjson::Value* cs = api::find_member(*spec, list);
      if (cs != nullptr && cs->IsArray())
        s.AddMember(rapidjson::StringRef(list), names_and_images(*cs, a), a);
    }
    out.AddMember("spec", s, a);
  }
  rapidjson::Value status(rapidjson::kObjectType);
  // Succeeded and Failed pods run no proxy (the revisions reconciler's InUse ignores them).
  if (const rapidjson::Value* phase = api::find(pod, "/status/phase");
      phase != nullptr && phase->IsString())
    status.AddMember("phase", rapidjson::Value(*phase, a), a);
  if (const rapidjson::Value* conds = api::find(pod, "/status/conditions");
      conds != nullptr && conds->IsArray()) {
    rapidjson::Value kept(rapidjson::kArrayType);
    for (const rapidjson::Value& c : conds->GetArray())
      if (api::string_at(c, {"type"}) == "Ready")
        kept.PushBack(pick(c, {"type", "status", "reason", "message"}, a), a);
    status.AddMember("conditions", kept, a);
  }
  // The health watch after a restart (halt.hpp): restarts and CrashLoopBackOff per container.
  const rapidjson::Value* pod_status = api::find_member(pod, "status");
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const rapidjson::Value* cs = pod_status != nullptr && pod_status->IsObject()
                                     ? api::find_member(*pod_status, list)
                                     : nullptr;
    if (cs == nullptr || !cs->IsArray()) continue;
    rapidjson::Value kept(rapidjson::kArrayType);
    for (const rapidjson::Value& c : cs->GetArray()) {
      rapidjson::Value k = pick(c, {"name", "restartCount"}, a);
      if (const rapidjson::Value* reason = api::find(c, "/state/waiting/reason");
          reason != nullptr) {
        rapidjson::Value waiting(rapidjson::kObjectType);
        waiting.AddMember("reason", rapidjson::Value(*reason, a), a);
        rapidjson::Value state(rapidjson::kObjectType);
        state.AddMember("waiting", waiting, a);
        k.AddMember("state", state, a);
      }
      kept.PushBack(k, a);
    }
    status.AddMember(rapidjson::StringRef(list), kept, a);
  }
  if (status.MemberCount() > 0) out.AddMember("status", status, a);
  // Its own fields apart from what it has in common with its siblings (api/record.hpp).
  api::to_record(out);
  pod.Swap(out);
}

void project_node(rapidjson::Document& node) {
  if (!node.IsObject()) return;
  rapidjson::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  out.AddMember("apiVersion", "v1", a);
  out.AddMember("kind", "Node", a);
  if (const rapidjson::Value* meta = api::find_member(node, "metadata");
      meta != nullptr && meta->IsObject())
    out.AddMember("metadata", pick(*meta, {"name", "uid", "resourceVersion"}, a), a);
  if (const rapidjson::Value* v = api::find(node, "/status/nodeInfo/kubeletVersion");
      v != nullptr) {
    rapidjson::Value info(rapidjson::kObjectType);
    info.AddMember("kubeletVersion", rapidjson::Value(*v, a), a);
    rapidjson::Value status(rapidjson::kObjectType);
    status.AddMember("nodeInfo", info, a);
    out.AddMember("status", status, a);
  }
  node.Swap(out);
}

}  // namespace meshop::restart
