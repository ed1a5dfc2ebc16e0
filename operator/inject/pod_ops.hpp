// Small operations on a Pod's JSON that the injection pipeline (injector.cpp) is built from:
// container lookup and reordering as upstream's FindContainer / modifyContainers /
// moveContainer, annotation access and the sidecar.istio.io/status annotation.
//
// All functions work on the Document they are given; none keeps references. Thread-safe on
// distinct documents.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"

namespace meshop::inject {

using api::kInitContainerName;
using api::kOverridesAnnotation;
using api::kProxyContainerName;
using api::kStatusAnnotation;
using api::kValidationContainerName;
inline constexpr std::string_view kEnableCoreDumpName = "enable-core-dump";

// spec.<list> ("containers" / "initContainers"), or nullptr when absent or not an array.
rapidjson::Value* container_list(rapidjson::Value& pod, std::string_view list);
const rapidjson::Value* container_list(const rapidjson::Value& pod, std::string_view list);
// The first element of `list` (an array or nullptr) whose name is `name`.
rapidjson::Value* find_container(rapidjson::Value* list, std::string_view name);
const rapidjson::Value* find_container(const rapidjson::Value* list, std::string_view name);
// FindContainerFromPod: containers first, then initContainers.
rapidjson::Value* find_pod_container(rapidjson::Value& pod, std::string_view name);
const rapidjson::Value* find_pod_container(const rapidjson::Value& pod, std::string_view name);

// metadata.annotations[key] / metadata.labels[key] when it is a string, else nullptr.
const rapidjson::Value* annotation(const rapidjson::Value& pod, std::string_view key);
const rapidjson::Value* label(const rapidjson::Value& pod, std::string_view key);
void set_annotation(api::Document& pod, std::string_view key, std::string_view value);
void set_label(api::Document& pod, std::string_view key, std::string_view value);
void remove_annotation(rapidjson::Value& pod, std::string_view key);

enum class Reorder { kMoveFirst, kMoveLast, kRemove };
// modifyContainers: every container named `name` is taken out; the last of them is put first
// or last (or dropped). Nothing changes when there is none.
void modify_containers(api::Document& pod, std::string_view list, std::string_view name,
                       Reorder how);
// moveContainer: the first container `name` of spec.<from> moves to the end of spec.<to>.
void move_container(api::Document& pod, std::string_view from, std::string_view to,
                    std::string_view name);

// Container names listed in a sidecar.istio.io/status value (parseStatus); a value that is
// not a JSON object gives empty lists.
struct StatusContainers {
  std::vector<std::string> containers;
  std::vector<std::string> init_containers;
  bool valid = false;  // the value decodes as SidecarInjectionStatus (stripPod strips only then)
};
StatusContainers parse_status(std::string_view status);

// getInjectionStatus over the template-only pod: encoding/json of SidecarInjectionStatus
// (names of init containers, containers, volumes, image pull secrets; null when none).
std::string injection_status(const rapidjson::Value& template_pod, std::string_view revision);

// Prometheus annotation keys compare after Prometheus' SanitizeLabelName.
std::string sanitize_label_name(std::string_view key);
// getPrometheusPort: the value of the (sanitised) prometheus.io/port annotation.
std::optional<std::string> prometheus_port(const rapidjson::Value& pod);
// clearPrometheusAnnotations: removes prometheus.io/{scrape,path,port} in any spelling.
void clear_prometheus_annotations(rapidjson::Value& pod);

// updateClusterEnvs on the istio-proxy container: entries named in `envs` are removed, then
// all of `envs` appended in key order. No-op without an istio-proxy container or envs.
void overwrite_cluster_envs(api::Document& pod, const std::map<std::string, std::string>& envs);

}  // namespace meshop::inject
