// kube::Writer: the writes a reconciler makes to the apiserver, behind a narrow interface.
//
// A reconciler's decision tree (add the finalizer, uninstall, stay paused, refuse an invalid
// spec, report who owns a revision, ...) is what unit tests need to see; the writes are where
// those decisions show. Reconcilers take a Writer instead of calling kube::Client directly, so a
// test gives them a recording fake (test/support/fake_api.hpp) that records every call and can
// be told to fail one with a given error (409 Conflict, 403 Forbidden, 429 with Retry-After,
// 404), while `meshop run` gives them client_writer(), which forwards to kube::Client and
// kube::EventRecorder.
//
// Only what the reconcilers write is here: server-side apply, create, update (PUT), patch (any
// patch type, the status subresource through PatchOptions::subresource), delete, a pod's
// eviction (restarts' Evict strategy), and Events. Reads are kube::Reader
// (operator/kube/reader.hpp).
//
// Every call has the meaning, arguments and Result of the kube::Client verb of the same name
// (operator/kube/client.hpp). Coroutines take strings by value (g++ 12); option structs are
// passed as named values, never braced temporaries (see client.hpp, "GCC 12 pitfall").
//
// Thread affinity: the executor of the client behind it (the control-loop thread).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <rapidjson/document.h>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"

namespace meshop::kube {

class Writer {
 public:
  virtual ~Writer() = default;

  // Server-side apply of `object` (namespace and name from its metadata).
  virtual Task<Result<rapidjson::Document>> apply(const ResourceType& type,
                                                  const rapidjson::Value& object,
                                                  std::string field_manager, bool force) = 0;
  // POST to the collection of `ns`.
  virtual Task<Result<rapidjson::Document>> create(const ResourceType& type, std::string ns,
                                                   const rapidjson::Value& object) = 0;
  // PUT; metadata.resourceVersion, if set, is the precondition (409 Conflict when stale).
  virtual Task<Result<rapidjson::Document>> update(const ResourceType& type,
                                                   const rapidjson::Value& object) = 0;
  // PATCH; options.subresource "status" patches the status subresource.
  virtual Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                                  std::string name, PatchType patch_type,
                                                  std::string body, PatchOptions options) = 0;
  Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                          std::string name, PatchType patch_type,
                                          std::string body) {
    return patch(type, std::move(ns), std::move(name), patch_type, std::move(body), PatchOptions{});
  }
  // DELETE.
  virtual Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string ns,
                                                   std::string name, DeleteOptions options) = 0;
  Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string ns,
                                           std::string name) {
    return remove(type, std::move(ns), std::move(name), DeleteOptions{});
  }
  // POST a policy/v1 Eviction of pod ns/name (Client::evict).
  virtual Task<Result<rapidjson::Document>> evict(std::string ns, std::string name,
                                                  bool dry_run) = 0;
  // Records an Event about `regarding` (EventRecorder::record: queued, never fails).
  virtual void event(const ObjectReference& regarding, EventType type, std::string reason,
                     std::string action, std::string note) = 0;
};

// The Writer of `meshop run`: `client`'s verbs, Events through `events` (dropped when null).
// `client` may be null for an object that never writes (e.g. built only to register metrics).
std::shared_ptr<Writer> client_writer(std::shared_ptr<Client> client,
                                      std::shared_ptr<EventRecorder> events);

}  // namespace meshop::kube
