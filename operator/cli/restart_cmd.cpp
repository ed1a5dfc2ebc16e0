// `meshop restart plan [-n NS] [-o table|json|yaml]`: every workload whose sidecar is stale,
// why, current → target revision, and what the restart policy would do now.
// `meshop restart run [-n NS] [--wait] [--timeout 30m]`: carries the plan out under the same
// policy (reconcilers/restarts.hpp) — except that DryRun entries are restarted too, since a
// person asked; mode Off, opt-outs, PDBs, maintenance windows and control-plane health still
// hold (under strategy Evict the apiserver's PDB check is asked with dry-run evictions by
// `plan`, and decides each eviction of `run`). One line per workload event, and a progress line;
// with --wait until nothing is pending or rolling (or a failure pauses the restarts, a canary
// regression halts them, or the timeout passes).
// Under spec.restarts.canary the plan marks the canary group ("Restart (canary)") and prints each
// wave's phase (Canary, Soaking, Passed, Halted); held entries show as Deferred (waiting for the
// canary), Halted or Paused.
// `meshop restart pause [NAME] [--reason TEXT]`: annotates the IstioOperator NAME (default: every
// one of --control-plane-namespace) with meshop.io/restarts-paused; nothing more of its restarts
// starts. `meshop restart resume [NAME]`: removes the pause and sets meshop.io/restarts-resume,
// which the restarts reconciler (`meshop run`, or the next `meshop restart run`) honours by
// lifting a halt, and removes.
// `meshop restart approve KIND/NAME -n NS` (or `--all [NAME]`): approves a move that
// spec.restarts.maxVersionSkew holds as ApprovalNeeded (meshop.io/restart-approved).
#include <algorithm>
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
#include "operator/kube/events.hpp"
#include "operator/restart/halt.hpp"
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
  std::string istio_operator;  // pause / resume: "" = every one of control_plane_namespace
  std::string reason;          // pause
  std::string workload;        // approve: KIND/NAME
  bool all = false;            // approve --all
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
    item.AddMember("canary", e.canary, a);
    item.AddMember("currentVersion", str(e.current_version), a);
    item.AddMember("targetVersion", str(e.target_version), a);
    item.AddMember("maxVersionSkew", str(restart::version_skew_name(e.policy.max_version_skew)), a);
    if (e.plan.verdict == restart::Verdict::kStale) {
      item.AddMember("staleSince", str(restart::rfc3339(e.stale_since)), a);
      item.AddMember("overdue", e.overdue, a);
    }
    items.PushBack(item, a);
  }
  d.AddMember("workloads", items, a);
  rapidjson::Value waves(rapidjson::kObjectType);
  for (const auto& [source, w] : report.waves) {
    rapidjson::Value v = restart::wave_to_json(w.next, a);
    v.AddMember("halted", w.next.phase == restart::WavePhase::kHalted, a);
    v.AddMember("held", w.hold_all || w.hold_others, a);
    v.AddMember("why", str(w.why), a);
    waves.AddMember(str(source), v, a);
  }
  d.AddMember("waves", waves, a);
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
                        revision_or_dash(e.plan.target_revision) +
                        (e.action == Action::kApprovalNeeded
                             ? " (" + e.current_version + " -> " + e.target_version + ")"
                             : ""),
                    std::string(restart::action_name(e.action)) + (e.canary ? " (canary)" : ""),
                    std::string(restart::strategy_name(e.policy.strategy)), entry_message(e)});
  }
  if (rows.size() == 1) {
    out << "No stale workloads: every pod matches what injection gives it now.\n";
  } else {
    write_table(rows, out);
  }
  for (const auto& [source, w] : report.waves) {
    if (w.next.phase == restart::WavePhase::kNone && !w.hold_all) continue;
    out << "IstioOperator " << source << ": wave "
        << (w.hold_all && w.next.phase != restart::WavePhase::kHalted
                ? std::string("Paused")
                : std::string(restart::wave_phase_name(w.next.phase)));
    std::string canary;
    for (const std::string& k : w.next.canary)
      canary += (canary.empty() ? "" : ", ") + k;
    if (!canary.empty()) out << ", canary group: " << canary;
    const std::string& why = w.why.empty() ? w.next.message : w.why;
    if (!why.empty()) out << "; " << why;
    out << '\n';
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
  // A person's restarts are recorded as the operator's are (Events on workloads and, for a halt,
  // on the IstioOperator); each pass's io_context run writes them.
  kube::EventRecorderOptions eo;
  eo.controller = "meshop";
  reconcilers::RestartsReconciler reconciler(client, rc, nullptr,
                                             kube::EventRecorder::create(client, eo));

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
    if (r.halted) {
      err << "Halted: " << r.halt_reason << '\n';
      return kExitError;
    }
    bool held_by_hand = false;
    for (const restart::PlanEntry& e : r.plan)
      held_by_hand = held_by_hand || e.action == Action::kPaused;
    if (held_by_hand && rolling == 0) {
      for (const auto& [source, w] : r.waves)
        if (w.hold_all) err << "Paused: IstioOperator " << source << ": " << w.why << '\n';
      return kExitError;
    }
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

// Merge-patches the annotations of the IstioOperator `o.istio_operator` (or of every one in the
// control-plane namespace) with `annotations` (JSON object; null values remove).
int annotate_command(const RestartOptions& o, const std::string& annotations, const char* verb,
                     std::ostream& out, std::ostream& err) {
  boost::asio::io_context ioc;
  auto client = make_client(o, ioc, err);
  if (!client) return kExitError;
  std::vector<std::string> done;
  std::string error;
  auto body = [](std::shared_ptr<kube::Client> c, const RestartOptions* opt, std::string patch,
                 std::vector<std::string>* names, std::string* failure) -> kube::Task<void> {
    auto type = co_await c->discover("install.istio.io/v1alpha1", "IstioOperator");
    if (!type) {
      *failure = "the IstioOperator CRD is not installed: " + type.error().message;
      co_return;
    }
    std::vector<std::string> targets;
    if (!opt->istio_operator.empty()) {
      targets.push_back(opt->istio_operator);
    } else {
      auto list = co_await c->list_all(*type, opt->control_plane_namespace);
      if (!list) {
        *failure = list.error().message;
        co_return;
      }
      for (const rapidjson::Value& item : list->list["items"].GetArray())
        targets.push_back(api::string_at(item, {"metadata", "name"}));
      if (targets.empty()) {
        *failure = "no IstioOperator in namespace " + opt->control_plane_namespace;
        co_return;
      }
    }
    for (const std::string& name : targets) {
      auto r = co_await c->patch(*type, opt->control_plane_namespace, name, kube::PatchType::kMerge,
                                 patch);
      if (!r) {
        *failure =
            "IstioOperator " + opt->control_plane_namespace + "/" + name + ": " + r.error().message;
        co_return;
      }
      names->push_back(opt->control_plane_namespace + "/" + name);
    }
  };
  std::exception_ptr failure;
  boost::asio::co_spawn(
      ioc, body(client, &o, R"({"metadata":{"annotations":)" + annotations + "}}", &done, &error),
      [&failure](std::exception_ptr e) { failure = e; });
  ioc.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  for (const std::string& name : done)
    out << verb << " IstioOperator " << name << '\n';
  if (!error.empty()) {
    err << "Error: " << error << '\n';
    return kExitError;
  }
  return kExitOk;
}

std::string json_string(const std::string& s) {
  rapidjson::Document d;
  d.SetString(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), d.GetAllocator());
  return api::to_json(d);
}

int pause_command(const RestartOptions& o, std::ostream& out, std::ostream& err) {
  std::string reason = o.reason.empty()
                           ? "paused at " + restart::rfc3339(std::chrono::system_clock::now())
                           : o.reason;
  return annotate_command(
      o,
      "{" + json_string(std::string(restart::kPauseAnnotation)) + ":" + json_string(reason) + "}",
      "paused", out, err);
}

int resume_command(const RestartOptions& o, std::ostream& out, std::ostream& err) {
  std::string when = restart::rfc3339(std::chrono::system_clock::now());
  int rc = annotate_command(o,
                            "{" + json_string(std::string(restart::kPauseAnnotation)) + ":null," +
                                json_string(std::string(restart::kResumeAnnotation)) + ":" +
                                json_string(when) + "}",
                            "resumed", out, err);
  if (rc == kExitOk)
    out << "The restarts reconciler (meshop run, or the next meshop restart run) lifts a halt and "
           "removes the annotation.\n";
  return rc;
}

// `meshop restart approve KIND/NAME -n NS`: the workload's ApprovalNeeded move (the plan names
// its target revision and version) is approved with meshop.io/restart-approved:
// <revision>@<version> on the workload. `--all [IOP]`: on each IstioOperator (or the one named)
// whose policy holds moves for approval, for all its workloads. The same checks either way: the
// arguments' shape (usage), the object named exists and holds a move for approval (else exit 1,
// nothing written); `--all` with nothing held anywhere is not an error.
int approve_command(const RestartOptions& o, std::ostream& out, std::ostream& err) {
  std::string kind, name;
  if (!o.all) {
    auto slash = o.workload.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == o.workload.size() ||
        o.workload.find('/', slash + 1) != std::string::npos || o.ns.empty()) {
      err << "Error: approve takes KIND/NAME and -n NAMESPACE (or --all [ISTIOOPERATOR])";
      if (!o.workload.empty()) err << ", got \"" << o.workload << "\"";
      err << '\n';
      return kExitUsage;
    }
    kind = o.workload.substr(0, slash);
    name = o.workload.substr(slash + 1);
  } else if (o.workload.find('/') != std::string::npos) {
    err << "Error: with --all the argument is an IstioOperator name, got \"" << o.workload
        << "\" (approve one workload with KIND/NAME -n NAMESPACE, without --all)\n";
    return kExitUsage;
  } else if (!o.ns.empty()) {
    err << "Error: --all approves on IstioOperators, for their workloads in every namespace; "
           "-n does not apply (approve one workload with KIND/NAME -n NAMESPACE)\n";
    return kExitUsage;
  }
  boost::asio::io_context ioc;
  auto client = make_client(o, ioc, err);
  if (!client) return kExitError;
  reconcilers::RestartsConfig rc;
  rc.namespace_filter = o.all ? "" : o.ns;
  rc.control_plane_namespace = o.control_plane_namespace;
  reconcilers::RestartsReconciler reconciler(client, rc);
  std::string error;
  auto report = run_pass(reconciler, ioc, false, error);
  if (!report || !report->ok()) {
    err << "Error: " << (report ? report->message() : error) << '\n';
    return kExitError;
  }
  // What to write: (api group version, kind, namespace, name) → approval value.
  struct Target {
    std::string api_version, kind, ns, name, value;
  };
  std::vector<Target> targets;
  if (o.all && !o.workload.empty()) {
    const auto& iops = (*report)->istio_operators;
    bool known = std::any_of(iops.begin(), iops.end(), [&](const std::string& source) {
      return source.substr(source.find('/') + 1) == o.workload;
    });
    if (!known) {
      err << "Error: no IstioOperator " << o.workload << " in the cluster\n";
      return kExitError;
    }
  }
  // --all: the IstioOperator → the index of its target. Its approval names one target version;
  // a workload of the same policy moving to another one (a per-pod proxy image, say) is
  // approved on itself.
  std::map<std::string, std::size_t> by_source;
  for (const restart::PlanEntry& e : (*report)->plan) {
    if (o.all) {
      if (e.action != Action::kApprovalNeeded || e.policy_source == "defaults") continue;
      auto slash = e.policy_source.find('/');
      std::string iop_ns = e.policy_source.substr(0, slash),
                  iop_name = e.policy_source.substr(slash + 1);
      if (!o.workload.empty() && iop_name != o.workload) continue;
      std::string value = e.plan.target_revision + "@" + e.target_version;
      auto [it, fresh] = by_source.emplace(e.policy_source, targets.size());
      if (fresh)
        targets.push_back({"install.istio.io/v1alpha1", "IstioOperator", iop_ns, iop_name, value});
      else if (targets[it->second].value != value)
        targets.push_back({e.plan.kind == "ReplicationController" ? "v1" : "apps/v1", e.plan.kind,
                           e.plan.ns, e.plan.name, value});
      continue;
    }
    if (e.plan.kind != kind || e.plan.name != name || e.plan.ns != o.ns) continue;
    if (e.action != Action::kApprovalNeeded) {
      err << "Error: " << kind << "/" << name << " in " << o.ns
          << " needs no approval (plan: " << restart::action_name(e.action) << ")\n";
      return kExitError;
    }
    targets.push_back({kind == "ReplicationController" ? "v1" : "apps/v1", kind, o.ns, name,
                       e.plan.target_revision + "@" + e.target_version});
  }
  if (targets.empty()) {
    if (o.all && o.workload.empty()) {
      out << "Nothing waits for approval.\n";
      return kExitOk;
    }
    if (o.all)
      err << "Error: IstioOperator " << o.workload << " holds no move for approval\n";
    else
      err << "Error: no planned workload " << kind << "/" << name << " in " << o.ns << '\n';
    return kExitError;
  }
  std::exception_ptr failure;
  auto body = [](std::shared_ptr<kube::Client> c, std::vector<Target>* ts, std::ostream* o_out,
                 std::string* failure_text) -> kube::Task<void> {
    for (const Target& t : *ts) {
      auto type = co_await c->discover(t.api_version, t.kind);
      if (!type) {
        *failure_text = t.kind + ": " + type.error().message;
        co_return;
      }
      rapidjson::Document patch(rapidjson::kObjectType);
      auto& a = patch.GetAllocator();
      rapidjson::Value ann(rapidjson::kObjectType);
      ann.AddMember(api::make_string(restart::kRestartApprovedAnnotation, a),
                    api::make_string(t.value, a), a);
      rapidjson::Value meta(rapidjson::kObjectType);
      meta.AddMember("annotations", ann, a);
      patch.AddMember("metadata", meta, a);
      auto r = co_await c->patch(*type, t.ns, t.name, kube::PatchType::kMerge, api::to_json(patch));
      if (!r) {
        *failure_text = t.kind + " " + t.ns + "/" + t.name + ": " + r.error().message;
        co_return;
      }
      *o_out << "approved " << t.kind << "/" << t.name << " -n " << t.ns << " for " << t.value
             << '\n';
    }
  };
  boost::asio::co_spawn(ioc, body(client, &targets, &out, &error),
                        [&failure](std::exception_ptr e) { failure = e; });
  ioc.restart();
  ioc.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!error.empty()) {
    err << "Error: " << error << '\n';
    return kExitError;
  }
  return kExitOk;
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

  auto pause_opts = std::make_shared<RestartOptions>();
  CLI::App* pause = group->add_subcommand(
      "pause", "Pause the restarts of an IstioOperator's policy by hand (until resume)");
  add_common(pause, pause_opts.get());
  pause->add_option("name", pause_opts->istio_operator,
                    "IstioOperator (default: every one of --control-plane-namespace)");
  pause->add_option("--reason", pause_opts->reason, "Why (the annotation's value)");
  pause->callback([&ctx, pause_opts] {
    ctx.action = [&ctx, pause_opts] { return pause_command(*pause_opts, ctx.out, ctx.err); };
  });

  auto approve_opts = std::make_shared<RestartOptions>();
  CLI::App* approve = group->add_subcommand(
      "approve", "Approve a move held by spec.restarts.maxVersionSkew (ApprovalNeeded)");
  add_common(approve, approve_opts.get());
  approve->add_option(
      "workload", approve_opts->workload,
      "KIND/NAME (with -n), or with --all an IstioOperator name (default: every one)");
  approve->add_flag("--all", approve_opts->all,
                    "Approve on the IstioOperators, for every workload their policy holds");
  approve->callback([&ctx, approve_opts] {
    ctx.action = [&ctx, approve_opts] { return approve_command(*approve_opts, ctx.out, ctx.err); };
  });

  auto resume_opts = std::make_shared<RestartOptions>();
  CLI::App* resume = group->add_subcommand(
      "resume", "Resume restarts paused by hand or halted by a canary regression");
  add_common(resume, resume_opts.get());
  resume->add_option("name", resume_opts->istio_operator,
                     "IstioOperator (default: every one of --control-plane-namespace)");
  resume->callback([&ctx, resume_opts] {
    ctx.action = [&ctx, resume_opts] { return resume_command(*resume_opts, ctx.out, ctx.err); };
  });
}

}  // namespace meshop::cli
