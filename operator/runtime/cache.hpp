// One informer per watch, shared by every controller that reads it (controller-runtime's
// cache, kube-rs's reflector stores): a reconciler asks for the WatchSpec it needs and gets
// that watch's store; whoever asks for the same spec shares the one informer and store.
//
//   Cache cache(kube_sources(client), executor, clock);
//   const Store& pods = cache.store(pods_spec);   // the watch is created on first use
//   cache.add_to(manager);                        // once every setup has asked, before run()
//
// Two specs are the same watch when resource, namespace, selectors, metadata_only,
// projection_name and the first list's resourceVersion are equal. The projection function is
// taken from the first ask (functions cannot be compared): each projection has its own name.
// Thread affinity: the control loop's thread; the cache must outlive the manager's run().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "operator/kube/resource.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/kube_source.hpp"
#include "operator/runtime/store.hpp"

namespace meshop::runtime {

class Manager;

struct WatchSpec {
  kube::ResourceType type;
  std::string ns;  // "" = every namespace
  KubeListWatchOptions options{};
  Projection projection = strip_managed_fields;
  std::string projection_name;  // "" is strip_managed_fields
  // "0" is served from the apiserver's watch cache in one body; "" is a quorum read in pages
  // of options.page_size (Informer::Options), for kinds with many objects.
  std::string initial_list_resource_version = "0";
  std::string name;  // the informer's name in logs; "" = the resource's plural
  // Subtrees kept once for every object holding an equal one (Store, object.hpp SharedParts):
  // e.g. a pod's labels, owner and containers, equal for the pods of one ReplicaSet. One table
  // for the whole cache, so equal subtrees of different kinds are kept once too (a Deployment's
  // pod template and its ReplicaSets'). A memory layout, not part of the watch's identity:
  // taken from the first ask, as the projection.
  std::vector<std::string> shared_paths{};

  // What makes two specs one watch.
  std::string identity() const;
};

// Makes the source of a spec's informer.
using SourceFactory = std::function<std::unique_ptr<ListWatch>(const WatchSpec&)>;
// KubeListWatch over `client`.
SourceFactory kube_sources(std::shared_ptr<kube::Client> client);

class Cache {
 public:
  Cache(SourceFactory sources, boost::asio::any_io_executor executor, Clock& clock);
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  ~Cache();

  // The spec's store, its watch created on first ask. Mutable so that controllers can add
  // handlers; readers keep a const Store&.
  Store& store(const WatchSpec& spec);
  // The store if the watch exists, else null.
  const Store* find(const WatchSpec& spec) const;
  // Every watch, in the order they were created: what a reader over the stores
  // (cached_reader.hpp) looks through. Mutable stores, for the handlers such a reader adds.
  struct WatchEntry {
    const WatchSpec& spec;
    Store& store;
  };
  std::vector<WatchEntry> watches() const;
  // Registers every informer with the manager (in the order the watches were created).
  void add_to(Manager& manager);
  std::size_t size() const { return order_.size(); }

 private:
  struct Watch;
  SourceFactory sources_;
  boost::asio::any_io_executor executor_;
  Clock& clock_;
  SharedParts parts_;  // every store's shared subtrees (declared first: stores hold parts)
  std::map<std::string, std::unique_ptr<Watch>> watches_;
  std::vector<Watch*> order_;
};

}  // namespace meshop::runtime
