// Canonical messages (proto_json.hpp) seen by Go templates as the Go protobuf types Istio's
// templates run over: `*v1alpha1.ProxyConfig` and friends.
//
//   - `.Field` by Go field name; `.GetField` getters, which also work on absent (nil)
//     messages and return the zero value, so `.ProxyConfig.GetTracing.GetTlsSettings` is nil
//     rather than an error; `.Field` on a nil message is the executor's "nil pointer" error.
//   - Scalars have their Go types (int32, uint32, int64, float64, string, bool); repeated
//     fields are typed slices ([]string, []*v1alpha1.X); map<string,string> is
//     map[string]string; maps of messages are map[string]interface {} here.
//   - Enums are `v1alpha1.X` values that print as their name and have `.String`/`.Number`.
//   - Wrappers are `*wrapperspb.BoolValue` etc. with `.Value`/`.GetValue`; Durations are
//     `*durationpb.Duration` with `.Seconds`, `.Nanos`, `.AsDuration` (a time.Duration that
//     prints as "1m30s").
//   - A oneof is an interface field holding the generated wrapper struct
//     (`.ClusterName` is `*v1alpha1.ProxyConfig_ServiceCluster`), with member getters on the
//     message (`.GetServiceCluster`).
//   - Messages print as protobuf text (`String()`), have `MarshalJSON` (jsonpb, which is what
//     encoding/json uses for istio.io/api types) and `ProtoToJSON` (upstream's protoToJSON,
//     see clean_proxy_config).
// Objects reference the canonical JSON owned by `owner`; they are immutable and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "api/json.hpp"
#include "operator/inject/mesh/proto_schema.hpp"
#include "operator/template/value.hpp"

namespace meshop::inject::proto {

// `msg` null is a nil pointer of the message type.
template_engine::Value message_value(const MessageDescriptor& type, const api::Value* msg,
                                     std::shared_ptr<const void> owner);

struct MessageRef {
  const MessageDescriptor* type;
  const api::Value* msg;  // null for a nil message
};
// The message behind a template value made by message_value, or nullopt.
std::optional<MessageRef> as_message(const template_engine::Value& v);

// A `*durationpb.Duration` or `time.Duration` value as nanoseconds; nullopt for other values
// (and for a nil Duration, whose AsDuration is 0: callers decide).
std::optional<std::int64_t> as_duration_nanos(const template_engine::Value& v);
bool is_nil_duration(const template_engine::Value& v);

// Upstream's cleanProxyConfig (pkg/kube/inject/template.go): a copy of the canonical
// ProxyConfig without the fields that equal mesh.DefaultProxyConfig() (configPath,
// binaryPath, controlPlaneAuthPolicy, serviceCluster, drainDuration, terminationDrainDuration,
// discoveryAddress, proxyAdminPort, statNameLength, statusPort).
api::Document clean_proxy_config(const api::Value& proxy_config);

// Protobuf text format of a canonical message, compact, as Go's String() prints messages.
std::string text_format(const MessageDescriptor& type, const api::Value& msg);

}  // namespace meshop::inject::proto
