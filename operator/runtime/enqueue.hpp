// Event handlers that turn store changes into work-queue keys (controller-runtime's
// handler.EnqueueRequestForObject / EnqueueRequestForOwner / EnqueueRequestsFromMapFunc).
// Reconcilers are level-triggered: a key says "look at this object again", never what
// changed, so every handler only adds keys.
//
//   configmaps.add_handlers(enqueue_object(queue));
//   pods.add_handlers(enqueue_owner(replicaset_queue, "apps/v1", "ReplicaSet"));
//   namespaces.add_handlers(enqueue_mapped(queue, [&](const rapidjson::Value& ns) {
//     return keys_of_objects_in(ns); }));
//
// The queue must outlive the store the handlers are added to.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "operator/runtime/store.hpp"
#include "operator/runtime/work_queue.hpp"

namespace meshop::runtime {

// The object's own key, on add, update and delete.
StoreHandlers enqueue_object(WorkQueue& queue);

// The key of the owner named in metadata.ownerReferences with this apiVersion's group and
// kind (the owner is in the object's namespace). With `controller_only`, only the reference
// with controller: true counts. On update, the owners of both the old and the new object are
// enqueued, so an owner that lost a child hears about it.
StoreHandlers enqueue_owner(WorkQueue& queue, std::string api_version, std::string kind,
                            bool controller_only = true);

// The keys `map` returns for the object (old and new on update).
using KeyMapper = std::function<std::vector<std::string>(const rapidjson::Value&)>;
StoreHandlers enqueue_mapped(WorkQueue& queue, KeyMapper map);

// Owner keys as enqueue_owner computes them; exposed for tests and reuse.
std::vector<std::string> owner_keys(const rapidjson::Value& object, std::string_view api_version,
                                    std::string_view kind, bool controller_only);

}  // namespace meshop::runtime
