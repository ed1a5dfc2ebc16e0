// The runtime's sources over the real API (meshop::kube::Client):
//
//   KubeListWatch  list (all pages) + watch of one resource type, optionally in one namespace,
//                  with label/field selectors and metadata-only (PartialObjectMetadata) mode.
//   KubeLeaseLock  a coordination.k8s.io/v1 Lease for LeaderElector.
//
// Errors are the client's, unchanged (one api::Error type): kGone (410, Expired, "too old
// resource version") makes the informer relist; NotFound of the lease makes the elector create
// it; Conflict / AlreadyExists mean another candidate wrote first. Thread affinity: the
// client's executor.
#pragma once

#include <memory>
#include <string>

#include "operator/kube/client.hpp"
#include "operator/runtime/leader_election.hpp"
#include "operator/runtime/list_watch.hpp"

namespace meshop::runtime {

struct KubeListWatchOptions {
  std::string label_selector{};
  std::string field_selector{};
  bool metadata_only = false;
  std::int64_t page_size = 500;
};

class KubeListWatch final : public ListWatch {
 public:
  KubeListWatch(std::shared_ptr<kube::Client> client, kube::ResourceType type, std::string ns = {},
                KubeListWatchOptions options = {});

  // Pages of page_size (continue tokens), each converted and dropped before the next.
  boost::asio::awaitable<api::Result<ListResult>> list(std::string resource_version,
                                                       const ItemPreparer& prepare) override;
  boost::asio::awaitable<api::Result<std::unique_ptr<WatchStream>>> watch(
      std::string resource_version, int timeout_seconds) override;

 private:
  std::shared_ptr<kube::Client> client_;
  kube::ResourceType type_;
  std::string ns_;
  KubeListWatchOptions options_;
};

class KubeLeaseLock final : public LeaseLock {
 public:
  KubeLeaseLock(std::shared_ptr<kube::Client> client, std::string ns, std::string name);

  boost::asio::awaitable<api::Result<StoredLease>> get() override;
  boost::asio::awaitable<api::Result<StoredLease>> create(const LeaseRecord& record) override;
  boost::asio::awaitable<api::Result<StoredLease>> update(
      const LeaseRecord& record, const std::string& resource_version) override;
  std::string describe() const override { return ns_ + "/" + name_; }

 private:
  rapidjson::Document make_lease(const LeaseRecord& record, const std::string& rv) const;
  static api::Result<StoredLease> from_response(kube::Result<rapidjson::Document> r);

  std::shared_ptr<kube::Client> client_;
  std::string ns_;
  std::string name_;
};

}  // namespace meshop::runtime
