// WebhookServer: the HTTPS side of the injection webhook. It accepts TLS connections, reads
// HTTP/1.1 requests (keep-alive) and answers them with serve() (admission.hpp). Everything it
// decides is in admission.hpp; this class only moves bytes.
//
//   RevisionStore store;  ServingCertificate cert("tls.crt", "tls.key", &metrics);
//   WebhookServer server({.address = "127.0.0.1:15017"}, store, cert, default_engine(), &metrics);
//   if (auto st = server.start(); !st) ...;  // binds, starts one thread per core
//   ...                                   // serve; reload cert/config from another thread
//   server.shutdown();                    // SIGTERM: drain (returns at once) ...
//   server.stop();                        // ... and wait for it; in-flight requests answered
//
// - Its own io_context with `threads` threads (0 = std::thread::hardware_concurrency()), apart
//   from the control loop (DESIGN.md "Threading"); every connection runs on its own strand.
// - TLS 1.2 and 1.3 only, TLS 1.2 with forward-secret AEAD suites only (tls.hpp); each
//   connection takes the certificate's current() context when its TLS starts and keeps it, so
//   certificate reloads never disturb a connection in flight.
// - Bounds, so that no client can stall the server or make it hold memory (ServerOptions):
//     connections      at most `max_connections` open; one more is accepted and closed at once
//                      (the client sees a reset, fails fast and retries; waiting instead would
//                      hold it in the kernel's backlog until a slot frees, with no deadline)
//     first bytes      a connection that sends nothing is closed after `handshake_timeout`;
//                      no TLS state is allocated before its first byte (an idle TCP connection
//                      costs a socket and a coroutine frame, about a page)
//     TLS handshake    done within `handshake_timeout` of the accept
//     request          its header within `header_timeout` of its first byte, the whole
//                      request read and answered within `request_timeout` of its first byte
//                      (below the webhook configuration's timeoutSeconds, 10 s by default, so
//                      the apiserver gets an answer rather than a timeout)
//     header           64 KiB, else 431 and the connection is closed
//     body             kMaxRequestBodyBytes (a larger Content-Length is answered 400 after
//                      discarding up to 16 MiB of the body, then the connection is closed)
//     keep-alive       a connection idle for `idle_timeout` between requests is closed (istiod:
//                      90 s)
//     accept errors    (EMFILE, ENFILE, ENOBUFS...) back off 5 ms doubling to 1 s, as Go's
//                      net/http; logged once, then at most every 10 s with the count
// - Answers of identical reviews are memoized (options.injection_cache, bounded; see
//   injection_cache.hpp), so a rollout's identical pods run the engine once.
// - stuck_reason(): non-empty while every server thread has been inside one request for more
//   than `stuck_after` (an engine or template that does not return): readiness probes say so.
// - shutdown(): the graceful end, for SIGTERM, in steps (all measured from the call):
//     at once       draining() is true (readiness probes should fail from now on); every answer
//                   written from now on carries Connection: close and its connection is closed
//                   after it (close_notify, then the client's end is awaited, bounded), so a
//                   client opens its next connection elsewhere and never meets one closed under
//                   a request; new connections are still accepted and answered
//     drain_delay   the listener closes; idle connections (between requests, or accepted but
//                   silent) are closed; a connection already talking gets its answer
//     then          drained() once no connection is left, or at drain_timeout at the latest
//   The delay is there so that load balancers (HAProxy's health check, Kubernetes' endpoints)
//   take the replica out while it still accepts: once it stops, nobody is sent to it.
// - stop(): waits for the shutdown to be drained (begins one without the delay if shutdown()
//   was not called), then joins its threads. A thread still inside a request after that is
//   detached and its io_context abandoned (leaked): stop() returns within drain_timeout plus
//   one second whatever the request does, and returns false so that the caller, which is
//   shutting down, exits the process. The destructor calls stop().
// Thread affinity: construct, start(), stop() from one owner thread; the handlers run on the
// server's threads; shutdown(), draining(), drained() and stuck_reason() from any thread. The
// store, certificate and metrics must outlive the server.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "operator/webhook/admission.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/injection_cache.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"
#include "operator/webhook/tls.hpp"

namespace meshop::webhook {

struct ServerOptions {
  std::string address = "127.0.0.1:15017";  // "host:port"; port 0 = any free port
  std::string default_revision = "default";
  unsigned threads = 0;
  std::chrono::seconds idle_timeout{90};
  // shutdown(): answers continue for drain_delay (each closing its connection), then the
  // listener closes; everything ends within drain_timeout (below Kubernetes' default
  // terminationGracePeriodSeconds, 30, and Istio's webhook timeoutSeconds, 10).
  std::chrono::milliseconds drain_delay{2'000};
  std::chrono::milliseconds drain_timeout{5'000};
  std::size_t max_connections = 1024;
  std::chrono::milliseconds handshake_timeout{5'000};
  std::chrono::milliseconds header_timeout{5'000};
  std::chrono::milliseconds request_timeout{8'000};
  std::chrono::milliseconds stuck_after{5'000};
  // Memoized injection answers (injection_cache.hpp); max_entries 0 turns memoization off.
  InjectionCacheLimits injection_cache;
};

class WebhookServer {
 public:
  WebhookServer(ServerOptions options, const RevisionStore& store,
                const ServingCertificate& certificate, Engine engine, WebhookMetrics* metrics);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Binds and starts serving. An error when the address is bad or taken, or when the
  // certificate has no context yet.
  api::Status start();
  unsigned short port() const;
  unsigned threads() const;
  // "" unless every thread has been in one request for longer than stuck_after.
  std::string stuck_reason() const;
  // Begins the graceful shutdown (see above) and returns at once; later calls do nothing.
  void shutdown();
  // True from the start of a shutdown (or of stop()).
  bool draining() const;
  // True once a shutdown has ended: no connection left, or drain_timeout passed (or at once
  // when shutdown() came before start()).
  bool drained() const;
  // False when a thread stuck in a request had to be abandoned (see above).
  bool stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Parses "host:port" / "[v6]:port" / ":port" (all interfaces). Exposed for tests.
api::Result<std::pair<std::string, unsigned short>> split_host_port(const std::string& address);

}  // namespace meshop::webhook
