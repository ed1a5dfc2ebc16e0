// `meshop restart plan [-n NS] [-o table|json|yaml]`: every workload whose sidecar is stale,
// why, current → target revision, and what the restart policy would do now.
// `meshop restart run [-n NS] [--wait] [--timeout 30m]`: carries the plan out under the same
// policy (reconcilers/restarts.hpp) — except that DryRun entries are restarted too, since a
// person asked; mode Off, opt-outs, PDBs, maintenance windows and control-plane health still
// hold (under strategy Evict the apiserver's PDB check is asked with dry-run evictions by
// `plan`, and decides each eviction of `run`). One line per workload event, and a progress line;
// with --wait until nothing is pending or rolling (or a failure pauses the restarts, or the timeout
// passes).
#include <chrono>
#include <exception>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/restart_pass.hpp"
#include "operator/kube/config.hpp"
#include "operator/restart/policy.hpp"
#include "reconcilers/restarts.hpp"

namespace meshop::cli {

std::optional<api::Result<reconcilers::PassReport>> run_pass(reconcilers::RestartsReconciler& r,
                                                             boost::asio::io_context& ioc,
                                                             bool execute, std::string& error) {
  std::optional<api::Result<reconcilers::PassReport>> out;
  std::exception_ptr failure;
  auto body = [](reconcilers::RestartsReconciler* rec, bool ex,
                 std::optional<api::Result<reconcilers::PassReport>>* o) -> kube::Task<void> {
    auto report = co_await rec->pass(ex);
    o->emplace(std::move(report));
  };
  boost::asio::co_spawn(ioc, body(&r, execute, &out),
                        [&failure](std::exception_ptr e) { failure = e; });
  ioc.restart();
  ioc.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      error = e.what();
    }
    return std::nullopt;
  }
  return out;
}

namespace {

using restart::Action;

struct RestartOptions {
  std::string kubeconfig, context;
  std::string ns;
  std::string output = "table";
  std::string control_plane_namespace = "istio-system";
  bool wait = false;
  std::string timeout = "30m";
};

std::string revision_or_dash(const std::string& r) {
  return r.empty() ? "-" : r;
}

std::string entry_message(const restart::PlanEntry& e) {
  return e.why.empty() ? e.plan.detail
                       : e.why + (e.plan.detail.empty() ? "" : "; " + e.plan.detail);
}

rapidjson::Document plan_json(const reconcilers::PassReport& report) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  auto str = [&](std::string_view s) { return api::make_string(s, a); };
  rapidjson::Value items(rapidjson::kArrayType);
  for (const restart::PlanEntry& e : report.plan) {
    if (e.action == Action::kNone) continue;
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("namespace", str(e.plan.ns), a);
    item.AddMember("kind", str(e.plan.kind), a);
    item.AddMember("name", str(e.plan.name), a);
    item.AddMember("reason", str(e.plan.reason ? restart::reason_name(*e.plan.reason) : ""), a);
    item.AddMember("currentRevision", str(e.plan.current_revision), a);
    item.AddMember("targetRevision", str(e.plan.target_revision), a);
    item.AddMember("action", str(restart::action_name(e.action)), a);
    item.AddMember("message", str(entry_message(e)), a);
    item.AddMember("policy", str(e.policy_source), a);
    item.AddMember("mode", str(restart::mode_name(e.policy.mode)), a);
    item.AddMember("strategy", str(restart::strategy_name(e.policy.strategy)), a);
    item.AddMember("minInterval", str(restart::go_duration(e.policy.min_interval)), a);
    items.PushBack(item, a);
  }
  d.AddMember("workloads", items, a);
  rapidjson::Value errors(rapidjson::kObjectType);
  for (const auto& [rev, why] : report.engine_errors)
    errors.AddMember(str(rev), str(why), a);
  d.AddMember("revisionErrors", errors, a);
  return d;
}

void print_table(const reconcilers::PassReport& report, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "KIND", "NAME", "REASON", "REVISION", "ACTION", "STRATEGY", "MESSAGE"}};
  for (const restart::PlanEntry& e : report.plan) {
    if (e.action == Action::kNone) continue;
    rows.push_back({e.plan.ns, e.plan.kind, e.plan.name,
                    e.plan.reason ? std::string(restart::reason_name(*e.plan.reason)) : "-",
                    revision_or_dash(e.plan.current_revision) + " -> " +
                        revision_or_dash(e.plan.target_revision),
                    std::string(restart::action_name(e.action)),
                    std::string(restart::strategy_name(e.policy.strategy)), entry_message(e)});
  }
  if (rows.size() == 1) {
    out << "No stale workloads: every pod matches what injection gives it now.\n";
  } else {
    write_table(rows, out);
  }
  for (const auto& [rev, why] : report.engine_errors)
    out << "warning: revision " << rev << ": " << why << '\n';
}

// The client for --kubeconfig/--context on `ioc`, or null after printing why.
std::shared_ptr<kube::Client> make_client(const RestartOptions& o, boost::asio::io_context& ioc,
                                          std::ostream& err) {
  return connect(ioc.get_executor(), o.kubeconfig, o.context, err);
}

int plan_command(const RestartOptions& o, std::ostream& out, std::ostream& err) {
  boost::asio::io_context ioc;
  auto client = make_client(o, ioc, err);
  if (!client) return kExitError;
  reconcilers::RestartsConfig rc;
  rc.namespace_filter = o.ns;
  rc.control_plane_namespace = o.control_plane_namespace;
  reconcilers::RestartsReconciler reconciler(client, rc);
  std::string error;
  auto report = run_pass(reconciler, ioc, false, error);
  if (!report || !report->ok()) {
    err << "Error: " << (report ? report->message() : error) << '\n';
    return kExitError;
  }
  if (o.output == "json") {
    out << api::to_pretty_json(plan_json(**report)) << '\n';
  } else if (o.output == "yaml") {
    out << api::json_to_yaml(plan_json(**report));
  } else {
    print_table(**report, out);
  }
  return kExitOk;
}

int run_command(const RestartOptions& o, std::ostream& out, std::ostream& err) {
  auto timeout = restart::parse_go_duration(o.timeout);
  if (!timeout) {
    err << "Error: --timeout: " << timeout.message() << '\n';
    return kExitUsage;
  }
  boost::asio::io_context ioc;
  auto client = make_client(o, ioc, err);
  if (!client) return kExitError;
  reconcilers::RestartsConfig rc;
  rc.namespace_filter = o.ns;
  rc.control_plane_namespace = o.control_plane_namespace;
  rc.run_dry_run_entries = true;
  reconcilers::RestartsReconciler reconciler(client, rc);

  const auto deadline = std::chrono::steady_clock::now() + *timeout;
  std::set<std::string> started, completed, reported_failed, reported_other;
  std::size_t total = 0;
  for (;;) {
    std::string error;
    auto report = run_pass(reconciler, ioc, true, error);
    if (!report || !report->ok()) {
      err << "Error: " << (report ? report->message() : error) << '\n';
      return kExitError;
    }
    const reconcilers::PassReport& r = **report;
    for (const auto& pod : r.pods_deleted)
      out << "deleted    pod " << pod << '\n';
    for (const auto& pod : r.pods_evicted)
      out << "evicted    pod " << pod << '\n';
    for (const auto& f : r.failed)
      if (reported_failed.insert(f.key).second)
        out << "failed     " << f.key << ": " << f.message << '\n';
    std::set<std::string> rolling_now(r.started.begin(), r.started.end());
    for (const auto& p : r.progressing)
      rolling_now.insert(p.key);
    for (const std::string& key : started)
      if (!rolling_now.count(key) && !reported_failed.count(key) && completed.insert(key).second)
        out << "completed  " << key << '\n';
    for (const std::string& key : r.started) {
      if (started.insert(key).second) out << "restarted  " << key << '\n';
    }
    std::size_t pending = 0;
    for (const restart::PlanEntry& e : r.plan) {
      std::string key = e.plan.kind + "/" + e.plan.ns + "/" + e.plan.name;
      if ((e.action == Action::kRestart || e.action == Action::kWouldRestart ||
           e.action == Action::kDeferred) &&
          !rolling_now.count(key))
        ++pending;
      if ((e.action == Action::kSkipped || e.action == Action::kManual ||
           e.action == Action::kBlocked || e.action == Action::kDeferred) &&
          reported_other.insert(key + std::string(restart::action_name(e.action))).second)
        out << std::left << std::setw(11)
            << (e.action == Action::kManual     ? "manual"
                : e.action == Action::kDeferred ? "deferred"
                                                : "skipped")
            << key << ": " << entry_message(e) << '\n';
    }
    std::size_t rolling = rolling_now.size();
    total = std::max(total, completed.size() + reported_failed.size() + rolling + pending);
    if (total > 0) {
      const int width = 20;
      int filled = static_cast<int>(width * completed.size() / total);
      out << "[" << std::string(filled, '#') << std::string(width - filled, '-') << "] "
          << completed.size() << "/" << total << " done, " << rolling << " rolling, " << pending
          << " pending"
          << (reported_failed.empty() ? ""
                                      : ", " + std::to_string(reported_failed.size()) + " failed")
          << '\n';
    }
    out.flush();
    if (r.paused) {
      err << "Paused: " << r.pause_reason << '\n';
      return kExitError;
    }
    bool busy = pending > 0 || rolling > 0;
    if (!o.wait || !busy) return r.failed.empty() ? kExitOk : kExitError;
    if (std::chrono::steady_clock::now() >= deadline) {
      err << "Error: timed out after " << o.timeout << " with " << pending << " pending and "
          << rolling << " rolling\n";
      return kExitError;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

void add_common(CLI::App* cmd, RestartOptions* o) {
  cmd->add_option("--kubeconfig", o->kubeconfig, "Kubeconfig file (default: $KUBECONFIG)");
  cmd->add_option("--context", o->context, "Kubeconfig context");
  cmd->add_option("-n,--namespace", o->ns, "Only workloads of this namespace (default: all)");
  cmd->add_option("--control-plane-namespace", o->control_plane_namespace,
                  "Namespace of the control planes and their injector ConfigMaps")
      ->capture_default_str();
}

}  // namespace

void add_restart_command(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand(
      "restart", "Restart workloads whose sidecar no longer matches what injection gives them");
  group->require_subcommand(1);

  auto plan_opts = std::make_shared<RestartOptions>();
  CLI::App* plan = group->add_subcommand(
      "plan",
      "List stale workloads, why, current -> target revision, and what the policy would do");
  add_common(plan, plan_opts.get());
  plan->add_option("-o,--output", plan_opts->output, "Output format: table, json or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  plan->callback([&ctx, plan_opts] {
    ctx.action = [&ctx, plan_opts] { return plan_command(*plan_opts, ctx.out, ctx.err); };
  });

  auto run_opts = std::make_shared<RestartOptions>();
  CLI::App* run = group->add_subcommand(
      "run", "Restart the stale workloads under the restart policy (DryRun entries included)");
  add_common(run, run_opts.get());
  run->add_flag("--wait", run_opts->wait, "Wait until every restart has rolled out");
  run->add_option("--timeout", run_opts->timeout, "How long --wait waits (Go duration)")
      ->capture_default_str();
  run->callback([&ctx, run_opts] {
    ctx.action = [&ctx, run_opts] { return run_command(*run_opts, ctx.out, ctx.err); };
  });
}

}  // namespace meshop::cli
