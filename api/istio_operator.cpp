#include "api/istio_operator.hpp"

#include <algorithm>
#include <set>
#include <string_view>

#include "api/mesh_conventions.hpp"

namespace meshop::api {
namespace {

std::string type_name(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "boolean";
  if (v.IsString()) return "string";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  if (v.IsNumber()) return "number";
  if (v.IsArray()) return "array";
  return "object";
}

// "got string \"two\"": the offending value, short, so the user can find it.
std::string got(const Value& v) {
  std::string out = "got " + type_name(v);
  if (v.IsString() || v.IsNumber() || v.IsBool()) {
    std::string text = to_json(v);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    out += " " + text;
  }
  return out;
}

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// An integral JSON number, also when written as 2.0 (YAML/JSON readers may give a double).
bool is_integral(const Value& v) {
  if (v.IsInt64() || v.IsUint64()) return true;
  if (!v.IsDouble()) return false;
  double d = v.GetDouble();
  return d == static_cast<double>(static_cast<long long>(d));
}

class Validator {
 public:
  IstioOperatorValidation result;

  void error(const std::string& path, std::string message) {
    result.errors.push_back({path, std::move(message)});
  }

  bool expect_object(const Value& v, const std::string& path) {
    if (v.IsObject()) return true;
    error(path, "expected object, " + got(v));
    return false;
  }
  bool expect_string(const Value& v, const std::string& path) {
    if (v.IsString()) return true;
    error(path, "expected string, " + got(v));
    return false;
  }
  void expect_bool_or_null(const Value& v, const std::string& path) {
    if (!v.IsBool() && !v.IsNull()) error(path, "expected boolean, " + got(v));
  }
  // Image tags may be written as numbers (tag: 1.20) in upstream files.
  // Docker's tag grammar: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
  void expect_tag(const Value& v, const std::string& path) {
    if (!v.IsString() && !v.IsNumber()) {
      error(path, "expected string or number, " + got(v));
      return;
    }
    if (!v.IsString() || v.GetStringLength() == 0) return;
    std::string_view s = string_view_of(v);
    auto word = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    bool valid = s.size() <= 128 && word(s.front()) && std::all_of(s.begin(), s.end(), [&](char c) {
                   return word(c) || c == '.' || c == '-';
                 });
    if (!valid) error(path, "invalid image tag \"" + std::string(s) + "\"");
  }
  // A registry/repository prefix: no whitespace, no upper case in the repository path, no tag.
  void expect_hub(const Value& v, const std::string& path) {
    if (!expect_string(v, path) || v.GetStringLength() == 0) return;
    std::string_view s = string_view_of(v);
    std::string_view repo =
        s.substr(s.find('/') == std::string_view::npos ? s.size() : s.find('/'));
    bool valid =
        std::none_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '@'; }) &&
        std::none_of(repo.begin(), repo.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || c == ':'; }) &&
        s.back() != '/';
    if (!valid) error(path, "invalid hub \"" + std::string(s) + "\"");
  }
  void expect_string_map(const Value& v, const std::string& path) {
    if (!expect_object(v, path)) return;
    for (const auto& m : v.GetObject())
      if (!m.value.IsString())
        error(path + "." + std::string(string_view_of(m.name)), "expected string, " + got(m.value));
  }
  void expect_object_list(const Value& v, const std::string& path) {
    if (!v.IsArray()) {
      error(path, "expected array, " + got(v));
      return;
    }
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
      expect_object(v[i], path + "[" + std::to_string(i) + "]");
  }
  void expect_dns_label(const Value& v, const std::string& path, std::string_view what) {
    if (!expect_string(v, path)) return;
    std::string_view s = string_view_of(v);
    if (!s.empty() && !is_dns_label(s))
      error(path, "invalid " + std::string(what) + " \"" + std::string(s) +
                      "\": must be a DNS-1123 label (lower case alphanumerics and '-', at most 63 "
                      "characters, starting and ending with an alphanumeric)");
  }
  void unknown(const std::string& path, std::string_view allowed) {
    error(path, "unknown field (allowed: " + std::string(allowed) + ")");
  }

  void k8s(const Value& v, const std::string& path) {
    if (!expect_object(v, path)) return;
    static const std::set<std::string, std::less<>> kObjects = {
        "affinity", "hpaSpec",  "podDisruptionBudget", "readinessProbe", "resources",
        "service",  "strategy", "securityContext"};
    static const std::set<std::string, std::less<>> kObjectLists = {"volumes", "volumeMounts"};
    static const std::set<std::string, std::less<>> kStringMaps = {"nodeSelector", "podAnnotations",
                                                                   "serviceAnnotations"};
    for (const auto& m : v.GetObject()) {
      std::string_view key = string_view_of(m.name);
      std::string p = path + "." + std::string(key);
      if (kObjects.contains(key)) {
        expect_object(m.value, p);
      } else if (kObjectLists.contains(key)) {
        expect_object_list(m.value, p);
      } else if (kStringMaps.contains(key)) {
        expect_string_map(m.value, p);
      } else if (key == "replicaCount") {
        if (!is_integral(m.value))
          error(p, "expected integer, " + got(m.value));
        else if (m.value.GetDouble() < 0)
          error(p, "must be >= 0, " + got(m.value));
      } else if (key == "priorityClassName") {
        expect_string(m.value, p);
      } else if (key == "imagePullPolicy") {
        if (expect_string(m.value, p)) {
          std::string_view s = string_view_of(m.value);
          if (s != "Always" && s != "IfNotPresent" && s != "Never" && !s.empty())
            error(p, "unsupported value \"" + std::string(s) +
                         "\" (allowed: Always, IfNotPresent, Never)");
        }
      } else if (key == "env") {
        env(m.value, p);
      } else if (key == "tolerations") {
        tolerations(m.value, p);
      } else if (key == "overlays") {
        overlays(m.value, p);
      } else {
        unknown(p,
                "affinity, env, hpaSpec, imagePullPolicy, nodeSelector, overlays, "
                "podAnnotations, podDisruptionBudget, priorityClassName, readinessProbe, "
                "replicaCount, resources, securityContext, service, serviceAnnotations, strategy, "
                "tolerations, volumeMounts, volumes");
      }
    }
  }

  // Calls `item(element, element_path)` for each element of the array `v` at `path` that is an
  // object; a non-array and non-object elements are reported.
  template <class F>
  void each_object(const Value& v, const std::string& path, F&& item) {
    if (!v.IsArray()) {
      error(path, "expected array, " + got(v));
      return;
    }
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      std::string p = path + "[" + std::to_string(i) + "]";
      if (expect_object(v[i], p)) item(v[i], p);
    }
  }

  // corev1.Toleration, decoded strictly as upstream does (unknown fields are errors).
  void tolerations(const Value& v, const std::string& path) {
    each_object(v, path, [&](const Value& item, const std::string& p) {
      for (const auto& m : item.GetObject()) {
        std::string_view key = string_view_of(m.name);
        std::string mp = p + "." + std::string(key);
        if (key == "key" || key == "operator" || key == "value" || key == "effect")
          expect_string(m.value, mp);
        else if (key == "tolerationSeconds") {
          if (!is_integral(m.value) && !m.value.IsNull())
            error(mp, "expected integer, " + got(m.value));
        } else
          unknown(mp, "effect, key, operator, tolerationSeconds, value");
      }
    });
  }

  void env(const Value& v, const std::string& path) {
    each_object(v, path, [&](const Value& item, const std::string& p) {
      const Value* name = find_member(item, "name");
      if (name == nullptr)
        error(p + ".name", "required field is missing");
      else
        expect_string(*name, p + ".name");
      if (const Value* value = find_member(item, "value")) expect_string(*value, p + ".value");
      if (const Value* from = find_member(item, "valueFrom"))
        expect_object(*from, p + ".valueFrom");
      for (const auto& m : item.GetObject()) {
        std::string_view key = string_view_of(m.name);
        if (key != "name" && key != "value" && key != "valueFrom")
          unknown(p + "." + std::string(key), "name, value, valueFrom");
      }
    });
  }

  void overlays(const Value& v, const std::string& path) {
    each_object(v, path, [&](const Value& item, const std::string& p) {
      for (const auto& m : item.GetObject()) {
        std::string_view key = string_view_of(m.name);
        std::string mp = p + "." + std::string(key);
        if (key == "apiVersion" || key == "kind" || key == "name") {
          expect_string(m.value, mp);
        } else if (key == "patches") {
          if (!m.value.IsArray()) {
            error(mp, "expected array, " + got(m.value));
            continue;
          }
          for (rapidjson::SizeType j = 0; j < m.value.Size(); ++j) {
            std::string pp = mp + "[" + std::to_string(j) + "]";
            if (!expect_object(m.value[j], pp)) continue;
            const Value* ppath = find_member(m.value[j], "path");
            if (ppath == nullptr)
              error(pp + ".path", "required field is missing");
            else if (expect_string(*ppath, pp + ".path") && ppath->GetStringLength() == 0)
              error(pp + ".path", "must not be empty");
            for (const auto& pm : m.value[j].GetObject()) {
              std::string_view pk = string_view_of(pm.name);
              if (pk != "path" && pk != "value") unknown(pp + "." + std::string(pk), "path, value");
            }
          }
        } else {
          unknown(mp, "apiVersion, kind, name, patches");
        }
      }
      if (find_member(item, "kind") == nullptr) error(p + ".kind", "required field is missing");
      if (find_member(item, "name") == nullptr) error(p + ".name", "required field is missing");
    });
  }

  void component(const Value& v, const std::string& path, bool gateway) {
    if (!expect_object(v, path)) return;
    for (const auto& m : v.GetObject()) {
      std::string_view key = string_view_of(m.name);
      std::string p = path + "." + std::string(key);
      if (key == "enabled") {
        expect_bool_or_null(m.value, p);
      } else if (key == "namespace") {
        expect_dns_label(m.value, p, "namespace");
      } else if (key == "hub") {
        expect_hub(m.value, p);
      } else if (key == "tag") {
        expect_tag(m.value, p);
      } else if (key == "k8s") {
        k8s(m.value, p);
      } else if (gateway && key == "name") {
        expect_string(m.value, p);
      } else if (gateway && key == "label") {
        expect_string_map(m.value, p);
      } else {
        unknown(p, gateway ? "enabled, hub, k8s, label, name, namespace, tag"
                           : "enabled, hub, k8s, namespace, tag");
      }
    }
  }

  void gateways(const Value& v, const std::string& path) {
    if (!v.IsArray()) {
      error(path, "expected array, " + got(v));
      return;
    }
    std::set<std::string> names;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      std::string p = path + "[" + std::to_string(i) + "]";
      component(v[i], p, true);
      if (!v[i].IsObject()) continue;
      const Value* name = find_member(v[i], "name");
      if (name != nullptr && name->IsString()) {
        std::string n(string_view_of(*name));
        bool valid =
            n.size() <= 253 && std::all_of(n.begin(), n.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
            });
        if (!valid)
          error(p + ".name",
                "invalid gateway name \"" + n + "\": lower case alphanumerics, '-' and '.' only");
        else if (!n.empty() && !names.insert(n).second)
          error(p + ".name", "duplicate gateway name \"" + n + "\"");
      }
    }
  }

  void components(const Value& v, const std::string& path) {
    if (!expect_object(v, path)) return;
    for (const auto& m : v.GetObject()) {
      std::string_view key = string_view_of(m.name);
      std::string p = path + "." + std::string(key);
      if (key == "ingressGateways" || key == "egressGateways") {
        gateways(m.value, p);
      } else if (std::find(istio_operator_component_names().begin(),
                           istio_operator_component_names().end(),
                           key) != istio_operator_component_names().end()) {
        if (!m.value.IsNull()) component(m.value, p, false);
      } else {
        unknown(p, "base, cni, egressGateways, ingressGateways, istiodRemote, pilot, ztunnel");
      }
    }
  }

  // A few values upstream checks beyond their types (validation.go checkAutoScaleAndReplicaCount
  // is a warning there too).
  void values(const Value& spec) {
    // The Kubernetes-typed values upstream decodes strictly (validation.go validateValues) are
    // checked by the render, with each version's generated table
    // (operator/manifest/k8s_values.hpp).
    const Value* vals = find_member(spec, "values");
    const Value* comps = find_member(spec, "components");
    if (vals == nullptr || !vals->IsObject() || comps == nullptr || !comps->IsObject()) return;
    const Value* autoscale = find(*vals, "/pilot/autoscaleEnabled");
    const Value* replicas = find(*comps, "/pilot/k8s/replicaCount");
    if (autoscale != nullptr && autoscale->IsBool() && autoscale->GetBool() &&
        replicas != nullptr && replicas->IsNumber() && replicas->GetDouble() > 1)
      result.warnings.push_back(
          "spec.components.pilot.k8s.replicaCount should not be set when "
          "values.pilot.autoscaleEnabled is true");
  }

  void spec(const Value& v, const std::string& path) {
    if (!expect_object(v, path)) return;
    for (const auto& m : v.GetObject()) {
      std::string_view key = string_view_of(m.name);
      std::string p = path + "." + std::string(key);
      if (key == "profile" || key == "compatibilityVersion") {
        expect_string(m.value, p);
      } else if (key == "hub") {
        expect_hub(m.value, p);
      } else if (key == "installPackagePath" || key == "version") {
        // Which chart set renders it: a directory laid out as a release's manifests/, or
        // (meshop's extension) a bundled Istio version; the renderer checks that it exists.
        expect_string(m.value, p);
      } else if (key == "tag") {
        expect_tag(m.value, p);
      } else if (key == "namespace") {
        expect_dns_label(m.value, p, "namespace");
      } else if (key == "revision") {
        expect_dns_label(m.value, p, "revision");
        if (m.value.IsString() && m.value.GetStringLength() > kMaxRevisionLength &&
            is_dns_label(string_view_of(m.value)))
          error(p, "revision \"" + std::string(string_view_of(m.value)) + "\" is " +
                       std::to_string(m.value.GetStringLength()) + " characters; at most " +
                       std::to_string(kMaxRevisionLength) +
                       " are allowed, so that the Service istiod-<revision> stays a valid "
                       "DNS-1035 label (63 characters)");
      } else if (key == "meshConfig" || key == "values") {
        if (!m.value.IsNull()) expect_object(m.value, p);
      } else if (key == "unvalidatedValues") {
        if (!m.value.IsNull()) expect_object(m.value, p);
      } else if (key == "components") {
        if (!m.value.IsNull()) components(m.value, p);
      } else if (key == "restarts") {
        expect_object(m.value, p);
      } else {
        unknown(p,
                "compatibilityVersion, components, hub, installPackagePath, meshConfig, "
                "namespace, profile, restarts, revision, tag, unvalidatedValues, values, version");
      }
    }
    values(v);
  }

  void root(const Value& v) {
    if (!expect_object(v, "<root>")) return;
    if (const Value* av = find_member(v, "apiVersion");
        av != nullptr && expect_string(*av, "apiVersion")) {
      std::string_view s = string_view_of(*av);
      if (s != kIstioOperatorApiVersion)
        error("apiVersion", "expected " + std::string(kIstioOperatorApiVersion) + ", got \"" +
                                std::string(s) + "\"");
    }
    if (const Value* kind = find_member(v, "kind");
        kind != nullptr && expect_string(*kind, "kind")) {
      std::string_view s = string_view_of(*kind);
      if (s != "IstioOperator")
        error("kind", "expected IstioOperator, got \"" + std::string(s) + "\"");
    }
    if (const Value* md = find_member(v, "metadata"); md != nullptr && !md->IsNull())
      expect_object(*md, "metadata");
    if (const Value* s = find_member(v, "spec"); s != nullptr && !s->IsNull()) spec(*s, "spec");
  }
};

std::string scalar_text(const Value* v) {
  if (v == nullptr || v->IsNull()) return {};
  if (v->IsString()) return std::string(string_view_of(*v));
  return to_json(*v);
}

ComponentView make_component(std::string name, const Value& v) {
  ComponentView c;
  c.name = std::move(name);
  c.raw = &v;
  if (!v.IsObject()) return c;
  if (const Value* e = find_member(v, "enabled"); e != nullptr && e->IsBool())
    c.enabled = e->GetBool();
  c.namespace_ = scalar_text(find_member(v, "namespace"));
  c.hub = scalar_text(find_member(v, "hub"));
  c.tag = scalar_text(find_member(v, "tag"));
  if (const Value* n = find_member(v, "name"); n != nullptr && n->IsString())
    c.name = std::string(string_view_of(*n));
  if (const Value* l = find_member(v, "label"); l != nullptr && l->IsObject())
    for (const auto& m : l->GetObject())
      if (m.value.IsString())
        c.label[std::string(string_view_of(m.name))] = std::string(string_view_of(m.value));
  if (const Value* k = find_member(v, "k8s"); k != nullptr && k->IsObject()) c.k8s = k;
  return c;
}

}  // namespace

std::string IstioOperatorValidation::message() const {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.to_string();
  }
  return out;
}

const std::vector<std::string>& istio_operator_component_names() {
  static const std::vector<std::string> names = {"base", "pilot", "cni", "ztunnel", "istiodRemote"};
  return names;
}

IstioOperatorValidation validate_istio_operator(const Value& iop) {
  Validator v;
  v.root(iop);
  return std::move(v.result);
}

Result<IstioOperatorView> parse_istio_operator(const Value& iop,
                                               std::vector<std::string>* warnings) {
  IstioOperatorValidation check = validate_istio_operator(iop);
  if (warnings != nullptr)
    warnings->insert(warnings->end(), check.warnings.begin(), check.warnings.end());
  if (!check.ok()) return Error{check.message()};

  IstioOperatorView view;
  view.name = string_at(iop, {"metadata", "name"});
  view.metadata_namespace = string_at(iop, {"metadata", "namespace"});
  const Value* spec = find_member(iop, "spec");
  if (spec == nullptr || !spec->IsObject()) return view;
  view.profile = scalar_text(find_member(*spec, "profile"));
  view.install_package_path = scalar_text(find_member(*spec, "installPackagePath"));
  view.hub = scalar_text(find_member(*spec, "hub"));
  view.tag = scalar_text(find_member(*spec, "tag"));
  view.namespace_ = scalar_text(find_member(*spec, "namespace"));
  view.revision = scalar_text(find_member(*spec, "revision"));
  view.compatibility_version = scalar_text(find_member(*spec, "compatibilityVersion"));
  auto object_or_null = [&](std::string_view name) -> const Value* {
    const Value* v = find_member(*spec, name);
    return v != nullptr && v->IsObject() ? v : nullptr;
  };
  view.mesh_config = object_or_null("meshConfig");
  view.values = object_or_null("values");
  view.unvalidated_values = object_or_null("unvalidatedValues");
  if (const Value* comps = object_or_null("components")) {
    for (const std::string& name : istio_operator_component_names())
      if (const Value* c = find_member(*comps, name); c != nullptr && c->IsObject())
        view.components.emplace(name, make_component(name, *c));
    if (const Value* gws = find_member(*comps, "ingressGateways"); gws != nullptr && gws->IsArray())
      for (const Value& g : gws->GetArray())
        view.ingress_gateways.push_back(make_component("", g));
    if (const Value* gws = find_member(*comps, "egressGateways"); gws != nullptr && gws->IsArray())
      for (const Value& g : gws->GetArray())
        view.egress_gateways.push_back(make_component("", g));
  }
  return view;
}

}  // namespace meshop::api
