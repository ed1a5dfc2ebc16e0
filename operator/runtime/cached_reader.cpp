#include "operator/runtime/cached_reader.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "api/json.hpp"
#include "api/label_selector.hpp"
#include "operator/log/log.hpp"

namespace meshop::runtime {
namespace {

using api::LabelSelector;

// "group/resource": what names one kind whatever the version.
std::string resource_id(const kube::ResourceType& t) {
  return t.group + "/" + t.resource;
}

// One term of a field selector over metadata.name / metadata.namespace.
struct FieldTerm {
  bool name = true;  // metadata.name, else metadata.namespace
  bool equal = true;
  std::string value;
  bool holds(std::string_view ns, std::string_view name_value) const {
    return ((this->name ? name_value : ns) == value) == equal;
  }
};

// nullopt when a term names another field or does not parse: the caller falls back.
std::optional<std::vector<FieldTerm>> parse_fields(std::string_view text) {
  std::vector<FieldTerm> out;
  while (!text.empty()) {
    std::string_view term = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), term.size() + 1));
    FieldTerm t;
    std::size_t op = term.find("!=");
    std::size_t len = 2;
    if (op != std::string_view::npos) {
      t.equal = false;
    } else if ((op = term.find("==")) == std::string_view::npos) {
      op = term.find('=');
      len = 1;
    }
    if (op == std::string_view::npos) return std::nullopt;
    std::string_view field = term.substr(0, op);
    if (field == "metadata.name") {
      t.name = true;
    } else if (field == "metadata.namespace") {
      t.name = false;
    } else {
      return std::nullopt;
    }
    t.value = std::string(term.substr(op + len));
    out.push_back(std::move(t));
  }
  return out;
}

bool fields_hold(const std::vector<FieldTerm>& terms, std::string_view ns, std::string_view name) {
  return std::all_of(terms.begin(), terms.end(),
                     [&](const FieldTerm& t) { return t.holds(ns, name); });
}

// = and == are `in` with one value, != is `notin` with one value.
LabelSelector::Operator normal(LabelSelector::Operator op) {
  using Op = LabelSelector::Operator;
  if (op == Op::kEquals || op == Op::kDoubleEquals) return Op::kIn;
  if (op == Op::kNotEquals) return Op::kNotIn;
  return op;
}

// Every object `request` selects is one `watch` selects: each of the watch's requirements is
// one of the request's (AND of requirements).
bool implies(const LabelSelector& request, const LabelSelector& watch) {
  for (const LabelSelector::Requirement& w : watch.requirements()) {
    bool found = false;
    for (const LabelSelector::Requirement& r : request.requirements())
      found = found || (r.key == w.key && normal(r.op) == normal(w.op) && r.values == w.values);
    if (!found) return false;
  }
  return true;
}

// A watch event's objects carry apiVersion and kind, a list's items not; an answer always has
// them, as a get's answer from the apiserver does (Events about it need them:
// kube::reference_to).
void set_type(rapidjson::Value& o, const kube::ResourceType& type,
              rapidjson::Document::AllocatorType& a) {
  if (!o.IsObject()) return;
  if (!o.HasMember("apiVersion"))
    o.AddMember("apiVersion", api::make_string(type.api_version(), a), a);
  if (!o.HasMember("kind")) o.AddMember("kind", api::make_string(type.kind, a), a);
}

bool has_finalizers(const rapidjson::Value& o) {
  const rapidjson::Value* f = api::find(o, "/metadata/finalizers");
  return f != nullptr && f->IsArray() && !f->Empty();
}

}  // namespace

// Own writes not yet seen, per store that covers them. Shared with the handlers added to the
// stores, which may outlive the reader.
struct CachedReader::Pending {
  struct Wait {
    bool present = true;           // the store should hold the object ...
    std::string resource_version;  // ... at this version; else it should not hold it
  };
  struct Entry {
    TimePoint since;
    std::map<const Store*, Wait> stores;
  };
  // resource_id + '\x1f' + object key.
  std::map<std::string, Entry> entries;

  static std::string key(const std::string& resource, std::string_view object_key) {
    return resource + '\x1f' + std::string(object_key);
  }
  // The store's object `o` (or its removal, o == nullptr) arrived.
  void saw(const std::string& resource, const Store* store, std::string_view object_key,
           const rapidjson::Value* o) {
    auto it = entries.find(key(resource, object_key));
    if (it == entries.end()) return;
    auto w = it->second.stores.find(store);
    if (w == it->second.stores.end()) return;
    const bool seen = w->second.present
                          ? o != nullptr && resource_version_of(*o) == w->second.resource_version
                          : o == nullptr;
    if (!seen) return;
    it->second.stores.erase(w);
    if (it->second.stores.empty()) entries.erase(it);
  }
};

CachedReader::CachedReader(Cache& cache, std::shared_ptr<kube::Reader> inner,
                           metrics::Registry* registry, Clock* clock, CachedReaderOptions options)
    : cache_(cache),
      inner_(std::move(inner)),
      clock_(clock != nullptr ? clock : &steady_clock()),
      options_(options),
      pending_(std::make_shared<Pending>()) {
  if (registry != nullptr)
    requests_ = &registry->counter(
        "meshop_cached_reader_requests_total",
        "Reconcilers' reads by where they were answered: served=cache (an informer store) or "
        "served=apiserver (no watch covers the request, or an own write is not yet seen; "
        "reason says which).",
        {"verb", "resource", "served", "reason"});
}

CachedReader::~CachedReader() = default;

void CachedReader::count(const char* verb, const kube::ResourceType& type, bool served,
                         const std::string& reason) {
  const std::string_view v(verb);
  if (v == "get") ++(served ? counts_.gets_served : counts_.gets_fallback);
  if (v == "list") ++(served ? counts_.lists_served : counts_.lists_fallback);
  if (v == "discover") ++(served ? counts_.discovers_served : counts_.discovers_fallback);
  if (requests_ != nullptr)
    requests_->with({verb, type.display(), served ? "cache" : "apiserver", reason}).Increment();
  if (!served && logged_.emplace(std::string(verb) + " " + type.display(), reason).second)
    log::info(
        "read not served by the cache; asking the apiserver (logged once per resource and "
        "reason)",
        {{"verb", verb}, {"resource", type.display()}, {"reason", reason}});
}

const Store* CachedReader::serving_store(const kube::ResourceType& type, const std::string& ns,
                                         const std::string* name, const kube::ListOptions& options,
                                         std::string& reason) const {
  auto request_labels = LabelSelector::parse(options.label_selector);
  if (!request_labels) {
    reason = "label selector does not parse";
    return nullptr;
  }
  std::optional<std::vector<FieldTerm>> request_fields = parse_fields(options.field_selector);
  reason = "no watch of this resource";
  for (const Cache::WatchEntry& w : cache_.watches()) {
    const WatchSpec& s = w.spec;
    if (s.type.group != type.group || s.type.version != type.version ||
        s.type.resource != type.resource)
      continue;
    if (!s.ns.empty() && s.ns != ns) {
      reason = "watch of another namespace only";
      continue;
    }
    if (!s.projection_name.empty()) {
      reason = "store keeps a projection (" + s.projection_name + ")";
      continue;
    }
    if (s.options.metadata_only && !options.metadata_only) {
      reason = "watch is metadata only";
      continue;
    }
    // A get of an object a selective watch holds is served (get() sends one it does not hold
    // to the apiserver: it may exist without the labels).
    if (!s.options.label_selector.empty() && name == nullptr) {
      auto watch_labels = LabelSelector::parse(s.options.label_selector);
      if (!watch_labels || !implies(*request_labels, *watch_labels)) {
        reason = "label selector not implied by the watch's";
        continue;
      }
    }
    if (!s.options.field_selector.empty()) {
      bool covered = false;
      if (name != nullptr) {
        auto terms = parse_fields(s.options.field_selector);
        covered = terms && fields_hold(*terms, ns, *name);
      } else {
        covered = s.options.field_selector == options.field_selector;
      }
      if (!covered) {
        reason = "field selector of the watch";
        continue;
      }
    }
    if (!request_fields && s.options.field_selector != options.field_selector) {
      reason = "field selector (only metadata.name, metadata.namespace are served)";
      continue;
    }
    if (!w.store.has_synced()) {
      reason = "store not synced";
      continue;
    }
    reason.clear();
    return &w.store;
  }
  return nullptr;
}

bool CachedReader::own_write_pending(const kube::ResourceType& type, const std::string& ns,
                                     const std::string* name) {
  const std::string prefix = resource_id(type) + '\x1f';
  const TimePoint now = clock_->now();
  bool pending = false;
  for (auto it = pending_->entries.lower_bound(prefix);
       it != pending_->entries.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
    if (now - it->second.since > options_.write_horizon) {
      log::info("own write not seen by the watch in time; reading from the stores again",
                {{"resource", type.display()}, {"object", it->first.substr(prefix.size())}});
      it = pending_->entries.erase(it);
      continue;
    }
    auto [object_ns, object_name] = split_key(std::string_view(it->first).substr(prefix.size()));
    if (name != nullptr) {
      pending = pending || (object_ns == ns && object_name == *name);
    } else {
      pending = pending || ns.empty() || object_ns == ns;
    }
    ++it;
  }
  return pending;
}

kube::Task<kube::Result<rapidjson::Document>> CachedReader::get(const kube::ResourceType& type,
                                                                std::string ns, std::string name) {
  std::string reason;
  const Store* store = nullptr;
  if (own_write_pending(type, ns, &name)) {
    reason = "own write not yet seen";
  } else {
    store = serving_store(type, ns, &name, kube::ListOptions(), reason);
  }
  if (store != nullptr) {
    if (Object o = store->get(make_key(ns, name))) {
      count("get", type, true, "");
      rapidjson::Document doc;
      doc.CopyFrom(*o, doc.GetAllocator());
      set_type(doc, type, doc.GetAllocator());
      co_return doc;
    }
    // Absent from a watch that would hold it: NotFound, as the apiserver says it.
    bool selective = false;
    for (const Cache::WatchEntry& w : cache_.watches())
      if (&w.store == store) selective = !w.spec.options.label_selector.empty();
    if (!selective) {
      count("get", type, true, "");
      api::Error e = api::make_error(api::ErrorKind::kNotFound,
                                     "get " + type.display() + " " + make_key(ns, name) + ": " +
                                         type.display() + " \"" + name + "\" not found");
      e.http_status = 404;
      e.reason = "NotFound";
      co_return e;
    }
    reason = "absent from a watch with a label selector";
  }
  count("get", type, false, reason);
  co_return co_await inner_->get(type, ns, name);
}

kube::Task<kube::Result<kube::ListPage>> CachedReader::list_all(const kube::ResourceType& type,
                                                                std::string ns,
                                                                kube::ListOptions options) {
  std::string reason;
  const Store* store = nullptr;
  if (own_write_pending(type, ns, nullptr)) {
    reason = "own write not yet seen";
  } else {
    store = serving_store(type, ns, nullptr, options, reason);
  }
  if (store == nullptr) {
    count("list", type, false, reason);
    co_return co_await inner_->list_all(type, ns, std::move(options));
  }
  count("list", type, true, "");
  auto labels = LabelSelector::parse(options.label_selector);  // parsed by serving_store
  std::optional<std::vector<FieldTerm>> fields = parse_fields(options.field_selector);
  std::vector<Object> chosen;
  for (Object& o : store->list()) {
    const std::string_view object_ns = namespace_of(*o);
    if (!ns.empty() && object_ns != ns) continue;
    if (!labels->matches(api::find(*o, "/metadata/labels"))) continue;
    if (fields && !fields_hold(*fields, object_ns, name_of(*o))) continue;
    chosen.push_back(std::move(o));
  }
  std::sort(chosen.begin(), chosen.end(), [](const Object& a, const Object& b) {
    return std::pair(namespace_of(*a), name_of(*a)) < std::pair(namespace_of(*b), name_of(*b));
  });

  kube::ListPage page;
  rapidjson::Document& list = page.list;
  list.SetObject();
  auto& a = list.GetAllocator();
  const std::string api_version = type.api_version();
  if (options.metadata_only) {
    list.AddMember("apiVersion", "meta.k8s.io/v1", a);
    list.AddMember("kind", "PartialObjectMetadataList", a);
  } else {
    list.AddMember("apiVersion", api::make_string(api_version, a), a);
    list.AddMember("kind", api::make_string(type.kind + "List", a), a);
  }
  list.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
  rapidjson::Value items(rapidjson::kArrayType);
  items.Reserve(static_cast<rapidjson::SizeType>(chosen.size()), a);
  for (const Object& o : chosen) {
    rapidjson::Value item(rapidjson::kObjectType);
    if (options.metadata_only) {
      item.AddMember("apiVersion", "meta.k8s.io/v1", a);
      item.AddMember("kind", "PartialObjectMetadata", a);
      if (const rapidjson::Value* md = api::find(*o, "/metadata"))
        item.AddMember("metadata", rapidjson::Value(*md, a), a);
    } else {
      item.CopyFrom(*o, a);
      set_type(item, type, a);
    }
    items.PushBack(item, a);
  }
  list.AddMember("items", items, a);
  co_return page;
}

kube::Task<kube::Result<kube::ResourceType>> CachedReader::discover(std::string api_version,
                                                                    std::string kind) {
  const std::string key = api_version + '\x1f' + kind;
  kube::ResourceType by_kind;  // names the metric's series
  by_kind.resource = api_version + "/" + kind;
  if (auto it = discovered_.find(key); it != discovered_.end()) {
    count("discover", by_kind, true, "");
    co_return it->second;
  }
  if (auto it = unserved_.find(key); it != unserved_.end()) {
    if (clock_->now() < it->second.until) {
      count("discover", by_kind, true, "");
      co_return it->second.error;
    }
    unserved_.erase(it);
  }
  count("discover", by_kind, false, "not yet resolved");
  auto type = co_await inner_->discover(api_version, kind);
  if (type) {
    discovered_.emplace(key, *type);
  } else if (type.error().is(kube::ErrorKind::kNotFound)) {
    unserved_.insert_or_assign(key,
                               Unserved{type.error(), clock_->now() + options_.unserved_horizon});
  }
  co_return type;
}

std::size_t CachedReader::pending_writes() const {
  return pending_->entries.size();
}

void CachedReader::wrote(const kube::ResourceType& type, const std::string& ns,
                         const std::string& name, const rapidjson::Value* object) {
  if (name.empty()) return;
  const std::string resource = resource_id(type);
  const std::string written_key = make_key(ns, name);
  Pending::Entry entry;
  entry.since = clock_->now();
  for (const Cache::WatchEntry& w : cache_.watches()) {
    const WatchSpec& s = w.spec;
    // Only stores that may serve a read wait (the others are never read here).
    if (s.type.group != type.group || s.type.resource != type.resource ||
        !s.projection_name.empty() || (!s.ns.empty() && s.ns != ns))
      continue;
    Pending::Wait wait;
    wait.present = object != nullptr;
    if (object != nullptr) {
      wait.resource_version = std::string(resource_version_of(*object));
      if (!s.options.label_selector.empty()) {
        auto selector = LabelSelector::parse(s.options.label_selector);
        wait.present = selector && selector->matches(api::find(*object, "/metadata/labels"));
      }
      if (!s.options.field_selector.empty()) {
        auto terms = parse_fields(s.options.field_selector);
        if (terms) wait.present = wait.present && fields_hold(*terms, ns, name);
      }
    }
    Object held = w.store.get(written_key);
    const bool seen = wait.present
                          ? held != nullptr && resource_version_of(*held) == wait.resource_version
                          : held == nullptr;
    if (seen) continue;
    entry.stores.emplace(&w.store, std::move(wait));
    if (tracked_stores_.insert(&w.store).second) {
      std::weak_ptr<Pending> table = pending_;
      const Store* store = &w.store;
      auto on_object = [table, resource, store](const Object& o) {
        // Most events find nothing pending: no key is built for them.
        if (auto t = table.lock(); t && !t->entries.empty())
          t->saw(resource, store, object_key(*o), o.get());
      };
      w.store.add_handlers(
          {.on_add = on_object,
           .on_update = [on_object](const Object&, const Object& o) { on_object(o); },
           .on_delete =
               [table, resource, store](const Object& o) {
                 if (auto t = table.lock(); t && !t->entries.empty())
                   t->saw(resource, store, object_key(*o), nullptr);
               }});
    }
  }
  const std::string key = Pending::key(resource, written_key);
  if (entry.stores.empty()) {
    pending_->entries.erase(key);
  } else {
    pending_->entries[key] = std::move(entry);
  }
}

namespace {

// Forwards to a Writer and tells the reader what each successful write left.
class TrackingWriter final : public kube::Writer {
 public:
  TrackingWriter(std::shared_ptr<kube::Writer> inner, std::shared_ptr<CachedReader> reader)
      : inner_(std::move(inner)), reader_(std::move(reader)) {}

  kube::Task<kube::Result<rapidjson::Document>> apply(const kube::ResourceType& type,
                                                      const rapidjson::Value& object,
                                                      std::string field_manager,
                                                      bool force) override {
    auto r = co_await inner_->apply(type, object, std::move(field_manager), force);
    note(type, r);
    co_return r;
  }
  kube::Task<kube::Result<rapidjson::Document>> create(const kube::ResourceType& type,
                                                       std::string ns,
                                                       const rapidjson::Value& object) override {
    auto r = co_await inner_->create(type, std::move(ns), object);
    note(type, r);
    co_return r;
  }
  kube::Task<kube::Result<rapidjson::Document>> update(const kube::ResourceType& type,
                                                       const rapidjson::Value& object) override {
    auto r = co_await inner_->update(type, object);
    note(type, r);
    co_return r;
  }
  kube::Task<kube::Result<rapidjson::Document>> patch(const kube::ResourceType& type,
                                                      std::string ns, std::string name,
                                                      kube::PatchType patch_type, std::string body,
                                                      kube::PatchOptions options) override {
    const bool dry_run = options.dry_run;
    auto r = co_await inner_->patch(type, std::move(ns), std::move(name), patch_type,
                                    std::move(body), std::move(options));
    if (!dry_run) note(type, r);
    co_return r;
  }
  kube::Task<kube::Result<rapidjson::Document>> remove(const kube::ResourceType& type,
                                                       std::string ns, std::string name,
                                                       kube::DeleteOptions options) override {
    const bool dry_run = options.dry_run;
    auto r = co_await inner_->remove(type, ns, name, std::move(options));
    // Gone, unless finalizers hold it (then it is there with a deletionTimestamp).
    if (!dry_run && (r || r.error().is(kube::ErrorKind::kNotFound))) {
      const bool held = r && api::string_at(*r, {"kind"}) != "Status" && has_finalizers(*r);
      reader_->wrote(type, ns, name, held ? &*r : nullptr);
    }
    co_return r;
  }
  kube::Task<kube::Result<rapidjson::Document>> evict(std::string ns, std::string name,
                                                      bool dry_run) override {
    co_return co_await inner_->evict(std::move(ns), std::move(name), dry_run);
  }
  void event(const kube::ObjectReference& regarding, kube::EventType type, std::string reason,
             std::string action, std::string note) override {
    inner_->event(regarding, type, std::move(reason), std::move(action), std::move(note));
  }

 private:
  void note(const kube::ResourceType& type, const kube::Result<rapidjson::Document>& r) {
    if (!r) return;
    reader_->wrote(type, api::string_at(*r, {"metadata", "namespace"}),
                   api::string_at(*r, {"metadata", "name"}), &*r);
  }
  std::shared_ptr<kube::Writer> inner_;
  std::shared_ptr<CachedReader> reader_;
};

}  // namespace

std::shared_ptr<kube::Writer> CachedReader::tracking(std::shared_ptr<kube::Writer> inner) {
  return std::make_shared<TrackingWriter>(std::move(inner), shared_from_this());
}

}  // namespace meshop::runtime
