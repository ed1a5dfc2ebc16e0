// Read-modify-write under optimistic concurrency, as client-go's retry.RetryOnConflict.
//
//   auto r = co_await update_with_retry(*client, resources::kConfigMaps, "ns", "name",
//       [](rapidjson::Document& cm) { /* change cm */ return true; }, cached_copy);
//
// Starts from `cached` (e.g. an informer's copy, possibly stale) or, without it, from a GET;
// applies `mutate` to a private copy and PUTs it with its metadata.resourceVersion as the
// precondition. A 409 Conflict means someone else wrote in between: the object is read again
// from the server and `mutate` re-applied to the fresh copy, up to `policy.attempts` writes in
// all, pausing `policy.backoff` (±10% jitter) between them. Any other error ends it at once.
//
// `mutate` may run several times, each time on a fresh object, and must depend only on the
// object it is given; it returns false for "nothing to change", in which case nothing is
// written and the object as read is returned. With `status`, the PUT goes to the status
// subresource. Runs on the client's executor like every client call.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <rapidjson/document.h>

#include "operator/kube/client.hpp"

namespace meshop::kube {

struct RetryOnConflict {
  RetryOnConflict() {}  // not an aggregate: see the g++ 12 note in client.hpp
  int attempts = 5;     // client-go's DefaultRetry: 5 steps of 10 ms
  std::chrono::milliseconds backoff{10};
  bool status = false;  // write the status subresource
};

using Mutator = std::function<bool(rapidjson::Document& object)>;

Task<Result<rapidjson::Document>> update_with_retry(Client& client, ResourceType type,
                                                    std::string ns, std::string name,
                                                    Mutator mutate,
                                                    const rapidjson::Value* cached = nullptr,
                                                    RetryOnConflict policy = RetryOnConflict());

}  // namespace meshop::kube
