#include "operator/restart/halt.hpp"

#include <algorithm>

#include "api/json.hpp"
#include "api/record.hpp"

namespace meshop::restart {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

Health regressed(std::string reason, std::string what) {
  return {true, std::move(reason), std::move(what)};
}

// A container of `pod` that waits in CrashLoopBackOff or has restarted, from `list`.
std::optional<Health> container_regression(const rapidjson::Value& pod, const char* list) {
  const rapidjson::Value* status = api::field(pod, "/status");
  const rapidjson::Value* statuses =
      status != nullptr && status->IsObject() ? api::find_member(*status, list) : nullptr;
  if (statuses == nullptr || !statuses->IsArray()) return std::nullopt;
  std::string pod_name(api::field_string(pod, "/metadata/name"));
  for (const rapidjson::Value& c : statuses->GetArray()) {
    std::string name = api::string_at(c, {"name"});
    if (api::string_at(c, {"state", "waiting", "reason"}) == "CrashLoopBackOff")
      return regressed("CrashLoopBackOff",
                       "pod " + pod_name + ": container " + name + " is in CrashLoopBackOff");
    const rapidjson::Value* restarts = api::find_member(c, "restartCount");
    if (restarts != nullptr && restarts->IsInt() && restarts->GetInt() > 0)
      return regressed("ContainerRestarts", "pod " + pod_name + ": container " + name +
                                                " restarted " + std::to_string(restarts->GetInt()) +
                                                " times");
  }
  return std::nullopt;
}

}  // namespace

Health workload_health(const rapidjson::Value& workload,
                       const std::vector<const rapidjson::Value*>& pods,
                       const std::vector<std::string>& stale_pods, std::optional<SystemTime> since,
                       bool expect_ready) {
  if (api::string_at(workload, {"kind"}) == "Deployment") {
    if (const rapidjson::Value* conds = api::find(workload, "/status/conditions");
        conds != nullptr && conds->IsArray())
      for (const rapidjson::Value& c : conds->GetArray())
        if (api::string_at(c, {"type"}) == "Progressing" &&
            api::string_at(c, {"status"}) == "False")
          return regressed("RolloutStalled", "the rollout stalled: Progressing=False (" +
                                                 api::string_at(c, {"reason"}) + ": " +
                                                 api::string_at(c, {"message"}) + ")");
  }
  for (const rapidjson::Value* p : pods) {
    std::string name(api::field_string(*p, "/metadata/name"));
    if (std::find(stale_pods.begin(), stale_pods.end(), name) != stale_pods.end()) continue;
    if (api::field(*p, "/metadata/deletionTimestamp") != nullptr) continue;
    if (since) {
      auto created = parse_rfc3339(api::field_string(*p, "/metadata/creationTimestamp"));
      if (!created || *created < std::chrono::floor<std::chrono::seconds>(*since)) continue;
    }
    if (const rapidjson::Value* status = api::field(*p, "/status");
        status != nullptr && status->IsObject()) {
      for (const char* list : {"initContainerStatuses", "containerStatuses"})
        if (auto r = container_regression(*p, list)) return *r;
    }
    if (!expect_ready) continue;
    const rapidjson::Value* ready = nullptr;
    if (const rapidjson::Value* conds = api::field(*p, "/status/conditions");
        conds != nullptr && conds->IsArray())
      for (const rapidjson::Value& c : conds->GetArray())
        if (api::string_at(c, {"type"}) == "Ready") ready = &c;
    if (ready == nullptr || api::string_at(*ready, {"status"}) != "True") {
      std::string detail;
      if (ready != nullptr && !api::string_at(*ready, {"reason"}).empty())
        detail = " (" + api::string_at(*ready, {"reason"}) +
                 (api::string_at(*ready, {"message"}).empty()
                      ? ""
                      : ": " + api::string_at(*ready, {"message"})) +
                 ")";
      return regressed("NotReady", "pod " + name + " is not Ready" + detail);
    }
  }
  return {};
}

std::string_view wave_phase_name(WavePhase p) {
  switch (p) {
    case WavePhase::kNone:
      return "None";
    case WavePhase::kCanary:
      return "Canary";
    case WavePhase::kSoaking:
      return "Soaking";
    case WavePhase::kPassed:
      return "Passed";
    case WavePhase::kHalted:
      return "Halted";
  }
  return "None";
}

WaveState wave_from_status(const rapidjson::Value& istio_operator) {
  WaveState w;
  const rapidjson::Value* v = api::find(istio_operator, "/status/restarts/wave");
  if (v == nullptr || !v->IsObject()) return w;
  std::string phase = api::string_at(*v, {"phase"});
  for (WavePhase p :
       {WavePhase::kCanary, WavePhase::kSoaking, WavePhase::kPassed, WavePhase::kHalted})
    if (phase == wave_phase_name(p)) w.phase = p;
  if (w.phase == WavePhase::kNone) return WaveState{};
  if (const rapidjson::Value* c = api::find_member(*v, "canary"); c != nullptr && c->IsArray())
    for (const rapidjson::Value& k : c->GetArray())
      if (k.IsString()) w.canary.push_back(k.GetString());
  w.soak_started = parse_rfc3339(api::string_at(*v, {"soakStartedAt"}));
  if (const rapidjson::Value* g = api::find_member(*v, "generation"); g != nullptr && g->IsInt64())
    w.generation = g->GetInt64();
  w.halted_workload = api::string_at(*v, {"haltedWorkload"});
  w.halt_reason = api::string_at(*v, {"haltReason"});
  w.message = api::string_at(*v, {"message"});
  return w;
}

rapidjson::Value wave_to_json(const WaveState& w, rapidjson::Document::AllocatorType& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("phase", api::make_string(wave_phase_name(w.phase), a), a);
  rapidjson::Value canary(rapidjson::kArrayType);
  for (const std::string& k : w.canary)
    canary.PushBack(api::make_string(k, a), a);
  v.AddMember("canary", canary, a);
  if (w.soak_started)
    v.AddMember("soakStartedAt", api::make_string(rfc3339(*w.soak_started), a), a);
  v.AddMember("generation", rapidjson::Value(static_cast<int64_t>(w.generation)), a);
  if (!w.halted_workload.empty())
    v.AddMember("haltedWorkload", api::make_string(w.halted_workload, a), a);
  if (!w.halt_reason.empty()) v.AddMember("haltReason", api::make_string(w.halt_reason, a), a);
  v.AddMember("message", api::make_string(w.message, a), a);
  return v;
}

std::vector<std::string> choose_canary(const CanaryPolicy& canary,
                                       const std::vector<std::string>& affected,
                                       const std::vector<const rapidjson::Value*>& labels) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < affected.size(); ++i) {
    if (canary.count) {
      if (static_cast<int>(out.size()) >= *canary.count) break;
      out.push_back(affected[i]);
    } else if (canary.selector &&
               canary.selector->matches(i < labels.size() ? labels[i] : nullptr)) {
      out.push_back(affected[i]);
    }
  }
  return out;
}

WaveDecision decide_wave(const CanaryPolicy* canary, const WaveInput& in, SystemTime now) {
  WaveDecision d;
  WaveState w = in.previous;
  auto lift = [&](std::string by) {
    d.resumed_now = true;
    d.resumed_by = std::move(by);
  };
  // A new spec is a new wave (with the new spec's canary); it lifts a halt.
  if (w.phase != WavePhase::kNone && w.generation != in.generation) {
    if (w.phase == WavePhase::kHalted)
      lift("a spec change (generation " + std::to_string(in.generation) + ")");
    w = WaveState{};
  }
  if (in.resume && w.phase == WavePhase::kHalted) {
    lift("meshop restart resume");
    w.phase = WavePhase::kPassed;  // a person accepted the canary
    w.halted_workload.clear();
    w.halt_reason.clear();
    w.message = "resumed after the halt by " + d.resumed_by;
  }
  if (canary == nullptr) w = WaveState{};

  if (canary != nullptr && w.phase == WavePhase::kNone && !in.affected.empty()) {
    w.generation = in.generation;
    w.canary = choose_canary(*canary, in.affected, in.affected_labels);
    if (w.canary.empty()) {
      w.phase = WavePhase::kPassed;
      w.message = "no workload of the wave matches the canary selector " +
                  (canary->selector ? canary->selector->to_string() : std::string()) +
                  "; the wave goes without a canary";
    } else {
      w.phase = WavePhase::kCanary;
    }
  }

  if (canary != nullptr && (w.phase == WavePhase::kCanary || w.phase == WavePhase::kSoaking)) {
    std::vector<std::string> waiting;
    int live = 0;
    for (const std::string& key : w.canary) {
      auto it = in.members.find(key);
      if (it == in.members.end() || it->second.state == MemberState::kGone) continue;
      ++live;
      const Member& m = it->second;
      if (!m.failure.empty() || m.health.regressed) {
        w.phase = WavePhase::kHalted;
        w.halted_workload = key;
        // What its pods show names the regression; else why its rollout failed.
        w.halt_reason = m.health.regressed ? "Canary" + m.health.reason : "CanaryRolloutFailed";
        w.message =
            "canary " + key + " regressed: " + (m.health.regressed ? m.health.what : m.failure);
        w.soak_started.reset();
        d.halted_now = true;
        break;
      }
      if (m.state != MemberState::kDone) waiting.push_back(key);
    }
    if (w.phase != WavePhase::kHalted) {
      if (live == 0) {
        w.phase = WavePhase::kPassed;
        w.message = "no workload of the canary group is left to watch";
      } else if (!waiting.empty()) {
        w.phase = WavePhase::kCanary;
        w.soak_started.reset();
        w.message = "waiting for the canary group to roll out: " + join(waiting);
      } else {
        if (!w.soak_started) w.soak_started = now;
        SystemTime end = *w.soak_started + canary->soak;
        if (now >= end) {
          w.phase = WavePhase::kPassed;
          w.message = "the canary group (" + join(w.canary) + ") stayed healthy for " +
                      go_duration(canary->soak);
        } else {
          w.phase = WavePhase::kSoaking;
          w.message = "the canary group (" + join(w.canary) + ") soaks until " + rfc3339(end) +
                      " (soak " + go_duration(canary->soak) + ")";
        }
      }
    }
    if (w.phase == WavePhase::kCanary || w.phase == WavePhase::kSoaking) {
      d.hold_others = true;
      d.why = w.message;
    }
  }
  // Everything of the wave went: the next stale workload begins a new one.
  if (w.phase == WavePhase::kPassed && in.affected.empty()) w = WaveState{};

  if (w.phase == WavePhase::kHalted) {
    d.hold_all = true;
    d.why = "restarts halted: " + w.message +
            "; nothing more starts until `meshop restart resume` or a spec change";
  } else if (!in.pause.empty() && !in.resume) {
    d.hold_all = true;
    d.why = "restarts paused by hand (" + std::string(kPauseAnnotation) + ": " + in.pause +
            "); `meshop restart resume` continues";
  }
  d.next = std::move(w);
  return d;
}

}  // namespace meshop::restart
