// The writes a reconciler makes, behind one narrow interface: patch, delete, evict and record an
// Event. A reconciler's decisions (what to patch, whom to evict, what to say) are then tested
// with a recording fake instead of an apiserver, and its reads stay where they belong (the
// informer cache).
//
//   auto writer = std::make_shared<kube::ClientWriter>(client, events);  // the real one
//   auto r = co_await writer->patch(type, "apps", "web", kube::PatchType::kMerge, body);
//
// Contract: each call is what the same-named kube::Client call does (same Result, same error
// kinds: NotFound, Conflict, TooManyRequests with its causes, Forbidden, ...); record_event()
// never blocks nor fails (kube::EventRecorder's contract). Thread affinity: the implementation's
// (for ClientWriter, the client's executor).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"

namespace meshop::kube {

class Writer {
 public:
  virtual ~Writer() = default;

  // PATCH `body` (in the encoding of `patch_type`) to ns/name of `type`.
  virtual Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                                  std::string name, PatchType patch_type,
                                                  std::string body, PatchOptions options) = 0;
  Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                          std::string name, PatchType patch_type,
                                          std::string body) {
    return patch(type, std::move(ns), std::move(name), patch_type, std::move(body), PatchOptions{});
  }
  // DELETE ns/name of `type`.
  virtual Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string ns,
                                                   std::string name) = 0;
  // POST a policy/v1 Eviction of pod ns/name (Client::evict).
  virtual Task<Result<rapidjson::Document>> evict(std::string ns, std::string name,
                                                  bool dry_run) = 0;
  // An Event about `regarding` (EventRecorder::record).
  virtual void record_event(const ObjectReference& regarding, EventType type, std::string reason,
                            std::string action, std::string note) = 0;
};

// Writes through a Client; Events through an EventRecorder (none: Events are not written).
class ClientWriter final : public Writer {
 public:
  ClientWriter(std::shared_ptr<Client> client, std::shared_ptr<EventRecorder> events)
      : client_(std::move(client)), events_(std::move(events)) {}

  using Writer::patch;
  Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                          std::string name, PatchType patch_type, std::string body,
                                          PatchOptions options) override {
    co_return co_await client_->patch(type, ns, name, patch_type, std::move(body),
                                      std::move(options));
  }
  Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string ns,
                                           std::string name) override {
    co_return co_await client_->remove(type, ns, name);
  }
  Task<Result<rapidjson::Document>> evict(std::string ns, std::string name, bool dry_run) override {
    co_return co_await client_->evict(ns, name, dry_run);
  }
  void record_event(const ObjectReference& regarding, EventType type, std::string reason,
                    std::string action, std::string note) override {
    if (events_)
      events_->record(regarding, type, std::move(reason), std::move(action), std::move(note));
  }

 private:
  std::shared_ptr<Client> client_;
  std::shared_ptr<EventRecorder> events_;
};

}  // namespace meshop::kube
