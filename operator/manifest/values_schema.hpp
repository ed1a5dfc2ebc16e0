// The schema of an IstioOperator's spec.values (istio.operator.v1alpha1.Values) for each
// bundled Istio version, and istioctl's check of spec.values against it.
//
// The tables (values_schema_tables.cpp, in the build directory) are generated at build time by
// operator/inject/mesh/generate_schema.py --values from each version's istio.io/istio module
// in the Go module cache (operator/pkg/apis/values_types.pb.go; hack/values-schema.sh), in the
// same descriptor types as MeshConfig's (operator/inject/mesh/proto_schema.hpp). Nothing of
// upstream is committed.
//
// check_values() accepts exactly what istioctl's validation accepts
// (operator/pkg/apis/validation.validateValues: the legacy jsonpb Unmarshaler with unknown
// fields disallowed): a field known by its proto or JSON name; messages as objects; bool as a
// JSON bool; integers as integral numbers or quoted integers; floats as numbers or quoted
// numbers; strings as strings; enums by value name or number; Duration as a Go duration
// string; Struct as any object, Value as anything, ListValue as any array; IntOrString as a
// string or an int32; null anywhere as absent. Unlike jsonpb, which stops at the first error,
// every problem is reported, each with its field path. Then, as validateValues goes on to do,
// global.proxy.include/excludeIPRanges must be "*" or CIDRs and include/excludeInboundPorts
// port numbers:
//   spec.values.global.badKey: unknown field "badKey" in istio.operator.v1alpha1.GlobalConfig
// Constant data and pure functions: safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/istio_operator.hpp"
#include "api/json.hpp"
#include "operator/inject/mesh/proto_schema.hpp"

namespace meshop::manifest::values_schema {

struct VersionSchema {
  std::string_view version;  // "1.31", as manifests/versions.yaml names it
  std::string_view module;   // the istio.io/istio module version the tables come from
  const inject::proto::MessageDescriptor* values;  // istio.operator.v1alpha1.Values
};

// Every bundled version's schema, in manifests/versions.yaml's order. (The descriptors'
// find_field() indexes only the mesh schema's messages; walk `fields` here.)
std::span<const VersionSchema> versions();
// The Values message of `version`; nullptr when it is not bundled.
const inject::proto::MessageDescriptor* values_descriptor(std::string_view version);

// Checks `values` (the merged spec.values) against `schema`; `path` prefixes every error path.
std::vector<api::FieldError> check_values(const api::Value& values,
                                          const inject::proto::MessageDescriptor& schema,
                                          const std::string& path = "spec.values");

}  // namespace meshop::manifest::values_schema
