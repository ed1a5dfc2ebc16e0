// The canary group and the automatic halt of a restart wave (`spec.restarts.canary`, issue 15),
// and the health watch that follows every restart.
//
// A wave is what one IstioOperator's policy has to restart: the stale workloads whose entries
// it governs. With a canary policy the wave goes in two steps:
//   1. the canary group (the first `count` workloads of the wave in plan order, or those whose
//      labels match `selector`) restarts first, paced as usual; the others are held;
//   2. once every canary workload has rolled out, the group soaks: for `soak` its new pods must
//      stay Ready, their containers must not restart or wait in CrashLoopBackOff, and the rollout
//      must not stall (Deployment Progressing=False). After a healthy soak the others start.
// A regression of a canary workload (or its rollout failing) halts the wave: nothing of that
// IstioOperator starts until a person resumes it (`meshop restart resume`: the annotation
// kResumeAnnotation, which the reconciler honours and removes) or the spec changes
// (metadata.generation moves on: a new wave, with its own canary). `meshop restart pause` (the
// annotation kPauseAnnotation) holds a wave by hand; resume removes it.
//
// The state of a wave lives on the IstioOperator (status.restarts.wave and the RestartsHalted
// condition), so a restarted meshop, or the next `meshop restart run`, picks it up.
//
// Pure: no I/O; time is passed in.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "operator/restart/policy.hpp"

namespace meshop::restart {

inline constexpr std::string_view kPauseAnnotation = "meshop.io/restarts-paused";
inline constexpr std::string_view kResumeAnnotation = "meshop.io/restarts-resume";
inline constexpr std::string_view kHaltedCondition = "RestartsHalted";

// ---- Health of a restarted workload ----

struct Health {
  bool regressed = false;
  std::string reason;  // NotReady, CrashLoopBackOff, ContainerRestarts, RolloutStalled
  std::string what;    // "pod a-1: container app is in CrashLoopBackOff", for people
};

// The workload's new pods: those not in `stale_pods`, created at or after `since` when given
// (the restart), not being deleted. Regressed when the rollout stalled (a Deployment's
// Progressing condition False), a new pod's container (init containers included) waits in
// CrashLoopBackOff or has restarted, or, with `expect_ready` (the rollout has completed), a new
// pod is not Ready.
Health workload_health(const rapidjson::Value& workload,
                       const std::vector<const rapidjson::Value*>& pods,
                       const std::vector<std::string>& stale_pods, std::optional<SystemTime> since,
                       bool expect_ready);

// ---- The wave ----

enum class WavePhase {
  kNone,     // no wave under a canary policy (or none needed)
  kCanary,   // the canary group is restarting; the others wait
  kSoaking,  // the canary group rolled out; watched until soak_started + soak
  kPassed,   // the canary passed (or was resumed by a person): the others go
  kHalted,   // a canary regressed: nothing starts
};
std::string_view wave_phase_name(WavePhase p);

struct WaveState {
  WavePhase phase = WavePhase::kNone;
  std::vector<std::string> canary;  // workload keys, "Kind/namespace/name"
  std::optional<SystemTime> soak_started;
  std::int64_t generation = 0;  // the IstioOperator's metadata.generation the wave began under
  std::string halted_workload;  // kHalted: which canary regressed
  std::string halt_reason;      // kHalted: CanaryNotReady, CanaryCrashLoop, ... (condition reason)
  std::string message;          // kHalted: what regressed; else what the wave waits for

  bool operator==(const WaveState&) const = default;
};

// status.restarts.wave of an IstioOperator (kNone when absent or unreadable).
WaveState wave_from_status(const rapidjson::Value& istio_operator);
// The value written to status.restarts.wave.
rapidjson::Value wave_to_json(const WaveState& w, rapidjson::Document::AllocatorType& a);

// One canary workload as the pass sees it.
enum class MemberState {
  kWaiting,  // still to restart (Restart, WouldRestart, Deferred)
  kRolling,  // restarted, its rollout is under way
  kDone,     // restarted and rolled out: its pods match
  kGone,     // no longer part of the wave (deleted, opted out, skipped, blocked)
};
struct Member {
  MemberState state = MemberState::kWaiting;
  Health health;        // of its new pods (kRolling, kDone)
  std::string failure;  // its rollout failed (timeout, ProgressDeadlineExceeded)
};

struct WaveInput {
  WaveState previous;
  std::int64_t generation = 0;  // metadata.generation now
  bool resume = false;          // kResumeAnnotation is set
  std::string pause;            // kPauseAnnotation's value ("" = not paused)
  // The wave's workloads still to restart or rolling, in plan order, with their labels
  // (metadata.labels, may be null), for choosing a canary group.
  std::vector<std::string> affected;
  std::vector<const rapidjson::Value*> affected_labels;
  // The current canary group's members (keys of previous.canary; absent = kGone).
  std::map<std::string, Member> members;
};

struct WaveDecision {
  WaveState next;
  bool hold_all = false;     // nothing of this IstioOperator starts (halted or paused)
  bool hold_others = false;  // only the canary group may start
  std::string why;           // for the held entries
  bool halted_now = false;   // the wave halted in this decision (Event, metric)
  bool resumed_now = false;  // a halt was lifted in this decision (resume or a spec change)
  std::string resumed_by;    // "meshop restart resume" or "a spec change (generation N)"
};

// The next state of one IstioOperator's wave. `canary` is its policy's canary (null: none).
WaveDecision decide_wave(const CanaryPolicy* canary, const WaveInput& in, SystemTime now);

// The canary group of a new wave: the first `count` of `affected`, or those whose labels match.
std::vector<std::string> choose_canary(const CanaryPolicy& canary,
                                       const std::vector<std::string>& affected,
                                       const std::vector<const rapidjson::Value*>& labels);

}  // namespace meshop::restart
