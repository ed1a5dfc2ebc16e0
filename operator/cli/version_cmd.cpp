// `meshop version`: the version and the git commit the binary was built from.
#include <memory>
#include <string>

#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/log/log.hpp"
#include "operator/version.hpp"

namespace meshop::cli {

void add_version_command(CLI::App& root, Context& ctx) {
  auto* cmd = root.add_subcommand("version", "Print the version and git commit of meshop");
  auto output = std::make_shared<std::string>("text");
  cmd->add_option("-o,--output", *output, "Output format: text, json or short")
      ->check(CLI::IsMember({"text", "json", "short"}));
  cmd->callback([&ctx, output] {
    ctx.action = [&ctx, output] {
      if (*output == "short") {
        ctx.out << version() << '\n';
      } else if (*output == "json") {
        std::string v, c;
        log::append_json_escaped(v, version());
        log::append_json_escaped(c, git_commit());
        ctx.out << "{\"version\":\"" << v << "\",\"gitCommit\":\"" << c << "\"}\n";
      } else {
        ctx.out << "meshop version " << version() << " (commit " << git_commit() << ")\n";
      }
      return kExitOk;
    };
  });
}

}  // namespace meshop::cli
