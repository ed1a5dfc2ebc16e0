#include "operator/manifest/render.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "api/istio_operator.hpp"
#include "api/yaml.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/manifest/embedded.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/manifest/k8s_settings.hpp"
#include "operator/manifest/profiles.hpp"
#include "operator/manifest/tree_path.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::manifest {
namespace {

using api::Allocator;
using api::Document;
using api::Error;
using api::Value;

Value str(std::string_view s, Allocator& a) {
  return api::make_string(s, a);
}

Value& ensure_object(Value& parent, std::string_view key, Allocator& a) {
  Value* m = api::find_member(parent, key);
  if (m == nullptr) {
    parent.AddMember(str(key, a), Value(rapidjson::kObjectType), a);
    m = &(parent.MemberEnd() - 1)->value;
  }
  if (!m->IsObject()) m->SetObject();
  return *m;
}

void set_member(Value& object, std::string_view key, Value v, Allocator& a) {
  if (Value* m = api::find_member(object, key))
    *m = std::move(v);
  else
    object.AddMember(str(key, a), v, a);
}

std::string text_of(const Value* v) {
  if (v == nullptr || v->IsNull()) return {};
  if (v->IsString()) return std::string(api::string_view_of(*v));
  return api::to_json(*v);
}

bool bool_at(const Value& root, std::string_view path, bool fallback) {
  const Value* v = get_path(root, path);
  return v != nullptr && v->IsBool() ? v->GetBool() : fallback;
}

// --- step 1: merging inputs ---------------------------------------------------------------

api::Status merge_file(Document& user, const InputFile& file) {
  auto docs = api::yaml_stream_to_json(file.text);
  if (!docs.ok()) return Error{file.name + ": " + docs.message()};
  int count = 0;
  for (Document& d : *docs) {
    if (d.IsNull()) continue;
    if (++count > 1)
      return Error{file.name +
                   ": contains multiple IstioOperator resources; only one per file is supported"};
    if (!d.IsObject()) return Error{file.name + ": expected an IstioOperator mapping"};
    if (Value* spec = api::find_member(d, "spec"); spec != nullptr && spec->IsNull())
      d.EraseMember("spec");
    merge_into(user, d, user.GetAllocator());
  }
  return api::ok_status();
}

// --- step 2: values -----------------------------------------------------------------------

// The component defaults: inject/values.yaml (the injector's, when embedded) under
// components/values.yaml.
api::Result<Document> component_defaults() {
  Document out(rapidjson::kObjectType);
  for (std::string_view path : {"inject/values.yaml", "components/values.yaml"}) {
    std::optional<std::string_view> text = embedded_file(path);
    if (!text) continue;
    auto doc = api::yaml_to_json(*text);
    if (!doc.ok()) return Error{"embedded " + std::string(path) + ": " + doc.message()};
    if (doc->IsObject()) merge_into(out, *doc, out.GetAllocator());
  }
  return out;
}

// Moves the IstioOperator-level settings into values, beneath what values already say
// (istioctl translates spec.hub etc. and then re-applies the user's own values on top).
void translate_to_values(Document& iop) {
  Allocator& a = iop.GetAllocator();
  Value& spec = ensure_object(iop, "spec", a);
  Value& values = ensure_object(spec, "values", a);
  Document translated(rapidjson::kObjectType);
  Allocator& ta = translated.GetAllocator();
  auto put = [&](std::string_view path, const Value* v, bool as_text) {
    if (v == nullptr || v->IsNull()) return;
    Value copy = as_text ? str(text_of(v), ta) : Value(*v, ta);
    (void)set_path(translated, path, std::move(copy), ta);
  };
  put("global.hub", api::find_member(spec, "hub"), true);
  put("global.tag", api::find_member(spec, "tag"), true);
  put("revision", api::find_member(spec, "revision"), true);
  put("compatibilityVersion", api::find_member(spec, "compatibilityVersion"), true);
  if (const Value* mc = api::find_member(spec, "meshConfig"); mc != nullptr && mc->IsObject())
    put("meshConfig", mc, false);
  if (const Value* ns = api::find_member(spec, "namespace");
      ns != nullptr && ns->IsString() && ns->GetStringLength() > 0)
    put("global.istioNamespace", ns, true);
  // values win over the translated fields, except spec.namespace, which names the install.
  Document merged(rapidjson::kObjectType);
  merge_into(merged, translated, merged.GetAllocator());
  Document explicit_values;
  explicit_values.CopyFrom(values, explicit_values.GetAllocator());
  if (const Value* ns = api::find_member(spec, "namespace");
      ns != nullptr && ns->IsString() && ns->GetStringLength() > 0)
    (void)set_path(explicit_values, "global.istioNamespace",
                   Value(*ns, explicit_values.GetAllocator()), explicit_values.GetAllocator());
  merge_into(merged, explicit_values, merged.GetAllocator());
  values.CopyFrom(merged, a);

  // Enablement the charts read from values.
  const Value* comps = api::find_member(spec, "components");
  auto enabled = [&](std::string_view c, bool fallback) {
    if (comps == nullptr || !comps->IsObject()) return fallback;
    const Value* v = api::find_member(*comps, c);
    if (v == nullptr || !v->IsObject()) return fallback;
    return bool_at(*v, "enabled", true);
  };
  (void)set_path(values, "pilot.enabled", Value(enabled("pilot", true)), a);
  (void)set_path(values, "pilot.cni.enabled", Value(enabled("cni", false)), a);
  if (const Value* uv = api::find_member(spec, "unvalidatedValues");
      uv != nullptr && uv->IsObject())
    merge_into(values, *uv, a);
}

// --- step 2: components -------------------------------------------------------------------

struct ComponentInstance {
  std::string name;           // Base, Pilot, Cni, Ztunnel, IngressGateways, EgressGateways
  std::string spec_path;      // spec.components.pilot / spec.components.ingressGateways[0]
  std::string template_path;  // components/pilot.yaml
  std::string namespace_;
  const Value* spec = nullptr;  // the component object, or null
  std::string gateway_name;     // gateways
  std::string gateway_kind;     // "ingress" / "egress"
};

// Which components to render (istioctl's Component.Get): a listed component is enabled unless
// it says enabled: false; an absent one follows its default (base, pilot and one ingress
// gateway on; cni, ztunnel, egress off). values.gateways.istio-<kind>gateway.enabled turns
// every listed gateway of that kind on.
std::vector<ComponentInstance> enabled_components(const Value& iop, const std::string& default_ns,
                                                  std::vector<std::string>& warnings) {
  std::vector<ComponentInstance> out;
  const Value* comps = get_path(iop, "spec.components");
  const Value* values = get_path(iop, "spec.values");
  auto component_ns = [&](const Value* spec) {
    std::string ns = spec != nullptr ? text_of(api::find_member(*spec, "namespace")) : "";
    return ns.empty() ? default_ns : ns;
  };
  struct Single {
    const char* key;
    const char* name;
    bool on_by_default;
  };
  for (Single s : {Single{"base", "Base", true}, Single{"pilot", "Pilot", true},
                   Single{"cni", "Cni", false}, Single{"ztunnel", "Ztunnel", false}}) {
    const Value* spec = comps != nullptr ? api::find_member(*comps, s.key) : nullptr;
    if (spec != nullptr && !spec->IsObject()) spec = nullptr;
    bool on = spec != nullptr ? bool_at(*spec, "enabled", true) : s.on_by_default;
    if (!on) continue;
    out.push_back({s.name, std::string("spec.components.") + s.key,
                   std::string("components/") + s.key + ".yaml", component_ns(spec), spec, "", ""});
  }
  if (const Value* remote = comps != nullptr ? api::find_member(*comps, "istiodRemote") : nullptr;
      remote != nullptr && remote->IsObject() && bool_at(*remote, "enabled", false))
    warnings.push_back(
        "spec.components.istiodRemote is not rendered as a component; use profile remote "
        "(values.istiodRemote.*) instead");
  for (const char* kind : {"ingress", "egress"}) {
    std::string key = std::string(kind) + "Gateways";
    std::string root = std::string("gateways.istio-") + kind + "gateway";
    bool forced = values != nullptr && bool_at(*values, root + ".enabled", false);
    const Value* list = comps != nullptr ? api::find_member(*comps, key) : nullptr;
    std::string comp_name = std::string(kind) == "ingress" ? "IngressGateways" : "EgressGateways";
    std::string default_name = std::string("istio-") + kind + "gateway";
    if (list == nullptr || !list->IsArray()) {
      if (std::string(kind) == "ingress" || forced)
        out.push_back({comp_name, "spec.components." + key, "components/gateway.yaml", default_ns,
                       nullptr, default_name, kind});
      continue;
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& g = (*list)[i];
      if (!g.IsObject()) continue;
      if (!bool_at(g, "enabled", true) && !forced) continue;
      std::string name = text_of(api::find_member(g, "name"));
      out.push_back({comp_name, "spec.components." + key + "[" + std::to_string(i) + "]",
                     "components/gateway.yaml", component_ns(&g), &g,
                     name.empty() ? default_name : name, kind});
    }
  }
  return out;
}

std::string image_for(const Value& values, const ComponentInstance& c, std::string_view root,
                      std::string_view default_image) {
  const Value* comp_values = get_path(values, root);
  auto pick = [&](std::string_view field) {
    std::string v = c.spec != nullptr ? text_of(api::find_member(*c.spec, field)) : "";
    if (v.empty() && comp_values != nullptr && comp_values->IsObject())
      v = text_of(api::find_member(*comp_values, field));
    if (v.empty()) v = text_of(get_path(values, std::string("global.") + std::string(field)));
    return v;
  };
  std::string image = comp_values != nullptr && comp_values->IsObject()
                          ? text_of(api::find_member(*comp_values, "image"))
                          : "";
  if (image.empty()) image = default_image;
  if (image.find('/') != std::string::npos) return image;
  std::string variant = pick("variant");
  std::string out = pick("hub") + "/" + image + ":" + pick("tag");
  if (!variant.empty()) out += "-" + variant;
  return out;
}

// The mesh config of the revision: meshop's defaults under values.meshConfig.
void mesh_config(Document& data, const Value& values, const std::string& ns,
                 const std::string& suffix) {
  Allocator& a = data.GetAllocator();
  Value mesh(rapidjson::kObjectType);
  std::string istio_ns = text_of(get_path(values, "global.istioNamespace"));
  if (istio_ns.empty()) istio_ns = ns;
  (void)set_path(mesh, "defaultConfig.discoveryAddress",
                 str("istiod" + suffix + "." + ns + ".svc:15012", a), a);
  (void)set_path(mesh, "rootNamespace", str(istio_ns, a), a);
  (void)set_path(mesh, "trustDomain", str("cluster.local", a), a);
  (void)set_path(mesh, "enablePrometheusMerge", Value(true), a);
  Value metrics(rapidjson::kArrayType);
  metrics.PushBack(str("prometheus", a), a);
  (void)set_path(mesh, "defaultProviders.metrics", std::move(metrics), a);
  if (const Value* user = get_path(values, "meshConfig"); user != nullptr && user->IsObject())
    merge_into(mesh, Value(*user, a), a);
  set_member(data, "MeshConfig", std::move(mesh), a);
}

// The `values` key of the injector ConfigMap: what the injection templates and engine read.
void injector_values(Document& data, const Value& values) {
  Allocator& a = data.GetAllocator();
  Value out(rapidjson::kObjectType);
  for (std::string_view key : {"global", "sidecarInjectorWebhook", "revision"})
    if (const Value* v = api::find_member(values, key)) out.AddMember(str(key, a), Value(*v, a), a);
  Value pilot(rapidjson::kObjectType);
  for (std::string_view key : {"cni", "env"})
    if (const Value* v = get_path(values, "pilot." + std::string(key)))
      pilot.AddMember(str(key, a), Value(*v, a), a);
  out.AddMember("pilot", pilot, a);
  Value gateways(rapidjson::kObjectType);
  for (std::string_view key : {"securityContext", "seccompProfile"})
    if (const Value* v = get_path(values, "gateways." + std::string(key)))
      gateways.AddMember(str(key, a), Value(*v, a), a);
  out.AddMember("gateways", gateways, a);
  set_member(data, "InjectorValues", std::move(out), a);
}

void inject_templates(Document& data, const Value& values, std::vector<std::string>& warnings) {
  Allocator& a = data.GetAllocator();
  Value templates(rapidjson::kObjectType);
  for (std::string_view name : {"sidecar", "gateway"}) {
    std::optional<std::string_view> text = embedded_file("inject/" + std::string(name) + ".yaml");
    if (text) templates.AddMember(str(name, a), str(*text, a), a);
  }
  if (templates.MemberCount() == 0)
    warnings.push_back(
        "no injection templates are embedded (manifests/inject/sidecar.yaml, gateway.yaml); "
        "the injector ConfigMap has only the templates of "
        "values.sidecarInjectorWebhook.templates");
  if (const Value* user = get_path(values, "sidecarInjectorWebhook.templates");
      user != nullptr && user->IsObject())
    for (const auto& m : user->GetObject())
      if (m.value.IsString())
        set_member(templates, api::string_view_of(m.name), Value(m.value, a), a);
  set_member(data, "InjectTemplates", std::move(templates), a);
}

void gateway_data(Document& data, const Value& values, const ComponentInstance& c) {
  Allocator& a = data.GetAllocator();
  std::string root = "gateways.istio-" + c.gateway_kind + "gateway";
  Value gw(rapidjson::kObjectType);
  gw.AddMember("name", str(c.gateway_name, a), a);
  gw.AddMember("kind", str(c.gateway_kind, a), a);
  gw.AddMember("component", str(c.name, a), a);
  Value gv(rapidjson::kObjectType);
  if (const Value* v = get_path(values, root); v != nullptr && v->IsObject()) gv.CopyFrom(*v, a);
  // k8s.service.ports replace the gateway's ports (istioctl moves them into values).
  if (c.spec != nullptr)
    if (const Value* ports = get_path(*c.spec, "k8s.service.ports");
        ports != nullptr && ports->IsArray() && ports->Size() > 0)
      set_member(gv, "ports", Value(*ports, a), a);
  Value labels(rapidjson::kObjectType);
  const Value* spec_labels = c.spec != nullptr ? api::find_member(*c.spec, "label") : nullptr;
  if (spec_labels != nullptr && spec_labels->IsObject() && spec_labels->MemberCount() > 0) {
    labels.CopyFrom(*spec_labels, a);
  } else {
    if (const Value* l = api::find_member(gv, "labels"); l != nullptr && l->IsObject())
      labels.CopyFrom(*l, a);
    if (c.gateway_name != "istio-" + c.gateway_kind + "gateway")
      set_member(labels, "app", str(c.gateway_name, a), a);
  }
  gw.AddMember("labels", labels, a);
  gw.AddMember("values", gv, a);
  set_member(data, "Gateway", std::move(gw), a);
}

// Render order is apply order (installed_kinds.hpp). CustomResourceDefinitions would go
// first; the charts meshop renders emit none.
int kind_rank(std::string_view group, std::string_view kind) {
  if (kind == "CustomResourceDefinition") return -1000;
  if (!find_installed_kind(group, kind) && group == "admissionregistration.k8s.io") return 10000;
  return apply_rank(group, kind);
}

std::string group_of(const Value& object) {
  std::string av = api::string_at(object, {"apiVersion"});
  std::size_t slash = av.find('/');
  return slash == std::string::npos ? "" : av.substr(0, slash);
}

void stamp_labels(Document& object, const std::string& owner, const std::string& component) {
  Allocator& a = object.GetAllocator();
  Value& md = ensure_object(object, "metadata", a);
  Value& labels = ensure_object(md, "labels", a);
  set_member(labels, "install.operator.istio.io/owning-resource",
             str(owner.empty() ? "unknown" : owner, a), a);
  set_member(labels, "operator.istio.io/component", str(component, a), a);
}

api::Result<std::vector<Document>> render_component(const ComponentInstance& c, const Value& values,
                                                    const Value& iop,
                                                    std::vector<std::string>& warnings) {
  std::optional<std::string_view> text = embedded_file(c.template_path);
  if (!text)
    return Error{"component " + c.name + ": template " + c.template_path + " is not embedded"};

  std::string revision = text_of(get_path(values, "revision"));
  if (revision == "default") revision.clear();
  std::string suffix = revision.empty() ? "" : "-" + revision;

  Document data(rapidjson::kObjectType);
  Allocator& a = data.GetAllocator();
  data.AddMember("Values", Value(values, a), a);
  Value release(rapidjson::kObjectType);
  release.AddMember("Namespace", str(c.namespace_, a), a);
  release.AddMember("Name", str(c.name, a), a);
  data.AddMember("Release", release, a);
  data.AddMember("Revision", str(revision, a), a);
  data.AddMember("RevLabel", str(revision.empty() ? "default" : revision, a), a);
  data.AddMember("Suffix", str(suffix, a), a);
  data.AddMember("OwnerName", str(api::string_at(iop, {"metadata", "name"}), a), a);
  ComponentTarget target;
  if (c.name == "Pilot") {
    data.AddMember("Image", str(image_for(values, c, "pilot", "pilot"), a), a);
    mesh_config(data, values, c.namespace_, suffix);
    injector_values(data, values);
    inject_templates(data, values, warnings);
    target = {"Deployment", "istiod" + suffix, "discovery", false};
  } else if (c.name == "Cni") {
    data.AddMember("Image", str(image_for(values, c, "cni", "install-cni"), a), a);
    target = {"DaemonSet", "istio-cni-node", "install-cni", false};
  } else if (c.name == "Ztunnel") {
    data.AddMember("Image", str(image_for(values, c, "ztunnel", "ztunnel"), a), a);
    std::string name = text_of(get_path(values, "ztunnel.resourceName"));
    target = {"DaemonSet", name.empty() ? "ztunnel" : name, "istio-proxy", false};
  } else if (c.name == "IngressGateways" || c.name == "EgressGateways") {
    gateway_data(data, values, c);
    target = {"Deployment", c.gateway_name, "istio-proxy", true};
  } else {
    target = {"", "", "", false};
  }

  auto tmpl = template_engine::Template::parse(c.template_path, *text);
  if (!tmpl.ok()) return Error{"component " + c.name + ": " + tmpl.error()};
  auto out = (*tmpl)->execute(template_engine::funcs::from_rapidjson(data));
  if (!out.ok()) return Error{"component " + c.name + ": " + out.error()};
  auto docs = api::yaml_stream_to_json(*out);
  if (!docs.ok())
    return Error{"component " + c.name + ": rendered YAML does not parse: " + docs.message()};

  std::vector<Document> objects;
  for (Document& d : *docs) {
    if (d.IsNull()) continue;
    if (!d.IsObject() || api::string_at(d, {"kind"}).empty())
      return Error{"component " + c.name + ": rendered a document that is not an object"};
    objects.push_back(std::move(d));
  }
  if (c.spec != nullptr)
    if (const Value* k8s = api::find_member(*c.spec, "k8s"); k8s != nullptr && k8s->IsObject()) {
      api::Status st = apply_k8s_settings(objects, *k8s, target, c.spec_path + ".k8s", warnings);
      if (!st.ok()) return Error{st.message()};
    }
  return objects;
}

}  // namespace

api::Result<MergedOperator> merge_inputs(const RenderInputs& inputs) {
  MergedOperator result;
  auto user_doc = api::parse_json(
      R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{},"spec":{}})");
  Document& user = *user_doc;
  for (const InputFile& f : inputs.files) {
    api::Status st = merge_file(user, f);
    if (!st.ok()) return st.error();
  }
  if (!user.HasMember("spec") || !user["spec"].IsObject())
    set_member(user, "spec", Value(rapidjson::kObjectType), user.GetAllocator());

  std::vector<std::string> flags = inputs.set_flags;
  if (!inputs.revision.empty() && inputs.revision != "default")
    flags.push_back("revision=" + inputs.revision);
  for (const std::string& flag : flags) {
    auto f = parse_set_flag(flag);
    if (!f.ok()) return f.error();
    std::string full = "spec." + f->path;
    Value v = typed_set_value(full, f->value, user.GetAllocator());
    api::Status st = set_path(user, full, std::move(v), user.GetAllocator());
    if (!st.ok()) return Error{"--set " + flag + ": " + st.message()};
  }

  std::string profile = text_of(get_path(user, "spec.profile"));
  auto base = load_profile(profile);
  if (!base.ok()) return base.error();
  result.iop = std::move(base).value();
  merge_into(result.iop, user, result.iop.GetAllocator());

  api::IstioOperatorValidation check = api::validate_istio_operator(result.iop);
  result.warnings = check.warnings;
  if (!check.ok()) return Error{"invalid IstioOperator:\n" + check.message()};
  return result;
}

api::Result<RenderResult> render_merged(const Value& merged_iop) {
  RenderResult result;
  api::IstioOperatorValidation check = api::validate_istio_operator(merged_iop);
  if (!check.ok()) return Error{"invalid IstioOperator:\n" + check.message()};
  Document iop;
  iop.CopyFrom(merged_iop, iop.GetAllocator());
  // Upstream's convention (operator/pkg/util/testdata/yaml/convention_*.yaml): scalar
  // proxyMetadata values are written as strings ("10", "false", "0.85"), as the ProxyConfig
  // field (map<string,string>) requires.
  for (const char* at : {"spec.meshConfig.defaultConfig.proxyMetadata",
                         "spec.values.meshConfig.defaultConfig.proxyMetadata"}) {
    Value* md = const_cast<Value*>(get_path(iop, at));
    if (md == nullptr || !md->IsObject()) continue;
    for (auto& m : md->GetObject())
      if (m.value.IsBool() || m.value.IsNumber())
        m.value = str(api::to_json(m.value), iop.GetAllocator());
  }
  // The mesh config is rendered into ConfigMap istio[-<rev>], which istiod and the injector
  // read with upstream's strict typing: a value they would reject must stop the install here,
  // before any object is applied, not leave a revision whose injector denies every pod.
  std::string mesh_errors;
  for (const char* at : {"spec.meshConfig", "spec.values.meshConfig"}) {
    const Value* mesh = get_path(iop, at);
    if (mesh == nullptr) continue;
    std::vector<std::string> ignored;
    api::Status st = inject::validate_inline_mesh_config(*mesh, at, &ignored);
    if (!st.ok()) mesh_errors += (mesh_errors.empty() ? "" : "\n") + st.message();
    for (const std::string& f : ignored)
      result.warnings.push_back(f + ": unknown field, ignored (istiod and the injector ignore it)");
  }
  if (!mesh_errors.empty()) return Error{"invalid IstioOperator:\n" + mesh_errors};

  translate_to_values(iop);
  auto defaults = component_defaults();
  if (!defaults.ok()) return defaults.error();
  Document values = std::move(defaults).value();
  merge_into(values, *get_path(iop, "spec.values"), values.GetAllocator());
  std::string owner = api::string_at(iop, {"metadata", "name"});
  if (!owner.empty())
    (void)set_path(values, "ownerName", str(owner, values.GetAllocator()), values.GetAllocator());

  std::string default_ns = text_of(get_path(values, "global.istioNamespace"));
  if (default_ns.empty()) default_ns = api::string_at(iop, {"metadata", "namespace"});
  if (default_ns.empty()) default_ns = "istio-system";

  struct Entry {
    int rank;
    std::string group, kind, ns, name;
    std::size_t order;
    RenderedObject object;
  };
  std::vector<Entry> entries;
  for (const ComponentInstance& c : enabled_components(iop, default_ns, result.warnings)) {
    auto objects = render_component(c, values, iop, result.warnings);
    if (!objects.ok()) return objects.error();
    for (Document& d : *objects) {
      stamp_labels(d, owner, c.name);
      std::string group = group_of(d);
      std::string kind = api::string_at(d, {"kind"});
      entries.push_back({kind_rank(group, kind), group, kind,
                         api::string_at(d, {"metadata", "namespace"}),
                         api::string_at(d, {"metadata", "name"}), entries.size(),
                         RenderedObject{c.name, std::move(d)}});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    return std::tie(x.rank, x.group, x.kind, x.ns, x.name, x.order) <
           std::tie(y.rank, y.group, y.kind, y.ns, y.name, y.order);
  });
  for (Entry& e : entries)
    result.objects.push_back(std::move(e.object));
  return result;
}

api::Result<RenderResult> render(const RenderInputs& inputs) {
  auto merged = merge_inputs(inputs);
  if (!merged.ok()) return merged.error();
  auto result = render_merged(merged->iop);
  if (!result.ok()) return result;
  result->warnings.insert(result->warnings.begin(), merged->warnings.begin(),
                          merged->warnings.end());
  return result;
}

api::Result<RenderResult> render_istio_operator(const Value& iop) {
  // The object as istioctl reads a -f file: what the cluster added (status, managedFields,
  // resourceVersion, labels, annotations) is not part of the install's input.
  Document input(rapidjson::kObjectType);
  Allocator& a = input.GetAllocator();
  for (std::string_view key : {"apiVersion", "kind"})
    if (const Value* v = api::find_member(iop, key)) set_member(input, key, Value(*v, a), a);
  Value md(rapidjson::kObjectType);
  for (std::string_view key : {"name", "namespace"})
    if (std::string v = api::string_at(iop, {"metadata", key}); !v.empty())
      set_member(md, key, str(v, a), a);
  set_member(input, "metadata", std::move(md), a);
  if (const Value* spec = api::find_member(iop, "spec"))
    set_member(input, "spec", Value(*spec, a), a);
  std::string name = api::string_at(iop, {"metadata", "name"});
  istioctl::PipelineInputs inputs;
  inputs.files.push_back(
      {"IstioOperator " + (name.empty() ? std::string("(unnamed)") : name), api::to_json(input)});
  auto generated = istioctl::generate(inputs);
  if (!generated.ok()) return generated.error();
  RenderResult result;
  result.warnings = std::move(generated->warnings);
  result.objects.reserve(generated->objects.size());
  for (istioctl::PipelineObject& o : generated->objects)
    result.objects.push_back({std::move(o.component), std::move(o.object)});
  return result;
}

std::string to_multi_document_yaml(const RenderResult& result) {
  std::string out;
  for (std::size_t i = 0; i < result.objects.size(); ++i) {
    if (i > 0) out += "---\n";
    out += api::json_to_yaml(result.objects[i].object);
  }
  return out;
}

}  // namespace meshop::manifest
