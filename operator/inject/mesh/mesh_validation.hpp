// Semantic validation of MeshConfig and ProxyConfig, after upstream's
// pkg/config/validation/agent (ValidateMeshConfig, ValidateMeshConfigProxyConfig).
//
// Covered: ports (proxyListenPort, proxyAdminPort, statusPort), config/binary paths, the
// cluster-name oneof, drain duration (>= 1ms, whole seconds), discovery / statsd / metrics /
// access-log service addresses (host:port with a DNS-1123 name or an IP), Lightstep, Zipkin and
// Datadog collector addresses, the tracing TLS mutual-mode requirements, the control plane
// auth policy, the private key provider, connection settings (non-negative values),
// connectTimeout (1ms..1h), protocolDetectionTimeout (ms precision), trustDomain and
// trustDomainAliases, serviceSettings hosts, localityLbSetting (distribute/failover rules) and
// meshMTLS ECDH curves. Not covered: extension providers (upstream only logs a warning),
// meshMTLS/tlsDefaults cipher checks, defaultHttpRetryPolicy / defaultTrafficPolicy.
// Errors name the field by its JSON path; several are joined with "; ". Pure functions.
#pragma once

#include <string_view>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::inject {

// `proxy_config` is canonical ProxyConfig JSON; `path` prefixes field names
// ("defaultConfig" -> "defaultConfig.statusPort: ...").
api::Status validate_proxy_config(const api::Value& proxy_config, std::string_view path);
// `mesh` is canonical MeshConfig JSON (defaultConfig included).
api::Status validate_mesh_config(const api::Value& mesh);

}  // namespace meshop::inject
