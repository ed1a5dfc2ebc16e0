// `meshop check [-n NS] [POD] [-o table|json]`: which injector webhook and revision serve a
// namespace (or one pod of it), whether and why its pods are (or would be) injected, whether
// their sidecars are stale and what `meshop restart` would do, with the findings of Istio's
// analyzers (operator/restart/check.hpp). The answer is computed from one pass of the restarts
// reconciler, the pass `meshop restart plan` prints, so the two never disagree.
//
// Exit codes: 0 nothing wrong (Info findings at most), 1 a Warning or Error finding,
// 2 usage error, 3 no verdict (the cluster could not be read, or the namespace or pod does not
// exist).
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/restart_pass.hpp"
#include "operator/kube/config.hpp"
#include "operator/restart/check.hpp"

namespace meshop::cli {
namespace {

struct CheckOptions {
  std::string kubeconfig, context;
  std::string ns;
  std::string pod;
  std::string output = "table";
  std::string control_plane_namespace = "istio-system";
};

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items)
    out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "-" : out;
}

std::string status_of(const restart::WorkloadVerdict& w) {
  std::string s(restart::verdict_name(w.verdict));
  return w.reason.empty() ? s : s + " (" + w.reason + ")";
}

std::string restart_of(const restart::WorkloadVerdict& w) {
  std::string s(restart::action_name(w.action));
  return w.action_why.empty() ? s : s + ": " + w.action_why;
}

rapidjson::Document report_json(const restart::CheckReport& r) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  auto str = [&](std::string_view s) { return api::make_string(s, a); };
  auto strings = [&](const std::vector<std::string>& items) {
    rapidjson::Value out(rapidjson::kArrayType);
    for (const std::string& s : items)
      out.PushBack(str(s), a);
    return out;
  };
  d.AddMember("namespace", str(r.ns), a);
  if (!r.pod.empty()) {
    d.AddMember("pod", str(r.pod), a);
    rapidjson::Value sidecar(rapidjson::kObjectType);
    sidecar.AddMember("injected", r.pod_injected, a);
    sidecar.AddMember("revision", str(r.pod_revision), a);
    sidecar.AddMember("proxyImage", str(r.pod_proxy_image), a);
    d.AddMember("sidecar", sidecar, a);
  }
  d.AddMember("injected", r.injected, a);
  d.AddMember("revision", str(r.revision), a);
  d.AddMember("tag", str(r.tag), a);
  d.AddMember("webhook", str(r.configuration), a);
  d.AddMember("webhookEntry", str(r.entry), a);
  d.AddMember("reason", str(r.why), a);
  rapidjson::Value webhooks(rapidjson::kArrayType);
  for (const restart::WebhookVerdict& w : r.webhooks) {
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("name", str(w.configuration), a);
    item.AddMember("revision", str(w.revision), a);
    item.AddMember("tag", str(w.tag), a);
    item.AddMember("injects", w.injects, a);
    item.AddMember("entry", str(w.entry), a);
    item.AddMember("reason", str(w.reason), a);
    webhooks.PushBack(item, a);
  }
  d.AddMember("webhooks", webhooks, a);
  rapidjson::Value workloads(rapidjson::kArrayType);
  for (const restart::WorkloadVerdict& w : r.workloads) {
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("kind", str(w.kind), a);
    item.AddMember("name", str(w.name), a);
    item.AddMember("pods", static_cast<uint64_t>(w.pods), a);
    item.AddMember("sidecars", strings(w.sidecars), a);
    item.AddMember("targetRevision", str(w.target_revision), a);
    item.AddMember("verdict", str(restart::verdict_name(w.verdict)), a);
    item.AddMember("reason", str(w.reason), a);
    item.AddMember("detail", str(w.detail), a);
    item.AddMember("action", str(restart::action_name(w.action)), a);
    item.AddMember("actionReason", str(w.action_why), a);
    item.AddMember("stalePods", strings(w.stale_pods), a);
    workloads.PushBack(item, a);
  }
  d.AddMember("workloads", workloads, a);
  rapidjson::Value findings(rapidjson::kArrayType);
  for (const restart::Finding& f : r.findings) {
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("severity", str(restart::severity_name(f.severity)), a);
    item.AddMember("code", str(f.code), a);
    item.AddMember("name", str(f.name), a);
    item.AddMember("object", str(f.object), a);
    item.AddMember("message", str(f.message), a);
    findings.PushBack(item, a);
  }
  d.AddMember("findings", findings, a);
  d.AddMember("ok", r.ok(), a);
  return d;
}

void print_report(const restart::CheckReport& r, std::ostream& out) {
  if (r.pod.empty()) {
    out << "Namespace " << r.ns << ": ";
  } else {
    out << "Pod " << r.ns << "/" << r.pod << ": ";
    if (r.pod_injected)
      out << "sidecar of revision " << r.pod_revision
          << (r.pod_proxy_image.empty() ? "" : " (" + r.pod_proxy_image + ")");
    else
      out << "no sidecar";
    out << "; created now it would be ";
  }
  out << (r.injected ? "injected by revision " + r.revision : std::string("not injected")) << "\n  "
      << r.why << "\n";

  if (!r.webhooks.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"WEBHOOK", "REVISION", "TAG", "INJECTS", "REASON"}};
    for (const restart::WebhookVerdict& w : r.webhooks)
      rows.push_back(
          {w.configuration, w.revision, or_dash(w.tag), w.injects ? "yes" : "no", w.reason});
    out << '\n';
    write_table(rows, out);
  }

  if (!r.workloads.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"WORKLOAD", "PODS", "SIDECARS", "TARGET", "STATUS", "RESTART"}};
    for (const restart::WorkloadVerdict& w : r.workloads)
      rows.push_back({w.kind + "/" + w.name, std::to_string(w.pods), joined(w.sidecars),
                      or_dash(w.target_revision), status_of(w), restart_of(w)});
    out << '\n';
    write_table(rows, out);
  } else if (!r.pod.empty()) {
    out << "\nIts owner is not a workload meshop restarts (nothing for meshop restart to do).\n";
  }

  std::size_t warnings = 0, errors = 0;
  if (!r.findings.empty()) {
    std::vector<std::vector<std::string>> rows = {{"SEVERITY", "CODE", "OBJECT", "MESSAGE"}};
    for (const restart::Finding& f : r.findings) {
      rows.push_back({std::string(restart::severity_name(f.severity)),
                      f.code.empty() ? f.name : f.code + " " + f.name, f.object, f.message});
      warnings += f.severity == restart::Severity::kWarning;
      errors += f.severity == restart::Severity::kError;
    }
    out << '\n';
    write_table(rows, out);
  }
  out << '\n'
      << (r.ok()
              ? "OK: nothing is wrong."
              : std::to_string(errors) + " error(s), " + std::to_string(warnings) + " warning(s).")
      << '\n';
}

int check_command(const CheckOptions& o, std::ostream& out, std::ostream& err) {
  kube::LoadOptions load;
  load.kubeconfig = o.kubeconfig;
  load.context = o.context;
  std::string ns = o.ns;
  if (ns.empty()) {
    auto config = kube::load_default_config(load);
    if (!config.ok()) {
      err << "Error: kubeconfig: " << config.error().message << '\n';
      return kExitNoVerdict;
    }
    ns = config->default_namespace;
  }
  boost::asio::io_context ioc;
  auto client = connect(ioc.get_executor(), o.kubeconfig, o.context, err);
  if (!client) return kExitNoVerdict;
  reconcilers::RestartsConfig rc;
  rc.namespace_filter = ns;
  rc.control_plane_namespace = o.control_plane_namespace;
  reconcilers::RestartsReconciler reconciler(client, rc);
  std::string error;
  auto pass = run_pass(reconciler, ioc, false, error);
  if (!pass || !pass->ok()) {
    err << "Error: " << (pass ? pass->message() : error) << '\n';
    return kExitNoVerdict;
  }
  const reconcilers::PassReport& report = **pass;
  auto checked = restart::check(*report.view, report.plan, report.engines->desired(),
                                restart::CheckTarget{ns, o.pod});
  if (!checked) {
    err << "Error: " << checked.message() << '\n';
    return kExitNoVerdict;
  }
  if (o.output == "json")
    out << api::to_pretty_json(report_json(*checked)) << '\n';
  else
    print_report(*checked, out);
  return checked->ok() ? kExitOk : kExitError;
}

}  // namespace

void add_check_command(CLI::App& root, Context& ctx) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = root.add_subcommand(
      "check",
      "Explain a namespace's (or pod's) injection: webhook, revision, why, stale sidecars and "
      "what 'meshop restart' would do; exit 1 when something is wrong");
  cmd->add_option("pod", o->pod, "A pod of the namespace (default: the whole namespace)");
  cmd->add_option("-n,--namespace", o->ns, "Namespace (default: the context's namespace)");
  cmd->add_option("-o,--output", o->output, "Output format: table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--kubeconfig", o->kubeconfig, "Kubeconfig file (default: $KUBECONFIG)");
  cmd->add_option("--context", o->context, "Kubeconfig context");
  cmd->add_option("--control-plane-namespace", o->control_plane_namespace,
                  "Namespace of the control planes and their injector ConfigMaps")
      ->capture_default_str();
  cmd->footer(
      "Exit codes: 0 nothing wrong, 1 a warning or error finding, 2 usage error, 3 no verdict\n"
      "(the cluster could not be read, or the namespace or pod does not exist).");
  cmd->callback(
      [&ctx, o] { ctx.action = [&ctx, o] { return check_command(*o, ctx.out, ctx.err); }; });
}

}  // namespace meshop::cli
