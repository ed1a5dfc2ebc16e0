// When to retry a request and how long to wait first. Pure functions of the attempt, the
// outcome and a random source, so they are unit-tested without a network or a clock.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

namespace meshop::kube {

struct RetryPolicy {
  int max_retries = 5;
  std::chrono::milliseconds base_delay{200};
  std::chrono::milliseconds max_delay{10'000};
  // Retry-After values above this are clamped (a server asking for minutes blocks a reconcile).
  std::chrono::milliseconds max_retry_after{30'000};
};

// What happened to one attempt.
struct AttemptOutcome {
  int http_status = 0;                              // 0: no HTTP response
  bool connect_failed = false;                      // the request never reached the server
  bool transport_failed = false;                    // connection broke after sending / timed out
  std::optional<std::chrono::seconds> retry_after;  // Retry-After header or Status retryAfter
};

// True for GET, HEAD, PUT, DELETE, OPTIONS (safe to repeat); POST and PATCH are not.
bool is_idempotent(std::string_view method);

// nullopt: do not retry (success, non-retryable error, or retries exhausted). Otherwise the
// delay before attempt `attempt + 1` (attempt counts from 0).
//  - 429, and 503 / 5xx with Retry-After: the server explicitly asks for a retry, so any verb
//    is retried (429 means it did not process the request).
//  - Other 5xx and broken connections: only idempotent verbs.
//  - A connection that could not be established: any verb (nothing was sent).
// The delay is Retry-After when present (clamped), else base*2^attempt capped at max_delay
// with "full jitter" (uniform in [delay/2, delay]) from `random01` in [0,1).
std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy,
                                                     std::string_view method, int attempt,
                                                     const AttemptOutcome& outcome,
                                                     double random01);

// Parses a Retry-After header given in seconds (HTTP-date form is not used by the apiserver
// and yields nullopt).
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header);

}  // namespace meshop::kube
