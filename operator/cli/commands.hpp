// Registration of meshop's subcommands. Each command file adds its subcommand to the
// root app and sets `action`, which run() calls after a successful parse.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace meshop::cli {

struct Context {
  std::ostream& out;
  std::ostream& err;
  // Set by the parsed command; returns the exit code.
  std::function<int()> action;
};

// "meshop version V (commit C)\nIstio versions: 1.31 (default) 1.30" (cli.cpp).
std::string version_text();

void add_version_command(CLI::App& root, Context& ctx);
void add_template_command(CLI::App& root, Context& ctx);
// operator/cli/restart_cmd.cpp, built with the reconcilers (reconcilers/CMakeLists.txt).
void add_restart_command(CLI::App& root, Context& ctx);
// operator/cli/check_cmd.cpp, built with the reconcilers too.
void add_check_command(CLI::App& root, Context& ctx);
void add_run_command(CLI::App& root, Context& ctx);
void add_webhook_command(CLI::App& root, Context& ctx);
void add_kube_inject_command(CLI::App& root, Context& ctx);
void add_manifest_command(CLI::App& root, Context& ctx);
void add_profile_command(CLI::App& root, Context& ctx);
void add_tag_command(CLI::App& root, Context& ctx);

}  // namespace meshop::cli
