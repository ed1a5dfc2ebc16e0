// Applying a component's `k8s` block (KubernetesResources) to its rendered objects, the way
// istioctl's render post-processing does: each setting is a strategic-merge patch on one
// object named after the component's resource (Deployment/DaemonSet `name`, Service `name`,
// PodDisruptionBudget `name`, HorizontalPodAutoscaler `name`), then k8s.overlays are applied
// by path to the objects they name. Settings whose target object was not rendered are
// skipped, as upstream does; an overlay that names no rendered object, and a patch whose path
// does not resolve (istioctl drops it silently), give a warning and are skipped.
// Pure; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::manifest {

struct ComponentTarget {
  std::string_view workload_kind;  // "Deployment", "DaemonSet", or "" (no workload: base)
  std::string resource_name;       // istiod-canary, istio-ingressgateway, istio-cni-node, ...
  std::string_view container;      // discovery, istio-proxy, install-cni
  bool gateway = false;            // k8s.service.ports are rendered from values, not patched
};

// `objects` are the component's rendered objects; `k8s` its k8s block (an object).
// `component_path` names the block in messages ("spec.components.pilot.k8s").
api::Status apply_k8s_settings(std::vector<api::Document>& objects, const api::Value& k8s,
                               const ComponentTarget& target, std::string_view component_path,
                               std::vector<std::string>& warnings);

}  // namespace meshop::manifest
