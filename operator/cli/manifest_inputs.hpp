// The input flags shared by `meshop manifest generate` and `meshop profile dump`:
// -f/--filename (repeatable, "-" is stdin), -s/--set path=value (repeatable), -r/--revision.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "operator/manifest/render.hpp"

namespace meshop::cli {

struct ManifestInputOptions {
  std::vector<std::string> files;
  std::vector<std::string> set_flags;
  std::string revision;
};

void add_manifest_input_flags(CLI::App& cmd, ManifestInputOptions& opts);

// Reads the files; on failure prints "Error: cannot read FILE" and returns false.
bool read_manifest_inputs(const ManifestInputOptions& opts, manifest::RenderInputs& inputs,
                          std::ostream& err);

}  // namespace meshop::cli
