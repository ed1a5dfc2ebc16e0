// Prometheus metrics merging (upstream webhook.go applyPrometheusMerge,
// applySecurePrometheusAnnotation, stripPod's Prometheus part; pilot-agent's
// PrometheusScrapeConfiguration and ParseScrapeTargets).
//
// With merging on, the agent serves the application's metrics together with Envoy's on its
// status port: the pod's own prometheus.io annotations move into ISTIO_PROMETHEUS_ANNOTATIONS
// on istio-proxy and the annotations then point Prometheus at the agent. Prometheus treats
// `prometheus.io/scrape`, `prometheus.io.scrape` and `prometheus-io/scrape` alike (it sanitizes
// annotation names into label names), so every spelling counts.
#include <map>
#include <string>
#include <string_view>

#include "api/json.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"
#include "operator/template/functions.hpp"

namespace meshop::inject {
namespace postprocess {
namespace {

constexpr std::string_view kScrape = "prometheus_io_scrape";
constexpr std::string_view kPort = "prometheus_io_port";
constexpr std::string_view kPath = "prometheus_io_path";
constexpr std::string_view kScrapeTargets = "prometheus_istio_io_scrape_targets";
constexpr std::string_view kSecurePort = "prometheus_istio_io_secure_port";

// The pod's string annotations in sorted key order (see the header on Go's map order).
// Whether `key` may sanitize to one of the prometheus_* names above: sanitizing keeps ASCII
// letters and maps every other rune to one '_', so such a key starts with 'p' and has at least
// as many bytes as the shortest name (an injected pod carries a dozen other annotations).
bool may_be_prometheus_key(std::string_view key) {
  return key.size() >= kPort.size() && key[0] == 'p';
}

// The annotations whose keys may_be_prometheus_key, sorted by key (Go ranges over a map; the
// first match in key order wins).
std::map<std::string_view, std::string_view> sorted_annotations(const rapidjson::Value& pod) {
  std::map<std::string_view, std::string_view> out;
  if (const rapidjson::Value* annotations = annotations_of(pod)) {
    for (const auto& m : annotations->GetObject()) {
      std::string_view key = api::string_view_of(m.name);
      if (m.value.IsString() && may_be_prometheus_key(key)) out[key] = api::string_view_of(m.value);
    }
  }
  return out;
}

void warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

// getPrometheusScrape: the first spelling that parses as a bool decides; default true.
bool prometheus_scrape(const rapidjson::Value& pod) {
  for (const auto& [key, value] : sorted_annotations(pod)) {
    if (!sanitized_label_is(key, kScrape)) continue;
    if (auto b = go_parse_bool(value)) return *b;
  }
  return true;
}

std::optional<std::string> prometheus_port(const rapidjson::Value& pod) {
  for (const auto& [key, value] : sorted_annotations(pod)) {
    if (sanitized_label_is(key, kPort)) return std::string(value);
  }
  return std::nullopt;
}

// enablePrometheusMerge: the annotation, when it is a bool, beats the mesh setting.
bool enable_prometheus_merge(const MeshConfig& mesh, const rapidjson::Value& pod,
                             std::vector<std::string>* warnings) {
  if (auto value = annotation(pod, kMergeMetricsAnnotation)) {
    if (auto b = go_parse_bool(*value)) return *b;
    warn(warnings, "invalid annotation " + std::string(kMergeMetricsAnnotation) + "=" +
                       std::string(*value) + ", using the mesh setting");
  }
  return mesh.enable_prometheus_merge();
}

void clear_prometheus_annotations(rapidjson::Value& pod) {
  if (!pod.IsObject()) return;
  rapidjson::Value* metadata = api::find_member(pod, "metadata");
  if (metadata == nullptr || !metadata->IsObject()) return;
  rapidjson::Value* annotations = api::find_member(*metadata, "annotations");
  if (annotations == nullptr || !annotations->IsObject()) return;
  for (auto it = annotations->MemberBegin(); it != annotations->MemberEnd();) {
    if (!may_be_prometheus_key(api::string_view_of(it->name))) {
      ++it;
      continue;
    }
    std::string key = sanitize_label_name(api::string_view_of(it->name));
    if (key == kScrape || key == kPort || key == kPath || key == kScrapeTargets) {
      it = annotations->EraseMember(it);  // keeps the order of the others
    } else {
      ++it;
    }
  }
}

// The checks upstream runs on a port the agent is asked to scrape; "" when it may be scraped.
std::string scrape_port_error(std::string_view port, std::string_view target_port,
                              std::string_view what, std::string_view kind) {
  static const std::map<std::string, std::string, std::less<>> kReserved = {
      {"15000", "Envoy admin"},
      {"15001", "outbound traffic capture"},
      {"15004", "pilot debug"},
      {"15006", "inbound traffic capture"},
      {"15008", "HBONE tunnel"},
      {"15020", "pilot-agent status / merged Prometheus"},
      {"15021", "Envoy health"},
      {"15053", "DNS proxy"},
      {"15090", "Envoy Prometheus (already merged)"},
  };
  GoAtoi n = go_atoi(port);
  const std::string prefix = "invalid prometheus " + std::string(what) + ": ";
  if (!n.ok || n.value < 1 || n.value > 65535) {
    return prefix + "invalid " + std::string(kind) + template_engine::go_quote(port);
  }
  std::string canonical = std::to_string(n.value);
  std::string label = std::string(kind) + std::string(port);
  if (canonical == target_port) return prefix + label + " conflicts with agent port";
  if (auto r = kReserved.find(canonical); r != kReserved.end()) {
    return prefix + label + " is reserved for Istio (" + r->second + ") and cannot be scraped";
  }
  return {};
}

}  // namespace

api::Result<std::vector<ScrapeTarget>> parse_scrape_targets(std::string_view raw) {
  std::vector<ScrapeTarget> targets;
  std::size_t start = 0;
  while (start <= raw.size()) {
    std::size_t comma = raw.find(',', start);
    if (comma == std::string_view::npos) comma = raw.size();
    std::string_view entry = go_trim_space(raw.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) continue;
    std::size_t colon = entry.find(':');
    std::string_view port = go_trim_space(entry.substr(0, colon));
    if (port.empty()) {
      return api::Error{"empty port in scrape target " + template_engine::go_quote(entry)};
    }
    std::string path = "/metrics";
    if (colon != std::string_view::npos) {
      std::string_view p = go_trim_space(entry.substr(colon + 1));
      if (!p.empty()) path = std::string(p);
    }
    targets.push_back({std::string(port), std::move(path)});
  }
  return targets;
}

ScrapeConfiguration scrape_configuration(const rapidjson::Value& pod,
                                         std::vector<std::string>* warnings) {
  ScrapeConfiguration config;
  for (const auto& [key, value] : sorted_annotations(pod)) {
    std::string name = sanitize_label_name(key);
    if (name == kPort) {
      config.port = value;
    } else if (name == kScrape) {
      config.scrape = value;
    } else if (name == kPath) {
      config.path = value;
    } else if (name == kScrapeTargets) {
      auto targets = parse_scrape_targets(value);
      if (targets.ok()) {
        config.targets = std::move(*targets);
      } else {
        warn(warnings, "failed to parse " + std::string(key) + " annotation: " + targets.message() +
                           "; ignoring it");
      }
    }
  }
  return config;
}

std::string scrape_configuration_json(const ScrapeConfiguration& config) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("scrape", api::make_string(config.scrape, a), a);
  d.AddMember("path", api::make_string(config.path, a), a);
  d.AddMember("port", api::make_string(config.port, a), a);
  if (!config.targets.empty()) {
    rapidjson::Value targets(rapidjson::kArrayType);
    for (const auto& t : config.targets) {
      rapidjson::Value o(rapidjson::kObjectType);
      o.AddMember("port", api::make_string(t.port, a), a);
      o.AddMember("path", api::make_string(t.path, a), a);
      targets.PushBack(o, a);
    }
    d.AddMember("targets", targets, a);
  }
  return api::to_json(d);
}

}  // namespace postprocess

namespace {

api::Status merge_prometheus(rapidjson::Document& pod, const MeshConfig& mesh, int status_port,
                             std::vector<std::string>* warnings) {
  using namespace postprocess;
  if (!prometheus_scrape(pod) || !enable_prometheus_merge(mesh, pod, warnings)) {
    return api::ok_status();
  }
  const std::string target_port = std::to_string(status_port);
  // Already pointing at the agent: the user controls this, or the pod is re-injected.
  if (auto current = prometheus_port(pod); current && *current == target_port) {
    return api::ok_status();
  }
  ScrapeConfiguration scrape = scrape_configuration(pod, warnings);
  if (!scrape.targets.empty()) {
    // Agents that predate scrape targets still scrape the legacy port and path.
    scrape.port = scrape.targets[0].port;
    scrape.path = scrape.targets[0].path;
    for (const auto& t : scrape.targets) {
      auto e = scrape_port_error(t.port, target_port, "scrape targets", "target port ");
      if (!e.empty()) return api::Error{std::move(e)};
    }
  } else if (!scrape.port.empty()) {
    auto e = scrape_port_error(scrape.port, target_port, "scrape configuration", "port ");
    if (!e.empty()) return api::Error{std::move(e)};
  }
  auto& allocator = pod.GetAllocator();
  if (rapidjson::Value* sidecar = find_sidecar(pod); sidecar != nullptr && !scrape.empty()) {
    rapidjson::Value var(rapidjson::kObjectType);
    var.AddMember("name", api::make_string(kPrometheusAnnotationsEnv, allocator), allocator);
    var.AddMember("value", api::make_string(scrape_configuration_json(scrape), allocator),
                  allocator);
    ensure_env(*sidecar, allocator).PushBack(var, allocator);
  }
  // Every spelling goes, or Prometheus would pick one of ours and one of theirs at random.
  clear_prometheus_annotations(pod);
  set_annotation(pod, "prometheus.io/port", target_port, allocator);
  set_annotation(pod, "prometheus.io/path", "/stats/prometheus", allocator);
  set_annotation(pod, "prometheus.io/scrape", "true", allocator);
  return api::ok_status();
}

// applySecurePrometheusAnnotation: a proxy that serves merged metrics over TLS advertises the
// port, unless the user already set the annotation.
void annotate_secure_port(rapidjson::Document& pod) {
  using namespace postprocess;
  for (const auto& [key, value] : sorted_annotations(pod)) {
    if (sanitized_label_is(key, kSecurePort)) return;
  }
  rapidjson::Value* sidecar = find_sidecar(pod);
  if (sidecar == nullptr) return;
  const rapidjson::Value* env = api::find_member(*sidecar, "env");
  if (env == nullptr || !env->IsArray()) return;
  // Views of the env's strings (no copy per variable): an injected proxy has dozens.
  auto string_member = [](const rapidjson::Value& var, std::string_view name) {
    const rapidjson::Value* v = api::find_member(var, name);
    return v != nullptr && v->IsString() ? api::string_view_of(*v) : std::string_view();
  };
  for (const auto& var : env->GetArray()) {
    if (string_member(var, "name") != "ENVOY_SECURE_MERGED_METRICS_PORT") continue;
    std::string value(string_member(var, "value"));
    if (!value.empty() && value != "0") {
      set_annotation(pod, "prometheus.istio.io/secure-port", value, pod.GetAllocator());
      return;
    }
  }
}

}  // namespace

api::Status apply_prometheus_merge(rapidjson::Document& pod, const MeshConfig& mesh,
                                   int status_port, std::vector<std::string>* warnings) {
  if (auto st = merge_prometheus(pod, mesh, status_port, warnings); !st.ok()) return st;
  annotate_secure_port(pod);
  return api::ok_status();
}

void strip_merged_prometheus_annotations(rapidjson::Value& pod, int status_port) {
  auto current = postprocess::prometheus_port(pod);
  if (current && *current == std::to_string(status_port)) {
    postprocess::clear_prometheus_annotations(pod);
  }
}

}  // namespace meshop::inject
