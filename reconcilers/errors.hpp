// How a reconciler's errors become its result: one policy for every controller, chosen from
// the error's kind (api::Error, the one type the client, the runtime and the reconcilers share,
// so the kind the apiserver's answer gave survives every layer that adds context).
//
// - Conflict (409, or a JSON patch whose test of /metadata/resourceVersion failed): the object
//   changed since this pass read it. The pass is retried at once through the rate limiter and
//   nothing is reported to users (no ERROR status, no Warning Event).
// - The server said when to come back (429 Too Many Requests, 503, with Retry-After): retried
//   after exactly that delay.
// - Forbidden (403: meshop's ClusterRole lacks a verb): a failure retried slowly, from 1 s,
//   doubling, up to 5 min, since only an administrator's change of the role can make the next
//   try succeed. The message names the verb and the resource (the client's "<verb> <resource>
//   <object>" prefix and the server's "cannot <verb> resource ..." words).
// - Invalid input (422, or a spec meshop's validation refuses): terminal. Only the user's edit
//   fixes it, and that edit is an event that reconciles the object again.
// - Anything else (5xx without Retry-After, transport, ...): a failure retried with per-key
//   exponential backoff.
#pragma once

#include "api/result.hpp"
#include "operator/runtime/controller.hpp"

namespace meshop::reconcilers {

inline runtime::Action error_action(const api::Error& e) {
  if (e.conflict()) return runtime::Action::conflict(e.message);
  if (e.retry_after) return runtime::Action::retry_after(*e.retry_after, e.message);
  if (e.forbidden()) return runtime::Action::forbidden(e.message);
  if (e.invalid()) return runtime::Action::terminal_error(e.message);
  return runtime::Action::error(e.message);
}

}  // namespace meshop::reconcilers
