#include "operator/restart/rollout.hpp"

#include <cstdint>

#include "api/json.hpp"

namespace meshop::restart {
namespace {

std::int64_t int_at(const rapidjson::Value& o, const char* pointer, std::int64_t fallback = 0) {
  const rapidjson::Value* v = api::find(o, pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : fallback;
}

std::string of(std::int64_t a, std::int64_t b) {
  return std::to_string(a) + " of " + std::to_string(b);
}

RolloutStatus progressing(std::string message) {
  return {RolloutState::kProgressing, std::move(message)};
}

RolloutStatus deployment(const rapidjson::Value& d) {
  if (int_at(d, "/metadata/generation") > int_at(d, "/status/observedGeneration"))
    return progressing("waiting for the deployment spec update to be observed");
  if (const rapidjson::Value* conds = api::find(d, "/status/conditions");
      conds != nullptr && conds->IsArray()) {
    for (const rapidjson::Value& c : conds->GetArray())
      if (api::string_at(c, {"type"}) == "Progressing" &&
          api::string_at(c, {"reason"}) == "ProgressDeadlineExceeded")
        return {RolloutState::kFailed, "deployment exceeded its progress deadline"};
  }
  std::int64_t want = int_at(d, "/spec/replicas", 1);
  std::int64_t updated = int_at(d, "/status/updatedReplicas");
  std::int64_t replicas = int_at(d, "/status/replicas");
  std::int64_t available = int_at(d, "/status/availableReplicas");
  if (updated < want) return progressing(of(updated, want) + " new replicas have been updated");
  if (replicas > updated)
    return progressing(std::to_string(replicas - updated) +
                       " old replicas are pending termination");
  if (available < updated)
    return progressing(of(available, updated) + " updated replicas are available");
  return {RolloutState::kComplete, "successfully rolled out"};
}

RolloutStatus statefulset(const rapidjson::Value& s) {
  std::int64_t observed = int_at(s, "/status/observedGeneration");
  if (observed == 0 || int_at(s, "/metadata/generation") > observed)
    return progressing("waiting for the statefulset spec update to be observed");
  std::int64_t want = int_at(s, "/spec/replicas", 1);
  std::int64_t ready = int_at(s, "/status/readyReplicas");
  if (ready < want) return progressing(of(ready, want) + " pods are ready");
  std::int64_t partition = int_at(s, "/spec/updateStrategy/rollingUpdate/partition");
  if (partition > 0) {
    std::int64_t updated = int_at(s, "/status/updatedReplicas");
    if (updated < want - partition)
      return progressing(of(updated, want - partition) + " pods above the partition are updated");
    return {RolloutState::kComplete, "partitioned roll out complete"};
  }
  std::string update = api::string_at(s, {"status", "updateRevision"});
  std::string current = api::string_at(s, {"status", "currentRevision"});
  if (update != current)
    return progressing("waiting for pods to reach revision " + update + " (" +
                       of(int_at(s, "/status/updatedReplicas"), want) + " updated)");
  return {RolloutState::kComplete, "rolling update complete"};
}

RolloutStatus daemonset(const rapidjson::Value& d) {
  if (int_at(d, "/metadata/generation") > int_at(d, "/status/observedGeneration"))
    return progressing("waiting for the daemonset spec update to be observed");
  std::int64_t desired = int_at(d, "/status/desiredNumberScheduled");
  std::int64_t updated = int_at(d, "/status/updatedNumberScheduled");
  std::int64_t available = int_at(d, "/status/numberAvailable");
  if (updated < desired) return progressing(of(updated, desired) + " updated pods are scheduled");
  if (available < desired)
    return progressing(of(available, desired) + " updated pods are available");
  return {RolloutState::kComplete, "successfully rolled out"};
}

}  // namespace

bool rolls_pod_by_pod(const rapidjson::Value& workload) {
  std::string kind = api::string_at(workload, {"kind"});
  if (kind == "ReplicaSet" || kind == "ReplicationController") return true;
  return kind == "StatefulSet" &&
         api::string_at(workload, {"spec", "updateStrategy", "type"}) == "OnDelete";
}

RolloutStatus rollout_status(const rapidjson::Value& workload,
                             std::chrono::system_clock::time_point started,
                             std::chrono::system_clock::time_point now,
                             std::chrono::seconds timeout) {
  std::string kind = api::string_at(workload, {"kind"});
  RolloutStatus s;
  if (kind == "Deployment")
    s = deployment(workload);
  else if (kind == "StatefulSet")
    s = statefulset(workload);
  else if (kind == "DaemonSet")
    s = daemonset(workload);
  else
    return {RolloutState::kFailed, "rollout status is not available for kind " + kind};
  if (s.state == RolloutState::kProgressing && now - started >= timeout) {
    auto minutes = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    return {RolloutState::kFailed,
            "rollout did not complete within " + std::to_string(minutes) + "s: " + s.message};
  }
  return s;
}

}  // namespace meshop::restart
