// CachedReader: a kube::Reader that answers from the shared cache's stores (controller-runtime's
// cached client), so that a reconciler's pass reads what meshop already watches instead of
// asking the apiserver again (issue 13: "reconcilers observe from the cache").
//
//   auto reader = std::make_shared<CachedReader>(cache, kube::client_reader(client), &registry);
//   auto writer = reader->tracking(kube::client_writer(client, events));  // read-your-writes
//   InstallReconciler install(reader, writer, ...);
//
// A request is served from a watch's store when that watch covers it, else it goes to `inner`
// (the apiserver) and is counted (meshop_cached_reader_requests_total{served="apiserver"} with
// the reason) and logged once per resource and reason. A watch covers a request when:
// - it is of the same group, version and resource, and its namespace is the request's or every
//   namespace (a cluster-wide watch serves a namespace's request);
// - its store keeps whole objects: the projection is strip_managed_fields (projection_name "":
//   only metadata.managedFields and the last-applied annotation are dropped, which no
//   reconciler reads). A store with any other projection (pods: restart::project_pod) serves
//   nothing here: a reader must never get an object with fields silently missing;
// - a metadata-only watch serves only metadata-only lists (items are PartialObjectMetadata,
//   as the apiserver gives them); a full watch serves both;
// - for a list, its label selector is implied by the request's: every requirement of the
//   watch's selector is one of the request's (a watch without a selector implies nothing). The
//   request's selector then filters the store's objects. A get is served by a selective watch
//   only if the store holds the object;
// - its field selector is empty, or for a list equal to the request's; for a get, names only
//   metadata.name / metadata.namespace and the requested object satisfies it. The request's
//   own field selector may test metadata.name and metadata.namespace (=, ==, !=); any other
//   field goes to the apiserver;
// - its store has synced (a first list finished).
// A get that the store does not hold is NotFound only when the watch would hold the object if
// it existed (no label selector on the watch); otherwise it goes to the apiserver.
// Lists are sorted by namespace/name, as the apiserver returns them; ListPage.resource_version
// is "" (the store does not keep its list's version; no reconciler reads it).
//
// Read-your-writes. A store lags the apiserver by a watch event: a pass that reads right after
// its own write would see the old object and write again (a 409 Conflict on a resourceVersion
// precondition, retried through the backoff; or worse, a second CA for a Secret it just
// created). The writes made through tracking() are remembered per object with the
// resourceVersion they gave (absent for a delete); until every store that covers the object has
// seen that version (its watch event), a get of that object, and a list of its kind in a
// namespace that holds it, go to the apiserver (reason "own write not yet seen"). An entry not
// seen after `write_horizon` (a relist that skipped the version) is dropped.
//
// discover() is remembered per (apiVersion, kind) once it succeeded (resources do not move);
// failures are not, and go to `inner` again.
//
// Thread affinity: the control loop's thread (the stores'). The cache must outlive the reader;
// the reader may be destroyed before the cache (the handlers it adds to stores hold only its
// shared write table).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "operator/kube/reader.hpp"
#include "operator/kube/writer.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/cache.hpp"
#include "operator/runtime/clock.hpp"

namespace meshop::runtime {

struct CachedReaderOptions {
  // How long a write not yet seen by the stores sends reads of its object to the apiserver.
  Duration write_horizon = std::chrono::seconds(30);
  // How long an answer "the server has no such resource" (404 NotFound) to discover() is
  // repeated without asking again: an optional kind (NetworkAttachmentDefinition without
  // Multus) costs one discovery request per minute instead of one per pass, and a CRD
  // installed later is found within that time.
  Duration unserved_horizon = std::chrono::seconds(60);
};

class CachedReader final : public kube::Reader, public std::enable_shared_from_this<CachedReader> {
 public:
  // How many requests were answered where (tests, and meshop_cached_reader_requests_total).
  struct Counts {
    std::uint64_t gets_served = 0, lists_served = 0, discovers_served = 0;
    std::uint64_t gets_fallback = 0, lists_fallback = 0, discovers_fallback = 0;
  };

  // `clock`: null = steady_clock(). `registry` may be null (no metric).
  CachedReader(Cache& cache, std::shared_ptr<kube::Reader> inner,
               metrics::Registry* registry = nullptr, Clock* clock = nullptr,
               CachedReaderOptions options = CachedReaderOptions{});
  ~CachedReader() override;

  kube::Task<kube::Result<rapidjson::Document>> get(const kube::ResourceType& type, std::string ns,
                                                    std::string name) override;
  kube::Task<kube::Result<kube::ListPage>> list_all(const kube::ResourceType& type, std::string ns,
                                                    kube::ListOptions options) override;
  kube::Task<kube::Result<kube::ResourceType>> discover(std::string api_version,
                                                        std::string kind) override;

  // A Writer forwarding to `inner` whose successful writes this reader remembers (see
  // "Read-your-writes"). Give every reconciler that reads through this reader its writer
  // through here. The reader must be owned by a shared_ptr (the writer holds it).
  std::shared_ptr<kube::Writer> tracking(std::shared_ptr<kube::Writer> inner);

  const Counts& counts() const { return counts_; }
  // Own writes not yet seen by every store that covers them.
  std::size_t pending_writes() const;

  // Called by tracking writers: `object` is the write's answer (nullptr for a delete that
  // left nothing).
  void wrote(const kube::ResourceType& type, const std::string& ns, const std::string& name,
             const rapidjson::Value* object);

 private:
  struct Pending;
  // The watch that serves a request, or null with the reason why none does.
  const Store* serving_store(const kube::ResourceType& type, const std::string& ns,
                             const std::string* name, const kube::ListOptions& options,
                             std::string& reason) const;
  bool own_write_pending(const kube::ResourceType& type, const std::string& ns,
                         const std::string* name);
  void count(const char* verb, const kube::ResourceType& type, bool served,
             const std::string& reason);

  Cache& cache_;
  std::shared_ptr<kube::Reader> inner_;
  Clock* clock_;
  CachedReaderOptions options_;
  std::shared_ptr<Pending> pending_;
  std::set<const Store*> tracked_stores_;  // stores given a handler for pending_
  std::map<std::string, kube::ResourceType> discovered_;
  struct Unserved {
    kube::Error error;
    TimePoint until;
  };
  std::map<std::string, Unserved> unserved_;  // NotFound answers of discover(), until `until`
  std::set<std::pair<std::string, std::string>> logged_;  // (resource, reason) logged once
  metrics::Family<metrics::Counter>* requests_ = nullptr;
  Counts counts_;
};

}  // namespace meshop::runtime
