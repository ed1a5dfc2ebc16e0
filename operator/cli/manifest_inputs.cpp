#include "operator/cli/manifest_inputs.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

namespace meshop::cli {

void add_manifest_input_flags(CLI::App& cmd, ManifestInputOptions& opts) {
  cmd.add_option("-f,--filename", opts.files,
                 "IstioOperator file(s), applied in order over the profile ('-' reads stdin)");
  cmd.add_option("-s,--set", opts.set_flags,
                 "Override a field: path=value, relative to spec (repeatable; applied last)");
  cmd.add_option("-r,--revision", opts.revision,
                 "Control plane revision (same as --set revision=)");
}

bool read_manifest_inputs(const ManifestInputOptions& opts,
                          manifest::istioctl::PipelineInputs& inputs, std::ostream& err) {
  for (std::size_t i = 0; i < opts.files.size(); ++i) {
    const std::string& path = opts.files[i];
    std::ostringstream ss;
    if (path == "-") {
      if (i + 1 != opts.files.size()) {
        err << "Error: stdin ('-') is only allowed as the last -f file\n";
        return false;
      }
      ss << std::cin.rdbuf();
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        err << "Error: cannot read " << path << ": no such file or not readable\n";
        return false;
      }
      ss << in.rdbuf();
    }
    inputs.files.push_back({path, ss.str()});
  }
  inputs.set_flags = opts.set_flags;
  inputs.revision = opts.revision;
  return true;
}

}  // namespace meshop::cli
