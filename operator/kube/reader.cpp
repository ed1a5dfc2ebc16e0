#include "operator/kube/reader.hpp"

#include <utility>

namespace meshop::kube {
namespace {

class ClientReader final : public Reader {
 public:
  explicit ClientReader(std::shared_ptr<Client> client) : client_(std::move(client)) {}

  Task<Result<rapidjson::Document>> get(const ResourceType& type, std::string ns,
                                        std::string name) override {
    co_return co_await client_->get(type, ns, name);
  }
  Task<Result<ListPage>> list_all(const ResourceType& type, std::string ns,
                                  ListOptions options) override {
    co_return co_await client_->list_all(type, ns, std::move(options));
  }
  Task<Result<ResourceType>> discover(std::string api_version, std::string kind) override {
    co_return co_await client_->discover(api_version, kind);
  }

 private:
  std::shared_ptr<Client> client_;
};

}  // namespace

std::shared_ptr<Reader> client_reader(std::shared_ptr<Client> client) {
  return std::make_shared<ClientReader>(std::move(client));
}

}  // namespace meshop::kube
