// Internals of the post-processing steps (postprocess.hpp), exposed for their unit tests and
// shared between validate.cpp, probes.cpp and prometheus.cpp. Not a public contract.
//
// The Go library functions here are re-implemented for the exact inputs they accept and the
// exact error texts they produce, since both reach users through admission messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"

namespace meshop::inject::postprocess {

inline constexpr std::string_view kProxyContainerName = "istio-proxy";
inline constexpr std::string_view kStatusAnnotation = "sidecar.istio.io/status";
inline constexpr std::string_view kStatusPortAnnotation = "status.sidecar.istio.io/port";
inline constexpr std::string_view kRewriteProbersAnnotation =
    "sidecar.istio.io/rewriteAppHTTPProbers";
inline constexpr std::string_view kMergeMetricsAnnotation = "prometheus.istio.io/merge-metrics";
inline constexpr std::string_view kKubeAppProbersEnv = "ISTIO_KUBE_APP_PROBERS";
inline constexpr std::string_view kPrometheusAnnotationsEnv = "ISTIO_PROMETHEUS_ANNOTATIONS";

// --- Go's strconv and friends ---------------------------------------------------------------

// strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
std::optional<bool> go_parse_bool(std::string_view s);
// strconv.ParseUint(s, 10, bits); the error is Go's (`strconv.ParseUint: parsing "x": invalid
// syntax` / `... value out of range`).
api::Result<std::uint64_t> go_parse_uint(std::string_view s, int bits);
// strconv.Atoi on a 64-bit platform. `value` is what Go returns with the error too (0 for bad
// syntax, the clamped bound for out of range).
struct GoAtoi {
  std::int64_t value = 0;
  bool ok = false;
};
GoAtoi go_atoi(std::string_view s);
// strings.TrimSpace (Unicode white space).
std::string_view go_trim_space(std::string_view s);
// github.com/prometheus/prometheus/util/strutil.SanitizeLabelName: every rune outside
// [a-zA-Z0-9_] becomes '_' (an invalid UTF-8 byte counts as one rune).
std::string sanitize_label_name(std::string_view s);
// sanitize_label_name(s) == name, without building the sanitized name.
bool sanitized_label_is(std::string_view s, std::string_view name);

// --- validate.go ----------------------------------------------------------------------------

// netip.ParsePrefix's error text, or "" when `s` is a valid prefix.
std::string parse_prefix_error(std::string_view s);
// resource.ParseQuantity's error text, or "" when `s` is a valid quantity.
std::string parse_quantity_error(std::string_view s);
// The check upstream runs for annotation `name`: ok when the annotation is valid or not
// checked, else an invalid-input error whose message is the reason (`includeIPRanges invalid:
// failed parsing cidr ...`).
api::Status check_annotation(std::string_view name, std::string_view value);

// --- pod access -----------------------------------------------------------------------------

// metadata.annotations, or nullptr when absent / not an object.
const rapidjson::Value* annotations_of(const rapidjson::Value& pod);
// metadata.annotations, created (with metadata) when absent.
rapidjson::Value& ensure_annotations(rapidjson::Value& pod,
                                     rapidjson::Document::AllocatorType& allocator);
// The string value of annotation `name`, or nullopt.
std::optional<std::string_view> annotation(const rapidjson::Value& pod, std::string_view name);
// Sets annotation `name` (replacing an existing value in place).
void set_annotation(rapidjson::Value& pod, std::string_view name, std::string_view value,
                    rapidjson::Document::AllocatorType& allocator);
// FindSidecar: the first container named istio-proxy in spec.containers, else in
// spec.initContainers; nullptr when there is none.
rapidjson::Value* find_sidecar(rapidjson::Value& pod);
// The container's env array, created when absent.
rapidjson::Value& ensure_env(rapidjson::Value& container,
                             rapidjson::Document::AllocatorType& allocator);

// --- app_probe.go ---------------------------------------------------------------------------

bool should_rewrite_app_http_probers(const rapidjson::Value& pod, bool spec_setting);
// DumpAppProbers: the ISTIO_KUBE_APP_PROBERS JSON ("" when the pod has no probe to take over).
// An error names the field of the pod that does not have Kubernetes' type.
api::Result<std::string> dump_app_probers(const rapidjson::Value& pod, std::int64_t target_port);
// mergeOrAppendProbers on the env array of the sidecar.
void merge_or_append_probers(bool previously_injected, rapidjson::Value& env,
                             std::string_view new_probers,
                             rapidjson::Document::AllocatorType& allocator,
                             std::vector<std::string>* warnings);
// patchRewriteProbe: probes and lifecycle handlers of every container but istio-proxy point at
// the agent's status port (the status port annotation, else `default_port`).
void patch_rewrite_probe(rapidjson::Value& pod, std::int64_t default_port,
                         rapidjson::Document::AllocatorType& allocator,
                         std::vector<std::string>* warnings);

// --- Prometheus (webhook.go, pilot-agent status) ---------------------------------------------

struct ScrapeTarget {
  std::string port, path;
};
struct ScrapeConfiguration {
  std::string scrape, path, port;
  std::vector<ScrapeTarget> targets;
  bool empty() const { return scrape.empty() && path.empty() && port.empty() && targets.empty(); }
};
// status.ParseScrapeTargets.
api::Result<std::vector<ScrapeTarget>> parse_scrape_targets(std::string_view raw);
// getPrometheusScrapeConfiguration over the pod's annotations.
ScrapeConfiguration scrape_configuration(const rapidjson::Value& pod,
                                         std::vector<std::string>* warnings);
// json.Marshal of status.PrometheusScrapeConfiguration.
std::string scrape_configuration_json(const ScrapeConfiguration& config);

}  // namespace meshop::inject::postprocess
