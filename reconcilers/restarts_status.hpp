// What the restarts reconciler reports on each IstioOperator (step 4 of a pass,
// reconcilers/restarts.hpp): `status.restarts` and its two conditions, computed from a pass's
// report by pure functions; RestartsReconciler::report_status makes the one write per
// IstioOperator (reconcilers/conditions.hpp: its conditions merged into the object as read,
// guarded by its resourceVersion).
//
//   status.restarts: {pending, inProgress, failed, deferred, skipped, manualRestartNeeded,
//                     paused, halted, message, workloads: [{workload, state, reason, message,
//                     canary?}] (the first 100), wave (halt.hpp's, or null)}
//   RestartsHalted   True while the IstioOperator's wave is halted; False (Resumed) once a halt
//                    was lifted (by resume, a spec change, or the wave no longer known halted).
//   RestartsOverdue  True while workloads of its policy are stale past maxStaleness (naming the
//                    first five); False (NoneOverdue) once none is, after a True.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/cluster_plan.hpp"
#include "reconcilers/conditions.hpp"
#include "reconcilers/restarts.hpp"

namespace meshop::reconcilers {

// One IstioOperator's share of a pass: the entries its policy governs.
struct RestartsSummary {
  int pending = 0, in_progress = 0, failed = 0, skipped = 0, manual = 0, deferred = 0;
  struct Workload {
    std::string workload;  // Kind/namespace/name
    std::string state;     // workload_state()
    std::string reason;    // the stale reason, "" when none
    std::string message;
    bool canary = false;
  };
  std::vector<Workload> workloads;  // the first 100 listed
  // Stale past maxStaleness: how many, and the first five.
  int overdue = 0;
  std::vector<std::string> overdue_first;
};

// The state status.restarts.workloads gives entry `e`: Pending, InProgress, Failed, Deferred,
// Skipped, ManualRestartNeeded, ApprovalNeeded, Halted or Paused ("" for an action it does not
// list). `started`: restarted in this pass; `failed`: its rollout or its new pods failed.
std::string_view workload_state(const restart::PlanEntry& e, bool started, bool failed);

// Pure. Per IstioOperator ("<namespace>/<name>"): every one of report.istio_operators (zeros
// when idle) and the policy source of every entry listed. An entry is listed unless its
// policy is the defaults, or it is up to date (Action kNone) and not among report.failed (a
// restart whose new pods regressed after the rollout).
std::map<std::string, RestartsSummary> summarize_restarts(const PassReport& report);

// Pure. status.restarts of IstioOperator `source` from its summary and the pass's pause and
// wave decisions.
rapidjson::Value restarts_status(const RestartsSummary& summary, const PassReport& report,
                                 const std::string& source,
                                 rapidjson::Document::AllocatorType& allocator);

// Pure. The RestartsHalted condition to show on `iop` (the IstioOperator as read, or null);
// nullopt when there is nothing to say (never halted, or a False already there).
std::optional<Condition> halted_condition(const PassReport& report, const std::string& source,
                                          const rapidjson::Value* iop);

// Pure. The RestartsOverdue condition to show on `iop` (as read, or null); nullopt when nothing
// is overdue and the object holds no True.
std::optional<Condition> overdue_condition(const RestartsSummary& summary,
                                           const rapidjson::Value* iop);

// Pure. The merge patch of the status subresource for `iop` as read: `restarts` (status.restarts)
// and the conditions of `wanted` that `iop` does not show, merged into its list and guarded by
// its resourceVersion (reconcilers/conditions.hpp). nullopt when no condition is to be written
// and `restarts` is `last_written` (status.restarts as this process last wrote it).
std::optional<std::string> restarts_status_patch(const rapidjson::Value& iop,
                                                 const rapidjson::Value& restarts,
                                                 const std::vector<Condition>& wanted,
                                                 const std::string& last_written,
                                                 std::string_view now);

}  // namespace meshop::reconcilers
