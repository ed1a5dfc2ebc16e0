// RFC 3339 timestamps as Kubernetes writes and reads them: the one formatter and parser of
// meshop (status conditions' lastTransitionTime, restartedAt annotations, Events' and Leases'
// MicroTime, kubeconfig credential expiry, creationTimestamp).
//
//   api::rfc3339(t)        "2026-11-29T18:00:00Z"          metav1.Time (seconds, UTC)
//   api::rfc3339_micro(t)  "2026-11-29T18:00:00.123456Z"   metav1.MicroTime
//   api::parse_rfc3339(s)  either of those, or any RFC 3339 text with a fraction or an offset
//
// Pure functions; safe from any thread. The current time comes from runtime::Clock::wall_now(),
// never from here.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace meshop::api {

using SystemTime = std::chrono::system_clock::time_point;

// UTC with whole seconds (the fraction is truncated), as metav1.Time and kubectl write it.
std::string rfc3339(SystemTime t);
// UTC with microseconds, as metav1.MicroTime.
std::string rfc3339_micro(SystemTime t);
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), 't' and 'z' accepted as Go's time.Parse does; the
// fraction is dropped (whole seconds). nullopt for anything else, an impossible date included.
std::optional<SystemTime> parse_rfc3339(std::string_view text);

}  // namespace meshop::api
