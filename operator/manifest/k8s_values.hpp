// The spec.values fields istioctl decodes strictly as Kubernetes types, and the check that
// refuses what that decoding refuses.
//
// Upstream's validation (operator/pkg/apis/validation.validateValues) takes some Struct-typed
// values (pilot.affinity, pilot.tolerations, pilot.volumes, global.proxy.lifecycle,
// sidecarInjectorWebhook.neverInjectSelector, ...) and decodes each with sigs.k8s.io/yaml's
// UnmarshalStrict into its Kubernetes type (corev1.Affinity, []corev1.Toleration, ...). Which
// fields and which types, per bundled version, is generated at build time
// (hack/k8s-values-schema.sh) from that version's validation.go and values_types.pb.go and from
// the k8s.io/api and k8s.io/apimachinery modules its go.mod requires (their generated.proto and
// types.go: field JSON names, types, embedded structs), all read from the Go module cache;
// nothing of them is committed.
//
// check_values() refuses what that decoding refuses, reporting every problem with its path:
//   - an object key that is no field of the type (matched as Go's encoding/json matches: the
//     JSON name, else case-insensitively; embedded structs' fields count as the type's own):
//       spec.values.pilot.affinity.bogus: unknown field "bogus" in k8s.io.api.core.v1.Affinity
//   - a value of the wrong JSON type: an object or array for a scalar, a scalar for an object
//     or list; a string field takes any scalar (sigs.k8s.io/yaml turns numbers and booleans
//     into strings for string targets; not below a field of an embedded struct, where it
//     loses track of the target: Field::embedded); integers must be integral numbers in range
//     (no strings); booleans must be booleans;
//   - the self-decoding types: Quantity (a number or a quantity string), IntOrString (a string
//     or an int32), Time and MicroTime (an RFC 3339 string), Duration (a Go duration string),
//     []byte (standard base64); RawExtension and FieldsV1 take anything.
// null is accepted anywhere (Go leaves the zero value). Approximations of Go: field names fold
// ASCII case only (Go also folds the Kelvin sign and long s), a time is checked against the
// RFC 3339 pattern rather than parsed as a calendar date. A value that is not an object (or, for
// a list field, not an array of objects) is left to values_schema::check_values, which reports
// it as istioctl's jsonpb decoding does.
// Constant data and pure functions: safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/istio_operator.hpp"
#include "api/json.hpp"

namespace meshop::manifest::k8s_values {

enum class Kind {
  kString,
  kBool,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kDouble,
  kBytes,
  kQuantity,
  kIntOrString,
  kTime,
  kMicroTime,
  kDuration,
  kRaw,
  kObject,
};
enum class Shape { kOne, kList, kMap };  // a value, a JSON array, a JSON object by string key

struct Type;
struct Field {
  std::string_view json;  // the JSON name
  Kind kind;
  Shape shape;
  const Type* type;  // kObject: the message
  // A field of an embedded (json:",inline") struct: sigs.k8s.io/yaml then targets the embedded
  // struct, not the field, so below it no scalar is turned into a string.
  bool embedded;
};
struct Type {
  std::string_view name;  // the proto message: "k8s.io.api.core.v1.Affinity"
  std::span<const Field> fields;
};

// One strictly decoded value: its path under spec.values by proto and by JSON names (jsonpb
// accepts either), the type, and whether the value is a list of them.
struct StrictPath {
  std::string_view proto_path;  // "gateways.istio_ingressgateway.tolerations"
  std::string_view json_path;   // "gateways.istio-ingressgateway.tolerations"
  const Type* type;
  bool list;
};
struct VersionPaths {
  std::string_view version;  // "1.31", as manifests/versions.yaml names it
  std::span<const StrictPath> paths;
};

// Every bundled version's table, in manifests/versions.yaml's order.
std::span<const VersionPaths> versions();
// `version`'s table; nullptr when it is not bundled.
const VersionPaths* paths_for(std::string_view version);

// Checks the merged spec.values against `version`'s table; `path` prefixes every error path.
std::vector<api::FieldError> check_values(const api::Value& values, std::string_view version,
                                          const std::string& path = "spec.values");

}  // namespace meshop::manifest::k8s_values
