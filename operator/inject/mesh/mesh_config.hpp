// MeshConfig and ProxyConfig (istio.io/api mesh/v1alpha1) as meshop's injection engine and
// templates see them.
//
// Contract (owned by the mesh-config area; the injection pipeline codes against it):
//   - parse_mesh_config() reads the `mesh` key of ConfigMap `istio[-<rev>]` (YAML or JSON) over
//     upstream's defaults (mesh.DefaultMeshConfig()), as mesh.ApplyMeshConfig does: fields
//     present in the text replace the defaults (a message field is replaced whole, a list is
//     replaced, not appended), except that `defaultConfig` is merged over the default
//     ProxyConfig field by field (proxyMetadata merged key by key), `extensionProviders` are
//     merged by name into the default providers, and `trustDomainAliases` are sorted and
//     de-duplicated. Wrong types and unknown enum values are errors naming the field path
//     ("mesh: defaultConfig.concurrency: expected int32 (an integer), got string \"two\"").
//     Unknown fields are ignored, as upstream ignores them, and listed by ignored_fields().
//     The result is then validated as agent.ValidateMeshConfig does (mesh_validation.hpp
//     lists what is covered): "mesh: defaultConfig.statusPort: invalid status port: ...".
//   - proxy_config_for() gives the effective ProxyConfig of one pod in the webhook: upstream's
//     EffectiveProxyConfig without ProxyConfig custom resources, i.e. DefaultProxyConfig()
//     merged with the mesh's defaultConfig and then with the pod annotation
//     `proxy.istio.io/config` (ProxyConfig YAML). Each merge replaces the fields the higher
//     layer sets to a non-zero value, merges proxyMetadata by key and keeps the lower layer's
//     proxyHeaders members the higher one leaves unset. Without annotation the result is
//     computed once per MeshConfig (the call is a pointer copy). The annotation is first
//     checked as the webhook's annotation validation does (validate_proxy_config_annotation);
//     upstream's EffectiveProxyConfig alone would skip a bad annotation, but the webhook
//     rejects the pod before, so here it is an error.
//   - apply_proxy_config_annotation() is mesh.ApplyProxyConfig, used by kube-inject and by the
//     container ordering step: the annotation YAML applied directly to the mesh's
//     defaultConfig (so, unlike proxy_config_for, explicit zero values in it apply too:
//     `interceptionMode: REDIRECT` overrides a mesh-wide TPROXY here, not there). The
//     annotation is validated first as well.
//   - All objects are immutable after construction and safe to share between threads.
//   - as_template_value() exposes them to Go templates as `*v1alpha1.MeshConfig` /
//     `*v1alpha1.ProxyConfig` (see proto_object.hpp): Go field names (`.ProxyMetadata`,
//     `.TrustDomain`), getters (`.GetTracing.GetTlsSettings.GetCaCertificates`, also on
//     absent messages), enums with `.String` and printing as their name, wrappers
//     (`.HoldApplicationUntilProxyStarts.GetValue`), durations.
//   - add_proto_functions() registers the template functions that need these types:
//     `protoToJSON` (defaults stripped as upstream's cleanProxyConfig, then legacy jsonpb:
//     lowerCamelCase names in declaration order, no zero values, enums as names, durations
//     as "23s"/"0.100s", wrappers as bare values), `formatDuration`, and an
//     `otelResourceAttributes` that reads the typed MeshConfig's extension providers.
//   - json() is the canonical proto3-JSON form (see proto_json.hpp): lowerCamelCase names,
//     upstream defaults applied, only populated fields, enums as names, durations as
//     strings, 64-bit integers as strings.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/json.hpp"
#include "api/result.hpp"
#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::inject {

class ProxyConfig {
 public:
  virtual ~ProxyConfig() = default;
  virtual const rapidjson::Value& json() const = 0;

  // Frequently used fields, with upstream's defaults applied.
  virtual int status_port() const = 0;                     // statusPort, default 15020
  virtual std::string_view interception_mode() const = 0;  // "REDIRECT" | "TPROXY" | "NONE"
  virtual bool hold_application_until_proxy_starts() const = 0;
  virtual std::string_view image_type() const = 0;  // image.imageType, "" if unset
  // proxyMetadata[key], or nullptr.
  virtual const std::string* proxy_metadata(std::string_view key) const = 0;
};

class MeshConfig {
 public:
  virtual ~MeshConfig() = default;
  virtual const rapidjson::Value& json() const = 0;
  virtual std::shared_ptr<const ProxyConfig> default_proxy_config() const = 0;
  virtual bool enable_prometheus_merge() const = 0;                  // default true
  virtual std::string_view inbound_traffic_policy_mode() const = 0;  // "passthrough" | "localhost"
  // Paths of the fields the text had that the schema does not know ("defaultConfig.foo").
  virtual std::span<const std::string> ignored_fields() const { return {}; }
};

// `text` empty → upstream's default mesh config.
api::Result<std::shared_ptr<const MeshConfig>> parse_mesh_config(std::string_view text);
std::shared_ptr<const MeshConfig> default_mesh_config();

// The check of a meshConfig given inline (an IstioOperator's spec.meshConfig or
// spec.values.meshConfig) BEFORE it is installed: `in` is applied over upstream's defaults and
// validated exactly as parse_mesh_config() will do when the injector and istiod read the
// rendered ConfigMap, so what passes here is what they accept. Every error is prefixed with
// `path` ("spec.meshConfig.enableTracing: expected bool (true or false), got string ...");
// several are joined with "; ". Unknown fields are not errors (the readers ignore them);
// their paths are appended to `ignored` when it is given.
api::Status validate_inline_mesh_config(const api::Value& in, std::string_view path,
                                        std::vector<std::string>* ignored = nullptr);

// `annotation` is the value of `proxy.istio.io/config`, or nullptr when the pod has none.
// An invalid annotation is an error naming the annotation and the field.
api::Result<std::shared_ptr<const ProxyConfig>> proxy_config_for(const MeshConfig& mesh,
                                                                 const std::string* annotation);

// The webhook's check of the annotation (validateProxyConfig): the YAML applied to
// DefaultProxyConfig() must parse and validate. proxy_config_for and
// apply_proxy_config_annotation run it too.
api::Status validate_proxy_config_annotation(std::string_view annotation);

// mesh.ApplyProxyConfig: `mesh` with the annotation YAML applied to its defaultConfig.
api::Result<std::shared_ptr<const MeshConfig>> apply_proxy_config_annotation(
    const MeshConfig& mesh, std::string_view annotation);

// mesh.DefaultProxyConfig().
std::shared_ptr<const ProxyConfig> default_proxy_config();

template_engine::Value as_template_value(std::shared_ptr<const MeshConfig> mesh);
template_engine::Value as_template_value(std::shared_ptr<const ProxyConfig> proxy);

void add_proto_functions(template_engine::FunctionMap& functions);

}  // namespace meshop::inject
