// How a reconciler's API errors become its result: one policy for every controller.
//
// A write that lost a resourceVersion race (409 Conflict, or a JSON patch whose test of
// /metadata/resourceVersion failed) means only that the object changed since this pass read
// it: the pass is retried at once through the rate limiter and nothing is reported to users
// (no ERROR status, no Warning Event). Every other API error is a failure: reported where the
// reconciler reports failures and retried with per-key exponential backoff, or after the
// server's Retry-After when it sent one (429 Too Many Requests, 503). A 403 Forbidden (meshop's
// ClusterRole lacks a verb) is a failure too, retried slowly: from 1 s, doubling, up to 5 min,
// since only an administrator's change of the role can make the next try succeed.
#pragma once

#include <string>
#include <string_view>

#include "api/result.hpp"
#include "operator/kube/error.hpp"
#include "operator/runtime/controller.hpp"

namespace meshop::reconcilers {

// `context` (e.g. "listing pods") goes before the apiserver's message.
inline api::Error api_error(const kube::Error& e, std::string_view context = {}) {
  api::Error err{e.message, e.is(kube::ErrorKind::kConflict), e.retry_after,
                 e.is(kube::ErrorKind::kForbidden)};
  return context.empty() ? err : api::with_context(context, std::move(err));
}

inline runtime::Action error_action(const api::Error& e) {
  if (e.conflict) return runtime::Action::conflict(e.message);
  if (e.retry_after) return runtime::Action::retry_after(*e.retry_after, e.message);
  if (e.forbidden) return runtime::Action::forbidden(e.message);
  return runtime::Action::error(e.message);
}

}  // namespace meshop::reconcilers
