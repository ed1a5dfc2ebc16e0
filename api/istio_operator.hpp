// IstioOperator (install.istio.io/v1alpha1): validation and a typed view of the spec.
//
// The resource stays a JSON DOM (what the apiserver, `-f` files and profiles give us); this
// header adds
//   - validate_istio_operator(): checks the whole object and reports EVERY problem, each
//     with its field path ("spec.components.pilot.k8s.replicaCount: expected integer, got
//     string \"two\""), the way the CRD's structural schema and upstream's strict decoding
//     (DisallowUnknownFields) would reject it. Unknown fields under spec, spec.components,
//     a component and its k8s block are errors; meshConfig, values, unvalidatedValues and the
//     free-form Kubernetes sub-objects (affinity, resources, service, ...) only need the right
//     JSON type. spec.installPackagePath and spec.version (meshop's: a bundled chart set) are
//     strings, resolved by the istioctl pipeline; spec.restarts (meshop's extension) is
//     accepted and not looked into beyond being an object (the CRD schema types it).
//   - IstioOperatorView: the fields the renderer and reconcilers reason about, typed.
//
// The view points into the Value it was made from: keep that Value alive and unchanged
// while using the view. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::api {

// The longest spec.revision accepted. The renderer derives object names from the revision;
// the tightest is the Service istiod-<revision>, which must be a DNS-1035 label (at most 63
// characters): 63 - len("istiod-") = 56. Every other derived name (ConfigMaps istio-<rev> and
// istio-sidecar-injector-<rev>, the webhook configuration, istiod-clusterrole-<rev>-<ns>) is
// a DNS-1123 subdomain (253) or fits too. crd/istiooperator.yaml holds the same maxLength, and
// test/unit/manifest/cli_test.cpp checks every rendered name at this length.
inline constexpr std::size_t kMaxRevisionLength = 56;

struct FieldError {
  std::string path;  // dotted, with list indexes: spec.components.ingressGateways[0].name
  std::string message;
  std::string to_string() const { return path + ": " + message; }
};

struct IstioOperatorValidation {
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
  // All errors, one per line ("path: message"), in document order.
  std::string message() const;
};

// One entry of spec.components (base, pilot, cni, ztunnel, istiodRemote) or of a gateway list.
struct ComponentView {
  std::string name;  // component key ("pilot") or the gateway's name
  std::optional<bool> enabled;
  std::string namespace_;
  std::string hub;
  std::string tag;                           // a number tag (1.2) is given as its text
  std::map<std::string, std::string> label;  // gateways only
  const Value* k8s = nullptr;                // the k8s block, or null
  const Value* raw = nullptr;                // the whole component object
};

struct IstioOperatorView {
  std::string name;                // metadata.name
  std::string metadata_namespace;  // metadata.namespace
  std::string profile;
  std::string install_package_path;
  std::string hub;
  std::string tag;
  std::string namespace_;
  std::string revision;
  std::string compatibility_version;
  const Value* mesh_config = nullptr;
  const Value* values = nullptr;
  const Value* unvalidated_values = nullptr;
  std::map<std::string, ComponentView> components;  // base, pilot, cni, ztunnel, istiodRemote
  std::vector<ComponentView> ingress_gateways;
  std::vector<ComponentView> egress_gateways;
};

// Validates a whole IstioOperator object (apiVersion, kind, metadata, spec).
IstioOperatorValidation validate_istio_operator(const Value& iop);

// Validates, then builds the view. The error message lists every error (message()).
// Warnings, if any, are appended to `warnings` when it is given.
Result<IstioOperatorView> parse_istio_operator(const Value& iop,
                                               std::vector<std::string>* warnings = nullptr);

// The component keys of spec.components, in upstream's install order.
const std::vector<std::string>& istio_operator_component_names();

}  // namespace meshop::api
