// status.conditions written by several reconcilers: each owns its condition types and never
// erases another's.
//
// An IstioOperator's conditions come from three reconcilers (install: Ready, Reconciled;
// restarts: RestartsHalted, RestartsOverdue; revisions: InUse). A JSON merge patch replaces a
// list whole, so a reconciler that writes its condition sends the whole list: the others'
// conditions as it read them, its own in place. Read from an informer store, that list may
// predate another reconciler's write, and sending it would erase that write (a lost update:
// RestartsOverdue=True gone under a revisions pass that read the IstioOperator a moment before
// it was written). So a reconciler that writes conditions
//   - merges its own into the object as read (merge_conditions: the others' entries untouched,
//     in their order);
//   - sends the list with the object's metadata.resourceVersion in the patch
//     (guard_with_resource_version), which the apiserver takes as a precondition: 409 Conflict
//     when the object changed since it was read;
//   - on a 409 reads the object again and merges into that (patch_status), a few times, then
//     returns the Conflict (reconcilers/errors.hpp: the pass is retried at once).
// A patch without the list (status.restarts alone, status.revisions alone) erases nothing and
// needs no guard.
//
// Thread affinity: the caller's (the control loop).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"

namespace meshop::reconcilers {

// One condition a reconciler wants on an object.
struct Condition {
  std::string type, status, reason, message;
  // "" = the object's lastTransitionTime for this type while its status stays the same, else
  // the `now` given to merge_conditions.
  std::string last_transition;
};

// The last condition of `type` in the object's status.conditions, or null.
const rapidjson::Value* find_condition(const rapidjson::Value& object, std::string_view type);

// Whether `current` (a condition, or null) says what `want` says: status, reason and message,
// and lastTransitionTime when want.last_transition is set.
bool condition_shows(const rapidjson::Value* current, const Condition& want);

// Pure. The object's status.conditions with `mine` put in: each replaces the entries of its type
// (at the first one's place; appended when there is none), with observedGeneration from the
// object's metadata.generation; every other entry kept as it is, in order.
rapidjson::Value merge_conditions(const rapidjson::Value& object,
                                  const std::vector<Condition>& mine, std::string_view now,
                                  rapidjson::Document::AllocatorType& allocator);

// Sets metadata.resourceVersion of `patch` (a JSON object) to the object's: the apiserver
// answers 409 Conflict when the object is no longer at that version. An object without one
// leaves the patch unguarded.
void guard_with_resource_version(rapidjson::Document& patch, const rapidjson::Value& object);

// What to write to an object's status subresource given the object as read: a JSON merge patch
// (guarded when it carries conditions), or nullopt when the object already says it all.
using StatusPatch = std::function<std::optional<std::string>(const rapidjson::Value& object)>;

// Patches the status subresource of `object` (as read, e.g. from a store) with body(object).
// On 409 Conflict, with a `reader`, gets the object and patches with body(that), up to
// `attempts` patches in all; the last Conflict (or any other error: NotFound included) is
// returned as is. True when a patch was accepted, false when there was nothing to write.
// `writer`, `type` and `object` must outlive the returned task.
kube::Task<api::Result<bool>> patch_status(kube::Writer& writer, kube::Reader* reader,
                                           const kube::ResourceType& type,
                                           const rapidjson::Value& object, StatusPatch body,
                                           int attempts = 3);

}  // namespace meshop::reconcilers
