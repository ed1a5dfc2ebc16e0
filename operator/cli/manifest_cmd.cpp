// `meshop manifest generate [-f iop.yaml ...] [--set path=value ...] [--revision r]
// [--version V | --manifests DIR] [--force] [-o file]`: what `istioctl manifest generate`
// prints for the same inputs: Istio's own charts and profiles through istioctl's pipeline
// (operator/manifest/istioctl_pipeline.hpp), in istioctl's order and format. The chart set is
// a bundled Istio version (--version V or the IstioOperator's spec.version; default the
// newest, `meshop version` lists them, with that version's hub and tag) or an Istio release's
// manifests/ directory (--manifests DIR, istioctl's flag, or spec.installPackagePath). Works
// offline. Warnings go to stderr; an invalid input (unknown profile or version, bad --set
// path, invalid field, missing chart) prints the problem on stderr and exits 1 with nothing on
// stdout; --force turns validation errors into warnings, as istioctl's.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/manifest_inputs.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::cli {
namespace {

struct GenerateOptions {
  ManifestInputOptions inputs;
  std::string output;
  std::string manifests;
  std::string version;
  bool force = false;
};

// The chart set must look like a release's manifests/: charts/ and profiles/ directories.
bool check_chart_set(const std::string& dir, std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    err << "Error: --manifests " << dir << ": no such directory\n";
    return false;
  }
  for (const char* sub : {"charts", "profiles"})
    if (!fs::is_directory(fs::path(dir) / sub, ec)) {
      err << "Error: --manifests " << dir << ": not a chart set (no " << sub
          << "/ directory; expected an Istio release's manifests/)\n";
      return false;
    }
  return true;
}

int write_output(const std::string& text, const GenerateOptions& opts, Context& ctx);

int generate_istioctl(const GenerateOptions& opts, manifest::istioctl::PipelineInputs inputs,
                      Context& ctx) {
  if (!opts.manifests.empty() && !opts.version.empty()) {
    ctx.err << "Error: --manifests and --version both name a chart set; give one\n";
    return kExitError;
  }
  if (!opts.manifests.empty() && !check_chart_set(opts.manifests, ctx.err)) return kExitError;
  inputs.version = opts.version;
  inputs.manifests = opts.manifests;
  inputs.force = opts.force;
  auto result = manifest::istioctl::generate(inputs);
  if (!result.ok()) {
    ctx.err << "Error: " << result.message() << '\n';
    return kExitError;
  }
  for (const std::string& w : result->warnings)
    ctx.err << "Warning: " << w << '\n';
  return write_output(manifest::istioctl::to_istioctl_stream(*result), opts, ctx);
}

int generate(const GenerateOptions& opts, Context& ctx) {
  manifest::istioctl::PipelineInputs inputs;
  if (!read_manifest_inputs(opts.inputs, inputs, ctx.err)) return kExitError;
  return generate_istioctl(opts, std::move(inputs), ctx);
}

int write_output(const std::string& text, const GenerateOptions& opts, Context& ctx) {
  if (opts.output.empty()) {
    ctx.out << text;
    return kExitOk;
  }
  std::ofstream out(opts.output, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) {
    ctx.err << "Error: cannot write " << opts.output << '\n';
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void add_manifest_command(CLI::App& root, Context& ctx) {
  auto* group = root.add_subcommand("manifest", "Commands under 'manifest'");
  group->require_subcommand(1);
  auto* cmd = group->add_subcommand(
      "generate",
      "Render the Kubernetes objects an IstioOperator installs, as `istioctl manifest generate`.\n"
      "Overlay order: the profile (spec.profile, default \"default\") < -f files in order <\n"
      "--set flags in order. --set paths are relative to spec: values.global.hub=x,\n"
      "components.cni.enabled=true, profile=demo, components.ingressGateways[0].enabled=false,\n"
      "values.sidecarInjectorWebhook.injectedAnnotations.a\\.b=c (\\. escapes a dot).");
  auto opts = std::make_shared<GenerateOptions>();
  add_manifest_input_flags(*cmd, opts->inputs);
  cmd->add_option("-o,--output", opts->output, "Write the manifest to this file instead of stdout");
  cmd->add_option("-d,--manifests", opts->manifests,
                  "Render an Istio release's own charts and profiles from DIR (its manifests/: "
                  "charts/ and profiles/) with istioctl's pipeline, as `istioctl manifest "
                  "generate --manifests DIR`");
  cmd->add_option("--version", opts->version,
                  "Render the charts and profiles of this bundled Istio version (see `meshop "
                  "version`) with istioctl's pipeline and the version's hub and tag");
  cmd->add_flag("--force", opts->force,
                "Proceed even if the IstioOperator is invalid (as istioctl)");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return generate(*opts, ctx); }; });
}

}  // namespace meshop::cli
