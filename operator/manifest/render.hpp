// Rendering an IstioOperator into the Kubernetes objects it installs (what the install
// reconciler applies): the object as istioctl reads one -f file, through istioctl's pipeline
// (istioctl_pipeline.hpp) over the chart set it selects (spec.installPackagePath, else the
// bundled spec.version, else the newest bundled version; chart_sets.hpp). The objects come in
// istioctl's order. meshop's owner labels are the install reconciler's (not added here);
// meshop's spec.version and spec.restarts are not rendered. Pure functions; safe from any
// thread.
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

struct RenderedObject {
  std::string component;  // Base, Pilot, IngressGateways, EgressGateways, Cni, Ztunnel
  api::Document object;
};

struct RenderResult {
  std::vector<RenderedObject> objects;  // in istioctl's order
  std::vector<std::string> warnings;
};

// One IstioOperator object as found in the cluster: its profile < the object (what the
// cluster added — status, managedFields, labels, annotations — is left out). A spec the
// pipeline's validation refuses is an error with Error::invalid set (istioctl::generate).
api::Result<RenderResult> render_istio_operator(const api::Value& iop);

// The objects as a multi-document YAML stream ("---" between documents), each written as
// sigs.k8s.io/yaml writes it.
std::string to_multi_document_yaml(const RenderResult& result);

}  // namespace meshop::manifest
