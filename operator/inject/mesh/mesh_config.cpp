#include "operator/inject/mesh/mesh_config.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/mesh/go_duration.hpp"
#include "operator/inject/mesh/mesh_validation.hpp"
#include "operator/inject/mesh/proto_json.hpp"
#include "operator/inject/mesh/proto_object.hpp"

namespace meshop::inject {
namespace {

using proto::FieldDescriptor;
using proto::MessageDescriptor;

// mesh.DefaultProxyConfig() (pkg/config/mesh/mesh.go), in jsonpb form.
constexpr std::string_view kDefaultProxyConfig = R"({
  "configPath": "./etc/istio/proxy",
  "binaryPath": "/usr/local/bin/envoy",
  "serviceCluster": "istio-proxy",
  "drainDuration": "45s",
  "terminationDrainDuration": "5s",
  "proxyAdminPort": 15000,
  "controlPlaneAuthPolicy": "MUTUAL_TLS",
  "discoveryAddress": "istiod.istio-system.svc:15012",
  "statNameLength": 189,
  "statusPort": 15020
})";

// mesh.DefaultMeshConfig() without defaultConfig (added from kDefaultProxyConfig). Zero
// values it spells out (accessLogFile "", accessLogEncoding TEXT, empty lists) are unset in
// proto3 and so absent; present-but-empty messages (defaultProviders, inboundTrafficPolicy)
// and the zero Duration protocolDetectionTimeout are kept.
constexpr std::string_view kDefaultMeshConfig = R"({
  "enableTracing": true,
  "protocolDetectionTimeout": "0s",
  "ingressService": "istio-ingressgateway",
  "ingressControllerMode": "STRICT",
  "ingressClass": "istio",
  "trustDomain": "cluster.local",
  "enableAutoMtls": true,
  "outboundTrafficPolicy": {"mode": "ALLOW_ANY"},
  "inboundTrafficPolicy": {"mode": "PASSTHROUGH"},
  "localityLbSetting": {"enabled": true},
  "rootNamespace": "istio-system",
  "proxyListenPort": 15001,
  "proxyInboundListenPort": 15006,
  "connectTimeout": "10s",
  "defaultServiceExportTo": ["*"],
  "defaultVirtualServiceExportTo": ["*"],
  "defaultDestinationRuleExportTo": ["*"],
  "dnsRefreshRate": "60s",
  "enablePrometheusMerge": true,
  "defaultProviders": {},
  "extensionProviders": [
    {"name": "prometheus", "prometheus": {}},
    {"name": "stackdriver", "stackdriver": {}},
    {"name": "envoy", "envoyFileAccessLog": {"path": "/dev/stdout"}}
  ]
})";

const FieldDescriptor& mesh_field(std::string_view json_name) {
  return *proto::mesh_config_descriptor().find_field(json_name);
}
const FieldDescriptor& proxy_field(std::string_view json_name) {
  return *proto::proxy_config_descriptor().find_field(json_name);
}

// A canonical message built from trusted JSON text (the defaults above).
api::Document canonical(const MessageDescriptor& type, std::string_view json) {
  api::Document in = std::move(api::parse_json(json).value());
  api::Document out;
  out.SetObject();
  auto st = proto::apply_json(type, in, out, out.GetAllocator(), "");
  (void)st;  // the defaults are known-good; tests check them
  return out;
}

const api::Document& default_proxy_json() {
  static const api::Document doc = canonical(proto::proxy_config_descriptor(), kDefaultProxyConfig);
  return doc;
}

api::Document copy_of(const api::Value& v) {
  api::Document out;
  out.CopyFrom(v, out.GetAllocator());
  return out;
}

const api::Value* member(const api::Value& obj, std::string_view name) {
  return obj.IsObject() ? api::find_member(obj, name) : nullptr;
}

class ProxyConfigImpl final : public ProxyConfig {
 public:
  explicit ProxyConfigImpl(api::Document doc) : doc_(std::move(doc)) {
    if (const api::Value* md = member(doc_, "proxyMetadata"))
      for (auto it = md->MemberBegin(); it != md->MemberEnd(); ++it)
        metadata_.emplace(api::string_view_of(it->name), api::string_view_of(it->value));
  }
  const rapidjson::Value& json() const override { return doc_; }
  int status_port() const override {
    const api::Value* v = member(doc_, "statusPort");
    return v != nullptr && v->IsInt() ? v->GetInt() : 0;
  }
  std::string_view interception_mode() const override {
    const api::Value* v = member(doc_, "interceptionMode");
    return v != nullptr && v->IsString() ? api::string_view_of(*v) : "REDIRECT";
  }
  bool hold_application_until_proxy_starts() const override {
    const api::Value* v = member(doc_, "holdApplicationUntilProxyStarts");
    return v != nullptr && v->IsBool() && v->GetBool();
  }
  std::string_view image_type() const override {
    const api::Value* image = member(doc_, "image");
    const api::Value* v = image != nullptr ? member(*image, "imageType") : nullptr;
    return v != nullptr && v->IsString() ? api::string_view_of(*v) : std::string_view{};
  }
  const std::string* proxy_metadata(std::string_view key) const override {
    auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
  }

 private:
  api::Document doc_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

class MeshConfigImpl final : public MeshConfig {
 public:
  MeshConfigImpl(api::Document doc, std::vector<std::string> ignored)
      : doc_(std::move(doc)), ignored_(std::move(ignored)) {
    const api::Value* pc = member(doc_, "defaultConfig");
    proxy_ = std::make_shared<ProxyConfigImpl>(pc != nullptr ? copy_of(*pc) : api::Document());
  }
  const rapidjson::Value& json() const override { return doc_; }
  std::shared_ptr<const ProxyConfig> default_proxy_config() const override { return proxy_; }
  bool enable_prometheus_merge() const override {
    // A nil BoolValue means enabled (upstream: `GetEnablePrometheusMerge() == nil || ...`).
    const api::Value* v = member(doc_, "enablePrometheusMerge");
    return v == nullptr || !v->IsBool() || v->GetBool();
  }
  std::string_view inbound_traffic_policy_mode() const override {
    const api::Value* p = member(doc_, "inboundTrafficPolicy");
    const api::Value* mode = p != nullptr ? member(*p, "mode") : nullptr;
    if (mode != nullptr && mode->IsString() && api::string_view_of(*mode) == "LOCALHOST")
      return "localhost";
    return "passthrough";
  }
  std::span<const std::string> ignored_fields() const override { return ignored_; }

  // proxy_config_for(*this, nullptr), computed once by make_mesh().
  const std::shared_ptr<const ProxyConfig>& effective_proxy_config() const { return effective_; }
  void set_effective_proxy_config(std::shared_ptr<const ProxyConfig> pc) {
    effective_ = std::move(pc);
  }

 private:
  api::Document doc_;
  std::shared_ptr<const ProxyConfigImpl> proxy_;
  std::vector<std::string> ignored_;
  std::shared_ptr<const ProxyConfig> effective_;
};

// mesh.MergeProxyConfig: `in` (ProxyConfig JSON) applied to the canonical `pc` with jsonpb's
// replace-per-field semantics; then proxyMetadata keeps the keys of `pc` the input does not
// override, and proxyHeaders keeps the members of `pc` the input leaves unset.
api::Status merge_proxy_config(api::Value& pc, const api::Value& in, api::Allocator& a,
                               std::string_view path, std::vector<std::string>* ignored) {
  const FieldDescriptor& metadata = proxy_field("proxyMetadata");
  const FieldDescriptor& headers = proxy_field("proxyHeaders");
  // Copies in `a`, the allocator of `pc` (one pool per document keeps this cheap).
  api::Value orig_metadata;
  api::Value orig_headers;
  if (const api::Value* v = proto::get_field(pc, metadata)) orig_metadata.CopyFrom(*v, a);
  if (const api::Value* v = proto::get_field(pc, headers)) orig_headers.CopyFrom(*v, a);

  auto st = proto::apply_json(proto::proxy_config_descriptor(), in, pc, a, path,
                              {.unknown_fields = ignored});
  if (!st.ok()) return st;

  if (orig_metadata.IsObject() && orig_metadata.MemberCount() != 0) {
    api::Value merged(orig_metadata, a);
    if (const api::Value* now = proto::get_field(pc, metadata)) {
      for (auto it = now->MemberBegin(); it != now->MemberEnd(); ++it) {
        if (api::Value* e = api::find_member(merged, api::string_view_of(it->name))) {
          e->CopyFrom(it->value, a);
        } else {
          merged.AddMember(api::Value(it->name, a), api::Value(it->value, a), a);
        }
      }
    }
    proto::set_field(pc, metadata, std::move(merged), a);
  }

  api::Value* now_headers = api::find_member(pc, headers.json_name);
  if (now_headers != nullptr && orig_headers.IsObject()) {
    for (std::string_view name :
         {"forwardedClientCert", "requestId", "attemptCount", "server", "envoyDebugHeaders"}) {
      const FieldDescriptor& f = *headers.message->find_field(name);
      if (proto::get_field(*now_headers, f) != nullptr) continue;  // set (non-zero) wins
      if (const api::Value* old = proto::get_field(orig_headers, f))
        proto::set_field(*now_headers, f, api::Value(*old, a), a);
    }
  }
  return api::ok_status();
}

// The effective ProxyConfig of a pod without annotation (upstream's EffectiveProxyConfig):
// DefaultProxyConfig() with the mesh's defaultConfig merged over it, where only the populated
// fields of defaultConfig count (each layer goes through jsonpb, protomarshal.ToYAML).
api::Result<api::Document> webhook_proxy_config(const api::Value& mesh_default_config) {
  api::Document effective = copy_of(default_proxy_json());
  auto st =
      merge_proxy_config(effective, mesh_default_config, effective.GetAllocator(), "", nullptr);
  if (!st.ok()) return st.error();
  return effective;
}

std::shared_ptr<const MeshConfig> make_mesh(api::Document doc, std::vector<std::string> ignored) {
  auto mesh = std::make_shared<MeshConfigImpl>(std::move(doc), std::move(ignored));
  auto effective = webhook_proxy_config(mesh->default_proxy_config()->json());
  // Canonical input always merges; keep the mesh's own defaultConfig if it somehow did not.
  mesh->set_effective_proxy_config(
      effective.ok() ? std::make_shared<ProxyConfigImpl>(std::move(effective.value()))
                     : mesh->default_proxy_config());
  return mesh;
}

api::Result<api::Document> read_yaml_object(std::string_view text) {
  auto parsed = api::yaml_to_json(text);
  if (!parsed.ok()) return parsed.error();
  return std::move(parsed.value());
}

std::string prefixed(std::string_view prefix, const std::string& message) {
  return std::string(prefix) + ": " + message;
}

// The default mesh as a canonical document (built once).
const api::Document& default_mesh_json() {
  static const api::Document doc = [] {
    api::Document d = canonical(proto::mesh_config_descriptor(), kDefaultMeshConfig);
    proto::set_field(d, mesh_field("defaultConfig"),
                     api::Value(default_proxy_json(), d.GetAllocator()), d.GetAllocator());
    return d;
  }();
  return doc;
}

// mesh.ApplyMeshConfig(text, DefaultMeshConfig()).
api::Result<api::Document> apply_mesh_config(const api::Value& in,
                                             std::vector<std::string>& ignored) {
  api::Document mesh = copy_of(default_mesh_json());
  api::Allocator& a = mesh.GetAllocator();
  if (in.IsNull()) return mesh;
  if (!in.IsObject())
    return api::Error{"expected a mapping (MeshConfig), got " + std::string(in.IsArray() ? "list"
                                                                            : in.IsString()
                                                                                ? "string"
                                                                                : "scalar")};
  const FieldDescriptor& default_config = mesh_field("defaultConfig");
  const FieldDescriptor& default_providers = mesh_field("defaultProviders");
  const FieldDescriptor& extension_providers = mesh_field("extensionProviders");
  const FieldDescriptor& aliases = mesh_field("trustDomainAliases");

  api::Document prev_providers = copy_of(*proto::get_field(mesh, extension_providers));
  std::vector<std::string> prev_aliases;
  if (const api::Value* v = proto::get_field(mesh, aliases))
    for (const auto& s : v->GetArray())
      prev_aliases.emplace_back(api::string_view_of(s));

  // 1. Everything, as jsonpb would unmarshal it over the defaults (this also checks the
  //    types of defaultConfig and defaultProviders, which are then redone below).
  auto st = proto::apply_json(proto::mesh_config_descriptor(), in, mesh, a, "",
                              {.unknown_fields = &ignored});
  if (!st.ok()) return st.error();

  // 2. defaultConfig is merged over the previous one, not replaced. Upstream extracts the
  //    "defaultConfig" key only, so a snake_case "default_config" is dropped.
  proto::set_field(mesh, default_config, api::Value(default_proxy_json(), a), a);
  if (const api::Value* pc = api::find_member(in, "defaultConfig");
      pc != nullptr && !pc->IsNull()) {
    api::Value* target = api::find_member(mesh, "defaultConfig");
    std::vector<std::string> unused;  // unknown fields were reported in step 1
    st = merge_proxy_config(*target, *pc, a, "defaultConfig", &unused);
    if (!st.ok()) return st.error();
  }

  // 3. defaultProviders: applied over the default (empty) message.
  proto::set_field(mesh, default_providers, api::Value(rapidjson::kObjectType), a);
  if (const api::Value* dp = api::find_member(in, "defaultProviders");
      dp != nullptr && !dp->IsNull()) {
    api::Value* target = api::find_member(mesh, "defaultProviders");
    st = proto::apply_json(*default_providers.message, *dp, *target, a, "defaultProviders");
    if (!st.ok()) return st.error();
  }

  // 4. extensionProviders: a provider with a known name replaces that provider's
  //    configuration in place; new names are appended.
  {
    api::Value merged(prev_providers, a);
    const api::Value* now = proto::get_field(mesh, extension_providers);
    bool replaced = api::find_member(in, "extensionProviders") != nullptr ||
                    api::find_member(in, "extension_providers") != nullptr;
    if (replaced && now != nullptr) {
      const MessageDescriptor& provider = *extension_providers.message;
      for (const auto& p : now->GetArray()) {
        std::string_view name;
        if (const api::Value* n = member(p, "name")) name = api::string_view_of(*n);
        api::Value* found = nullptr;
        for (auto& e : merged.GetArray()) {
          const api::Value* en = member(e, "name");
          std::string_view ename = en != nullptr ? api::string_view_of(*en) : std::string_view{};
          if (ename == name) {
            found = &e;
            break;
          }
        }
        if (found == nullptr) {
          merged.PushBack(api::Value(p, a), a);
          continue;
        }
        // e.Provider = p.Provider: the oneof members of p replace those of e.
        for (const FieldDescriptor& f : provider.fields) {
          if (f.oneof < 0) continue;
          proto::clear_field(*found, f);
          if (const api::Value* v = proto::get_field(p, f))
            proto::set_field(*found, f, api::Value(*v, a), a);
        }
      }
    }
    if (merged.Empty()) {
      proto::clear_field(mesh, extension_providers);
    } else {
      proto::set_field(mesh, extension_providers, std::move(merged), a);
    }
  }

  // 5. trustDomainAliases: union with the previous ones, sorted, without duplicates.
  {
    std::set<std::string> all(prev_aliases.begin(), prev_aliases.end());
    if (const api::Value* v = proto::get_field(mesh, aliases))
      for (const auto& s : v->GetArray())
        all.emplace(api::string_view_of(s));
    if (all.empty()) {
      proto::clear_field(mesh, aliases);
    } else {
      api::Value list(rapidjson::kArrayType);
      for (const std::string& s : all)
        list.PushBack(api::make_string(s, a), a);
      proto::set_field(mesh, aliases, std::move(list), a);
    }
  }
  return mesh;
}

}  // namespace

api::Result<std::shared_ptr<const MeshConfig>> parse_mesh_config(std::string_view text) {
  auto in = read_yaml_object(text);
  if (!in.ok()) return api::Error{prefixed("mesh", in.message())};
  std::vector<std::string> ignored;
  auto mesh = apply_mesh_config(*in, ignored);
  if (!mesh.ok()) return api::Error{prefixed("mesh", mesh.message())};
  if (auto st = validate_mesh_config(*mesh); !st.ok())
    return api::Error{prefixed("mesh", st.message())};
  return make_mesh(std::move(mesh.value()), std::move(ignored));
}

namespace {

// "a: x; b: y" -> "<path>.a: x; <path>.b: y" (a message that names no field gets "<path>: ").
std::string with_path(std::string_view path, const std::string& message) {
  std::string out;
  std::size_t begin = 0;
  while (begin <= message.size()) {
    std::size_t end = message.find("; ", begin);
    if (end == std::string::npos) end = message.size();
    std::string_view part = std::string_view(message).substr(begin, end - begin);
    if (!out.empty()) out += "; ";
    out += path;
    std::size_t colon = part.find(": ");
    std::string_view head = part.substr(0, colon);
    bool names_field = colon != std::string_view::npos && !head.empty() &&
                       head.find(' ') == std::string_view::npos;
    out += names_field ? "." : ": ";
    out += part;
    begin = end + 2;
  }
  return out;
}

}  // namespace

api::Status validate_inline_mesh_config(const api::Value& in, std::string_view path,
                                        std::vector<std::string>* ignored) {
  if (in.IsNull()) return api::ok_status();
  std::vector<std::string> unknown;
  auto mesh = apply_mesh_config(in, unknown);
  if (!mesh.ok()) return api::Error{with_path(path, mesh.message())};
  if (auto st = validate_mesh_config(*mesh); !st.ok())
    return api::Error{with_path(path, st.message())};
  if (ignored != nullptr)
    for (const std::string& f : unknown)
      ignored->push_back(std::string(path) + "." + f);
  return api::ok_status();
}

std::shared_ptr<const MeshConfig> default_mesh_config() {
  static const std::shared_ptr<const MeshConfig> config =
      make_mesh(copy_of(default_mesh_json()), {});
  return config;
}

std::shared_ptr<const ProxyConfig> default_proxy_config() {
  static const std::shared_ptr<const ProxyConfig> config =
      std::make_shared<ProxyConfigImpl>(copy_of(default_proxy_json()));
  return config;
}

namespace {

constexpr std::string_view kAnnotation = "annotation proxy.istio.io/config";

// validateProxyConfig (pkg/kube/inject/validate.go): the annotation applied to the default
// ProxyConfig must be a valid ProxyConfig. Scratch values live in the parsed input's pool.
api::Status validate_annotation_json(api::Document& in) {
  api::Value pc(default_proxy_json(), in.GetAllocator());
  auto st = proto::apply_json(proto::proxy_config_descriptor(), in, pc, in.GetAllocator(), "");
  if (st.ok()) st = validate_proxy_config(pc, "");
  if (!st.ok()) return api::Error{prefixed(kAnnotation, st.message())};
  return api::ok_status();
}

}  // namespace

api::Status validate_proxy_config_annotation(std::string_view annotation) {
  auto in = read_yaml_object(annotation);
  if (!in.ok()) return api::Error{prefixed(kAnnotation, in.message())};
  return validate_annotation_json(*in);
}

api::Result<std::shared_ptr<const ProxyConfig>> proxy_config_for(const MeshConfig& mesh,
                                                                 const std::string* annotation) {
  const auto* impl = dynamic_cast<const MeshConfigImpl*>(&mesh);
  if (annotation == nullptr && impl != nullptr) return impl->effective_proxy_config();
  // EffectiveProxyConfig: each layer goes through jsonpb (protomarshal.ToYAML), so only its
  // populated fields override the layer below; canonical JSON is exactly that form.
  api::Document effective;
  if (impl != nullptr) {
    effective = copy_of(impl->effective_proxy_config()->json());
  } else {
    auto base = webhook_proxy_config(mesh.default_proxy_config()->json());
    if (!base.ok()) return api::Error{prefixed("mesh defaultConfig", base.message())};
    effective = std::move(base.value());
  }
  if (annotation != nullptr) {
    auto in = read_yaml_object(*annotation);
    if (!in.ok()) return api::Error{prefixed(kAnnotation, in.message())};
    if (auto valid = validate_annotation_json(*in); !valid.ok()) return valid.error();
    api::Allocator& a = effective.GetAllocator();
    api::Value pca(rapidjson::kObjectType);
    auto st = proto::apply_json(proto::proxy_config_descriptor(), *in, pca, a, "");
    if (!st.ok()) return api::Error{prefixed(kAnnotation, st.message())};
    st = merge_proxy_config(effective, pca, a, "", nullptr);
    if (!st.ok()) return api::Error{prefixed(kAnnotation, st.message())};
  }
  return std::shared_ptr<const ProxyConfig>(
      std::make_shared<ProxyConfigImpl>(std::move(effective)));
}

api::Result<std::shared_ptr<const MeshConfig>> apply_proxy_config_annotation(
    const MeshConfig& mesh, std::string_view annotation) {
  auto in = read_yaml_object(annotation);
  if (!in.ok()) return api::Error{prefixed(kAnnotation, in.message())};
  if (auto valid = validate_annotation_json(*in); !valid.ok()) return valid.error();
  api::Document doc = copy_of(mesh.json());
  api::Allocator& a = doc.GetAllocator();
  api::Value* pc = api::find_member(doc, "defaultConfig");
  if (pc == nullptr) {
    proto::set_field(doc, mesh_field("defaultConfig"), api::Value(rapidjson::kObjectType), a);
    pc = api::find_member(doc, "defaultConfig");
  }
  auto st = merge_proxy_config(*pc, *in, a, "", nullptr);
  if (!st.ok()) return api::Error{prefixed(kAnnotation, st.message())};
  std::vector<std::string> ignored(mesh.ignored_fields().begin(), mesh.ignored_fields().end());
  return make_mesh(std::move(doc), std::move(ignored));
}

template_engine::Value as_template_value(std::shared_ptr<const MeshConfig> mesh) {
  if (mesh == nullptr)
    return proto::message_value(proto::mesh_config_descriptor(), nullptr, nullptr);
  const api::Value* json = &mesh->json();
  return proto::message_value(proto::mesh_config_descriptor(), json, std::move(mesh));
}

template_engine::Value as_template_value(std::shared_ptr<const ProxyConfig> proxy) {
  if (proxy == nullptr)
    return proto::message_value(proto::proxy_config_descriptor(), nullptr, nullptr);
  const api::Value* json = &proxy->json();
  return proto::message_value(proto::proxy_config_descriptor(), json, std::move(proxy));
}

}  // namespace meshop::inject
