#include "operator/runtime/kube_source.hpp"

#include "operator/runtime/object.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;

namespace {

class KubeWatchStream final : public WatchStream {
 public:
  explicit KubeWatchStream(kube::Watch watch) : watch_(std::move(watch)) {}

  asio::awaitable<WatchNext> next() override {
    kube::Result<std::optional<kube::WatchEvent>> r = co_await watch_.next();
    if (!r.ok()) co_return WatchNext::fail(std::move(r).error());
    if (!r.value().has_value()) co_return WatchNext::end();
    kube::WatchEvent& e = *r.value();
    EventType type = EventType::kAdded;
    switch (e.type) {
      case kube::WatchEventType::kAdded:
        type = EventType::kAdded;
        break;
      case kube::WatchEventType::kModified:
        type = EventType::kModified;
        break;
      case kube::WatchEventType::kDeleted:
        type = EventType::kDeleted;
        break;
      case kube::WatchEventType::kBookmark:
        type = EventType::kBookmark;
        break;
    }
    co_return WatchNext::event(type, std::move(e.object));
  }
  void close() override { watch_.close(); }

 private:
  kube::Watch watch_;
};

}  // namespace

KubeListWatch::KubeListWatch(std::shared_ptr<kube::Client> client, kube::ResourceType type,
                             std::string ns, KubeListWatchOptions options)
    : client_(std::move(client)),
      type_(std::move(type)),
      ns_(std::move(ns)),
      options_(std::move(options)) {}

asio::awaitable<api::Result<ListResult>> KubeListWatch::list(std::string resource_version,
                                                             const ItemPreparer& prepare) {
  kube::ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.metadata_only = options_.metadata_only;
  lo.limit = options_.page_size;
  // "" is a quorum read; otherwise any state at least as new as resource_version. Only the
  // first page names a version: later pages continue that snapshot through the token.
  if (!resource_version.empty()) lo.resource_version_match = "NotOlderThan";
  lo.resource_version = std::move(resource_version);
  ListResult out;
  for (bool first = true;; first = false) {
    kube::Result<kube::ListPage> page = co_await client_->list(type_, ns_, lo);
    if (!page.ok()) co_return std::move(page).error();  // 410 here: token expired
    if (first) out.resource_version = page->resource_version;
    auto items = page->list.FindMember("items");
    if (items != page->list.MemberEnd() && items->value.IsArray()) {
      out.items.reserve(out.items.size() + items->value.Size());
      for (const auto& item : items->value.GetArray()) {
        if (item.IsObject()) out.items.push_back(prepare(item));
      }
    }
    if (page->continue_token.empty()) break;
    lo.continue_token = std::move(page->continue_token);
    lo.resource_version.clear();
    lo.resource_version_match.clear();
  }
  co_return out;
}

asio::awaitable<api::Result<std::unique_ptr<WatchStream>>> KubeListWatch::watch(
    std::string resource_version, int timeout_seconds) {
  kube::WatchOptions wo;
  wo.resource_version = std::move(resource_version);
  wo.label_selector = options_.label_selector;
  wo.field_selector = options_.field_selector;
  wo.allow_bookmarks = true;
  wo.timeout_seconds = timeout_seconds;
  wo.metadata_only = options_.metadata_only;
  kube::Result<kube::Watch> w = co_await client_->watch(type_, ns_, wo);
  if (!w.ok()) co_return std::move(w).error();
  std::unique_ptr<WatchStream> stream = std::make_unique<KubeWatchStream>(std::move(*w));
  co_return stream;
}

KubeLeaseLock::KubeLeaseLock(std::shared_ptr<kube::Client> client, std::string ns, std::string name)
    : client_(std::move(client)), ns_(std::move(ns)), name_(std::move(name)) {}

api::Result<StoredLease> KubeLeaseLock::from_response(kube::Result<rapidjson::Document> r) {
  if (!r.ok()) return std::move(r).error();
  StoredLease out;
  out.record = lease_record_from_json(*r);
  out.resource_version = std::string(resource_version_of(*r));
  return out;
}

rapidjson::Document KubeLeaseLock::make_lease(const LeaseRecord& record,
                                              const std::string& rv) const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", "coordination.k8s.io/v1", a);
  d.AddMember("kind", "Lease", a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("name", rapidjson::Value(name_.c_str(), a), a);
  meta.AddMember("namespace", rapidjson::Value(ns_.c_str(), a), a);
  if (!rv.empty()) meta.AddMember("resourceVersion", rapidjson::Value(rv.c_str(), a), a);
  d.AddMember("metadata", meta, a);
  lease_record_to_json(record, d);
  return d;
}

asio::awaitable<api::Result<StoredLease>> KubeLeaseLock::get() {
  co_return from_response(co_await client_->get(kube::resources::kLeases, ns_, name_));
}

asio::awaitable<api::Result<StoredLease>> KubeLeaseLock::create(const LeaseRecord& record) {
  rapidjson::Document lease = make_lease(record, "");
  co_return from_response(co_await client_->create(kube::resources::kLeases, ns_, lease));
}

asio::awaitable<api::Result<StoredLease>> KubeLeaseLock::update(
    const LeaseRecord& record, const std::string& resource_version) {
  rapidjson::Document lease = make_lease(record, resource_version);
  co_return from_response(co_await client_->update(kube::resources::kLeases, lease));
}

}  // namespace meshop::runtime
