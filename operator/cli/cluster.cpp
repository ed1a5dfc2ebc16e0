#include "operator/cli/cluster.hpp"

#include <algorithm>
#include <cstdlib>

#include "api/json.hpp"
#include "operator/log/log.hpp"

namespace meshop::cli {

std::shared_ptr<kube::Client> connect(boost::asio::any_io_executor executor,
                                      const std::string& kubeconfig, const std::string& context,
                                      std::ostream& err) {
  kube::LoadOptions load;
  load.kubeconfig = kubeconfig;
  load.context = context;
  auto config = kube::load_default_config(load);
  if (!config.ok()) {
    err << "Error: kubeconfig: " << config.error().message << '\n';
    return nullptr;
  }
  auto client = kube::Client::create(std::move(executor), *config);
  if (!client.ok()) {
    err << "Error: " << client.error().message << '\n';
    return nullptr;
  }
  return *client;
}

std::optional<inject::NativeSidecars> parse_native_sidecars(std::string_view text) {
  if (text == "auto") return inject::NativeSidecars::kAuto;
  if (text == "true") return inject::NativeSidecars::kEnabled;
  if (text == "false") return inject::NativeSidecars::kDisabled;
  return std::nullopt;
}

std::optional<inject::NativeSidecars> native_sidecars_setting(const std::string& flag,
                                                              std::ostream& err) {
  std::string text = flag;
  if (text.empty()) {
    const char* env = std::getenv("ENABLE_NATIVE_SIDECARS");
    text = env != nullptr && *env != '\0' ? env : "auto";
  }
  auto native = parse_native_sidecars(text);
  if (!native)
    err << "Error: --native-sidecars: expected true, false or auto, got \"" << text << "\"\n";
  return native;
}

boost::asio::awaitable<void> detect_native_sidecars(std::shared_ptr<kube::Client> client,
                                                    inject::SnapshotSources* sources) {
  kube::ListOptions options;
  auto nodes = co_await client->list_all(kube::resources::kNodes, "", options);
  if (!nodes.ok()) {
    log::warn("cannot list nodes for native sidecar detection; injecting regular containers",
              {{"error", nodes.error().message}});
    sources->native_sidecars = inject::NativeSidecars::kDisabled;
    co_return;
  }
  auto items = nodes->list.FindMember("items");
  if (items == nodes->list.MemberEnd() || !items->value.IsArray()) co_return;
  for (const auto& n : items->value.GetArray()) {
    auto v = api::string_at(n, {"status", "nodeInfo", "kubeletVersion"});
    if (!v.empty()) sources->node_kubelet_versions.push_back(v);
  }
}

void write_table(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  if (rows.empty()) return;
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i + 1 < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(width[i] - row[i].size() + 3, ' ');
    }
    out << '\n';
  }
}

std::function<void(const rapidjson::Value&, const std::string&)> configmap_rejection_reporter(
    std::shared_ptr<kube::EventRecorder> events) {
  return [events = std::move(events)](const rapidjson::Value& cm, const std::string& message) {
    auto ref = kube::reference_to(cm);
    ref.api_version = "v1";  // list items carry no TypeMeta
    ref.kind = "ConfigMap";
    events->record(ref, kube::EventType::kWarning, "InjectorConfigRejected", "Reload", message);
  };
}

}  // namespace meshop::cli
