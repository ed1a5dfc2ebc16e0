// How a reconciler's API errors become its result: one policy for every controller.
//
// A write that lost a resourceVersion race (409 Conflict, or a JSON patch whose test of
// /metadata/resourceVersion failed) means only that the object changed since this pass read
// it: the pass is retried at once through the rate limiter and nothing is reported to users
// (no ERROR status, no Warning Event). Every other API error is a failure: reported where the
// reconciler reports failures and retried with per-key exponential backoff, or after the
// server's Retry-After when it sent one (429 Too Many Requests, 503).
#pragma once

#include <string>
#include <string_view>

#include "api/result.hpp"
#include "operator/kube/error.hpp"
#include "operator/runtime/controller.hpp"

namespace meshop::reconcilers {

// `context` (e.g. "listing pods") goes before the apiserver's message.
inline api::Error api_error(const kube::Error& e, std::string_view context = {}) {
  std::string message = context.empty() ? e.message : std::string(context) + ": " + e.message;
  return api::Error{std::move(message), e.is(kube::ErrorKind::kConflict), e.retry_after};
}

inline runtime::Action error_action(const api::Error& e) {
  if (e.conflict) return runtime::Action::conflict(e.message);
  if (e.retry_after) return runtime::Action::retry_after(*e.retry_after, e.message);
  return runtime::Action::error(e.message);
}

}  // namespace meshop::reconcilers
