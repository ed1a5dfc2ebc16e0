#include "operator/restart/planner.hpp"

#include "api/json.hpp"
#include "api/record.hpp"

namespace meshop::restart {
namespace {

constexpr std::string_view kStatusAnnotation = "sidecar.istio.io/status";
// inject::kFingerprintAnnotation (the restart library does not link the engine).
constexpr std::string_view kFingerprintAnnotation = "meshop.io/injector-fingerprint";

std::string proxy_image_of(const rapidjson::Value& pod) {
  for (const char* list : {"/spec/containers", "/spec/initContainers"}) {
    const rapidjson::Value* cs = api::field(pod, list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (const rapidjson::Value& c : cs->GetArray())
      if (api::string_at(c, {"name"}) == "istio-proxy") return api::string_at(c, {"image"});
  }
  return {};
}

std::string revision_text(const std::string& r) {
  return r.empty() ? "none" : r;
}

}  // namespace

const rapidjson::Value* pod_template(const rapidjson::Value& workload, std::string_view kind) {
  if (kind == "Pod") return &workload;
  if (kind == "CronJob") return api::find(workload, "/spec/jobTemplate/spec/template");
  return api::find(workload, "/spec/template");
}

rapidjson::Document pod_from_template(const rapidjson::Value& tmpl, std::string_view ns) {
  rapidjson::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  pod.AddMember("apiVersion", "v1", a);
  pod.AddMember("kind", "Pod", a);
  rapidjson::Value meta(rapidjson::kObjectType);
  if (const rapidjson::Value* m = api::find_member(tmpl, "metadata"); m != nullptr && m->IsObject())
    meta.CopyFrom(*m, a);
  if (meta.HasMember("namespace")) meta.RemoveMember("namespace");
  meta.AddMember("namespace", api::make_string(ns, a), a);
  pod.AddMember("metadata", meta, a);
  rapidjson::Value spec(rapidjson::kObjectType);
  if (const rapidjson::Value* s = api::find_member(tmpl, "spec"); s != nullptr && s->IsObject())
    spec.CopyFrom(*s, a);
  pod.AddMember("spec", spec, a);
  return pod;
}

std::string_view reason_name(StaleReason r) {
  switch (r) {
    case StaleReason::kInjectionEnabled:
      return "InjectionEnabled";
    case StaleReason::kInjectionDisabled:
      return "InjectionDisabled";
    case StaleReason::kRevisionChanged:
      return "RevisionChanged";
    case StaleReason::kProxyImageChanged:
      return "ProxyImageChanged";
    case StaleReason::kTemplateChanged:
      return "TemplateChanged";
  }
  return "Unknown";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kUpToDate:
      return "UpToDate";
    case Verdict::kStale:
      return "Stale";
    case Verdict::kManual:
      return "ManualRestartNeeded";
    case Verdict::kConflict:
      return "Conflict";
    case Verdict::kUnknownRevision:
      return "UnknownRevision";
    case Verdict::kInjectionFails:
      return "InjectionFails";
  }
  return "Unknown";
}

bool restartable_kind(std::string_view kind) {
  return kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" ||
         kind == "ReplicaSet" || kind == "ReplicationController";
}

PodState observe_pod(const rapidjson::Value& pod) {
  PodState s;
  const rapidjson::Value* annotations = api::field(pod, "/metadata/annotations");
  if (annotations != nullptr && annotations->IsObject()) {
    const rapidjson::Value* status = api::find_member(*annotations, kStatusAnnotation);
    if (status != nullptr && status->IsString()) {
      s.injected = true;
      auto parsed = api::parse_json(api::string_view_of(*status));
      if (parsed) s.revision = api::string_at(*parsed, {"revision"});
      // Before the revision field existed the default revision was implied.
      if (s.revision.empty()) s.revision = "default";
    }
    s.fingerprint = api::string_at(*annotations, {std::string_view(kFingerprintAnnotation)});
  }
  s.proxy_image = proxy_image_of(pod);
  return s;
}

WorkloadPlan plan_workload(const rapidjson::Value& workload,
                           const rapidjson::Value* namespace_labels,
                           const std::vector<InjectorEntry>& entries,
                           const std::vector<const rapidjson::Value*>& pods,
                           const DesiredFn& desired_fn, const PlanOptions& options) {
  WorkloadPlan plan;
  plan.kind = api::string_at(workload, {"kind"});
  plan.ns = api::string_at(workload, {"metadata", "namespace"});
  plan.name = api::string_at(workload, {"metadata", "name"});

  const rapidjson::Value* tmpl = pod_template(workload, plan.kind);
  if (tmpl == nullptr) {
    plan.detail = "no pod template";
    return plan;
  }
  rapidjson::Document pod = pod_from_template(*tmpl, plan.ns);

  // Desired: the revision the apiserver would call, then that revision's engine.
  Route r = route(entries, namespace_labels, api::find(pod, "/metadata/labels"));
  if (r.conflict()) {
    plan.verdict = Verdict::kConflict;
    plan.detail = "several revisions select these pods:";
    for (const std::string& rev : r.revisions)
      plan.detail += " " + rev;
    return plan;
  }
  Desired want;
  if (r.injected()) {
    std::optional<Desired> d = desired_fn(r.revision(), pod);
    if (!d) {
      plan.verdict = Verdict::kUnknownRevision;
      plan.target_revision = r.revision();
      plan.detail = "revision " + r.revision() + " (webhook " + r.entry->configuration +
                    ") has no injector configuration";
      return plan;
    }
    want = std::move(*d);
    if (want.fails) {
      plan.verdict = Verdict::kInjectionFails;
      plan.target_revision = r.revision();
      plan.detail = "injection by revision " + r.revision() + " would fail: " + want.why;
      return plan;
    }
    if (want.inject && want.revision.empty()) want.revision = r.revision();
  }
  plan.target_revision = want.inject ? want.revision : "";

  // Current: the first pod that differs decides; every differing pod is listed.
  for (const rapidjson::Value* p : pods) {
    PodState have = observe_pod(*p);
    std::optional<StaleReason> reason;
    if (want.inject && !have.injected) {
      reason = StaleReason::kInjectionEnabled;
    } else if (!want.inject && have.injected) {
      reason = StaleReason::kInjectionDisabled;
    } else if (want.inject && have.revision != want.revision) {
      reason = StaleReason::kRevisionChanged;
    } else if (want.inject && !want.proxy_image.empty() && !have.proxy_image.empty() &&
               have.proxy_image != want.proxy_image) {
      reason = StaleReason::kProxyImageChanged;
    } else if (want.inject && options.include_template_changes && !want.fingerprint.empty() &&
               !have.fingerprint.empty() && have.fingerprint != want.fingerprint) {
      reason = StaleReason::kTemplateChanged;
    }
    if (!reason) continue;
    std::string pod_name(api::field_string(*p, "/metadata/name"));
    plan.stale_pods.push_back(pod_name);
    if (plan.reason) continue;
    plan.reason = reason;
    plan.current_revision = have.injected ? have.revision : "";
    plan.current_proxy_image = have.injected ? have.proxy_image : "";
    plan.target_proxy_image = want.inject ? want.proxy_image : "";
    plan.target_fingerprint = want.inject ? want.fingerprint : "";
    plan.verdict = restartable_kind(plan.kind) ? Verdict::kStale : Verdict::kManual;
    switch (*reason) {
      case StaleReason::kInjectionEnabled:
        plan.detail =
            "pod " + pod_name + " has no sidecar; revision " + want.revision + " would inject one";
        break;
      case StaleReason::kInjectionDisabled:
        plan.detail = "pod " + pod_name + " has a sidecar of revision " + have.revision +
                      "; injection is now disabled" +
                      (want.why.empty() ? "" : " (" + want.why + ")");
        break;
      case StaleReason::kRevisionChanged:
        plan.detail = "pod " + pod_name + " runs revision " + revision_text(have.revision) +
                      "; its pods now get revision " + want.revision;
        break;
      case StaleReason::kProxyImageChanged:
        plan.detail = "pod " + pod_name + " runs proxy " + have.proxy_image + "; revision " +
                      want.revision + " now injects " + want.proxy_image;
        break;
      case StaleReason::kTemplateChanged:
        plan.detail = "pod " + pod_name + " was injected with an older configuration of revision " +
                      want.revision;
        break;
    }
    if (plan.verdict == Verdict::kManual)
      plan.detail += "; a " + plan.kind + " is never restarted by meshop: restart it by hand";
  }
  if (!plan.reason) plan.detail = pods.empty() ? "no pods" : "all pods match";
  return plan;
}

}  // namespace meshop::restart
