#include "operator/restart/evict.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>
#include <set>

#include "api/json.hpp"
#include "api/record.hpp"
#include "api/time.hpp"

namespace meshop::restart {
namespace {

// An IntOrString as Kubernetes scales it (intstr.GetScaledValueFromIntOrPercent); `fallback`
// when absent or malformed (the apiserver validates these fields).
int scaled(const rapidjson::Value* v, int total, bool round_up, int fallback) {
  if (v == nullptr) return fallback;
  if (v->IsInt()) return v->GetInt();
  if (!v->IsString()) return fallback;
  std::string s = v->GetString();
  if (s.empty() || s.back() != '%') return fallback;
  s.pop_back();
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return fallback;
  double value = std::stod(s) * total / 100.0;
  return static_cast<int>(round_up ? std::ceil(value) : std::floor(value));
}

int int_at(const rapidjson::Value& o, const char* pointer, int fallback) {
  const rapidjson::Value* v = api::find(o, pointer);
  return v != nullptr && v->IsInt() ? v->GetInt() : fallback;
}

bool terminating(const rapidjson::Value& pod) {
  return api::field(pod, "/metadata/deletionTimestamp") != nullptr;
}

bool ready(const rapidjson::Value& pod) {
  const rapidjson::Value* conds = api::field(pod, "/status/conditions");
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const rapidjson::Value& c : conds->GetArray())
    if (api::string_at(c, {"type"}) == "Ready") return api::string_at(c, {"status"}) == "True";
  return false;
}

std::optional<std::chrono::system_clock::time_point> created(const rapidjson::Value& pod) {
  return api::parse_rfc3339(api::field_string(pod, "/metadata/creationTimestamp"));
}

}  // namespace

int resolve_max_unavailable(const rapidjson::Value& workload, int desired, std::string* field) {
  std::string kind = api::string_at(workload, {"kind"});
  auto set_field = [&](const char* f) {
    if (field != nullptr) *field = f;
  };
  if (kind == "Deployment") {
    if (api::string_at(workload, {"spec", "strategy", "type"}) == "Recreate") {
      set_field("spec.strategy.type");
      return 1;
    }
    set_field("spec.strategy.rollingUpdate.maxUnavailable");
    const rapidjson::Value* rolling = api::find(workload, "/spec/strategy/rollingUpdate");
    const rapidjson::Value* mu =
        rolling != nullptr ? api::find_member(*rolling, "maxUnavailable") : nullptr;
    const rapidjson::Value* ms =
        rolling != nullptr ? api::find_member(*rolling, "maxSurge") : nullptr;
    rapidjson::Value quarter("25%");
    int unavailable = scaled(mu != nullptr ? mu : &quarter, desired, false, 0);
    int surge = scaled(ms != nullptr ? ms : &quarter, desired, true, 0);
    // The Deployment controller's fenceposts: both 0 would deadlock, so unavailable is 1.
    if (unavailable == 0 && surge == 0) return 1;
    return unavailable;
  }
  if (kind == "StatefulSet") {
    set_field("spec.updateStrategy.rollingUpdate.maxUnavailable");
    int v = scaled(api::find(workload, "/spec/updateStrategy/rollingUpdate/maxUnavailable"),
                   desired, false, 1);
    return std::max(v, 1);
  }
  if (kind == "DaemonSet") {
    if (api::string_at(workload, {"spec", "updateStrategy", "type"}) == "OnDelete") {
      set_field("spec.updateStrategy.type");
      return 1;
    }
    set_field("spec.updateStrategy.rollingUpdate.maxUnavailable");
    return scaled(api::find(workload, "/spec/updateStrategy/rollingUpdate/maxUnavailable"), desired,
                  true, 1);
  }
  set_field("");
  return 1;
}

EvictStep evict_step(const rapidjson::Value& workload,
                     const std::vector<const rapidjson::Value*>& pods,
                     const std::vector<std::string>& stale_pods,
                     std::chrono::system_clock::time_point now,
                     std::chrono::seconds rollout_timeout) {
  EvictStep step;
  std::string kind = api::string_at(workload, {"kind"});
  std::string id = kind + " " + api::string_at(workload, {"metadata", "namespace"}) + "/" +
                   api::string_at(workload, {"metadata", "name"});
  step.desired = kind == "DaemonSet" ? int_at(workload, "/status/desiredNumberScheduled", 0)
                                     : int_at(workload, "/spec/replicas", 1);
  std::set<std::string, std::less<>> stale(stale_pods.begin(), stale_pods.end());

  const rapidjson::Value* first_terminating = nullptr;
  const rapidjson::Value* first_unready = nullptr;  // the oldest live pod that is not Ready
  std::vector<std::string> live_stale;
  int live = 0;
  for (const rapidjson::Value* p : pods) {
    if (terminating(*p)) {
      if (first_terminating == nullptr) first_terminating = p;
      continue;
    }
    ++live;
    std::string name(api::field_string(*p, "/metadata/name"));
    if (stale.count(name)) live_stale.push_back(name);
    if (ready(*p)) {
      ++step.ready;
    } else if (first_unready == nullptr || created(*p) < created(*first_unready)) {
      first_unready = p;
    }
  }
  std::sort(live_stale.begin(), live_stale.end());
  step.stale_left = static_cast<int>(live_stale.size());
  step.started = first_terminating != nullptr || live > step.stale_left;

  step.settled =
      first_terminating == nullptr && first_unready == nullptr && step.ready >= step.desired;

  std::string field;
  step.max_unavailable = resolve_max_unavailable(workload, step.desired, &field);
  if (step.max_unavailable < 1) {
    step.blocked = id + ": " + field + " resolves to 0 for " + std::to_string(step.desired) +
                   " pods, and an eviction makes one pod unavailable; set it to at least 1 or "
                   "use spec.restarts.strategy Rollout";
    return step;
  }
  auto name_of = [](const rapidjson::Value* p) {
    return std::string(api::field_string(*p, "/metadata/name"));
  };
  if (first_terminating != nullptr) {
    step.waiting = "waiting for pod " + name_of(first_terminating) + " to terminate";
  } else if (first_unready != nullptr) {
    step.waiting = "waiting for pod " + name_of(first_unready) + " to be Ready";
    auto since = created(*first_unready);
    if (step.started && since && now - *since >= rollout_timeout)
      step.failed = "pod " + name_of(first_unready) + " was not Ready " +
                    std::to_string(rollout_timeout.count()) + "s after it was created";
  } else if (step.ready < step.desired) {
    step.waiting = "waiting for the replacement pods: " + std::to_string(step.ready) + " of " +
                   std::to_string(step.desired) + " Ready";
  } else if (live_stale.empty()) {
    step.waiting = "no stale pod left to evict";
  } else {
    // Every pod is Ready, so one eviction makes 1 <= maxUnavailable pods unavailable.
    step.next = live_stale.front();
  }
  return step;
}

std::string budget_of_refusal(std::string_view text) {
  constexpr std::string_view kLead = "The disruption budget ";
  auto at = text.find(kLead);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + kLead.size());
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != ':' && rest[end] != ',')
    ++end;
  return std::string(rest.substr(0, end));
}

}  // namespace meshop::restart
