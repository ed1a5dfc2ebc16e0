#include "operator/webhook/configmap_source.hpp"

#include <boost/asio/post.hpp>

#include "api/mesh_conventions.hpp"
#include "operator/log/log.hpp"

namespace meshop::webhook {
namespace {

constexpr std::string_view kInjector = api::kInjectorConfigMap;
constexpr std::string_view kMesh = api::kMeshConfigMap;

std::string data_string(const rapidjson::Value& cm, const char* key) {
  if (!cm.IsObject()) return {};
  auto data = cm.FindMember("data");
  if (data == cm.MemberEnd() || !data->value.IsObject()) return {};
  auto it = data->value.FindMember(key);
  if (it == data->value.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

}  // namespace

std::optional<std::pair<ConfigMapRole, std::string>> classify_configmap(std::string_view name) {
  if (name == kInjector) return std::pair{ConfigMapRole::kInjector, std::string("default")};
  if (name.starts_with(kInjector) && name.size() > kInjector.size() + 1 &&
      name[kInjector.size()] == '-')
    return std::pair{ConfigMapRole::kInjector, std::string(name.substr(kInjector.size() + 1))};
  if (name == kMesh) return std::pair{ConfigMapRole::kMesh, std::string("default")};
  if (name.starts_with("istio-") && name.size() > kMesh.size() + 1)
    return std::pair{ConfigMapRole::kMesh, std::string(name.substr(kMesh.size() + 1))};
  return std::nullopt;
}

std::string injector_configmap_name(const std::string& revision) {
  return api::injector_configmap_name(revision);
}

std::string mesh_configmap_name(const std::string& revision) {
  return api::mesh_configmap_name(revision);
}

inject::SnapshotSources configmap_sources(const std::string& revision,
                                          const rapidjson::Value& injector,
                                          const rapidjson::Value* mesh,
                                          inject::SnapshotSources defaults) {
  inject::SnapshotSources sources = std::move(defaults);
  sources.revision = revision == "default" ? "" : revision;
  sources.config = data_string(injector, "config");
  sources.values = data_string(injector, "values");
  if (mesh != nullptr) sources.mesh = data_string(*mesh, "mesh");
  return sources;
}

ConfigMapSource::ConfigMapSource(boost::asio::any_io_executor executor, runtime::Store& configmaps,
                                 RevisionStore& revisions, const Engine& engine,
                                 WebhookMetrics* metrics, Reporter report,
                                 inject::SnapshotSources defaults)
    : executor_(std::move(executor)),
      configmaps_(configmaps),
      revisions_(revisions),
      engine_(engine),
      metrics_(metrics),
      report_(std::move(report)),
      defaults_(std::move(defaults)) {}

void ConfigMapSource::start() {
  auto on = [this](const runtime::Object& o) {
    if (auto c = classify_configmap(runtime::name_of(*o))) schedule(c->second);
  };
  configmaps_.add_handlers(
      {.on_add = on,
       .on_update = [on](const runtime::Object&, const runtime::Object& o) { on(o); },
       .on_delete = on});
}

void ConfigMapSource::schedule(const std::string& revision) {
  if (!pending_.insert(revision).second) return;
  boost::asio::post(executor_, [this, revision] {
    pending_.erase(revision);
    rebuild(revision);
  });
}

void ConfigMapSource::rebuild(const std::string& revision) {
  runtime::Object injector, mesh;
  for (const auto& o : configmaps_.list()) {
    auto name = runtime::name_of(*o);
    if (name == injector_configmap_name(revision)) injector = o;
    if (name == mesh_configmap_name(revision)) mesh = o;
  }
  std::string origin = "configmap:" + injector_configmap_name(revision);
  if (!injector) {
    if (revisions_.get(revision))
      log::warn("injector ConfigMap gone; keeping the last good configuration",
                {{"revision", revision}, {"object", injector_configmap_name(revision)}});
    return;
  }
  inject::SnapshotSources sources =
      configmap_sources(revision, *injector, mesh ? mesh.get() : nullptr, defaults_);
  std::string texts = sources.config + '\0' + sources.values + '\0' + sources.mesh;
  if (auto it = last_texts_.find(revision); it != last_texts_.end() && it->second == texts) return;
  last_texts_[revision] = texts;

  auto snapshot = engine_.build(sources);
  if (snapshot.ok()) {
    RevisionConfig config;
    config.revision = revision;
    config.snapshot = std::move(*snapshot);
    config.source = origin;
    revisions_.publish(std::move(config));
    if (metrics_) metrics_->config_reloads.with({revision, "configmap"}).Increment();
    log::info("injector configuration loaded", {{"revision", revision}, {"source", origin}});
    return;
  }
  const std::string& error = snapshot.message();
  revisions_.record_error(revision, error);
  if (metrics_) metrics_->config_errors.with({revision, "configmap"}).Increment();
  bool have_good = revisions_.get(revision) != nullptr;
  log::error(have_good ? "injector configuration rejected; keeping the last good one"
                       : "injector configuration rejected; no configuration to serve yet",
             {{"revision", revision}, {"source", origin}, {"error", error}});
  if (report_) {
    const auto& blame = (error.starts_with("mesh") && mesh) ? mesh : injector;
    report_(*blame, (have_good ? "rejected, keeping the last good configuration: "
                               : "rejected, no configuration to serve: ") +
                        error);
  }
}

}  // namespace meshop::webhook
