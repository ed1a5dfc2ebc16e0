// The Kubernetes API client: typed verbs over HTTPS (Beast) with a keep-alive connection pool,
// timeouts, a client-side QPS/burst limiter, retries with backoff honouring Retry-After, and
// typed errors parsed from metav1.Status.
//
// Objects are dynamic JSON (rapidjson::Document). Every call returns Result<T>; an expected
// failure (404, 409, 410, 429 after retries, connection errors) is an Error value, and no call
// throws for them.
//
// Thread affinity: a Client and everything it returns (Watch) belong to the executor they were
// created on, which must be a single-threaded io_context (DESIGN.md "Threading"). Calls are
// coroutines (boost::asio::awaitable) run on that executor; several may be in flight at once
// (each takes its own pooled connection). Keep the Client alive (it is a shared_ptr) while
// calls or watches are in flight; Watch holds a reference itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <rapidjson/document.h>

#include "operator/kube/config.hpp"
#include "operator/kube/error.hpp"
#include "operator/kube/resource.hpp"

namespace meshop::kube {

template <class T>
using Task = boost::asio::awaitable<T>;

// GCC 12 pitfall: inside a coroutine, a braced temporary of an AGGREGATE type with a
// non-trivial destructor (e.g. `co_await f(Opts{.x = "a"})`, or a `= {}` default argument) in a
// co_await full-expression is destroyed twice (heap corruption). The option structs below
// therefore declare a default constructor (so they are not aggregates, and designated
// initializers do not compile); set fields on a named local instead:
//   ListOptions o;  o.limit = 500;  auto page = co_await client->list(type, ns, o);

struct ClientOptions {
  // Client-side token bucket; qps <= 0 disables it (controller-runtime's default relies on
  // server-side priority & fairness). client-go's default is 5/10.
  double qps = 50;
  int burst = 100;
  std::chrono::milliseconds connect_timeout{10'000};
  // Whole request (send + full response) for non-watch calls.
  std::chrono::milliseconds request_timeout{60'000};
  // Retries after the first attempt, for retryable failures (see retry.hpp).
  int max_retries = 5;
  // Idle keep-alive connections kept per client.
  std::size_t max_idle_connections = 16;
  std::string user_agent = "meshop";
};

struct GetOptions {
  GetOptions() = default;        // not an aggregate: see "GCC 12 pitfall" above
  std::string resource_version;  // "" = most recent (quorum read), "0" = any cached
  std::string subresource;       // e.g. "status", "scale"
  bool metadata_only = false;    // PartialObjectMetadata
};

struct ListOptions {
  ListOptions() = default;  // not an aggregate: see "GCC 12 pitfall" above
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;        // "" = quorum read, "0" = watch cache
  std::string resource_version_match;  // NotOlderThan | Exact | ""
  std::int64_t limit = 0;              // 0 = no limit (one page); list_all defaults to 500
  std::string continue_token;
  // Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1
  bool metadata_only = false;
};

// One page of a list. `list` is the whole List object the server returned (kind XxxList or
// PartialObjectMetadataList); its "items" array holds the objects.
struct ListPage {
  rapidjson::Document list;
  std::string resource_version;  // metadata.resourceVersion of the list
  std::string continue_token;    // metadata.continue; "" when this was the last page
};

struct WriteOptions {
  WriteOptions() = default;      // not an aggregate: see "GCC 12 pitfall" above
  std::string field_manager;     // fieldManager query parameter
  bool dry_run = false;          // dryRun=All
  std::string field_validation;  // Strict | Warn | Ignore | ""
};

enum class PatchType {
  kJson,            // application/json-patch+json (RFC 6902)
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kApply,           // application/apply-patch+yaml (server-side apply; body may be JSON)
};

struct PatchOptions {
  PatchOptions() = default;   // not an aggregate: see "GCC 12 pitfall" above
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply only: take ownership of conflicting fields
  bool dry_run = false;
  std::string subresource;  // e.g. "status"
};

enum class PropagationPolicy { kDefault, kOrphan, kBackground, kForeground };

struct DeleteOptions {
  DeleteOptions() = default;  // not an aggregate: see "GCC 12 pitfall" above
  std::string precondition_uid;
  std::string precondition_resource_version;
  PropagationPolicy propagation = PropagationPolicy::kDefault;
  std::optional<std::int64_t> grace_period_seconds;
  bool dry_run = false;
};

struct WatchOptions {
  WatchOptions() = default;      // not an aggregate: see "GCC 12 pitfall" above
  std::string resource_version;  // start after this version ("" = now, "0" = any)
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  // Server-side timeout; the stream then ends cleanly. client-go uses a random 300..600 s.
  // The client also fails the stream (kTransport) if nothing ends it 60 s after that, so a
  // silently dead connection is noticed. Without it a watch has no client-side deadline.
  std::optional<int> timeout_seconds;
  // Events carry PartialObjectMetadata objects.
  bool metadata_only = false;
  // Maximum length of one event line; a longer line fails the watch (kDecode).
  std::size_t max_event_bytes = 64 * 1024 * 1024;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };
std::string_view to_string(WatchEventType type);

// One event of a watch. BOOKMARK objects carry only apiVersion, kind and
// metadata.resourceVersion (and annotations); never treat them as full objects.
struct WatchEvent {
  WatchEventType type;
  rapidjson::Document object;
  // metadata.resourceVersion of `object` ("" if absent).
  std::string resource_version() const;
};

// An open watch stream. Move-only. Destroying it or close() releases the connection; do not
// destroy it while a next() is pending (close() it and let that next() complete first).
class Watch {
 public:
  class Impl;
  explicit Watch(std::unique_ptr<Impl> impl);
  Watch(Watch&&) noexcept;
  Watch& operator=(Watch&&) noexcept;
  ~Watch();

  // The next event.
  //  - value with an event: ADDED / MODIFIED / DELETED / BOOKMARK.
  //  - value nullopt: the stream ended cleanly (server timeoutSeconds, connection closed at a
  //    line boundary). Re-watch from the last resourceVersion seen.
  //  - Error: an ERROR event (typed from its Status; 410 Gone / Expired -> kGone: relist), a
  //    malformed line (kDecode), a transport failure mid-stream (kTransport), or close()
  //    (kCancelled). After an error or nullopt the Watch is finished; further calls return
  //    nullopt.
  // The body may be of any length (no Beast body limit); lines are reassembled across chunk
  // and TLS-record boundaries.
  Task<Result<std::optional<WatchEvent>>> next();
  // Cancels a pending next() (it completes with kCancelled) and closes the connection.
  void close();
  // Total body bytes received so far on this stream (for benchmarks).
  std::uint64_t bytes_received() const;

 private:
  std::unique_ptr<Impl> impl_;
};

class Transport;

class Client : public std::enable_shared_from_this<Client> {
 public:
  // Builds a client; fails with kConfig on a bad CA / certificate / key / server URL.
  static Result<std::shared_ptr<Client>> create(boost::asio::any_io_executor executor,
                                                Config config, ClientOptions options = {});
  ~Client();

  const Config& config() const;
  boost::asio::any_io_executor get_executor() const;

  Task<Result<rapidjson::Document>> get(const ResourceType& type, std::string_view ns,
                                        std::string_view name, GetOptions options = {});

  // One page.
  Task<Result<ListPage>> list(const ResourceType& type, std::string_view ns,
                              ListOptions options = {});
  // Every page (limit defaults to 500 when 0), items appended into one List; the returned
  // resource_version is the first page's (a consistent snapshot) and continue_token is "".
  // A 410 while paging (continue token expired) is returned as kGone.
  Task<Result<ListPage>> list_all(const ResourceType& type, std::string_view ns,
                                  ListOptions options = {});

  // POST to the collection of `ns` (ignored for cluster-scoped types). `object` must be a
  // full object; its metadata.namespace, if any, must agree with `ns`.
  Task<Result<rapidjson::Document>> create(const ResourceType& type, std::string_view ns,
                                           const rapidjson::Value& object,
                                           WriteOptions options = {});
  // PUT; namespace and name come from object.metadata; metadata.resourceVersion (if set) is the
  // optimistic-concurrency precondition (409 kConflict when stale).
  Task<Result<rapidjson::Document>> update(const ResourceType& type, const rapidjson::Value& object,
                                           WriteOptions options = {});
  // PUT to the status subresource.
  Task<Result<rapidjson::Document>> update_status(const ResourceType& type,
                                                  const rapidjson::Value& object,
                                                  WriteOptions options = {});
  // PATCH with `body` in the encoding of `patch_type`.
  Task<Result<rapidjson::Document>> patch(const ResourceType& type, std::string_view ns,
                                          std::string_view name, PatchType patch_type,
                                          std::string body, PatchOptions options = {});
  // Server-side apply of `object` (namespace and name from its metadata).
  Task<Result<rapidjson::Document>> apply(const ResourceType& type, const rapidjson::Value& object,
                                          std::string field_manager, bool force = true,
                                          std::string subresource = {});
  // DELETE. Returns what the server returned: the object (still terminating, e.g. with
  // finalizers or foreground propagation) or a Status with status Success.
  Task<Result<rapidjson::Document>> remove(const ResourceType& type, std::string_view ns,
                                           std::string_view name, DeleteOptions options = {});

  // POSTs a policy/v1 Eviction for pod ns/name (the pods/eviction subresource), as `kubectl
  // drain` does: the apiserver deletes the pod only if every PodDisruptionBudget selecting it
  // allows a disruption. A refusal (429 TooManyRequests naming the budget in its causes) is
  // returned at once, never retried here: the caller decides when to try again. With
  // `dry_run` the apiserver checks and deletes nothing.
  Task<Result<rapidjson::Document>> evict(std::string_view ns, std::string_view name,
                                          bool dry_run = false);

  // Opens a watch. Errors before the stream starts (403, 410 for a too-old resourceVersion,
  // connection failures after retries) are returned here.
  Task<Result<Watch>> watch(const ResourceType& type, std::string_view ns,
                            WatchOptions options = {});

  // Resolves a resource by apiVersion and kind (or plural) through discovery
  // (GET /api/v1 or /apis/<group>/<version>), cached per group-version. Built-in table first.
  Task<Result<ResourceType>> discover(std::string_view api_version, std::string_view kind);

  // Raw request for anything else (e.g. /version, /apis). `path` includes the query.
  struct RawResponse {
    int status = 0;
    std::string body;
    std::string content_type;
  };
  Task<Result<RawResponse>> raw(std::string_view method, std::string path, std::string body = {},
                                std::string content_type = {}, std::string accept = {});

  // Counters for benchmarks and tests.
  struct Stats {
    std::uint64_t requests = 0;
    std::uint64_t retries = 0;
    std::uint64_t connections_opened = 0;
    std::uint64_t bytes_received = 0;  // response bodies, including watch streams
  };
  Stats stats() const;

  // Called once per HTTP request sent, retries included, when its answer (or failure) is
  // known: for request metrics (client-go's rest_client_requests_total). `code` is the HTTP
  // status, 0 when no answer came (connection or TLS failure, timeout).
  struct RequestRecord {
    std::string_view verb;      // get, list, watch, create, update, patch, apply, delete, ...
    std::string_view resource;  // e.g. "pods", "deployments.apps"; "" for raw paths
    std::string_view method;    // GET, POST, ...
    std::string_view host;      // host[:port] of the server URL
    int code = 0;
  };
  using RequestObserver = std::function<void(const RequestRecord&)>;
  // Not thread-safe with requests in flight: set it before the client is used.
  void set_request_observer(RequestObserver observer);

  Transport& transport();  // internal

 private:
  struct Tag {};

 public:
  Client(Tag, std::unique_ptr<Transport> transport);

 private:
  std::unique_ptr<Transport> transport_;
  struct DiscoveryCache;
  std::unique_ptr<DiscoveryCache> discovery_;
};

}  // namespace meshop::kube
