#include "operator/cli/cli.hpp"

#include <string_view>
#include <vector>

#include "operator/cli/commands.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/version.hpp"

namespace meshop::cli {

std::string version_text() {
  std::string text =
      "meshop version " + std::string(version()) + " (commit " + std::string(git_commit()) + ")";
  text += "\nIstio versions:";
  for (const manifest::ChartSet& s : manifest::chart_sets())
    text += " " + s.version + (&s == &manifest::default_chart_set() ? " (default)" : "");
  return text;
}

namespace {

// Commands whose implementation has not landed yet. They are listed so `--help` shows the
// whole tool, and they fail clearly (exit 1) instead of pretending to work.
struct Planned {
  std::vector<std::string_view> path;
  std::string_view description;
  int issue;
};

const std::vector<Planned>& planned_commands() {
  // Commands announced in --help before they exist; none at the moment.
  static const std::vector<Planned> cmds = {};
  return cmds;
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent())
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  return path;
}

CLI::App* find_or_add(CLI::App& parent, std::string_view name) {
  for (CLI::App* sub : parent.get_subcommands({}))
    if (sub->get_name() == name) return sub;
  auto* sub = parent.add_subcommand(std::string(name));
  return sub;
}

void add_planned(CLI::App& root, Context& ctx) {
  for (const Planned& p : planned_commands()) {
    CLI::App* app = &root;
    for (size_t i = 0; i < p.path.size(); ++i) {
      app = find_or_add(*app, p.path[i]);
      if (i + 1 < p.path.size()) {
        app->require_subcommand(1);
        if (app->get_description().empty())
          app->description("Commands under '" + std::string(p.path[i]) + "'");
      }
    }
    app->description(std::string(p.description) + " (not implemented yet)");
    app->allow_extras();
    int issue = p.issue;
    app->callback([&ctx, app, issue] {
      ctx.action = [&ctx, app, issue] {
        ctx.err << "Error: '" << command_path(app) << "' is not implemented in this build yet"
                << " (tracked in issue #" << issue << ").\n";
        return kExitError;
      };
    });
  }
}

// The deepest subcommand the parser entered: that is the command an error belongs to.
CLI::App* deepest(CLI::App& root) {
  CLI::App* app = &root;
  for (;;) {
    auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.front();
  }
}

int usage_error(CLI::App& root, const CLI::ParseError& e, std::ostream& err) {
  CLI::App* at = deepest(root);
  std::string where = command_path(at);
  std::string msg = e.what();
  bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
  bool required = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
  bool group = !at->get_subcommands({}).empty();
  auto rest = at->remaining();
  if ((extras || required) && !rest.empty()) {
    const std::string& first = rest.front();
    if (first.starts_with("-"))
      msg = "unknown flag \"" + first + "\" for \"" + where + "\"";
    else if (group)
      msg = "unknown command \"" + first + "\" for \"" + where + "\"";
    else
      msg = "unexpected argument \"" + first + "\" for \"" + where + "\"";
  } else if (required && group && at->get_subcommands().empty()) {
    msg = "\"" + where + "\" needs a subcommand";
  }
  err << "Error: " << msg << "\nRun '" << where << " --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int run(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  Context ctx{out, err, {}};
  CLI::App root{
      "meshop: an operator for Istio-style service meshes, and its command-line tool.\n"
      "It installs IstioOperator revisions, manages injection webhooks, certificates and\n"
      "revision tags, injects sidecars, and restarts workloads whose sidecar is stale.",
      "meshop"};
  root.require_subcommand(1);
  root.set_version_flag(
      "--version", [] { return version_text(); },
      "Print the version and exit (same as 'meshop version')");
  std::string level = "info";
  root.add_option("--log-level", level, "Log level: debug, info, warn, error")
      ->capture_default_str()
      ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error"}));

  add_version_command(root, ctx);
  add_template_command(root, ctx);
  add_webhook_command(root, ctx);
  add_kube_inject_command(root, ctx);
  add_manifest_command(root, ctx);
  add_profile_command(root, ctx);
  add_run_command(root, ctx);
  add_restart_command(root, ctx);
  add_check_command(root, ctx);
  add_tag_command(root, ctx);
  add_planned(root, ctx);

  std::vector<std::string> rev(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
  try {
    root.parse(rev);
  } catch (const CLI::CallForHelp&) {
    out << deepest(root)->help();
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << version_text() << '\n';
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << root.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (args.size() <= 1) {
      err << root.help();
      return kExitUsage;
    }
    return usage_error(root, e, err);
  }

  log::Level lvl = log::Level::info;
  log::parse_level(level, lvl);
  log::set_level(lvl);
  if (!ctx.action) {
    err << "Error: no command given\nRun 'meshop --help' for usage.\n";
    return kExitUsage;
  }
  try {
    return ctx.action();
  } catch (const std::exception& e) {
    err << "Error: " << e.what() << '\n';
    return kExitError;
  }
}

}  // namespace meshop::cli
