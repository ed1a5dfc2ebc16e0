#include "operator/kube/writer.hpp"

#include <utility>

namespace meshop::kube {
namespace {

class ClientWriter final : public Writer {
 public:
  ClientWriter(std::shared_ptr<Client> client, std::shared_ptr<EventRecorder> events)
      : client_(std::move(client)), events_(std::move(events)) {}

  Task<Result<rapidjson::Document>> apply(const ResourceType& type, const rapidjson::Value& object,
                                          std::string field_manager, bool force) override {
    co_return co_await client_->apply(type, object, std::move(field_manager), force);
  }
  Task<Result<rapidjson::Document>> create(const ResourceType& type, std::string ns,
                                           const rapidjson::Value& object) override {
    co_return co_await client_->create(type, ns, object);
  }
  Task<Result<rapidjson::Document>> update(const ResourceType& type,
                                           const rapidjson::Value& object) override {
    co_return co_await client_->update(type, object);
  }
  Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string ns,
                                          std::string name, PatchType patch_type, std::string body,
                                          PatchOptions options) override {
    co_return co_await client_->patch(type, ns, name, patch_type, std::move(body),
                                      std::move(options));
  }
  Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string ns,
                                           std::string name, DeleteOptions options) override {
    co_return co_await client_->remove(type, ns, name, std::move(options));
  }
  Task<Result<rapidjson::Document>> evict(std::string ns, std::string name, bool dry_run) override {
    co_return co_await client_->evict(ns, name, dry_run);
  }
  void event(const ObjectReference& regarding, EventType type, std::string reason,
             std::string action, std::string note) override {
    if (events_)
      events_->record(regarding, type, std::move(reason), std::move(action), std::move(note));
  }

 private:
  std::shared_ptr<Client> client_;
  std::shared_ptr<EventRecorder> events_;
};

}  // namespace

std::shared_ptr<Writer> client_writer(std::shared_ptr<Client> client,
                                      std::shared_ptr<EventRecorder> events) {
  return std::make_shared<ClientWriter>(std::move(client), std::move(events));
}

}  // namespace meshop::kube
