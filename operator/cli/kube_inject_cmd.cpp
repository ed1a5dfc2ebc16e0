// `meshop kube-inject -f FILE|DIR|- [-o FILE] [--injectConfigFile F] [--meshConfigFile F]
//  [--valuesFile F] [--kubeconfig K] [--injectConfigMapName N] [--meshConfigMapName N]
//  [--revision R] [-i istio-system] [--version V]`: adds the sidecar to the pod templates of
//  Kubernetes
// manifests, like `istioctl kube-inject`, with meshop's injection engine.
//
// Where the injector configuration comes from, per input (config, values, mesh):
//   1. the file flag, if given (the texts the seeds export with `kubectl get configmap ...
//      -o=jsonpath='{.data.config}'`; a whole ConfigMap YAML is accepted too);
//   2. else, in cluster mode, the ConfigMap istio-sidecar-injector[-<rev>] (`config`,
//      `values`) or istio[-<rev>] (`mesh`) in the istio namespace. Cluster mode is on when
//      --kubeconfig, --context, --revision, --injectConfigMapName or --meshConfigMapName is
//      given;
//   3. else, offline, what an install of the bundled chart set (--version, default the newest)
//      puts into the cluster: the default profile's ConfigMaps as `meshop manifest generate`
//      renders them (manifest/injector_defaults.hpp), Istio's own templates and values.
// Native sidecars: --native-sidecars (or $ENABLE_NATIVE_SIDECARS) true|false; `auto` asks the
// cluster's node versions in cluster mode and is off offline, as istioctl without a cluster.
//
// Output goes to stdout, or to -o FILE written atomically (temporary file + rename), and only
// when every document was processed: a YAML error (document, line and column), a workload
// the engine cannot inject (Kind "ns/name" and the reason) or a configuration error exits 1
// with nothing written. Skipped workloads (hostNetwork, inject "false") are warnings on stderr.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/workloads.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/config.hpp"
#include "operator/kube/resource.hpp"
#include "operator/manifest/injector_defaults.hpp"

namespace meshop::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDefaultInjectConfigMap = api::kInjectorConfigMap;
constexpr std::string_view kDefaultMeshConfigMap = api::kMeshConfigMap;

struct KubeInjectOptions {
  std::string filename;
  std::string output;
  std::string inject_config_file;
  std::string mesh_config_file;
  std::string values_file;
  std::string inject_config_map_name = std::string(kDefaultInjectConfigMap);
  std::string mesh_config_map_name = std::string(kDefaultMeshConfigMap);
  std::string revision;
  std::string kubeconfig;
  std::string context;
  std::string istio_namespace = "istio-system";
  std::string native_sidecars;  // "" = not given
  std::string version;          // offline defaults' chart set ("" = the default)
  bool cluster = false;         // set from which flags were given
};

api::Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return api::make_error(api::ErrorKind::kNotFound,
                           "cannot read " + path + ": no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A ConfigMap YAML given where a key's text is expected: the key's value.
std::optional<std::string> configmap_key(std::string_view text, std::string_view key) {
  auto doc = api::yaml_to_json(text);
  if (!doc.ok() || !doc->IsObject() || api::string_at(*doc, {"kind"}) != "ConfigMap")
    return std::nullopt;
  const api::Value* data = api::find_member(*doc, "data");
  const api::Value* value =
      data != nullptr && data->IsObject() ? api::find_member(*data, key) : nullptr;
  if (value == nullptr || !value->IsString()) return std::nullopt;
  return std::string(api::string_view_of(*value));
}

// --injectConfigFile holds an injector config (with `templates`) or, as istioctl also
// accepts, the text of one template, which becomes the `sidecar` template.
std::string inject_config_from_file(const std::string& text) {
  auto doc = api::yaml_to_json(text);
  if (doc.ok() && doc->IsObject()) {
    const api::Value* templates = api::find_member(*doc, "templates");
    if (templates != nullptr && templates->IsObject() && templates->MemberCount() > 0) return text;
  }
  api::Document config(rapidjson::kObjectType);
  auto& a = config.GetAllocator();
  config.AddMember("policy", "enabled", a);
  api::Value defaults(rapidjson::kArrayType);
  defaults.PushBack("sidecar", a);
  config.AddMember("defaultTemplates", defaults, a);
  api::Value templates(rapidjson::kObjectType);
  templates.AddMember("sidecar", api::make_string(text, a), a);
  config.AddMember("templates", templates, a);
  return api::json_to_yaml(config);
}

struct ClusterInputs {
  std::optional<std::string> config, values, mesh;
  std::vector<std::string> kubelet_versions;
  api::Status status = api::ok_status();
};

std::string revisioned(const std::string& name, std::string_view default_name,
                       const std::string& revision) {
  if (name == default_name && !revision.empty() && revision != "default")
    return name + "-" + revision;
  return name;
}

// `key` of ConfigMap `name` in the istio namespace; an error when the ConfigMap (the API
// error, with its kind) or the key (kNotFound) is missing.
kube::Task<api::Result<std::string>> read_configmap_key(kube::Client& client, const std::string& ns,
                                                        const std::string& name,
                                                        std::string_view key) {
  auto cm = co_await client.get(kube::resources::kConfigMaps, ns, name);
  if (!cm.ok()) {
    api::Error e = std::move(cm).error();
    e.message += " (use the file flags, or -i <istio namespace>)";
    co_return e;
  }
  const api::Value* data = api::find_member(*cm, "data");
  const api::Value* value =
      data != nullptr && data->IsObject() ? api::find_member(*data, key) : nullptr;
  if (value == nullptr || !value->IsString())
    co_return api::make_error(api::ErrorKind::kNotFound, "missing configuration map key \"" +
                                                             std::string(key) + "\" in ConfigMap " +
                                                             ns + "/" + name);
  co_return std::string(api::string_view_of(*value));
}

kube::Task<void> fetch_cluster_inputs(std::shared_ptr<kube::Client> client,
                                      const KubeInjectOptions& opts, bool need_config,
                                      bool need_values, bool need_mesh, bool need_nodes,
                                      ClusterInputs& out) {
  const std::string& ns = opts.istio_namespace;
  std::string inject_cm =
      revisioned(opts.inject_config_map_name, kDefaultInjectConfigMap, opts.revision);
  std::string mesh_cm = revisioned(opts.mesh_config_map_name, kDefaultMeshConfigMap, opts.revision);
  struct Wanted {
    bool needed;
    const std::string& configmap;
    std::string_view key;
    std::optional<std::string>& dest;
  };
  const std::array<Wanted, 3> wanted{{{need_config, inject_cm, "config", out.config},
                                      {need_values, inject_cm, "values", out.values},
                                      {need_mesh, mesh_cm, "mesh", out.mesh}}};
  for (const Wanted& w : wanted) {
    if (!w.needed) continue;
    auto text = co_await read_configmap_key(*client, ns, w.configmap, w.key);
    if (!text.ok()) {
      out.status = std::move(text).error();
      co_return;
    }
    w.dest = std::move(*text);
  }
  if (need_nodes) {
    // Native sidecars need every node's kubelet to support them; without permission to list
    // nodes the engine sees no versions and leaves them off.
    auto nodes = co_await client->list_all(kube::resources::kNodes, "");
    if (nodes.ok()) {
      const api::Value* items = api::find_member(nodes->list, "items");
      if (items != nullptr && items->IsArray())
        for (const api::Value& node : items->GetArray())
          out.kubelet_versions.push_back(
              api::string_at(node, {"status", "nodeInfo", "kubeletVersion"}));
    }
  }
}

bool read_cluster(const KubeInjectOptions& opts, bool need_config, bool need_values, bool need_mesh,
                  bool need_nodes, ClusterInputs& out, std::ostream& err) {
  boost::asio::io_context ioc;
  auto client = connect(ioc.get_executor(), opts.kubeconfig, opts.context, err);
  if (!client) return false;
  std::exception_ptr failure;
  boost::asio::co_spawn(
      ioc, fetch_cluster_inputs(client, opts, need_config, need_values, need_mesh, need_nodes, out),
      [&failure](std::exception_ptr e) { failure = e; });
  ioc.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      err << "Error: reading the injector configuration from the cluster: " << e.what() << '\n';
    }
    return false;
  }
  if (!out.status.ok()) {
    err << "Error: " << out.status.message() << '\n';
    return false;
  }
  return true;
}

// The inputs named by -f: a file, "-" (stdin), or every *.yaml/*.yml/*.json under a directory
// (recursively, in path order).
api::Result<std::vector<std::string>> collect_inputs(const std::string& filename) {
  std::vector<std::string> files;
  if (filename == "-") {
    files.push_back(filename);
    return files;
  }
  std::error_code ec;
  if (fs::is_directory(filename, ec)) {
    for (auto it = fs::recursive_directory_iterator(filename, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string ext = it->path().extension().string();
      if (ext == ".yaml" || ext == ".yml" || ext == ".json") files.push_back(it->path().string());
    }
    if (ec) return api::Error{"cannot read directory " + filename + ": " + ec.message()};
    std::sort(files.begin(), files.end());
    return files;
  }
  if (!fs::exists(filename, ec))
    return api::make_error(api::ErrorKind::kNotFound,
                           "cannot read " + filename + ": no such file or directory");
  files.push_back(filename);
  return files;
}

// Writes `text` to `path` through a temporary file in the same directory, so that readers
// never see a partial file and a failure leaves any previous file as it was.
bool write_atomically(const std::string& path, const std::string& text, std::ostream& err) {
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      err << "Error: cannot write " << tmp.string() << '\n';
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    err << "Error: cannot write " << path << ": " << ec.message() << '\n';
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::optional<inject::NativeSidecars> parse_native(std::string_view v) {
  if (v == "true" || v == "enabled") return inject::NativeSidecars::kEnabled;
  if (v == "false" || v == "disabled") return inject::NativeSidecars::kDisabled;
  if (v == "auto") return inject::NativeSidecars::kAuto;
  return std::nullopt;
}

int run_kube_inject(const KubeInjectOptions& opts, Context& ctx) {
  // Native sidecar mode: flag, else environment, else auto.
  std::string native_text = opts.native_sidecars;
  if (native_text.empty()) {
    const char* env = std::getenv("ENABLE_NATIVE_SIDECARS");
    native_text = env != nullptr && *env != '\0' ? env : "auto";
  }
  auto native = parse_native(native_text);
  if (!native) {
    ctx.err << "Error: --native-sidecars: expected true, false or auto, got \"" << native_text
            << "\"\n";
    return kExitUsage;
  }

  inject::SnapshotSources sources;
  sources.revision = opts.revision == "default" ? "" : opts.revision;
  std::optional<std::string> values_from_config_file;
  bool have_config = false, have_values = false, have_mesh = false;

  if (!opts.inject_config_file.empty()) {
    auto text = read_file(opts.inject_config_file);
    if (!text.ok()) {
      ctx.err << "Error: " << text.message() << '\n';
      return kExitError;
    }
    if (auto config = configmap_key(*text, "config")) {
      sources.config = inject_config_from_file(*config);
      values_from_config_file = configmap_key(*text, "values");
    } else {
      sources.config = inject_config_from_file(*text);
    }
    have_config = true;
  }
  if (!opts.values_file.empty()) {
    auto text = read_file(opts.values_file);
    if (!text.ok()) {
      ctx.err << "Error: " << text.message() << '\n';
      return kExitError;
    }
    sources.values = configmap_key(*text, "values").value_or(*text);
    have_values = true;
  } else if (values_from_config_file) {
    sources.values = *values_from_config_file;
    have_values = true;
  }
  if (!opts.mesh_config_file.empty()) {
    auto text = read_file(opts.mesh_config_file);
    if (!text.ok()) {
      ctx.err << "Error: " << text.message() << '\n';
      return kExitError;
    }
    sources.mesh = configmap_key(*text, "mesh").value_or(*text);
    have_mesh = true;
  }

  bool auto_native = *native == inject::NativeSidecars::kAuto;
  if (opts.cluster) {
    ClusterInputs in;
    bool need_values = opts.values_file.empty() && !values_from_config_file;
    if (!read_cluster(opts, opts.inject_config_file.empty(), need_values,
                      opts.mesh_config_file.empty(), auto_native, in, ctx.err))
      return kExitError;
    if (in.config) sources.config = *in.config;
    if (in.values) sources.values = *in.values;
    if (in.mesh) sources.mesh = *in.mesh;
    sources.native_sidecars = *native;
    sources.node_kubelet_versions = std::move(in.kubelet_versions);
  } else {
    // What the files do not give comes from the chart set's own ConfigMaps.
    if (!have_config || !have_values || !have_mesh) {
      auto defaults = manifest::chart_set_injector_sources(opts.version, "");
      if (!defaults.ok()) {
        ctx.err << "Error: --version: " << defaults.message() << '\n';
        return kExitError;
      }
      if (!have_config) sources.config = std::move(defaults->config);
      if (!have_values) sources.values = std::move(defaults->values);
      if (!have_mesh) sources.mesh = std::move(defaults->mesh);
    }
    // Offline there are no nodes to ask: auto means off, as istioctl without a cluster.
    sources.native_sidecars = auto_native ? inject::NativeSidecars::kDisabled : *native;
  }

  auto snapshot = inject::build_snapshot(sources);
  if (!snapshot.ok()) {
    ctx.err << "Error: injector configuration: " << snapshot.message() << '\n';
    return kExitError;
  }

  auto files = collect_inputs(opts.filename);
  if (!files.ok()) {
    ctx.err << "Error: " << files.message() << '\n';
    return kExitError;
  }
  std::string output;
  inject::KubeInjectReport report;
  for (const std::string& file : *files) {
    std::string text;
    if (file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      auto read = read_file(file);
      if (!read.ok()) {
        ctx.err << "Error: " << read.message() << '\n';
        return kExitError;
      }
      text = std::move(*read);
    }
    auto injected = inject::inject_stream(**snapshot, text, report);
    if (!injected.ok()) {
      ctx.err << "Error: " << (file == "-" ? "<stdin>" : file) << ": " << injected.message()
              << '\n';
      return kExitError;
    }
    output += *injected;
  }
  for (const std::string& warning : report.warnings)
    ctx.err << warning << '\n';

  if (opts.output.empty()) {
    ctx.out << output;
    return kExitOk;
  }
  return write_atomically(opts.output, output, ctx.err) ? kExitOk : kExitError;
}

}  // namespace

void add_kube_inject_command(CLI::App& root, Context& ctx) {
  auto* cmd = root.add_subcommand(
      "kube-inject",
      "Inject the sidecar into the pod templates of Kubernetes manifests (Pod, Deployment,\n"
      "ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController, List); other\n"
      "objects pass through unchanged. Configuration: the file flags, else the cluster's\n"
      "ConfigMaps when a kubeconfig/ConfigMap/revision flag is given, else meshop's built-in\n"
      "defaults. Example:\n"
      "  meshop kube-inject -f deploy.yaml | kubectl apply -f -");
  auto opts = std::make_shared<KubeInjectOptions>();
  cmd->add_option("-f,--filename", opts->filename,
                  "Input: a file, a directory (recursive, *.yaml *.yml *.json) or - for stdin")
      ->required();
  cmd->add_option("-o,--output", opts->output,
                  "Write the result to this file (atomically, only on success); default stdout");
  cmd->add_option("--injectConfigFile", opts->inject_config_file,
                  "Injector config file (the `config` key of istio-sidecar-injector, or one "
                  "template)");
  cmd->add_option("--meshConfigFile", opts->mesh_config_file,
                  "Mesh config file (the `mesh` key of ConfigMap istio)");
  cmd->add_option("--valuesFile", opts->values_file,
                  "Injector values file (the `values` key of istio-sidecar-injector)");
  auto* inject_cm = cmd->add_option("--injectConfigMapName", opts->inject_config_map_name,
                                    "ConfigMap with the injector config and values")
                        ->capture_default_str();
  auto* mesh_cm = cmd->add_option("--meshConfigMapName", opts->mesh_config_map_name,
                                  "ConfigMap with the mesh config")
                      ->capture_default_str();
  auto* revision =
      cmd->add_option("-r,--revision", opts->revision,
                      "Control-plane revision: reads istio-sidecar-injector-<rev> and istio-<rev>");
  auto* kubeconfig = cmd->add_option("--kubeconfig", opts->kubeconfig, "Kubeconfig file");
  auto* context = cmd->add_option("--context", opts->context, "Kubeconfig context");
  cmd->add_option("-i,--istioNamespace", opts->istio_namespace,
                  "Namespace of the injector ConfigMaps")
      ->capture_default_str();
  cmd->add_option("--native-sidecars", opts->native_sidecars,
                  "Inject istio-proxy as a native sidecar: true, false or auto (from the "
                  "cluster's nodes; off offline). Default $ENABLE_NATIVE_SIDECARS or auto");
  auto* version = cmd->add_option(
      "--version", opts->version,
      "Offline: the bundled Istio version whose default-profile ConfigMaps give what the files "
      "do not (default the newest; see `meshop version`)");
  cmd->callback([&ctx, opts, inject_cm, mesh_cm, revision, kubeconfig, context, version] {
    opts->cluster = inject_cm->count() > 0 || mesh_cm->count() > 0 || revision->count() > 0 ||
                    kubeconfig->count() > 0 || context->count() > 0;
    if (opts->cluster && version->count() > 0)
      throw CLI::ValidationError("--version",
                                 "chooses the offline defaults; the cluster's ConfigMaps are read "
                                 "with --kubeconfig, --context, --revision or a ConfigMap name");
    ctx.action = [&ctx, opts] { return run_kube_inject(*opts, ctx); };
  });
}

}  // namespace meshop::cli
