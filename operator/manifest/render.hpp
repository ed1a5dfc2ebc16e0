// Rendering an IstioOperator into the Kubernetes objects it installs (what
// `meshop manifest generate` prints and the install reconciler applies).
//
// Two steps, as istioctl does them:
//
//  1. merge_inputs(): the overlay order is
//       profile (default < the named one) < -f files in order < --set flags in order.
//     `--set` paths are relative to spec (values.global.hub=x, components.cni.enabled=true,
//     profile=demo) and typed as istioctl types them (tree_path.hpp); --revision r is
//     --set revision=r. The merged object is validated (api/istio_operator.hpp): every error,
//     with its field path, fails the merge.
//
//  2. render_merged(): spec.hub/tag/revision/meshConfig/compatibilityVersion become Helm-style
//     values beneath spec.values (values set explicitly win), unvalidatedValues are merged
//     over values, and the component defaults (manifests/components/values.yaml, over
//     manifests/inject/values.yaml when embedded) go beneath. Each enabled component
//     (base, pilot, cni, ztunnel, every enabled ingress/egress gateway) renders its Go
//     template from manifests/components/ with meshop's template engine over this data:
//       .Values            the final values
//       .Release.Namespace the component's namespace (component namespace, else
//                          values.global.istioNamespace / spec.namespace, else istio-system)
//       .Revision .RevLabel .Suffix   "" / "default" / "" for the default revision,
//                                     "canary" / "canary" / "-canary" otherwise
//       .Image             <hub>/<image>:<tag>[-<variant>] (component hub/tag win over
//                          values.<component>.hub/tag and values.global.hub/tag)
//       .MeshConfig        (pilot) mesh defaults for the revision under values.meshConfig
//       .InjectorValues    (pilot) the `values` of the injector ConfigMap
//       .InjectTemplates   (pilot) injection templates: manifests/inject/sidecar.yaml and
//                          gateway.yaml, then values.sidecarInjectorWebhook.templates
//       .Gateway           (gateways) name, labels, kind, component, values
//     Then the component's k8s settings are applied to its main workload, Service, PDB and
//     HPA by strategic merge (affinity, env, hpaSpec, imagePullPolicy, nodeSelector,
//     podAnnotations, podDisruptionBudget, priorityClassName, readinessProbe, replicaCount,
//     resources, securityContext, service, serviceAnnotations, strategy, tolerations), and
//     k8s.overlays patches by path; every object is labelled with
//     install.operator.istio.io/owning-resource and operator.istio.io/component.
//
// The result is sorted for applying: CRDs and Namespaces, RBAC, configuration, workloads and
// Services, webhook configurations (then by group, kind, namespace, name).
// meshop's spec.restarts is not rendered. Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::manifest {

struct InputFile {
  std::string name;  // for messages
  std::string text;  // YAML or JSON, one IstioOperator
};

struct RenderInputs {
  std::vector<InputFile> files;
  std::vector<std::string> set_flags;  // "path=value"
  std::string revision;                // --revision; "" and "default" mean none
};

struct MergedOperator {
  api::Document iop;  // profile < files < flags; what `meshop profile dump` prints
  std::vector<std::string> warnings;
};

api::Result<MergedOperator> merge_inputs(const RenderInputs& inputs);

struct RenderedObject {
  std::string component;  // Base, Pilot, Cni, Ztunnel, IngressGateways, EgressGateways
  api::Document object;
};

struct RenderResult {
  std::vector<RenderedObject> objects;  // in apply order
  std::vector<std::string> warnings;
};

// Renders an IstioOperator that already holds its profile (merge_inputs' result).
api::Result<RenderResult> render_merged(const api::Value& merged_iop);

// merge_inputs + render_merged.
api::Result<RenderResult> render(const RenderInputs& inputs);

// One IstioOperator object as found in the cluster: its profile < the object.
api::Result<RenderResult> render_istio_operator(const api::Value& iop);

// The objects as a multi-document YAML stream ("---" between documents), each written as
// sigs.k8s.io/yaml writes it.
std::string to_multi_document_yaml(const RenderResult& result);

}  // namespace meshop::manifest
