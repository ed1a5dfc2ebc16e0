// istioctl's install pipeline over an Istio release's own charts and profiles: what
// `istioctl manifest generate --manifests DIR` prints (upstream's operator/pkg/render
// GenerateManifest and istioctl's object order), with Istio's charts rendered by meshop::helm.
//
//   DIR (a release's manifests/):  profiles/<name>.yaml   charts/<component chart>/...
//
// Steps, with upstream's semantics (learned from operator/pkg/render, operator/pkg/component,
// operator/pkg/values and operator/pkg/tpath of the pinned istio.io/istio module):
//
//  1. merge_inputs(): an empty IstioOperator < each -f file (one IstioOperator per file; a
//     null spec is dropped) < --set flags (path relative to spec, values typed as istioctl
//     types them: int, float, bool, else string; `--manifests` is `installPackagePath=DIR`,
//     `--revision r` is `revision=r`). Then the profile named by spec.profile (default
//     "default"; every other profile is default.yaml < <name>.yaml) is read from
//     spec.installPackagePath's profiles/ and the user's object merged over it. spec.hub, tag,
//     revision and compatibilityVersion become values.global.hub/tag, values.revision,
//     values.compatibilityVersion (as istioctl does it: the value's text re-typed as a --set
//     value), spec.meshConfig is merged under values.meshConfig, values.pilot.enabled and
//     values.pilot.cni.enabled follow spec.components.pilot/cni.enabled, and
//     metadata.namespace becomes values.global.istioNamespace when that is set. Last, the
//     user's own spec.values are merged on top again (a user's value beats a translated one).
//     Maps merge key by key; lists and scalars replace. Upstream's aliasing of the user's value
//     maps (a translated value written into a map the user's values share) is reproduced:
//     the merge works on Go-like reference maps (template_engine::Value).
//  2. Validation of the merged object (api/istio_operator.hpp: unknown fields and wrong types
//     of spec, components and k8s blocks, hub, tag, revision); `force` turns errors into
//     warnings, as istioctl's --force. spec.unvalidatedValues are then merged over values.
//  3. Components in upstream's order (Base, Pilot, IngressGateways, EgressGateways, Cni,
//     Ztunnel), each with its chart (charts/base, charts/istio-control/istio-discovery,
//     charts/gateways/istio-ingress|istio-egress, charts/istio-cni, charts/ztunnel) and values
//     root (global, pilot, gateways.istio-ingressgateway|istio-egressgateway, cni, ztunnel).
//     A listed component is rendered unless enabled: false; an absent one by default (Base,
//     Pilot, one ingress gateway); values.gateways.<gw>.enabled: true enables every gateway of
//     that kind. Namespace: the component's, else metadata.namespace, else istio-system.
//  4. component_values(): the merged object as that component's chart sees it: gateways get
//     values.<root>.name/labels (and ports from k8s.service.ports); Deployments get
//     autoscaleMin/Max and replicaCount from k8s.hpaSpec and k8s.replicaCount; k8s.resources
//     CPU requests/limits go to values.<root>.resources; component hub/tag to
//     values.<root>.hub/tag; ztunnel's values are flattened (values.ztunnel.* at the top,
//     next to global and the other non-map values). Copies are made through JSON, as
//     upstream's DeepClone: numbers become float64 there.
//  5. The chart is rendered with release name "istio" in the component's namespace
//     (Capabilities.KubeVersion v1.32.0, istioctl's minimum), templates in key order, NOTES
//     skipped (its "WARNING: " lines become warnings), then the chart's crds/ files (not for
//     base with base.enableIstioConfigCRDs: false); documents without a kind are dropped.
//  6. post_process(): the component's k8s settings as strategic merge patches on the object
//     named after the component (Deployment/DaemonSet istiod[-rev], the gateway's name,
//     istio-cni-node, ztunnel; Service, HPA and PDB of the same name), then k8s.overlays by
//     path (tpath semantics: `a.b[0]`, `[key:value]`, `[regex]` for scalars, a null value
//     deletes, a string holding a YAML map is that map; a patch whose path fails is dropped,
//     as upstream drops it).
//  7. Objects of all components sorted as istioctl sorts them: CRDs, then ServiceAccounts and
//     ClusterRoles, ClusterRoleBindings, ValidatingWebhookConfigurations, ConfigMaps, the rest,
//     HPAs, Services; then by API group, kind and name (stable).
//
// Errors (merge, unknown profile, a missing chart, a chart that fails to render, invalid
// fields) are returned with what they name. A bundled chart set (PipelineInputs::version) is
// read from the binary instead of DIR: spec.installPackagePath is then "bundled:<version>"
// inside the pipeline (kBundledPrefix), which names no directory. Pure functions over the file
// system; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"
#include "operator/manifest/render.hpp"
#include "operator/template/value.hpp"

namespace meshop::manifest::istioctl {

using GoValue = template_engine::Value;

struct PipelineInputs {
  std::vector<InputFile> files;        // -f, in order
  std::vector<std::string> set_flags;  // --set path=value, in order
  std::string manifests;               // --manifests DIR ("" = spec.installPackagePath)
  // A chart set compiled into the binary (manifest/chart_sets.hpp), used when neither
  // `manifests` nor spec.installPackagePath names a directory: its profiles and charts, and
  // its hub and tag laid over the profile as istioctl lays its build's hub/tag (hubTagOverlay).
  std::string version;
  std::string revision;  // --revision ("" and "default" mean none)
  bool force = false;    // --force: validation errors become warnings
};

inline constexpr std::string_view kBundledPrefix = "bundled:";

struct PipelineObject {
  std::string component;  // Base, Pilot, IngressGateways, EgressGateways, Cni, Ztunnel
  api::Document object;
};

struct PipelineResult {
  std::vector<PipelineObject> objects;  // in istioctl's order
  std::vector<std::string> warnings;
};

// Step 1: the merged IstioOperator (profile < files < flags, translated to values).
api::Result<GoValue> merge_inputs(const PipelineInputs& inputs);

// Steps 1-7. An error of the inputs themselves (validation without --force, an unknown or
// conflicting spec.version) has Error::invalid set; a failure to render them has not.
api::Result<PipelineResult> generate(const PipelineInputs& inputs);

// What `istioctl manifest generate` prints: each object as sigs.k8s.io/yaml writes it,
// followed by "\n---\n".
std::string to_istioctl_stream(const PipelineResult& result);

// --- the pieces, exposed for tests -----------------------------------------------------------

// One row of upstream's component table (operator/pkg/component).
struct ComponentDef {
  std::string_view name;       // UserFacingName: Base, Pilot, ...
  std::string_view spec_name;  // key under spec.components
  bool default_on = false;
  bool multi = false;               // a list of gateways
  std::string_view resource_type;   // Deployment, DaemonSet, "" (base)
  std::string_view resource_name;   // istiod, istio-ingressgateway, istio-cni-node, ztunnel
  std::string_view container;       // discovery, istio-proxy, install-cni
  std::string_view chart;           // under charts/
  std::string_view values_root;     // global, pilot, gateways.istio-ingressgateway, ...
  bool flatten_values = false;      // ztunnel
  std::string_view alt_enablement;  // spec.values.gateways.<gw>.enabled
  bool gateway() const { return multi; }
};
const std::vector<ComponentDef>& component_table();
const ComponentDef* find_component(std::string_view name);

// One enabled instance of a component (upstream's GatewayComponentSpec with Raw).
struct ComponentInstance {
  std::string namespace_;
  std::string name;  // gateways' name ("" when not given)
  std::string hub;
  GoValue tag;             // invalid when not set
  bool has_label = false;  // false only for a component absent from spec.components
  std::vector<std::pair<std::string, std::string>> label;
  GoValue raw;           // the component's map in the merged object (may be invalid)
  bool has_k8s = false;  // a k8s block is present (even empty)
  std::optional<std::int64_t> hpa_min, hpa_max, replica_count;
  bool has_resources = false;          // k8s.resources is present
  std::string cpu_limit, cpu_request;  // canonical quantities, "" when unset or zero
  GoValue service_ports;               // typed ServicePort list as JSON (invalid when empty)
};

// Upstream's Component.Get: the instances to render, in list order.
api::Result<std::vector<ComponentInstance>> component_instances(const ComponentDef& def,
                                                                const GoValue& merged);

// Upstream's applyComponentValuesToHelmValues: the merged object the chart's values come from
// (its spec.values). May be `merged` itself when nothing changes.
api::Result<GoValue> component_values(const ComponentDef& def, const ComponentInstance& spec,
                                      const GoValue& merged);

// Upstream's postProcess: k8s settings and overlays on the component's rendered objects.
api::Status post_process(const ComponentDef& def, const ComponentInstance& spec,
                         const GoValue& component_values, std::vector<api::Document>& objects);

// One k8s.overlays patch (tpath.GetPathContext(createMissing) + WritePathContext) on `object`.
// A null `value` deletes what the path names. Errors are what upstream would log and drop.
api::Status apply_tpath_patch(api::Document& object, std::string_view path,
                              const api::Value& value);

// values.Map helpers with upstream's semantics, on Go-like reference maps.
GoValue go_map();
// MergeFrom: maps merge recursively; anything else (and a map over a non-map) is assigned by
// reference.
void go_merge_from(GoValue& base, const GoValue& other);
// SetPath: "a.b[0].c", "[key:value]"; missing maps are created, an index past the end appends.
api::Status go_set_path(GoValue& root, std::string_view path, GoValue value);
// GetPath: the value, or invalid when a step is missing.
GoValue go_get_path(const GoValue& root, std::string_view path);
// SetPaths("path=value") with istioctl's typing of the value text.
api::Status go_set_flag(GoValue& root, std::string_view flag);
// A JSON round trip (DeepClone): a fresh copy, integers as float64.
api::Result<GoValue> go_deep_clone(const GoValue& v);
GoValue go_from_json(const api::Value& v);
api::Result<api::Document> go_to_document(const GoValue& v);

}  // namespace meshop::manifest::istioctl
