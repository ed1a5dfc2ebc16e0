// `meshop manifest generate [-f iop.yaml ...] [--set path=value ...] [--revision r] [-o file]`:
// renders what an IstioOperator installs (operator/manifest/render.hpp) as one multi-document
// YAML stream, in apply order. Works offline: profiles and component templates are embedded.
// Warnings go to stderr; an invalid input (unknown profile, bad --set path, invalid field)
// prints every problem on stderr and exits 1 with nothing on stdout.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/manifest_inputs.hpp"
#include "operator/manifest/render.hpp"

namespace meshop::cli {
namespace {

struct GenerateOptions {
  ManifestInputOptions inputs;
  std::string output;
};

int generate(const GenerateOptions& opts, Context& ctx) {
  manifest::RenderInputs inputs;
  if (!read_manifest_inputs(opts.inputs, inputs, ctx.err)) return kExitError;
  auto result = manifest::render(inputs);
  if (!result.ok()) {
    ctx.err << "Error: " << result.message() << '\n';
    return kExitError;
  }
  for (const std::string& w : result->warnings)
    ctx.err << "Warning: " << w << '\n';
  std::string text = manifest::to_multi_document_yaml(*result);
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
      "Render the Kubernetes objects an IstioOperator installs, as multi-document YAML.\n"
      "Overlay order: the profile (spec.profile, default \"default\") < -f files in order <\n"
      "--set flags in order. --set paths are relative to spec: values.global.hub=x,\n"
      "components.cni.enabled=true, profile=demo, components.ingressGateways[0].enabled=false,\n"
      "values.sidecarInjectorWebhook.injectedAnnotations.a\\.b=c (\\. escapes a dot).");
  auto opts = std::make_shared<GenerateOptions>();
  add_manifest_input_flags(*cmd, opts->inputs);
  cmd->add_option("-o,--output", opts->output, "Write the manifest to this file instead of stdout");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return generate(*opts, ctx); }; });
}

}  // namespace meshop::cli
