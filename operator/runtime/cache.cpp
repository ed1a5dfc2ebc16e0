#include "operator/runtime/cache.hpp"

#include "operator/runtime/manager.hpp"

namespace meshop::runtime {

std::string WatchSpec::identity() const {
  // Fields joined by a byte no Kubernetes name, selector or version can hold.
  std::string id;
  for (const std::string* part :
       {&type.group, &type.version, &type.resource, &ns, &options.label_selector,
        &options.field_selector, &projection_name, &initial_list_resource_version}) {
    id += *part;
    id += '\x1f';
  }
  id += options.metadata_only ? "meta" : "full";
  id += '\x1f';
  id += std::to_string(options.page_size);
  return id;
}

SourceFactory kube_sources(std::shared_ptr<kube::Client> client) {
  return [client = std::move(client)](const WatchSpec& spec) -> std::unique_ptr<ListWatch> {
    return std::make_unique<KubeListWatch>(client, spec.type, spec.ns, spec.options);
  };
}

struct Cache::Watch {
  Watch(const WatchSpec& spec, std::unique_ptr<ListWatch> src,
        boost::asio::any_io_executor executor, Clock& clock, SharedParts& parts)
      : spec(spec),
        source(std::move(src)),
        store(spec.projection, spec.shared_paths, &parts),
        informer(spec.name.empty() ? spec.type.resource : spec.name, std::move(executor), clock,
                 *source, store, informer_options(spec)) {}
  static Informer::Options informer_options(const WatchSpec& spec) {
    Informer::Options o;
    o.initial_list_resource_version = spec.initial_list_resource_version;
    return o;
  }
  WatchSpec spec;
  std::unique_ptr<ListWatch> source;
  Store store;
  Informer informer;
};

Cache::Cache(SourceFactory sources, boost::asio::any_io_executor executor, Clock& clock)
    : sources_(std::move(sources)), executor_(std::move(executor)), clock_(clock) {}

Cache::~Cache() = default;

Store& Cache::store(const WatchSpec& spec) {
  std::string id = spec.identity();
  auto it = watches_.find(id);
  if (it == watches_.end()) {
    auto w = std::make_unique<Watch>(spec, sources_(spec), executor_, clock_, parts_);
    order_.push_back(w.get());
    it = watches_.emplace(std::move(id), std::move(w)).first;
  }
  return it->second->store;
}

const Store* Cache::find(const WatchSpec& spec) const {
  auto it = watches_.find(spec.identity());
  return it == watches_.end() ? nullptr : &it->second->store;
}

std::vector<Cache::WatchEntry> Cache::watches() const {
  std::vector<WatchEntry> out;
  out.reserve(order_.size());
  for (Watch* w : order_)
    out.push_back({w->spec, w->store});
  return out;
}

void Cache::add_to(Manager& manager) {
  for (Watch* w : order_)
    manager.add_informer(w->informer);
}

}  // namespace meshop::runtime
