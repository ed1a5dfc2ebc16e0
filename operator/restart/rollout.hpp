// Whether a restarted workload's rollout has completed, from its status, with the rules of
// `kubectl rollout status` (Deployment, StatefulSet with RollingUpdate, DaemonSet).
//
// Pure: the caller supplies the object as read from the API and the time the restart began;
// a rollout that is not complete `timeout` after that has failed. A Deployment whose
// Progressing condition says ProgressDeadlineExceeded has failed at once.
#pragma once

#include <chrono>
#include <string>

#include <rapidjson/document.h>

namespace meshop::restart {

enum class RolloutState { kComplete, kProgressing, kFailed };

struct RolloutStatus {
  RolloutState state = RolloutState::kProgressing;
  std::string message;  // what is being waited for, or why it failed
};

RolloutStatus rollout_status(const rapidjson::Value& workload,
                             std::chrono::system_clock::time_point started,
                             std::chrono::system_clock::time_point now,
                             std::chrono::seconds timeout);

// StatefulSets with updateStrategy OnDelete (and owner-less ReplicaSets and
// ReplicationControllers) do not roll on a template change: meshop deletes their pods one
// at a time instead.
bool rolls_pod_by_pod(const rapidjson::Value& workload);

}  // namespace meshop::restart
