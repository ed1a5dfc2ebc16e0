// The input flags shared by `meshop manifest generate` and `meshop profile dump`:
// -f/--filename (repeatable, "-" is stdin), -s/--set path=value (repeatable), -r/--revision.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::cli {

struct ManifestInputOptions {
  std::vector<std::string> files;
  std::vector<std::string> set_flags;
  std::string revision;
};

void add_manifest_input_flags(CLI::App& cmd, ManifestInputOptions& opts);

// Reads the files into inputs.files and copies the --set flags and --revision; on failure
// prints "Error: cannot read FILE" and returns false. The chart set and --force are the
// caller's.
bool read_manifest_inputs(const ManifestInputOptions& opts,
                          manifest::istioctl::PipelineInputs& inputs, std::ostream& err);

}  // namespace meshop::cli
