// The restart policy (IstioOperator `spec.restarts`, a meshop extension) and the pure rules
// that apply it: maintenance windows, concurrency limits, the "same cause never restarts a
// workload twice" record, PodDisruptionBudget gating, and the restart patch itself.
//
// Pure: no I/O; time is passed in.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/label_selector.hpp"
#include "api/result.hpp"
#include "api/time.hpp"
#include "operator/restart/planner.hpp"

namespace meshop::restart {

using SystemTime = std::chrono::system_clock::time_point;

enum class Mode { kAuto, kDryRun, kOff };
enum class FailurePolicy { kPause, kContinue };
// How a workload is restarted. Rollout: the pod template's restartedAt annotation, as
// `kubectl rollout restart` (the workload's own rollout replaces the pods). Evict: its pods one
// at a time through the Eviction API, as `kubectl drain` (the apiserver honours every
// PodDisruptionBudget; the workload object is never written). See evict.hpp.
enum class Strategy { kRollout, kEvict };
// spec.restarts.maxVersionSkew: how far (in Istio versions) a restart may move a workload's
// proxy without a person's approval. Any (default) never asks.
enum class VersionSkew { kPatch, kMinor, kAny };
std::string_view mode_name(Mode m);
std::string_view strategy_name(Strategy s);
std::string_view version_skew_name(VersionSkew v);

// UTC days and hours in which restarts may START (a running rollout is never interrupted).
// `end` before `start` spans midnight; `days` then names the day the window opens.
struct MaintenanceWindow {
  std::vector<int> days;  // 0 = Sunday ... 6 = Saturday; empty = every day
  int start_minute = 0;   // minutes after 00:00 UTC
  int end_minute = 0;

  bool allows(SystemTime t) const;
  // The next time at or after `t` when the window is open.
  SystemTime next_open(SystemTime t) const;
};

// spec.restarts.canary: which of a wave's workloads restart first, and how long they must stay
// healthy before the others start (halt.hpp decides). Exactly one of count and selector.
struct CanaryPolicy {
  std::optional<int> count;                    // the first N workloads of the wave (plan order)
  std::optional<api::LabelSelector> selector;  // the wave's workloads whose labels match
  std::chrono::seconds soak = std::chrono::minutes(5);
};

struct Policy {
  Mode mode = Mode::kDryRun;
  Strategy strategy = Strategy::kRollout;
  int max_concurrent = 1;
  std::optional<int> max_concurrent_per_namespace;
  std::chrono::seconds rollout_timeout = std::chrono::minutes(10);
  FailurePolicy failure_policy = FailurePolicy::kPause;
  bool include_template_changes = false;
  std::optional<MaintenanceWindow> maintenance_window;
  // Flap limit: a workload is restarted at most once per min_interval, whatever causes arrive
  // meanwhile (0 = no limit). A cause inside the interval is Deferred to its end.
  std::chrono::seconds min_interval = std::chrono::minutes(10);
  std::optional<CanaryPolicy> canary;
  // Version gate: a move whose Istio versions differ by more than this is ApprovalNeeded.
  VersionSkew max_version_skew = VersionSkew::kAny;
  // Deadline: a workload stale for longer than max_staleness is overdue (Warning Event,
  // condition RestartsOverdue); with restart_after_deadline it restarts outside the window.
  std::optional<std::chrono::seconds> max_staleness;
  bool restart_after_deadline = false;
};

// An Istio version as the bundled sets, spec.version and proxy image tags spell it: "1.30",
// "1.30.2", "1.31-dev.eed52ebb66ad", "1.30.1-distroless" (patch unknown when absent).
struct IstioVersion {
  int major = 0;
  int minor = 0;
  std::optional<int> patch;
};
std::optional<IstioVersion> parse_istio_version(std::string_view text);
// The version in an image reference's tag ("registry/istio/proxyv2:1.30.2" → "1.30.2"), or "".
std::string version_of_image(std::string_view image);
// `from` → `to` stays within `skew` (Patch: same major.minor; Minor: same major and at most one
// minor apart; Any: always). Unknown versions never gate.
bool within_skew(const IstioVersion& from, const IstioVersion& to, VersionSkew skew);

// The approval a person leaves (`meshop restart approve`): on the workload for it alone, on the
// target revision's IstioOperator for all its workloads. The value names the target revision,
// optionally with its Istio version ("canary" or "canary@1.31"): a later move to another
// revision (or, with @version, another version) needs a new approval.
inline constexpr std::string_view kRestartApprovedAnnotation = "meshop.io/restart-approved";
bool approval_matches(std::string_view value, std::string_view target_revision,
                      std::string_view target_version);
// Why a stale workload moving `current_version` → `target_version` waits for approval
// ("Istio 1.30 → 1.31 exceeds maxVersionSkew Patch; approve with ..."), nullopt when it may go.
std::optional<std::string> version_gate(std::string_view current_version,
                                        std::string_view target_version, VersionSkew skew,
                                        bool approved);

// When a workload became stale for `cause`: meshop records it on the workload's metadata (not
// its pod template) the first time a pass sees the cause, as "<RFC 3339> <cause>", so it
// survives meshop's restarts and leader changes. nullopt when absent or for another cause.
inline constexpr std::string_view kStaleSinceAnnotation = "meshop.io/stale-since";
std::optional<SystemTime> stale_since_of(const rapidjson::Value& workload, std::string_view cause);
std::string stale_since_value(SystemTime since, std::string_view cause);
// Stale since `since` for longer than the policy's maxStaleness at `now`.
bool overdue(SystemTime since, const Policy& policy, SystemTime now);

// When meshop last restarted a workload, and for which cause.
struct LastRestart {
  SystemTime at;
  std::string cause;
};
// Strategy Rollout: the record on the pod template (restartedAt, when meshop's restart-cause
// annotation is present too: a restartedAt of `kubectl rollout restart` alone is not ours).
std::optional<LastRestart> last_restart_of(const rapidjson::Value& workload);
// Inside the flap interval of `last`: why the restart waits, for people ("restarted at T for C;
// next at T+minInterval"); nullopt when a restart may go now.
std::optional<std::string> flap_deferral(const std::optional<LastRestart>& last,
                                         const Policy& policy, SystemTime now);

// `restarts` is the value of spec.restarts (or null: every default). Errors name the field
// ("spec.restarts.maxConcurrent: must be at least 1, got 0"); the CRD's schema rejects most of
// these already, this guards objects written before it or through `kubectl replace
// --validate=false`.
api::Result<Policy> parse_policy(const rapidjson::Value* restarts);
// spec.restarts.canary (`path` prefixes the errors): count >= 1 or a label selector, not both;
// soak a duration (default 5m).
api::Result<CanaryPolicy> parse_canary(const rapidjson::Value& canary, const std::string& path);

// "1h30m", "10m", "45s", "0s" (for people; parse_go_duration reads it back).
std::string go_duration(std::chrono::seconds d);

// A Go duration as the CRD's pattern allows ("10m", "1h30m", "90s", "1.5h").
api::Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

// The record meshop leaves on a workload's pod template: which cause it restarted for.
// cause = "<reason>/<target revision or none>[/<image or fingerprint>]".
inline constexpr std::string_view kRestartCauseAnnotation = "meshop.io/restart-cause";
inline constexpr std::string_view kRestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt";
inline constexpr std::string_view kOptOutAnnotation = "meshop.io/restart";

std::string restart_cause(const WorkloadPlan& plan, std::string_view detail_key = {});
// The workload's pod template already records `cause`.
bool already_restarted_for(const rapidjson::Value& workload, std::string_view cause);
// The strategic-merge patch `kubectl rollout restart` sends, plus the cause record; with a
// `resource_version`, a precondition: the apiserver refuses it (409) when the workload changed
// since the copy the plan was made from (a lagging store must not restart it twice).
std::string restart_patch(std::string_view cause, SystemTime now,
                          std::string_view resource_version = {});
// RFC 3339 in UTC with seconds, as kubectl writes restartedAt, and the inverse (api/time.hpp).
using api::parse_rfc3339;
using api::rfc3339;

// `meshop.io/restart: "false"` on the workload or its namespace.
bool opted_out(const rapidjson::Value& workload, const rapidjson::Value* namespace_object);

// The name of a PodDisruptionBudget among `pdbs` (same namespace) that selects pods with
// `pod_labels` and currently allows no disruption; "" when none blocks.
std::string blocking_pdb(const std::vector<const rapidjson::Value*>& pdbs,
                         const rapidjson::Value* pod_labels);

// How many of `candidates` (in order, each with its namespace) may start now, given the
// namespaces of rollouts in progress; returns the indexes to start.
std::vector<std::size_t> admit(const std::vector<std::string>& candidate_namespaces,
                               const std::vector<std::string>& in_progress_namespaces,
                               const Policy& policy);

}  // namespace meshop::restart
