#include "reconcilers/restarts_status.hpp"

#include <algorithm>
#include <set>

#include "api/json.hpp"
#include "operator/restart/halt.hpp"

namespace meshop::reconcilers {
namespace {

using restart::Action;

std::string workload_key(const restart::WorkloadPlan& p) {
  return p.kind + "/" + p.ns + "/" + p.name;
}

}  // namespace

std::string_view workload_state(const restart::PlanEntry& e, bool started, bool failed) {
  switch (e.action) {
    case Action::kNone:
      return "Failed";  // listed only when its new pods regressed (failed)
    case Action::kRestart:
    case Action::kWouldRestart:
      return started ? "InProgress" : "Pending";
    case Action::kInProgress:
      return failed ? "Failed" : "InProgress";
    case Action::kDeferred:
      return "Deferred";
    case Action::kSkipped:
    case Action::kBlocked:
      return "Skipped";
    case Action::kManual:
      return "ManualRestartNeeded";
    case Action::kApprovalNeeded:
      return "ApprovalNeeded";
    case Action::kHalted:
      return "Halted";
    case Action::kPaused:
      return "Paused";
    default:
      return "";
  }
}

std::map<std::string, RestartsSummary> summarize_restarts(const PassReport& report) {
  std::map<std::string, RestartsSummary> by_source;
  for (const std::string& iop : report.istio_operators)
    by_source[iop];  // zeros when idle
  std::set<std::string> failed_keys;
  for (const RolloutReport& f : report.failed)
    failed_keys.insert(f.key);
  for (const restart::PlanEntry& e : report.plan) {
    // Up to date, unless its new pods regressed after the rollout (the health watch).
    if (e.policy_source == "defaults" || (e.action == Action::kNone && failed_keys.empty()))
      continue;
    const std::string key = workload_key(e.plan);
    const bool failed = failed_keys.count(key) > 0;
    if (e.action == Action::kNone && !failed) continue;
    RestartsSummary& s = by_source[e.policy_source];
    if (e.overdue && e.plan.verdict == restart::Verdict::kStale) {
      ++s.overdue;
      if (s.overdue_first.size() < 5) s.overdue_first.push_back(key);
    }
    const bool started =
        std::find(report.started.begin(), report.started.end(), key) != report.started.end();
    const std::string_view state = workload_state(e, started, failed);
    if (state == "Pending" || state == "Halted" || state == "Paused") ++s.pending;
    if (state == "InProgress") ++s.in_progress;
    if (state == "Failed") ++s.failed;
    if (state == "Skipped") ++s.skipped;
    if (state == "ManualRestartNeeded") ++s.manual;
    if (state == "Deferred" || state == "ApprovalNeeded") ++s.deferred;
    if (s.workloads.size() < 100)
      s.workloads.push_back({key, std::string(state),
                             e.plan.reason ? std::string(restart::reason_name(*e.plan.reason)) : "",
                             e.why.empty() ? e.plan.detail : e.why, e.canary});
  }
  return by_source;
}

rapidjson::Value restarts_status(const RestartsSummary& s, const PassReport& report,
                                 const std::string& source, rapidjson::Document::AllocatorType& a) {
  rapidjson::Value restarts(rapidjson::kObjectType);
  restarts.AddMember("pending", s.pending, a);
  restarts.AddMember("inProgress", s.in_progress, a);
  restarts.AddMember("failed", s.failed, a);
  restarts.AddMember("deferred", s.deferred, a);
  restarts.AddMember("skipped", s.skipped, a);
  restarts.AddMember("manualRestartNeeded", s.manual, a);
  auto wave = report.waves.find(source);
  const bool halted =
      wave != report.waves.end() && wave->second.next.phase == restart::WavePhase::kHalted;
  const bool held = wave != report.waves.end() && wave->second.hold_all;
  restarts.AddMember("paused", report.paused || held, a);
  restarts.AddMember("halted", halted, a);
  std::string message = report.pause_reason;
  if (held) message = wave->second.why + (message.empty() ? "" : "; " + message);
  restarts.AddMember("message", api::make_string(message, a), a);
  rapidjson::Value items(rapidjson::kArrayType);
  for (const RestartsSummary::Workload& w : s.workloads) {
    rapidjson::Value item(rapidjson::kObjectType);
    item.AddMember("workload", api::make_string(w.workload, a), a);
    item.AddMember("state", api::make_string(w.state, a), a);
    item.AddMember("reason", api::make_string(w.reason, a), a);
    item.AddMember("message", api::make_string(w.message, a), a);
    if (w.canary) item.AddMember("canary", true, a);
    items.PushBack(item, a);
  }
  restarts.AddMember("workloads", items, a);
  if (wave != report.waves.end())
    restarts.AddMember("wave", restart::wave_to_json(wave->second.next, a), a);
  else
    restarts.AddMember("wave", rapidjson::Value(rapidjson::kNullType), a);
  return restarts;
}

std::optional<Condition> halted_condition(const PassReport& report, const std::string& source,
                                          const rapidjson::Value* iop) {
  auto wave = report.waves.find(source);
  const bool known = wave != report.waves.end();
  const rapidjson::Value* current =
      iop != nullptr ? find_condition(*iop, restart::kHaltedCondition) : nullptr;
  Condition c;
  c.type = std::string(restart::kHaltedCondition);
  if (known && wave->second.next.phase == restart::WavePhase::kHalted) {
    c.status = "True";
    c.reason = wave->second.next.halt_reason;
    c.message = wave->second.next.message;
    return c;
  }
  const bool resumed = known && wave->second.resumed_now;
  if (resumed) {
    c.status = "False";
    c.reason = "Resumed";
    c.message = "resumed by " + wave->second.resumed_by;
    return c;
  }
  // Lifted otherwise (a spec change, or the wave no longer known halted).
  if (current != nullptr && api::string_at(*current, {"status"}) == "True") {
    c.status = "False";
    c.reason = "Resumed";
    c.message = "the restart wave is no longer halted";
    return c;
  }
  return std::nullopt;
}

std::optional<Condition> overdue_condition(const RestartsSummary& s, const rapidjson::Value* iop) {
  Condition c;
  c.type = std::string(kOverdueCondition);
  if (s.overdue > 0) {
    c.status = "True";
    c.reason = "StalePastMaxStaleness";
    c.message = std::to_string(s.overdue) + " workload" + (s.overdue == 1 ? "" : "s") +
                " stale past maxStaleness:";
    for (const std::string& k : s.overdue_first)
      c.message += " " + k;
    if (s.overdue > static_cast<int>(s.overdue_first.size())) c.message += " ...";
    return c;
  }
  const rapidjson::Value* current =
      iop != nullptr ? find_condition(*iop, kOverdueCondition) : nullptr;
  if (current != nullptr && api::string_at(*current, {"status"}) == "True") {
    c.status = "False";
    c.reason = "NoneOverdue";
    c.message = "no workload is stale past maxStaleness";
    return c;
  }
  return std::nullopt;
}

std::optional<std::string> restarts_status_patch(const rapidjson::Value& iop,
                                                 const rapidjson::Value& restarts,
                                                 const std::vector<Condition>& wanted,
                                                 const std::string& last_written,
                                                 std::string_view now) {
  std::vector<Condition> to_write;
  for (const Condition& c : wanted)
    if (!condition_shows(find_condition(iop, c.type), c)) to_write.push_back(c);
  if (to_write.empty() && api::to_json(restarts) == last_written) return std::nullopt;
  rapidjson::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("restarts", rapidjson::Value(restarts, a), a);
  if (!to_write.empty()) {
    status.AddMember("conditions", merge_conditions(iop, to_write, now, a), a);
    guard_with_resource_version(patch, iop);
  }
  patch.AddMember("status", status, a);
  return api::to_json(patch);
}

}  // namespace meshop::reconcilers
