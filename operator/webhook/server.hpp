// WebhookServer: the HTTPS side of the injection webhook. It accepts TLS connections, reads
// HTTP/1.1 requests (keep-alive) and answers them with serve() (admission.hpp). Everything it
// decides is in admission.hpp; this class only moves bytes.
//
//   RevisionStore store;  ServingCertificate cert("tls.crt", "tls.key", &metrics);
//   WebhookServer server({.address = "127.0.0.1:15017"}, store, cert, default_engine(), &metrics);
//   if (auto err = server.start()) ...;   // binds, starts one thread per core
//   ...                                   // serve; reload cert/config from another thread
//   server.stop();                        // graceful: in-flight requests are answered
//
// - Its own io_context with `threads` threads (0 = std::thread::hardware_concurrency()), apart
//   from the control loop (DESIGN.md "Threading"); every connection runs on its own strand.
// - TLS 1.2+; each connection takes the certificate's current() context when accepted and keeps
//   it, so certificate reloads never disturb a connection in flight (tls.hpp).
// - Limits: request header 64 KiB; body kMaxRequestBodyBytes (a larger Content-Length is
//   answered 400 after discarding up to 16 MiB of the body, then the connection is closed);
//   TLS handshake 10 s; a connection idle for `idle_timeout` is closed (istiod: 90 s).
// - stop(): stops accepting, closes idle connections, lets requests in progress finish (at most
//   `shutdown_grace`), then joins its threads. The destructor calls stop().
// Thread affinity: construct, start(), stop() from one owner thread; the handlers run on the
// server's threads. The store, certificate and metrics must outlive the server.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "operator/webhook/admission.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"
#include "operator/webhook/tls.hpp"

namespace meshop::webhook {

struct ServerOptions {
  std::string address = "127.0.0.1:15017";  // "host:port"; port 0 = any free port
  std::string default_revision = "default";
  unsigned threads = 0;
  std::chrono::seconds idle_timeout{90};
  std::chrono::seconds shutdown_grace{10};
};

class WebhookServer {
 public:
  WebhookServer(ServerOptions options, const RevisionStore& store,
                const ServingCertificate& certificate, Engine engine, WebhookMetrics* metrics);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Binds and starts serving. An error message when the address is bad or taken, or when the
  // certificate has no context yet.
  std::optional<std::string> start();
  unsigned short port() const;
  unsigned threads() const;
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Parses "host:port" / "[v6]:port" / ":port" (all interfaces). Exposed for tests.
api::Result<std::pair<std::string, unsigned short>> split_host_port(const std::string& address);

}  // namespace meshop::webhook
