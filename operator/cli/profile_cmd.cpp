// `meshop profile list|dump|diff`: the installation profiles of an Istio chart set: a bundled
// version's (--version V, default the newest; `meshop version` lists them) or an Istio
// release's manifests/ directory (--manifests DIR), merged with istioctl's pipeline
// (operator/manifest/istioctl_pipeline.hpp: default.yaml < PROFILE.yaml < -f files < --set).
//   list                       the profile names
//   dump [PROFILE] [-f ...] [--set ...] [--config-path components.pilot] [-o yaml|json|flags]
//                              the IstioOperator a profile plus overlays merges to (before
//                              rendering), or the subtree of spec at --config-path
//   diff A B                   the line difference between two profiles' dumps
// An unknown profile or a --config-path that names nothing exits 1 with a message naming it.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/manifest_inputs.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/manifest/tree_path.hpp"

namespace meshop::cli {
namespace {

// Which chart set: --version V (bundled) or --manifests DIR; neither is the default version.
struct ChartSetOptions {
  std::string version;
  std::string manifests;
};

void add_chart_set_flags(CLI::App& cmd, ChartSetOptions& opts) {
  cmd.add_option("--version", opts.version,
                 "The bundled Istio version whose profiles to use (see `meshop version`)");
  cmd.add_option("-d,--manifests", opts.manifests,
                 "An Istio release's manifests/ directory (charts/ and profiles/) to use");
}

struct DumpOptions {
  ChartSetOptions set;
  ManifestInputOptions inputs;
  std::string profile;
  std::string config_path;
  std::string output = "yaml";
};

struct DiffOptions {
  ChartSetOptions set;
  std::string a;
  std::string b;
};

// The parts of the merged IstioOperator a dump shows: apiVersion, kind and spec (without the
// pipeline's own name for a bundled chart set).
api::Document dump_view(const api::Value& iop) {
  api::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  for (const char* key : {"apiVersion", "kind", "spec"})
    if (const api::Value* v = api::find_member(iop, key))
      out.AddMember(rapidjson::StringRef(key), api::Value(*v, a), a);
  if (api::Value* spec = out.HasMember("spec") ? &out["spec"] : nullptr; spec && spec->IsObject())
    if (std::string p = api::string_at(*spec, {"installPackagePath"});
        p.starts_with(manifest::istioctl::kBundledPrefix))
      spec->RemoveMember("installPackagePath");
  return out;
}

// path=value lines, one per leaf (values as JSON), sorted: istioctl's `-o flags`.
void flatten(const api::Value& v, const std::string& path, std::vector<std::string>& lines) {
  if (v.IsObject() && v.MemberCount() > 0) {
    for (const auto& m : v.GetObject()) {
      std::string key(api::string_view_of(m.name));
      std::string escaped;
      for (char c : key) {
        if (c == '.') escaped += '\\';
        escaped += c;
      }
      flatten(m.value, path.empty() ? escaped : path + "." + escaped, lines);
    }
    return;
  }
  if (v.IsArray() && v.Size() > 0) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
      flatten(v[i], path + "[" + std::to_string(i) + "]", lines);
    return;
  }
  lines.push_back(path + "=" + api::to_json(v));
}

manifest::istioctl::PipelineInputs pipeline_inputs(const ChartSetOptions& set,
                                                   manifest::istioctl::PipelineInputs inputs) {
  inputs.version = set.version;
  inputs.manifests = set.manifests;
  return inputs;
}

api::Result<std::string> dump_text(const manifest::istioctl::PipelineInputs& inputs,
                                   const std::string& config_path, const std::string& output) {
  if (!inputs.version.empty() && !inputs.manifests.empty())
    return api::Error{"--manifests and --version both name a chart set; give one"};
  auto merged = manifest::istioctl::merge_inputs(inputs);
  if (!merged.ok()) return merged.error();
  auto doc = manifest::istioctl::go_to_document(*merged);
  if (!doc.ok()) return doc.error();
  api::Document view = dump_view(*doc);
  const api::Value* subtree = &view;
  if (!config_path.empty()) {
    subtree = manifest::get_path(view, "spec." + config_path);
    if (subtree == nullptr)
      return api::Error{"--config-path " + config_path + ": no such path in the merged spec"};
  }
  if (output == "json") return api::to_pretty_json(*subtree) + "\n";
  if (output == "flags") {
    std::vector<std::string> lines;
    flatten(*subtree, "", lines);
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const std::string& l : lines)
      out += l + "\n";
    return out;
  }
  return api::json_to_yaml(*subtree);
}

int list(const ChartSetOptions& opts, Context& ctx) {
  std::vector<std::string> names;
  if (!opts.manifests.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = fs::path(opts.manifests) / "profiles";
    if (!fs::is_directory(dir, ec)) {
      ctx.err << "Error: --manifests " << opts.manifests
              << ": not a chart set (no profiles/ directory)\n";
      return kExitError;
    }
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      if (n.ends_with(".yaml")) names.push_back(n.substr(0, n.size() - 5));
    }
    std::sort(names.begin(), names.end());
  } else {
    const manifest::ChartSet* set = opts.version.empty() ? &manifest::default_chart_set()
                                                         : manifest::find_chart_set(opts.version);
    if (set == nullptr) {
      std::string known;
      for (const manifest::ChartSet& c : manifest::chart_sets())
        known += (known.empty() ? "" : ", ") + c.version;
      ctx.err << "Error: --version: unknown Istio version \"" << opts.version
              << "\" (bundled: " << known << ")\n";
      return kExitError;
    }
    names = set->profiles();
  }
  ctx.out << "Istio configuration profiles:\n";
  for (const std::string& name : names)
    ctx.out << "    " << name << '\n';
  return kExitOk;
}

int dump(const DumpOptions& opts, Context& ctx) {
  manifest::istioctl::PipelineInputs read;
  if (!read_manifest_inputs(opts.inputs, read, ctx.err)) return kExitError;
  if (!opts.profile.empty())
    read.set_flags.insert(read.set_flags.begin(), "profile=" + opts.profile);
  auto text = dump_text(pipeline_inputs(opts.set, std::move(read)), opts.config_path, opts.output);
  if (!text.ok()) {
    ctx.err << "Error: " << text.message() << '\n';
    return kExitError;
  }
  ctx.out << *text;
  return kExitOk;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// A line diff (longest common subsequence): " " common, "-" only in a, "+" only in b.
std::string line_diff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += " " + a[i++] + "\n";
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "-" + a[i++] + "\n";
    } else {
      out += "+" + b[j++] + "\n";
    }
  }
  return out;
}

int diff(const DiffOptions& opts, Context& ctx) {
  std::string texts[2];
  const std::string* names[2] = {&opts.a, &opts.b};
  for (int k = 0; k < 2; ++k) {
    manifest::istioctl::PipelineInputs read;
    read.set_flags.push_back("profile=" + *names[k]);
    auto text = dump_text(pipeline_inputs(opts.set, std::move(read)), "", "yaml");
    if (!text.ok()) {
      ctx.err << "Error: " << text.message() << '\n';
      return kExitError;
    }
    texts[k] = *text;
  }
  if (texts[0] == texts[1]) {
    ctx.out << "Profiles " << opts.a << " and " << opts.b << " are identical\n";
    return kExitOk;
  }
  ctx.out << "--- " << opts.a << "\n+++ " << opts.b << "\n"
          << line_diff(lines_of(texts[0]), lines_of(texts[1]));
  return kExitOk;
}

}  // namespace

void add_profile_command(CLI::App& root, Context& ctx) {
  auto* group = root.add_subcommand("profile", "Commands under 'profile'");
  group->require_subcommand(1);

  auto* list_cmd = group->add_subcommand("list", "List the installation profiles");
  auto lopts = std::make_shared<ChartSetOptions>();
  add_chart_set_flags(*list_cmd, *lopts);
  list_cmd->callback([&ctx, lopts] { ctx.action = [&ctx, lopts] { return list(*lopts, ctx); }; });

  auto* dump_cmd = group->add_subcommand(
      "dump",
      "Print the IstioOperator a profile merges to, with -f files and --set flags applied\n"
      "(PROFILE is the same as --set profile=PROFILE). --config-path prints a subtree of spec.");
  auto dopts = std::make_shared<DumpOptions>();
  dump_cmd->add_option("profile", dopts->profile,
                       "Profile name (default: spec.profile or default)");
  add_manifest_input_flags(*dump_cmd, dopts->inputs);
  add_chart_set_flags(*dump_cmd, dopts->set);
  dump_cmd->add_option("-p,--config-path", dopts->config_path,
                       "Print only this path of spec (e.g. components.pilot)");
  dump_cmd->add_option("-o,--output", dopts->output, "Output format: yaml, json or flags")
      ->check(CLI::IsMember({"yaml", "json", "flags"}))
      ->capture_default_str();
  dump_cmd->callback([&ctx, dopts] { ctx.action = [&ctx, dopts] { return dump(*dopts, ctx); }; });

  auto* diff_cmd =
      group->add_subcommand("diff", "Show the line difference between two profiles' dumps");
  auto fopts = std::make_shared<DiffOptions>();
  diff_cmd->add_option("profile-a", fopts->a, "First profile")->required();
  diff_cmd->add_option("profile-b", fopts->b, "Second profile")->required();
  add_chart_set_flags(*diff_cmd, fopts->set);
  diff_cmd->callback([&ctx, fopts] { ctx.action = [&ctx, fopts] { return diff(*fopts, ctx); }; });
}

}  // namespace meshop::cli
