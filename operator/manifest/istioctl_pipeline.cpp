#include "operator/manifest/istioctl_pipeline.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "api/go_format.hpp"
#include "api/istio_operator.hpp"
#include "api/strategic_merge.hpp"
#include "api/yaml.hpp"
#include "operator/helm/chart.hpp"
#include "operator/helm/render.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/inject/quantity.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_detail.hpp"
#include "operator/manifest/k8s_values.hpp"
#include "operator/manifest/tree_path.hpp"
#include "operator/manifest/values_schema.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::manifest::istioctl {
namespace {

namespace fs = std::filesystem;
namespace te = template_engine;
namespace tf = template_engine::funcs;
using api::Error;
using namespace detail;

// istioctl renders with Capabilities.KubeVersion 1.<MinK8SVersion>.0 when it has no cluster
// (istioctl/pkg/install/k8sversion MinK8SVersion = 32 in the pinned module).
constexpr std::string_view kKubeVersion = "v1.32.0";

std::string trim_space(std::string_view s) {
  return std::string(tf::go_trim_space(s));
}

// yml.SplitString: split at lines starting with "---", trim each part, drop empty ones.
std::vector<std::string> split_yaml(std::string_view text) {
  std::vector<std::string> parts;
  std::string active;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos + 1);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.starts_with("---")) {
      parts.push_back(std::move(active));
      active.clear();
    } else {
      active += line;
    }
  }
  if (!active.empty()) parts.push_back(std::move(active));
  std::vector<std::string> out;
  for (const std::string& p : parts) {
    std::string t = trim_space(p);
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

// manifest.FromYaml on one part: null documents have no kind (skipped by the caller, nullopt);
// any other document must be an object with a kind, as unstructured decoding requires.
api::Result<std::optional<api::Document>> parse_object(const std::string& part) {
  auto doc = api::yaml_to_json(part);
  if (!doc.ok()) return Error{doc.message()};
  if (doc->IsNull()) return std::optional<api::Document>();
  if (!doc->IsObject()) return Error{"a document is not an object: " + part.substr(0, 80)};
  const api::Value* kind = api::find_member(*doc, "kind");
  if (kind == nullptr || !kind->IsString() || kind->GetStringLength() == 0)
    return Error{"Object 'Kind' is missing in '" + api::to_json(*doc).substr(0, 200) + "'"};
  return std::optional<api::Document>(std::move(doc).value());
}

api::Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Error{"open " + p.string() + ": no such file or directory"};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// values.MapFromYaml: the first document; it must be a map (null is an empty map).
api::Result<GoValue> map_from_yaml(std::string_view text) {
  auto doc = api::yaml_to_json(text);
  if (!doc.ok()) return Error{doc.message()};
  if (doc->IsNull()) return go_map();
  if (!doc->IsObject())
    return Error{"error unmarshaling JSON: json: cannot unmarshal " +
                 std::string(doc->IsArray() ? "array" : "a scalar") +
                 " into Go value of type values.Map"};
  return go_from_json(*doc);
}

// The bundled chart set a package path names ("bundled:1.31"), or null for a directory.
const ChartSet* bundled_set(std::string_view package) {
  if (package.substr(0, kBundledPrefix.size()) != kBundledPrefix) return nullptr;
  return find_chart_set(package.substr(kBundledPrefix.size()));
}

api::Result<GoValue> read_profile_file(const std::string& dir, const std::string& profile) {
  if (profile.find('/') != std::string::npos || profile == ".." || profile == ".")
    return Error{"profile \"" + profile + "\" not found: open profiles/" + profile +
                 ".yaml: invalid argument"};
  if (const ChartSet* set = bundled_set(dir)) {
    auto text = set->file("profiles/" + profile + ".yaml");
    if (!text) {
      std::string known;
      for (const std::string& n : set->profiles())
        known += (known.empty() ? "" : ", ") + n;
      return Error{"profile \"" + profile + "\" not found in Istio " + set->version +
                   " (profiles: " + known + ")"};
    }
    auto m = map_from_yaml(*text);
    if (!m.ok())
      return Error{"profile " + set->version + ":profiles/" + profile + ".yaml: " + m.message()};
    return m;
  }
  fs::path p = fs::path(dir) / "profiles" / (profile + ".yaml");
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "profiles", ec)) {
      std::string n = e.path().filename().string();
      if (n.ends_with(".yaml")) names.push_back(n.substr(0, n.size() - 5));
    }
    std::sort(names.begin(), names.end());
    std::string known;
    for (const std::string& n : names)
      known += (known.empty() ? "" : ", ") + n;
    return Error{"profile \"" + profile + "\" not found in " + dir + ": open profiles/" + profile +
                 ".yaml: no such file or directory" +
                 (known.empty() ? std::string() : " (profiles in " + dir + ": " + known + ")")};
  }
  auto text = read_file(p);
  if (!text.ok()) return Error{text.message()};
  auto m = map_from_yaml(*text);
  if (!m.ok()) return Error{"profile " + p.string() + ": " + m.message()};
  return m;
}

api::Result<GoValue> read_profile(const std::string& dir, std::string profile) {
  if (dir.empty())
    return Error{
        "no chart set: pass --manifests DIR (an Istio release's manifests/, with charts/ and "
        "profiles/) or set spec.installPackagePath"};
  if (profile.empty()) profile = "default";
  auto base = read_profile_file(dir, "default");
  if (!base.ok()) return base;
  if (profile == "default") return base;
  auto top = read_profile_file(dir, profile);
  if (!top.ok()) return top;
  GoValue b = *base;
  go_merge_from(b, *top);
  return b;
}

api::Status check_single_iop(const InputFile& f) {
  int count = 0;
  for (const std::string& part : split_yaml(f.text)) {
    auto obj = parse_object(part);
    if (!obj.ok()) return Error{f.name + ": unable to parse file: " + obj.message()};
    if (obj->has_value()) ++count;
  }
  if (count > 1)
    return Error{f.name + ": contains multiple IstioOperator CRs, only one per file is supported"};
  return api::ok_status();
}

api::Status translate_to_helm(GoValue& base) {
  static constexpr std::pair<std::string_view, std::string_view> kTranslations[] = {
      {"spec.hub", "global.hub"},
      {"spec.tag", "global.tag"},
      {"spec.revision", "revision"},
      {"spec.meshConfig", "meshConfig"},
      {"spec.compatibilityVersion", "compatibilityVersion"},
  };
  for (auto [in, out] : kTranslations) {
    GoValue v = go_get_path(base, in);
    if (v.is_invalid()) continue;
    if (v.kind() == te::Kind::kMap) {
      // Upstream merges any map-valued field under values.meshConfig (the only map here).
      auto cloned = go_deep_clone(make_map(v, {"spec", "values", "meshConfig"}));
      if (!cloned.ok()) return Error{std::string(in) + ": " + cloned.message()};
      go_merge_from(base, *cloned);
    } else {
      std::string flag = "spec.values." + std::string(out) + "=" + go_sprint(v);
      if (auto st = go_set_flag(base, flag); !st.ok()) return st;
    }
  }
  if (auto st = go_set_path(base, "spec.values.pilot.enabled",
                            GoValue::boolean(get_path_bool(base, "spec.components.pilot.enabled")));
      !st.ok())
    return st;
  if (auto st = go_set_path(base, "spec.values.pilot.cni.enabled",
                            GoValue::boolean(get_path_bool(base, "spec.components.cni.enabled")));
      !st.ok())
    return st;
  if (std::string ns = get_path_string(base, "spec.values.global.istioNamespace"); !ns.empty())
    if (auto st = go_set_path(base, "metadata.namespace", GoValue::string(ns)); !st.ok()) return st;
  return api::ok_status();
}

// --- components -------------------------------------------------------------------------------

api::Result<std::optional<std::int64_t>> int_field(const GoValue& m, std::string_view key,
                                                   const std::string& where) {
  te::Map* mm = map_of(m);
  if (mm == nullptr) return std::optional<std::int64_t>();
  const GoValue* v = mm->find(key);
  if (v == nullptr || v->is_nil_or_invalid()) return std::optional<std::int64_t>();
  if (v->is_integer()) return std::optional<std::int64_t>(v->int_value());
  if (v->kind() == te::Kind::kFloat64) {
    double d = v->as_float();
    if (d == static_cast<double>(static_cast<std::int64_t>(d)))
      return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
  }
  return Error{"json: cannot unmarshal " + go_sprint(*v) + " into Go struct field " + where + "." +
               std::string(key) + " of type int32"};
}

api::Result<std::string> string_field(const GoValue& m, std::string_view key,
                                      const std::string& where) {
  te::Map* mm = map_of(m);
  if (mm == nullptr) return std::string();
  const GoValue* v = mm->find(key);
  if (v == nullptr || v->is_nil_or_invalid()) return std::string();
  if (!v->is_string())
    return Error{"json: cannot unmarshal " + te::go_type_name(*v) + " into Go struct field " +
                 where + "." + std::string(key) + " of type string"};
  return std::string(v->as_string());
}

// A resource.Quantity from JSON (string or number), canonical; "" when absent or zero.
api::Result<std::string> cpu_quantity(const GoValue& list, const std::string& where) {
  te::Map* m = map_of(list);
  if (m == nullptr) return std::string();
  const GoValue* v = m->find("cpu");
  if (v == nullptr || v->is_nil_or_invalid()) return std::string();
  std::string text;
  if (v->is_string()) {
    text = std::string(v->as_string());
  } else if (v->is_number()) {
    std::string j;
    tf::append_json(j, *v, tf::JsonOptions{});
    text = j;
  } else {
    return Error{where + ".cpu: quantities must be strings or numbers"};
  }
  auto c = inject::canonical_quantity(text);
  if (!c)
    return Error{where +
                 ".cpu: quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"};
  if (*c == "0") return std::string();
  return *c;
}

// The typed ServicePort list as encoding/json writes it (port and targetPort always present).
api::Result<GoValue> service_ports(const GoValue& ports, const std::string& where) {
  if (ports.is_nil_or_invalid()) return GoValue::invalid();
  if (ports.kind() != te::Kind::kList)
    return Error{"json: cannot unmarshal " + te::go_type_name(ports) + " into Go struct field " +
                 where + " of type []v1.ServicePort"};
  if (ports.as_list() == nullptr || ports.as_list()->items.empty()) return GoValue::invalid();
  auto out = std::make_shared<te::List>();
  for (const GoValue& p : ports.as_list()->items) {
    GoValue m = go_map();
    te::Map* om = m.as_map();
    for (std::string_view k : {"name", "protocol"}) {
      auto s = string_field(p, k, where);
      if (!s.ok()) return Error{s.message()};
      if (!s->empty()) om->set(k, GoValue::string(*s));
    }
    if (te::Map* pm = map_of(p)) {
      if (const GoValue* ap = pm->find("appProtocol"); ap != nullptr && !ap->is_nil_or_invalid()) {
        if (!ap->is_string())
          return Error{"json: cannot unmarshal into Go struct field " + where +
                       ".appProtocol of type string"};
        om->set("appProtocol", *ap);
      }
    }
    auto port = int_field(p, "port", where);
    if (!port.ok()) return Error{port.message()};
    om->set("port", GoValue::float64(static_cast<double>(port->value_or(0))));
    GoValue target = GoValue::float64(0);
    if (te::Map* pm = map_of(p)) {
      if (const GoValue* tp = pm->find("targetPort"); tp != nullptr && !tp->is_nil_or_invalid()) {
        if (tp->is_string()) {
          target = *tp;
        } else {
          auto t = int_field(p, "targetPort", where);
          if (!t.ok()) return Error{t.message()};
          target = GoValue::float64(static_cast<double>(t->value_or(0)));
        }
      }
    }
    om->set("targetPort", target);
    auto node = int_field(p, "nodePort", where);
    if (!node.ok()) return Error{node.message()};
    if (node->value_or(0) != 0) om->set("nodePort", GoValue::float64(static_cast<double>(**node)));
    out->items.push_back(m);
  }
  return GoValue::list(std::move(out));
}

api::Result<ComponentInstance> build_spec(const ComponentDef& def, const GoValue& m,
                                          const std::string& default_ns, bool& enabled_out) {
  std::string where = "GatewayComponentSpec";
  auto fail = [&](const std::string& msg) {
    return Error{"get component " + std::string(def.name) + ": fail to convert " +
                 std::string(def.spec_name) + ": " + msg};
  };
  ComponentInstance spec;
  spec.raw = m;
  te::Map* mm = map_of(m);
  enabled_out = true;
  if (mm != nullptr) {
    if (const GoValue* e = mm->find("enabled"); e != nullptr && !e->is_nil_or_invalid()) {
      if (e->kind() != te::Kind::kBool)
        return fail("json: cannot unmarshal " + te::go_type_name(*e) +
                    " into Go value of type bool");
      enabled_out = e->as_bool();
    }
  }
  for (auto [key, dst] : {std::pair<std::string_view, std::string*>{"namespace", &spec.namespace_},
                          {"hub", &spec.hub},
                          {"name", &spec.name}}) {
    auto s = string_field(m, key, where);
    if (!s.ok()) return fail(s.message());
    *dst = *s;
  }
  if (mm != nullptr) {
    if (const GoValue* t = mm->find("tag"); t != nullptr && !t->is_nil_or_invalid()) spec.tag = *t;
    if (const GoValue* l = mm->find("label"); l != nullptr && !l->is_nil_or_invalid()) {
      te::Map* lm = map_of(*l);
      if (lm == nullptr && l->kind() != te::Kind::kMap)
        return fail("json: cannot unmarshal " + te::go_type_name(*l) +
                    " into Go struct field GatewayComponentSpec.label of type map[string]string");
      if (lm != nullptr)
        for (const auto& [k, v] : lm->entries()) {
          if (!v.is_string())
            return fail("json: cannot unmarshal " + te::go_type_name(v) +
                        " into Go struct field GatewayComponentSpec.label of type string");
          spec.label.emplace_back(k, std::string(v.as_string()));
        }
    }
  }
  spec.has_label = true;
  if (spec.namespace_.empty()) spec.namespace_ = default_ns;
  if (spec.namespace_.empty()) spec.namespace_ = "istio-system";

  GoValue k8s = mm != nullptr && mm->find("k8s") != nullptr ? *mm->find("k8s") : GoValue::invalid();
  if (!k8s.is_nil_or_invalid()) {
    if (k8s.kind() != te::Kind::kMap)
      return fail("json: cannot unmarshal " + te::go_type_name(k8s) +
                  " into Go struct field ComponentSpec.k8s of type apis.KubernetesResources");
    spec.has_k8s = true;
    te::Map* km = map_of(k8s);
    GoValue hpa = km != nullptr && km->find("hpaSpec") ? *km->find("hpaSpec") : GoValue::invalid();
    if (!hpa.is_nil_or_invalid()) {
      auto mn = int_field(hpa, "minReplicas", "HorizontalPodAutoscalerSpec");
      if (!mn.ok()) return fail(mn.message());
      spec.hpa_min = *mn;
      auto mx = int_field(hpa, "maxReplicas", "HorizontalPodAutoscalerSpec");
      if (!mx.ok()) return fail(mx.message());
      spec.hpa_max = *mx;
    }
    auto rc = int_field(k8s, "replicaCount", "KubernetesResources");
    if (!rc.ok()) return fail(rc.message());
    spec.replica_count = *rc;
    GoValue res =
        km != nullptr && km->find("resources") ? *km->find("resources") : GoValue::invalid();
    if (!res.is_nil_or_invalid()) {
      spec.has_resources = true;
      te::Map* rm = map_of(res);
      if (rm != nullptr) {
        if (const GoValue* l = rm->find("limits")) {
          auto c = cpu_quantity(*l, "resources.limits");
          if (!c.ok()) return fail(c.message());
          spec.cpu_limit = *c;
        }
        if (const GoValue* r = rm->find("requests")) {
          auto c = cpu_quantity(*r, "resources.requests");
          if (!c.ok()) return fail(c.message());
          spec.cpu_request = *c;
        }
      }
    }
    GoValue svc = km != nullptr && km->find("service") ? *km->find("service") : GoValue::invalid();
    if (te::Map* sm = map_of(svc)) {
      if (const GoValue* p = sm->find("ports")) {
        auto ports = service_ports(*p, "ServiceSpec.ports");
        if (!ports.ok()) return fail(ports.message());
        spec.service_ports = *ports;
      }
    }
  }
  return spec;
}

// --- strict decoding of k8s.hpaSpec --------------------------------------------------------------
// Upstream decodes the IstioOperator with DisallowUnknownFields into typed structs; for
// k8s.hpaSpec that is autoscaling/v2's HorizontalPodAutoscalerSpec, so v2beta1 fields
// (targetAverageUtilization, metricName, ...) are errors. api::validate_istio_operator only
// type-checks the Kubernetes sub-objects; this schema adds the HPA's field names.

struct StrictField;
struct StrictType {
  std::vector<StrictField> fields;
};
struct StrictField {
  std::string_view name;
  enum Kind { kScalar, kObject, kList, kMap } kind = kScalar;
  const StrictType* type = nullptr;  // kObject / kList of objects
};

const StrictType& hpa_spec_type() {
  using F = StrictField;
  static const StrictType ref{{{"kind"}, {"name"}, {"apiVersion"}}};
  static const StrictType requirement{{{"key"}, {"operator"}, {"values", F::kList}}};
  static const StrictType selector{
      {{"matchLabels", F::kMap}, {"matchExpressions", F::kList, &requirement}}};
  static const StrictType identifier{{{"name"}, {"selector", F::kObject, &selector}}};
  static const StrictType target{{{"type"}, {"value"}, {"averageValue"}, {"averageUtilization"}}};
  static const StrictType object_source{{{"describedObject", F::kObject, &ref},
                                         {"target", F::kObject, &target},
                                         {"metric", F::kObject, &identifier}}};
  static const StrictType pods_source{
      {{"metric", F::kObject, &identifier}, {"target", F::kObject, &target}}};
  static const StrictType resource_source{{{"name"}, {"target", F::kObject, &target}}};
  static const StrictType container_source{
      {{"name"}, {"target", F::kObject, &target}, {"container"}}};
  static const StrictType metric{{{"type"},
                                  {"object", F::kObject, &object_source},
                                  {"pods", F::kObject, &pods_source},
                                  {"resource", F::kObject, &resource_source},
                                  {"containerResource", F::kObject, &container_source},
                                  {"external", F::kObject, &pods_source}}};
  static const StrictType policy{{{"type"}, {"value"}, {"periodSeconds"}}};
  static const StrictType rules{{{"stabilizationWindowSeconds"},
                                 {"selectPolicy"},
                                 {"policies", F::kList, &policy},
                                 {"tolerance"}}};
  static const StrictType behavior{
      {{"scaleUp", F::kObject, &rules}, {"scaleDown", F::kObject, &rules}}};
  static const StrictType spec{{{"scaleTargetRef", F::kObject, &ref},
                                {"minReplicas"},
                                {"maxReplicas"},
                                {"metrics", F::kList, &metric},
                                {"behavior", F::kObject, &behavior}}};
  return spec;
}

void strict_check(const GoValue& v, const StrictType& type, const std::string& path,
                  std::vector<std::string>& errors) {
  te::Map* m = map_of(v);
  if (m == nullptr) return;  // wrong JSON types are api::validate_istio_operator's to report
  for (const auto& [k, child] : m->entries()) {
    const StrictField* f = nullptr;
    for (const StrictField& cand : type.fields)
      if (cand.name == k) f = &cand;
    std::string p = path + "." + k;
    if (f == nullptr) {
      errors.push_back(p + ": unknown field \"" + k + "\" (json: unknown field \"" + k + "\")");
      continue;
    }
    if (f->type == nullptr) continue;
    if (f->kind == StrictField::kObject) {
      strict_check(child, *f->type, p, errors);
    } else if (f->kind == StrictField::kList && child.kind() == te::Kind::kList &&
               child.as_list() != nullptr) {
      for (std::size_t i = 0; i < child.as_list()->items.size(); ++i)
        strict_check(child.as_list()->items[i], *f->type, p + "[" + std::to_string(i) + "]",
                     errors);
    }
  }
}

void check_hpa_specs(const GoValue& merged, std::vector<std::string>& errors) {
  for (std::string_view c : {"pilot", "ingressGateways", "egressGateways"}) {
    GoValue comp = go_get_path(merged, "spec.components." + std::string(c));
    std::vector<std::pair<std::string, GoValue>> specs;
    if (comp.kind() == te::Kind::kList && comp.as_list() != nullptr) {
      for (std::size_t i = 0; i < comp.as_list()->items.size(); ++i)
        specs.emplace_back("spec.components." + std::string(c) + "[" + std::to_string(i) + "]",
                           comp.as_list()->items[i]);
    } else if (comp.kind() == te::Kind::kMap) {
      specs.emplace_back("spec.components." + std::string(c), comp);
    }
    for (const auto& [path, spec] : specs)
      strict_check(go_get_path(spec, "k8s.hpaSpec"), hpa_spec_type(), path + ".k8s.hpaSpec",
                   errors);
  }
}

// --- post-processing --------------------------------------------------------------------------

struct K8sSetting {
  std::string_view field;
  std::string_view kind;   // "" = the component's workload kind
  std::string_view patch;  // %s = the setting's JSON, %c = the container name (JSON string)
};

constexpr K8sSetting kSettings[] = {
    {"affinity", "", R"({"spec":{"template":{"spec":{"affinity":%s}}}})"},
    {"env", "", R"({"spec":{"template":{"spec":{"containers":[{"name":%c, "env": %s}]}}}})"},
    {"hpaSpec", "HorizontalPodAutoscaler", R"({"spec":%s})"},
    {"imagePullPolicy", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c, "imagePullPolicy": %s}]}}}})"},
    {"nodeSelector", "", R"({"spec":{"template":{"spec":{"nodeSelector":%s}}}})"},
    {"podDisruptionBudget", "PodDisruptionBudget", R"({"spec":%s})"},
    {"podAnnotations", "", R"({"spec":{"template":{"metadata":{"annotations":%s}}}})"},
    {"priorityClassName", "", R"({"spec":{"template":{"spec":{"priorityClassName":%s}}}})"},
    {"readinessProbe", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c, "readinessProbe": %s}]}}}})"},
    {"replicaCount", "", R"({"spec":{"replicas":%s}})"},
    {"resources", "",
     R"({"spec":{"template":{"spec":{"containers":[{"name":%c, "resources": %s}]}}}})"},
    {"strategy", "", R"({"spec":{"strategy":%s}})"},
    {"tolerations", "", R"({"spec":{"template":{"spec":{"tolerations":%s}}}})"},
    {"serviceAnnotations", "Service", R"({"metadata":{"annotations":%s}})"},
    {"service", "Service", R"({"spec":%s})"},
    {"securityContext", "", R"({"spec":{"template":{"spec":{"securityContext":%s}}}})"},
};

std::string fill(std::string_view pattern, const std::string& value, const std::string& container) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 's') {
      out += value;
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'c') {
      out += container;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

// Strategic-merge metadata of the kinds the settings patch beyond the workloads: Service
// (ports merge by port); HPA and PDB have no merge lists.
constexpr api::PatchSchemaType kNoSchema{"", nullptr, 0};
constexpr std::array<api::PatchSchemaField, 1> kServiceSpecFields{{
    {"ports", &kNoSchema, true, "port"},
}};
constexpr api::PatchSchemaType kServiceSpec{"ServiceSpec", kServiceSpecFields.data(), 1};
constexpr std::array<api::PatchSchemaField, 1> kServiceFields{{
    {"spec", &kServiceSpec, false, ""},
}};
constexpr api::PatchSchemaType kServiceSchema{"Service", kServiceFields.data(), 1};

const api::PatchSchemaType& schema_for(std::string_view kind) {
  if (kind == "Service") return kServiceSchema;
  const api::PatchSchemaType* s = api::patch_schema_for_kind(kind);
  return s != nullptr ? *s : kNoSchema;
}

// postProcessPodDisruptionBudget: with both minAvailable and maxUnavailable, minAvailable is
// set to null (SetPath(nil): the key stays, printed as `minAvailable: null`).
void fix_pdb(api::Document& pdb) {
  api::Value* spec = api::find_member(pdb, "spec");
  if (spec == nullptr || !spec->IsObject()) return;
  api::Value* min = api::find_member(*spec, "minAvailable");
  if (api::find_member(*spec, "maxUnavailable") != nullptr && min != nullptr) min->SetNull();
}

// --- ordering ----------------------------------------------------------------------------------

std::string group_of(const api::Value& obj) {
  std::string av = api::string_at(obj, {"apiVersion"});
  std::size_t slash = av.find('/');
  return slash == std::string::npos ? std::string() : av.substr(0, slash);
}

int kind_order(const api::Value& obj) {
  std::string gk = group_of(obj) + "/" + api::string_at(obj, {"kind"});
  if (gk == "apiextensions.k8s.io/CustomResourceDefinition") return -1000;
  if (gk == "/ServiceAccount" || gk == "rbac.authorization.k8s.io/ClusterRole") return 1;
  if (gk == "rbac.authorization.k8s.io/ClusterRoleBinding") return 2;
  if (gk == "admissionregistration.k8s.io/ValidatingWebhookConfiguration") return 3;
  // "/Secrets" as upstream spells it: no kind matches, Secrets sort with the rest.
  if (gk == "/ConfigMap" || gk == "/Secrets") return 100;
  if (gk == "extensions/Deployment" || gk == "apps/Deployment") return 1000;
  if (gk == "autoscaling/HorizontalPodAutoscaler") return 1001;
  if (gk == "/Service") return 10000;
  return 1000;
}

}  // namespace

const std::vector<ComponentDef>& component_table() {
  static const std::vector<ComponentDef> table{
      {"Base", "base", true, false, "", "", "", "base", "global", false, ""},
      {"Pilot", "pilot", true, false, "Deployment", "istiod", "discovery",
       "istio-control/istio-discovery", "pilot", false, ""},
      {"IngressGateways", "ingressGateways", true, true, "Deployment", "istio-ingressgateway",
       "istio-proxy", "gateways/istio-ingress", "gateways.istio-ingressgateway", false,
       "spec.values.gateways.istio-ingressgateway.enabled"},
      {"EgressGateways", "egressGateways", false, true, "Deployment", "istio-egressgateway",
       "istio-proxy", "gateways/istio-egress", "gateways.istio-egressgateway", false,
       "spec.values.gateways.istio-egressgateway.enabled"},
      {"Cni", "cni", false, false, "DaemonSet", "istio-cni-node", "install-cni", "istio-cni", "cni",
       false, ""},
      {"Ztunnel", "ztunnel", false, false, "DaemonSet", "ztunnel", "istio-proxy", "ztunnel",
       "ztunnel", true, ""},
  };
  return table;
}

const ComponentDef* find_component(std::string_view name) {
  for (const ComponentDef& d : component_table())
    if (d.name == name) return &d;
  return nullptr;
}

api::Result<GoValue> merge_inputs(const PipelineInputs& inputs) {
  auto base_doc = api::parse_json(
      R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator","metadata":{},"spec":{}})");
  GoValue user = go_from_json(*base_doc);
  for (std::size_t i = 0; i < inputs.files.size(); ++i) {
    const InputFile& f = inputs.files[i];
    if (auto st = check_single_iop(f); !st.ok()) return Error{"merge inputs: " + st.message()};
    auto m = map_from_yaml(f.text);
    if (!m.ok()) return Error{"merge inputs: " + f.name + ": " + m.message()};
    GoValue mv = *m;
    if (te::Map* mm = map_of(mv)) {
      const GoValue* spec = mm->find("spec");
      if (spec != nullptr && spec->is_nil_or_invalid()) mm->erase("spec");
    }
    go_merge_from(user, mv);
  }
  std::vector<std::string> flags = inputs.set_flags;
  if (!inputs.manifests.empty()) flags.push_back("installPackagePath=" + inputs.manifests);
  if (!inputs.revision.empty() && inputs.revision != "default")
    flags.push_back("revision=" + inputs.revision);
  for (const std::string& f : flags)
    if (auto st = go_set_flag(user, "spec." + f); !st.ok())
      return Error{"merge inputs: --set " + f + ": " + st.message()};

  // The chart set: --version, else meshop's spec.version, else spec.installPackagePath.
  std::string package = get_path_string(user, "spec.installPackagePath");
  std::string version = inputs.version;
  std::string version_field = "--version";
  if (version.empty()) {
    GoValue v = go_get_path(user, "spec.version");
    if (!v.is_nil_or_invalid() && !v.is_string())
      return Error{.message = "spec.version: expected a string (an Istio version such as \"" +
                              default_chart_set().version + "\"), got " + go_sprint(v),
                   .kind = api::ErrorKind::kInvalid};
    version = get_path_string(user, "spec.version");
    version_field = "spec.version";
  }
  const ChartSet* bundled = nullptr;
  if (!version.empty()) {
    if (!package.empty() && inputs.version.empty())
      return Error{.message = "spec.version \"" + version + "\" and spec.installPackagePath \"" +
                              package + "\" both name a chart set; set one of them",
                   .kind = api::ErrorKind::kInvalid};
    bundled = find_chart_set(version);
    if (bundled == nullptr) {
      std::string known;
      for (const ChartSet& c : chart_sets())
        known += (known.empty() ? "" : ", ") + c.version;
      return Error{.message = version_field + ": unknown Istio version \"" + version +
                              "\" (bundled: " + known + ")",
                   .kind = api::ErrorKind::kInvalid};
    }
  }
  // Neither: the default bundled version, as a release of istioctl renders its embedded
  // charts with its own hub and tag.
  if (package.empty() && bundled == nullptr) bundled = &default_chart_set();
  if (package.empty() && bundled != nullptr) {
    package = std::string(kBundledPrefix) + bundled->version;
    if (auto st = go_set_flag(user, "spec.installPackagePath=" + package); !st.ok())
      return Error{"merge inputs: " + st.message()};
  }
  std::string profile = get_path_string(user, "spec.profile");
  GoValue user_values = get_path_map(user, "spec.values");

  auto base = read_profile(package, profile);
  if (!base.ok()) return Error{"merge inputs: " + base.message()};
  // The bundled version's hub and tag, over the profile and under the user's inputs.
  if (const ChartSet* set = bundled_set(package))
    for (const std::string& f : {"spec.hub=" + set->hub, "spec.tag=" + set->tag})
      if (auto st = go_set_flag(*base, f); !st.ok()) return Error{"merge inputs: " + st.message()};
  GoValue merged = *base;
  go_merge_from(merged, user);
  if (auto st = translate_to_helm(merged); !st.ok()) return Error{"merge inputs: " + st.message()};
  if (!user_values.is_invalid()) {
    auto cloned = go_deep_clone(make_map(user_values, {"spec", "values"}));
    if (!cloned.ok()) return Error{"merge inputs: spec.values: " + cloned.message()};
    go_merge_from(merged, *cloned);
  }
  return merged;
}

api::Result<std::vector<ComponentInstance>> component_instances(const ComponentDef& def,
                                                                const GoValue& merged) {
  std::string default_ns = get_path_string(merged, "metadata.namespace");
  bool on = def.default_on;
  bool alt_enabled = false;
  if (!def.alt_enablement.empty() && get_path_bool(merged, def.alt_enablement)) {
    on = true;
    alt_enabled = true;
  }
  std::vector<ComponentInstance> defaults;
  if (on) {
    ComponentInstance d;
    d.namespace_ = default_ns;
    defaults.push_back(std::move(d));
  }
  std::string path = "spec.components." + std::string(def.spec_name);
  std::vector<ComponentInstance> out;
  if (def.multi) {
    GoValue s = go_get_path(merged, path);
    if (s.is_invalid()) return defaults;
    if (s.kind() != te::Kind::kList)
      return Error{"get component " + std::string(def.name) + ": " + path + " is not a list"};
    if (s.as_list() == nullptr) return out;
    for (const GoValue& cur : s.as_list()->items) {
      GoValue m = map_of(cur) != nullptr ? cur : GoValue::invalid();
      bool enabled = true;
      auto spec = build_spec(def, m, default_ns, enabled);
      if (!spec.ok()) return Error{spec.message()};
      if (enabled || alt_enabled) out.push_back(std::move(spec).value());
    }
    return out;
  }
  GoValue s = get_path_map(merged, path);
  if (s.is_invalid()) return defaults;
  bool enabled = true;
  auto spec = build_spec(def, s, default_ns, enabled);
  if (!spec.ok()) return Error{spec.message()};
  if (enabled || alt_enabled) out.push_back(std::move(spec).value());
  return out;
}

api::Result<GoValue> component_values(const ComponentDef& def, const ComponentInstance& spec,
                                      const GoValue& merged) {
  std::string root(def.values_root);
  GoValue m = merged;
  auto clone = [&]() -> api::Status {
    auto c = go_deep_clone(m);
    if (!c.ok()) return Error{"component values: " + c.message()};
    m = *c;
    return api::ok_status();
  };
  if (def.gateway()) {
    if (auto st = clone(); !st.ok()) return Error{st.message()};
    (void)go_set_path(m, "spec.values." + root + ".name", GoValue::string(spec.name));
    GoValue labels = GoValue::typed_nil(te::Kind::kStringMap);
    if (spec.has_label) {
      auto sm = std::make_shared<te::StringMap>();
      for (const auto& [k, v] : spec.label)
        sm->set(k, v);
      labels = GoValue::string_map(std::move(sm));
    }
    (void)go_set_path(m, "spec.values." + root + ".labels", labels);
    if (!spec.service_ports.is_invalid())
      (void)go_set_path(m, "spec.values." + root + ".ports", spec.service_ports);
  }
  if (def.resource_type == "Deployment" && spec.has_k8s) {
    if (!def.gateway())
      if (auto st = clone(); !st.ok()) return Error{st.message()};
    if (spec.hpa_min)
      (void)go_set_path(m, "spec.values." + root + ".autoscaleMin",
                        GoValue::integer(*spec.hpa_min, te::Kind::kInt64));
    if (spec.hpa_max && *spec.hpa_max > 0)
      (void)go_set_path(m, "spec.values." + root + ".autoscaleMax",
                        GoValue::integer(*spec.hpa_max, te::Kind::kInt64));
    if (spec.replica_count && *spec.replica_count > 0)
      (void)go_set_path(m, "spec.values." + root + ".replicaCount",
                        GoValue::integer(*spec.replica_count, te::Kind::kInt64));
  }
  if (spec.has_resources) {
    if (auto st = clone(); !st.ok()) return Error{st.message()};
    if (!spec.cpu_limit.empty())
      (void)go_set_path(m, "spec.values." + root + ".resources.limits.cpu",
                        GoValue::string(spec.cpu_limit));
    if (!spec.cpu_request.empty())
      (void)go_set_path(m, "spec.values." + root + ".resources.requests.cpu",
                        GoValue::string(spec.cpu_request));
  }
  if (!def.flatten_values && spec.hub.empty() && spec.tag.is_invalid() && !spec.has_label) return m;
  if (auto st = clone(); !st.ok()) return Error{st.message()};
  if (!spec.hub.empty()) (void)go_set_flag(m, "spec.values." + root + ".hub=" + spec.hub);
  if (!spec.tag.is_invalid())
    (void)go_set_flag(m, "spec.values." + root + ".tag=" + go_sprint(spec.tag));
  if (def.flatten_values) {
    GoValue cv = get_path_map(m, "spec.values." + root);
    if (!cv.is_invalid()) {
      GoValue vals = get_path_map(m, "spec.values");
      GoValue nv = go_map();
      te::Map* nvm = nv.as_map();
      te::Map* vm = map_of(vals);
      const GoValue* global = vm != nullptr ? vm->find("global") : nullptr;
      nvm->set("global", global != nullptr ? *global : GoValue::nil());
      if (vm != nullptr)
        for (const auto& [k, v] : vm->entries())
          if (v.kind() != te::Kind::kMap) nvm->set(k, v);
      if (te::Map* cvm = map_of(cv))
        for (const auto& [k, v] : cvm->entries())
          nvm->set(k, v);
      if (te::Map* specm = map_of(go_get_path(m, "spec"))) specm->set("values", nv);
    }
  }
  return m;
}

api::Status post_process(const ComponentDef& def, const ComponentInstance& spec,
                         const GoValue& component_values, std::vector<api::Document>& objects) {
  if (!spec.has_k8s) return api::ok_status();
  std::string rn(def.resource_name);
  if (!spec.name.empty()) rn = spec.name;
  if (def.name == "Pilot") {
    std::string rev = get_path_string(component_values, "spec.values.revision");
    if (rev.empty()) rev = "default";
    if (rev != "default") rn += "-" + rev;
  }
  std::string container = "\"" + std::string(def.container) + "\"";
  GoValue k8s = go_get_path(spec.raw, "k8s");
  te::Map* km = map_of(k8s);

  std::map<std::size_t, std::vector<std::pair<std::string, bool>>> need;  // idx -> patches
  for (const K8sSetting& s : kSettings) {
    std::string_view kind = s.kind.empty() ? def.resource_type : s.kind;
    const GoValue* v = km != nullptr ? km->find(s.field) : nullptr;
    GoValue setting;
    if (s.field == "service" && def.gateway()) {
      // Service ports come from values (k8s.service.ports were rendered by the chart); the
      // rest of k8s.service is patched. Upstream sets k8s.service.ports to [] first, which
      // also makes the patch exist when k8s.service does not.
      GoValue copy = go_map();
      if (v != nullptr)
        if (te::Map* sm = map_of(*v))
          for (const auto& [k, val] : sm->entries())
            if (k != "ports") copy.as_map()->set(k, val);
      setting = copy;
    } else {
      if (v == nullptr) continue;
      setting = *v;
    }
    std::string inner;
    if (!tf::append_json(inner, setting, tf::JsonOptions{}))
      return Error{"post processing: k8s." + std::string(s.field) + ": not JSON"};
    std::string patch = fill(s.patch, inner, container);
    for (std::size_t i = 0; i < objects.size(); ++i)
      if (api::string_at(objects[i], {"kind"}) == kind &&
          api::string_at(objects[i], {"metadata", "name"}) == rn)
        need[i].emplace_back(patch, s.field == "podDisruptionBudget");
  }
  for (auto& [idx, patches] : need) {
    api::Document& obj = objects[idx];
    std::string kind = api::string_at(obj, {"kind"});
    for (const auto& [text, is_pdb] : patches) {
      auto patch = api::parse_json(text);
      if (!patch.ok()) return Error{"post processing: patch: " + patch.message()};
      if (auto st = api::apply_strategic_merge_patch(obj, *patch, schema_for(kind)); !st.ok())
        return Error{"post processing: patch: " + st.message()};
      if (is_pdb) fix_pdb(obj);
    }
  }

  GoValue overlays =
      km != nullptr && km->find("overlays") ? *km->find("overlays") : GoValue::invalid();
  if (overlays.kind() != te::Kind::kList || overlays.as_list() == nullptr) return api::ok_status();
  for (const GoValue& o : overlays.as_list()->items) {
    std::string kind = get_path_string(o, "kind");
    std::string name = get_path_string(o, "name");
    GoValue patches = go_get_path(o, "patches");
    for (api::Document& obj : objects) {
      if (api::string_at(obj, {"kind"}) != kind) continue;
      if (api::string_at(obj, {"metadata", "name"}) != name) continue;
      if (patches.kind() != te::Kind::kList || patches.as_list() == nullptr) continue;
      for (const GoValue& p : patches.as_list()->items) {
        std::string path = get_path_string(p, "path");
        GoValue value = go_get_path(p, "value");
        api::Document vdoc;
        if (!value.is_nil_or_invalid()) {
          auto d = go_to_document(value);
          if (!d.ok()) return Error{"post processing: overlay value: " + d.message()};
          vdoc = std::move(d).value();
        }
        // istioctl collects a failing patch's error and drops it.
        (void)apply_tpath_patch(obj, path, vdoc);
      }
    }
  }
  return api::ok_status();
}

api::Result<PipelineResult> generate(const PipelineInputs& inputs) {
  auto merged_r = merge_inputs(inputs);
  if (!merged_r.ok()) return merged_r.error();
  GoValue merged = *merged_r;
  PipelineResult result;

  auto doc = go_to_document(merged);
  if (!doc.ok()) return Error{"merged IstioOperator: " + doc.message()};
  api::IstioOperatorValidation v = api::validate_istio_operator(*doc);
  std::vector<std::string> errors;
  check_hpa_specs(merged, errors);
  // spec.values as istioctl decodes it (validation.validateValues: jsonpb into the Values
  // message, unknown fields disallowed), with the schema of the version being rendered; a
  // directory (--manifests, installPackagePath) is checked as the default version, as a
  // release of istioctl checks any chart directory with its own schema.
  if (const api::Value* vals = manifest::get_path(*doc, "spec.values");
      vals != nullptr && vals->IsObject()) {
    const ChartSet* set = bundled_set(get_path_string(merged, "spec.installPackagePath"));
    const ChartSet& schema_set = set != nullptr ? *set : default_chart_set();
    if (const auto* schema = values_schema::values_descriptor(schema_set.version))
      for (const api::FieldError& e : values_schema::check_values(*vals, *schema))
        errors.push_back(e.to_string());
    // The Struct values validateValues then decodes strictly as Kubernetes types.
    for (const api::FieldError& e : k8s_values::check_values(*vals, schema_set.version))
      errors.push_back(e.to_string());
  }
  // The mesh config goes into ConfigMap istio[-<rev>], which istiod and the injector read with
  // upstream's strict typing: a value they would reject stops the install here, before any
  // object is applied, instead of leaving a revision whose injector denies every pod.
  for (const char* at : {"spec.meshConfig", "spec.values.meshConfig"}) {
    const api::Value* found = manifest::get_path(*doc, at);
    if (found == nullptr || found->IsNull()) continue;
    api::Document mesh;
    mesh.CopyFrom(*found, mesh.GetAllocator());
    // Upstream's convention: scalar proxyMetadata values are strings ("10", "false").
    if (api::Value* md = api::find(mesh, "/defaultConfig/proxyMetadata"); md && md->IsObject())
      for (auto& m : md->GetObject())
        if (m.value.IsBool() || m.value.IsNumber())
          m.value = api::make_string(api::to_json(m.value), mesh.GetAllocator());
    std::vector<std::string> ignored;
    if (api::Status st = inject::validate_inline_mesh_config(mesh, at, &ignored); !st.ok())
      errors.push_back(st.message());
    for (const std::string& f : ignored)
      result.warnings.push_back(f + ": unknown field, ignored (istiod and the injector ignore it)");
  }
  if (!v.ok() || !errors.empty()) {
    std::string message = v.ok() ? std::string() : v.message();
    for (const std::string& e : errors)
      message += (message.empty() ? "" : "\n") + e;
    if (!inputs.force) return Error{.message = message, .kind = api::ErrorKind::kInvalid};
    result.warnings.push_back("spec invalid; continuing because of --force: " + message);
  }
  for (const std::string& w : v.warnings)
    result.warnings.push_back(w);

  GoValue unvalidated = get_path_map(merged, "spec.unvalidatedValues");
  if (!unvalidated.is_invalid()) {
    auto cloned = go_deep_clone(make_map(unvalidated, {"spec", "values"}));
    if (!cloned.ok()) return Error{"spec.unvalidatedValues: " + cloned.message()};
    go_merge_from(merged, *cloned);
  }

  std::map<std::string, std::shared_ptr<helm::Chart>> charts;
  std::vector<PipelineObject> all;
  for (const ComponentDef& def : component_table()) {
    auto specs = component_instances(def, merged);
    if (!specs.ok()) return Error{specs.message()};
    for (const ComponentInstance& spec : *specs) {
      auto vals_r = component_values(def, spec, merged);
      if (!vals_r.ok()) return Error{vals_r.message()};
      const GoValue& comp_vals = *vals_r;
      GoValue vals = get_path_map(comp_vals, "spec.values");
      if (vals.is_invalid()) vals = go_map();
      std::string package = get_path_string(comp_vals, "spec.installPackagePath");
      fs::path chart_dir = fs::path(package) / "charts" / std::string(def.chart);
      std::string key = chart_dir.string();
      auto it = charts.find(key);
      if (it == charts.end()) {
        const ChartSet* set = bundled_set(package);
        std::error_code ec;
        if (set == nullptr && !fs::is_directory(chart_dir, ec))
          return Error{"helm render: load chart: component " + std::string(def.name) +
                       ": chart directory " + chart_dir.string() + " does not exist"};
        std::string in_set = "charts/" + std::string(def.chart);
        auto chart = set != nullptr
                         ? helm::load_chart(set->tree(in_set), set->version + ":" + in_set)
                         : helm::load_chart(chart_dir);
        if (!chart.ok()) return Error{"helm render: load chart: " + chart.message()};
        it = charts.emplace(key, std::make_shared<helm::Chart>(std::move(chart).value())).first;
      }
      const helm::Chart& chart = *it->second;
      helm::Capabilities caps;
      caps.kube_version = std::string(kKubeVersion);
      auto rendered =
          helm::render(chart, vals, {.name = "istio", .namespace_ = spec.namespace_}, caps);
      if (!rendered.ok()) return Error{"helm render: render chart: " + rendered.message()};
      std::vector<std::string> parts;
      for (const auto& [name, text] : rendered->templates) {
        if (name.ends_with(".txt")) {
          std::istringstream lines(text);
          std::string line;
          while (std::getline(lines, line))
            if (line.starts_with("WARNING: ")) result.warnings.push_back(line.substr(9));
          continue;
        }
        for (std::string& p : split_yaml(text))
          parts.push_back(std::move(p));
      }
      bool crds = true;
      if (chart.name == "base") {
        GoValue e = go_get_path(vals, "base.enableIstioConfigCRDs");
        if (e.kind() == te::Kind::kBool && !e.as_bool()) crds = false;
      }
      if (crds)
        for (const auto& [name, text] : rendered->crds)
          for (std::string& p : split_yaml(text))
            parts.push_back(std::move(p));
      std::vector<api::Document> objects;
      for (const std::string& p : parts) {
        auto obj = parse_object(p);
        if (!obj.ok()) return Error{"helm render: " + std::string(def.name) + ": " + obj.message()};
        if (obj->has_value()) objects.push_back(std::move(**obj));
      }
      if (auto st = post_process(def, spec, comp_vals, objects); !st.ok())
        return Error{st.message()};
      for (api::Document& o : objects)
        all.push_back({std::string(def.name), std::move(o)});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const PipelineObject& a, const PipelineObject& b) {
    int ka = kind_order(a.object), kb = kind_order(b.object);
    if (ka != kb) return ka < kb;
    std::string ga = group_of(a.object), gb = group_of(b.object);
    if (ga != gb) return ga < gb;
    std::string ta = api::string_at(a.object, {"kind"}), tb = api::string_at(b.object, {"kind"});
    if (ta != tb) return ta < tb;
    return api::string_at(a.object, {"metadata", "name"}) <
           api::string_at(b.object, {"metadata", "name"});
  });
  result.objects = std::move(all);
  return result;
}

std::string to_istioctl_stream(const PipelineResult& result) {
  std::string out;
  for (const PipelineObject& o : result.objects) {
    out += api::json_to_yaml(o.object);
    out += "\n---\n";
  }
  return out;
}

}  // namespace meshop::manifest::istioctl
