// `meshop version`: the version and git commit the binary was built from, and the Istio
// versions whose chart sets it carries (manifest::chart_sets()).
#include <memory>
#include <string>

#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/chart_sets.hpp"
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
        std::string out = "{\"version\":\"";
        log::append_json_escaped(out, version());
        out += "\",\"gitCommit\":\"";
        log::append_json_escaped(out, git_commit());
        out += "\",\"istioVersions\":[";
        bool first = true;
        for (const manifest::ChartSet& s : manifest::chart_sets()) {
          if (!first) out += ',';
          first = false;
          out += "{";
          for (auto [key, value] :
               {std::pair<const char*, const std::string*>{"version", &s.version},
                {"module", &s.module},
                {"sha256", &s.sha256},
                {"hub", &s.hub},
                {"tag", &s.tag}}) {
            out += '"';
            out += key;
            out += "\":\"";
            log::append_json_escaped(out, *value);
            out += "\",";
          }
          out += "\"default\":";
          out += &s == &manifest::default_chart_set() ? "true" : "false";
          out += "}";
        }
        out += "]}\n";
        ctx.out << out;
      } else {
        ctx.out << version_text() << '\n';
      }
      return kExitOk;
    };
  });
}

}  // namespace meshop::cli
