// inject(): upstream's webhook path (webhook.go inject → injectPod, inject.go RunTemplate) on
// the JSON DOM.
#include "operator/inject/injector.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "api/json_copy.hpp"
#include "api/json_patch.hpp"
#include "api/strategic_merge.hpp"
#include "api/yaml.hpp"
#include "operator/inject/kube_view.hpp"
#include "operator/inject/pipeline_steps.hpp"
#include "operator/inject/pod_ops.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::inject {

namespace te = template_engine;

namespace {

InjectResult failed(Decision decision, std::string type, std::string message) {
  InjectResult r;
  r.outcome = Outcome::kFailed;
  r.decision = decision;
  r.failure_type = std::move(type);
  r.message = std::move(message);
  return r;
}

std::string string_or_empty(const rapidjson::Value* v) {
  return v != nullptr && v->IsString() ? std::string(api::string_view_of(*v)) : std::string();
}

// GetDeployMetaFromPod (pkg/kube/util.go): the workload that owns a pod, from its controller
// owner reference and the labels controllers put on pods.
struct DeployMeta {
  std::string name, ns, kind = "Pod", api_version = "v1";
};

// cronJobNameRegexp `(.+)-\d{8,10}$`: the CronJob name of a Job it created.
std::optional<std::string> cron_job_name(std::string_view job) {
  std::size_t dash = job.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  std::string_view digits = job.substr(dash + 1);
  if (digits.size() < 8 || digits.size() > 10) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return std::string(job.substr(0, dash));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

DeployMeta deploy_meta_from_pod(const rapidjson::Value& pod) {
  DeployMeta d;
  d.name = api::string_at(pod, {"metadata", "name"});
  d.ns = api::string_at(pod, {"metadata", "namespace"});
  if (!api::string_at(pod, {"metadata", "generateName"}).empty()) {
    const rapidjson::Value* refs = api::find(pod, "/metadata/ownerReferences");
    const rapidjson::Value* controller = nullptr;
    if (refs != nullptr && refs->IsArray()) {
      for (const auto& r : refs->GetArray()) {
        const rapidjson::Value* c = r.IsObject() ? api::find_member(r, "controller") : nullptr;
        if (c != nullptr && c->IsBool() && c->GetBool()) {
          controller = &r;
          break;
        }
      }
    }
    if (controller != nullptr) {
      d.api_version = string_or_empty(api::find_member(*controller, "apiVersion"));
      d.kind = string_or_empty(api::find_member(*controller, "kind"));
      std::string ref_name = string_or_empty(api::find_member(*controller, "name"));
      d.name = ref_name;
      std::string hash = string_or_empty(label(pod, "pod-template-hash"));
      std::string rollout_hash = string_or_empty(label(pod, "rollouts-pod-template-hash"));
      std::string dc = string_or_empty(label(pod, "deploymentconfig"));
      if (d.kind == "ReplicaSet" && !hash.empty() && ends_with(ref_name, hash)) {
        std::string suffix = "-" + hash;
        d.name = ends_with(ref_name, suffix) ? ref_name.substr(0, ref_name.size() - suffix.size())
                                             : ref_name;
        d.kind = "Deployment";
      } else if (d.kind == "ReplicaSet" && !rollout_hash.empty() &&
                 ends_with(ref_name, rollout_hash)) {
        std::string suffix = "-" + rollout_hash;
        d.name = ends_with(ref_name, suffix) ? ref_name.substr(0, ref_name.size() - suffix.size())
                                             : ref_name;
        d.kind = "Rollout";
        d.api_version = "v1alpha1";
      } else if (d.kind == "ReplicationController" && !dc.empty()) {
        d.name = dc;
        d.kind = "DeploymentConfig";
      } else if (d.kind == "Job") {
        if (auto cron = cron_job_name(ref_name)) {
          d.name = *cron;
          d.kind = "CronJob";
          d.api_version = "batch/v1";
        }
      }
    }
  }
  if (d.name.empty()) d.name = api::string_at(pod, {"metadata", "name"});
  return d;
}

// updateImageTypeIfPresent: a known -distroless/-debug suffix of the tag is replaced by the
// requested type; "default" means no suffix.
std::string image_url(const Snapshot& s, std::string_view image_name, std::string image_type,
                      const rapidjson::Value& pod) {
  if (image_type.empty()) image_type = s.variant;
  if (const rapidjson::Value* a = annotation(pod, "sidecar.istio.io/proxyImageType"))
    image_type = std::string(api::string_view_of(*a));
  std::string tag = s.tag;
  if (!image_type.empty()) {
    for (std::string_view known : {"distroless", "debug"}) {
      std::string suffix = "-" + std::string(known);
      if (ends_with(tag, suffix)) {
        tag.resize(tag.size() - suffix.size());
        break;
      }
    }
    if (image_type != "default") tag += "-" + image_type;
  }
  return s.hub + "/" + std::string(image_name) + ":" + tag;
}

te::Value str(std::string s) {
  return te::Value::string(std::move(s));
}

// `go_type` and the field names are string literals (RecordObject keeps views of them).
te::Value record(std::string_view go_type, std::vector<RecordObject::Field> fields) {
  return te::Value::object(std::make_shared<RecordObject>(go_type, std::move(fields)));
}

// A strategic merge patch without directives: no key starts with '$', at any depth. Merged into
// an empty object it gives itself less its null members (the merge drops those), and it cannot
// fail. The template-only pod is read only through container_list / find_container / name_of /
// injection_status, which see a null member exactly as an absent one (they test the type of
// what they find), so such a patch serves as the template-only pod as it is.
bool has_no_directives(const rapidjson::Value& v) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (m.name.GetStringLength() != 0 && m.name.GetString()[0] == '$') return false;
      if (!has_no_directives(m.value)) return false;
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      if (!has_no_directives(e)) return false;
  }
  return true;
}

// Renders one template and parses its YAML into a patch (upstream's applyOverlayYAML reads
// the rendered bytes with sigs.k8s.io/yaml into a map). The parse comes from the snapshot's
// RenderCache when an earlier rendering in this namespace gives it.
// `default_proxy`: the pod has neither its own proxy config nor image type, so the memo that
// also covers default_proxy_data_fields() applies.
// `*plain`: the patch has_no_directives (remembered with the parse in the render cache).
api::Result<std::shared_ptr<const api::Value>> render(const Snapshot& s, const te::Template& t,
                                                      const te::Value& data, std::string_view name,
                                                      std::string_view ns, bool default_proxy,
                                                      bool* plain) {
  te::ExecOptions options = s.template_limits;
  if (auto memo = s.template_memos.find(name); memo != s.template_memos.end())
    options.memo = default_proxy ? memo->second.default_proxy.get() : memo->second.any_pod.get();
  // The text is only read here (the render cache and ReusableYaml copy what they keep): one
  // buffer per thread, with the capacity of the renderings before, instead of a new ~30 KB
  // string per pod. A buffer grown past 1 MiB (a runaway template) is released after use.
  thread_local std::string text;
  text.clear();
  struct Release {
    ~Release() {
      if (text.capacity() > (std::size_t{1} << 20)) std::string().swap(text);
    }
  } release;
  if (auto st = t.execute_into(text, data, options); !st) return std::move(st).error();
  const std::string* out = &text;
  if (auto hit = s.render_cache.find(ns, name, *out, plain)) return hit;
  auto parsed = api::ReusableYaml::read(*out);
  if (!parsed)
    return api::Error{"failed parsing generated injected YAML for template " + std::string(name) +
                      ": " + parsed.message()};
  const api::Value& doc = (*parsed)->document();
  if (doc.IsObject()) {
    *plain = has_no_directives(doc);
    s.render_cache.insert(ns, name, *parsed, *plain);
    return std::shared_ptr<const api::Value>(*parsed, &doc);
  }
  if (!doc.IsNull())
    return api::Error{"failed parsing generated injected YAML for template " + std::string(name) +
                      ": not a mapping"};
  auto empty = std::make_shared<api::Document>();
  empty->SetObject();
  *plain = true;
  return std::shared_ptr<const api::Value>(empty, empty.get());
}

std::vector<std::string> select_templates(const Snapshot& s, const rapidjson::Value& pod) {
  std::vector<std::string> names;
  if (const rapidjson::Value* a = annotation(pod, "inject.istio.io/templates")) {
    std::string_view list = api::string_view_of(*a);
    std::size_t start = 0;
    while (true) {
      std::size_t comma = list.find(',', start);
      std::string_view item = list.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      names.emplace_back(te::funcs::go_trim_space(item));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  } else {
    names = s.default_templates;
  }
  std::vector<std::string> out;
  for (const std::string& n : names) {
    auto it = s.aliases.find(n);
    if (it != s.aliases.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
    else
      out.push_back(n);
  }
  return out;
}

api::Error invalid(std::string message) {
  return api::make_error(api::ErrorKind::kInvalid, std::move(message));
}

// The shapes the pipeline relies on, which json.Unmarshal into corev1.Pod enforces upstream
// (a pod that fails them is denied there with a decode error).
api::Status check_pod_shape(const rapidjson::Value& pod) {
  const rapidjson::Value* meta = api::find_member(pod, "metadata");
  if (meta != nullptr && !meta->IsNull()) {
    if (!meta->IsObject()) return invalid("metadata: expected an object");
    for (std::string_view map : {"labels", "annotations"}) {
      const rapidjson::Value* m = api::find_member(*meta, map);
      if (m == nullptr || m->IsNull()) continue;
      if (!m->IsObject()) return invalid("metadata." + std::string(map) + ": expected an object");
      for (const auto& e : m->GetObject())
        if (!e.value.IsString() && !e.value.IsNull())
          return invalid("metadata." + std::string(map) + "." +
                         std::string(api::string_view_of(e.name)) + ": expected a string");
    }
  }
  const rapidjson::Value* spec = api::find_member(pod, "spec");
  if (spec != nullptr && !spec->IsNull()) {
    if (!spec->IsObject()) return invalid("spec: expected an object");
    for (std::string_view list : {"containers", "initContainers"}) {
      const rapidjson::Value* l = api::find_member(*spec, list);
      if (l == nullptr || l->IsNull()) continue;
      if (!l->IsArray()) return invalid("spec." + std::string(list) + ": expected a list");
      for (rapidjson::SizeType i = 0; i < l->Size(); ++i)
        if (!(*l)[i].IsObject())
          return invalid("spec." + std::string(list) + "[" + std::to_string(i) +
                         "]: expected an object");
    }
  }
  return api::ok_status();
}

}  // namespace

InjectResult inject(const Snapshot& snapshot, const PodRequest& request) {
  if (request.pod == nullptr || !request.pod->IsObject())
    return failed({}, "invalid_pod", "pod: expected a Pod object");
  if (auto st = check_pod_shape(*request.pod); !st)
    return failed({}, "invalid_pod", "pod: " + st.message());

  // The pod as upstream sees it after decoding: managedFields dropped and the namespace
  // filled in from the request. The patch is computed against this form. The request's pod
  // serves as it is when it needs none of that (the apiserver's pods: no managedFields yet,
  // the namespace set); otherwise, and on OpenShift (reset_openshift_sidecar_user), a copy.
  const rapidjson::Value* sent_meta = api::find_member(*request.pod, "metadata");
  const bool fill_namespace =
      !request.ns.empty() && api::string_at(*request.pod, {"metadata", "namespace"}).empty();
  const bool edit =
      snapshot.openshift ||
      (sent_meta == nullptr
           ? !request.ns.empty()
           : sent_meta->IsObject() &&
                 (api::find_member(*sent_meta, "managedFields") != nullptr || fill_namespace));
  api::Document copy;
  bool created_metadata = false;  // the pod as sent has no metadata at all
  if (edit) {
    api::copy_json(copy, *request.pod, copy.GetAllocator());
    if (rapidjson::Value* meta = api::find_member(copy, "metadata")) {
      if (meta->IsObject()) {
        meta->RemoveMember("managedFields");
        if (fill_namespace) {
          if (rapidjson::Value* ns = api::find_member(*meta, "namespace"))
            ns->SetString(request.ns.data(), static_cast<rapidjson::SizeType>(request.ns.size()),
                          copy.GetAllocator());
          else
            meta->AddMember("namespace", api::make_string(request.ns, copy.GetAllocator()),
                            copy.GetAllocator());
        }
      }
    } else if (!request.ns.empty()) {
      created_metadata = true;
      rapidjson::Value new_meta(rapidjson::kObjectType);
      new_meta.AddMember("namespace", api::make_string(request.ns, copy.GetAllocator()),
                         copy.GetAllocator());
      copy.AddMember("metadata", std::move(new_meta), copy.GetAllocator());
    }
  }
  const rapidjson::Value& original =
      edit ? static_cast<const rapidjson::Value&>(copy) : *request.pod;

  Decision decision = decide(snapshot, original, request.ns, request.kube_inject);
  if (!decision.inject) {
    InjectResult r;
    r.outcome = Outcome::kSkipped;
    r.decision = decision;
    return r;
  }
  if (snapshot.max_pod_containers != 0) {
    std::size_t containers = 0;
    const rapidjson::Value* spec = api::find_member(original, "spec");
    for (std::string_view list : {"containers", "initContainers"})
      if (const rapidjson::Value* l = spec != nullptr ? api::find_member(*spec, list) : nullptr;
          l != nullptr && l->IsArray())
        containers += l->Size();
    if (containers > snapshot.max_pod_containers)
      return failed(decision, "pod_too_large",
                    "pod has " + std::to_string(containers) +
                        " containers and init containers; sidecar injection handles at most " +
                        std::to_string(snapshot.max_pod_containers));
  }
  std::pair<std::int64_t, std::int64_t> ids{kDefaultProxyId, kDefaultProxyId};
  if (snapshot.openshift) {
    ids = openshift_proxy_ids(request.namespace_object);
    reset_openshift_sidecar_user(copy);  // `original` is `copy` on OpenShift
  }

  // RunTemplate: annotations are validated before anything else.
  // injectPod wraps every RunTemplate error with the same prefix.
  if (auto st = validate_annotations(original); !st)
    return failed(decision, "invalid_annotation",
                  "failed to run injection template: " + st.message());

  const rapidjson::Value* pc_annotation = annotation(original, "proxy.istio.io/config");
  std::string pc_text = string_or_empty(pc_annotation);
  auto proxy = proxy_config_for(*snapshot.mesh, pc_annotation != nullptr ? &pc_text : nullptr);
  if (!proxy) return failed(decision, "invalid_annotation", proxy.message());

  // Cluster and network: values, then the webhook path, then the pod's network label.
  std::map<std::string, std::string> proxy_envs;
  for (const auto& [k, v] : request.proxy_envs)
    proxy_envs[k] = v;
  std::string cluster = snapshot.cluster_name;
  std::string network = snapshot.network;
  if (auto it = proxy_envs.find("ISTIO_META_CLUSTER_ID");
      it != proxy_envs.end() && !it->second.empty())
    cluster = it->second;
  if (auto it = proxy_envs.find("ISTIO_META_NETWORK");
      it != proxy_envs.end() && !it->second.empty())
    network = it->second;
  if (const rapidjson::Value* n = label(original, "topology.istio.io/network"))
    network = std::string(api::string_view_of(*n));
  if (!cluster.empty()) proxy_envs["ISTIO_META_CLUSTER_ID"] = cluster;
  if (!network.empty()) proxy_envs["ISTIO_META_NETWORK"] = network;

  // The stripped pod is what templates see; struct views read it in place.
  auto stripped = std::make_shared<api::Document>();
  api::copy_json(*stripped, original, stripped->GetAllocator());
  strip_pod(*stripped, snapshot.mesh_status_port);
  if (auto st = reinsert_overrides(*stripped); !st)
    return failed(decision, "invalid_annotation",
                  "failed to run injection template: " + st.message());

  DeployMeta deploy;
  if (!request.workload_kind.empty()) {
    deploy.kind = request.workload_kind;
    deploy.api_version = request.workload_api_version;
    deploy.name = request.workload_name;
    deploy.ns = api::string_at(original, {"metadata", "namespace"});
  } else {
    deploy = deploy_meta_from_pod(original);
  }

  static const rapidjson::Value kNull;
  const rapidjson::Value* stripped_meta = api::find_member(*stripped, "metadata");
  const rapidjson::Value* stripped_spec = api::find_member(*stripped, "spec");
  std::shared_ptr<const void> owner = stripped;
  std::string proxy_image = image_url(snapshot, snapshot.proxy_image_name,
                                      std::string((*proxy)->image_type()), *stripped);
  std::string proxy_init_image = image_url(snapshot, snapshot.proxy_init_image_name, "", *stripped);
  // The fields named in snapshot_data_fields() must come from the snapshot alone, and those of
  // default_proxy_data_fields() too for a pod without its own proxy config (the annotation
  // proxy_config_for read) or image type (the annotation image_url reads).
  const bool default_proxy = pc_annotation == nullptr &&
                             annotation(*stripped, "sidecar.istio.io/proxyImageType") == nullptr;
  te::Value data = record(
      "*inject.SidecarTemplateData",
      {
          {"TypeMeta", "",
           record("v1.TypeMeta", {{"Kind", "kind", str(deploy.kind), true},
                                  {"APIVersion", "apiVersion", str(deploy.api_version), true}})},
          {"DeploymentMeta", "",
           record("types.NamespacedName", {{"Namespace", "Namespace", str(deploy.ns)},
                                           {"Name", "Name", str(deploy.name)}})},
          {"ObjectMeta", "",
           struct_view(stripped_meta != nullptr ? stripped_meta : &kNull, object_meta_type(),
                       owner)},
          {"Spec", "",
           struct_view(stripped_spec != nullptr ? stripped_spec : &kNull, pod_spec_type(), owner)},
          {"ProxyConfig", "", as_template_value(*proxy)},
          {"MeshConfig", "", snapshot.mesh_data},
          {"Values", "", snapshot.values_data},
          {"Revision", "", str(snapshot.revision)},
          {"NativeSidecars", "", te::Value::boolean(snapshot.native_sidecars)},
          {"ProxyImage", "", str(proxy_image)},
          {"ProxyInitImage", "", str(proxy_init_image)},
          {"ProxyUID", "", te::Value::integer(ids.first, te::Kind::kInt64)},
          {"ProxyGID", "", te::Value::integer(ids.second, te::Kind::kInt64)},
          {"InboundTrafficPolicyMode", "",
           str(std::string(snapshot.mesh->inbound_traffic_policy_mode()))},
          {"CompliancePolicy", "", str(snapshot.compliance_policy)},
      });

  // Render each template and merge it into the original pod and into a template-only pod
  // (in place: on an error both are dropped).
  api::Document merged;
  api::copy_json(merged, original, merged.GetAllocator());
  api::Document template_pod;
  template_pod.SetObject();
  // With one template whose rendering has no directives, the template-only pod is that
  // rendering itself (shared with the render cache), not a merged copy of it (has_no_directives).
  std::shared_ptr<const api::Value> template_only;
  const std::string pod_ns = api::string_at(original, {"metadata", "namespace"});
  const std::vector<std::string> names = select_templates(snapshot, original);
  for (const std::string& name : names) {
    auto it = snapshot.templates.find(name);
    if (it == snapshot.templates.end()) {
      std::string have;
      for (const auto& [k, v] : snapshot.templates)
        have += (have.empty() ? "" : ", ") + k;
      return failed(decision, "template_not_found",
                    "failed to run injection template: requested template \"" + name +
                        "\" not found; have " + have);
    }
    bool plain = false;
    auto patch = render(snapshot, *it->second, data, name, pod_ns, default_proxy, &plain);
    if (!patch)
      return failed(decision, "template_render",
                    "failed to run injection template: " + patch.message());
    if (names.size() == 1 && plain) {
      template_only = *patch;
    } else if (auto st = api::apply_strategic_merge_patch_in_place(template_pod, **patch,
                                                                   api::pod_patch_schema());
               !st) {
      return failed(
          decision, "merge",
          "failed to run injection template: failed applying injection overlay: " + st.message());
    }
    const rapidjson::Value& template_view = template_only ? *template_only : template_pod;
    // The annotation (read on the pod merged so far, as upstream) beats the cluster setting.
    bool native = snapshot.native_sidecars;
    if (const rapidjson::Value* a = annotation(merged, "sidecar.istio.io/nativeSidecar")) {
      if (api::string_view_of(*a) == "true") native = true;
      if (api::string_view_of(*a) == "false") native = false;
    }
    if (native &&
        find_container(container_list(template_view, "initContainers"), kProxyContainerName) &&
        find_container(container_list(merged, "containers"), kProxyContainerName))
      move_container(merged, "containers", "initContainers", kProxyContainerName);
    if (auto st =
            api::apply_strategic_merge_patch_in_place(merged, **patch, api::pod_patch_schema());
        !st)
      return failed(decision, "merge",
                    "failed to run injection template: failed parsing generated injected YAML "
                    "(check Istio sidecar injector configuration): " +
                        st.message());
  }

  const rapidjson::Value& template_view = template_only ? *template_only : template_pod;
  if (auto st = reapply_overwritten_containers(merged, original, template_view, **proxy); !st)
    return failed(decision, "merge", "failed to re apply container: " + st.message());

  // postProcessPod, in upstream's order.
  overwrite_cluster_envs(merged, proxy_envs);
  if (auto st = apply_prometheus_merge(merged, *snapshot.mesh, snapshot.mesh_status_port); !st)
    return failed(decision, "prometheus", "failed to process pod: " + st.message());
  bool was_injected = annotation(original, kStatusAnnotation) != nullptr;
  if (auto st =
          rewrite_app_probes(merged, snapshot.values, was_injected, snapshot.mesh_status_port);
      !st)
    return failed(decision, "probe_rewrite", "failed to process pod: " + st.message());
  if (auto it = proxy_envs.find("ISTIO_META_NETWORK"); it != proxy_envs.end())
    set_label(merged, "topology.istio.io/network", it->second);
  set_annotation(merged, kStatusAnnotation, injection_status(template_view, snapshot.revision));
  for (const auto& [k, v] : snapshot.injected_annotations)
    set_annotation(merged, k, v);
  if (snapshot.stamp_fingerprint)
    set_annotation(merged, kFingerprintAnnotation, snapshot.fingerprint);

  // reorderPod: the proxy goes last (first when the application waits for it); native
  // sidecars put init/validation, proxy, core-dump first.
  bool hold = (*proxy)->hold_application_until_proxy_starts() || snapshot.values_hold_application;
  modify_containers(merged, "containers", kProxyContainerName,
                    hold ? Reorder::kMoveFirst : Reorder::kMoveLast);
  if (find_container(container_list(merged, "initContainers"), kProxyContainerName) != nullptr) {
    for (std::string_view n :
         {kEnableCoreDumpName, kProxyContainerName, kValidationContainerName, kInitContainerName})
      modify_containers(merged, "initContainers", n, Reorder::kMoveFirst);
  } else {
    modify_containers(merged, "initContainers", kValidationContainerName, Reorder::kMoveFirst);
    modify_containers(merged, "initContainers", kInitContainerName, Reorder::kMoveLast);
    modify_containers(merged, "initContainers", kEnableCoreDumpName, Reorder::kMoveLast);
  }

  normalize_go_pod(merged, merged.GetAllocator());

  InjectResult result;
  result.outcome = Outcome::kInjected;
  result.decision = decision;
  result.patch = api::create_json_patch_text(original, merged);
  if (created_metadata) {
    // Only a client other than the apiserver sends a pod without metadata; the patch still
    // has to apply to what it sent: an op adding it comes first.
    constexpr std::string_view kAddMetadata = R"({"op":"add","path":"/metadata","value":{}})";
    result.patch.insert(
        1, result.patch.size() > 2 ? std::string(kAddMetadata) + "," : std::string(kAddMetadata));
  }
  result.pod = std::move(merged);
  return result;
}

}  // namespace meshop::inject
