// MeshConfig and ProxyConfig (istio.io/api mesh/v1alpha1) as meshop's injection engine and
// templates see them.
//
// Contract (owned by the mesh-config area; the injection pipeline codes against it):
//   - parse_mesh_config() reads the `mesh` key of ConfigMap `istio[-<rev>]` (YAML or JSON) over
//     upstream's defaults (mesh.DefaultMeshConfig()), as mesh.ApplyMeshConfig does: fields
//     present in the text replace the defaults, `defaultConfig` is merged over the default
//     ProxyConfig. Unknown fields and wrong types are errors naming the field path
//     ("mesh: defaultConfig.concurrency: expected integer, got string").
//   - proxy_config_for() gives the effective ProxyConfig of one pod: the mesh's defaultConfig
//     with the pod annotation `proxy.istio.io/config` (ProxyConfig YAML) merged over it, as
//     upstream's GetProxyConfigOrDefault does without ProxyConfig custom resources.
//   - Both are immutable after construction and safe to share between threads.
//   - as_template_value() exposes them to Go templates as `*v1alpha1.MeshConfig` /
//     `*v1alpha1.ProxyConfig`: Go field names (`.ProxyMetadata`, `.TrustDomain`), getters
//     (`.GetTracing.GetTlsSettings.GetCaCertificates`, also on absent messages), enums with
//     `.String` and printing as their name, wrappers (`.HoldApplicationUntilProxyStarts.GetValue`),
//     durations.
//   - add_proto_functions() registers the template functions that need these types:
//     `protoToJSON` (defaults stripped as upstream's cleanProxyConfig, then proto3 JSON with
//     lowerCamelCase names, enums as names, durations as "23s") and `formatDuration`.
//   - json() is the canonical proto3-JSON form (lowerCamelCase names, defaults applied, enums as
//     names, durations as strings) for code that reads fields directly.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::inject {

class ProxyConfig {
 public:
  virtual ~ProxyConfig() = default;
  virtual const rapidjson::Value& json() const = 0;

  // Frequently used fields, with upstream's defaults applied.
  virtual int status_port() const = 0;                         // statusPort, default 15020
  virtual std::string_view interception_mode() const = 0;      // "REDIRECT" | "TPROXY" | "NONE"
  virtual bool hold_application_until_proxy_starts() const = 0;
  virtual std::string_view image_type() const = 0;             // image.imageType, "" if unset
  // proxyMetadata[key], or nullptr.
  virtual const std::string* proxy_metadata(std::string_view key) const = 0;
};

class MeshConfig {
 public:
  virtual ~MeshConfig() = default;
  virtual const rapidjson::Value& json() const = 0;
  virtual std::shared_ptr<const ProxyConfig> default_proxy_config() const = 0;
  virtual bool enable_prometheus_merge() const = 0;                // default true
  virtual std::string_view inbound_traffic_policy_mode() const = 0;  // "passthrough" | "localhost"
};

// `text` empty → upstream's default mesh config.
api::Result<std::shared_ptr<const MeshConfig>> parse_mesh_config(std::string_view text);
std::shared_ptr<const MeshConfig> default_mesh_config();

// `annotation` is the value of `proxy.istio.io/config`, or nullptr when the pod has none.
// An invalid annotation is an error naming the annotation and the field.
api::Result<std::shared_ptr<const ProxyConfig>> proxy_config_for(const MeshConfig& mesh,
                                                                const std::string* annotation);

template_engine::Value as_template_value(std::shared_ptr<const MeshConfig> mesh);
template_engine::Value as_template_value(std::shared_ptr<const ProxyConfig> proxy);

void add_proto_functions(template_engine::FunctionMap& functions);

}  // namespace meshop::inject
