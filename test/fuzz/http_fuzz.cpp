// libFuzzer target for the webhook server on the bytes a client sends after the TLS handshake:
// request lines, headers (Content-Length, Transfer-Encoding: chunked, Connection), bodies, and
// several requests pipelined on one connection, answered by the real server (WebhookServer,
// meshop's TLS context) with the real injection engine over the default chart set's injector
// configuration (Istio's templates and values, test/support/chart_set_sources.hpp).
//
// Each input is written on a fresh TLS connection, which is then half-closed: the server must
// answer what it can and close the connection within a few seconds (else this aborts as a
// hang), without crashing or a sanitizer report. Every 256 inputs a well-formed review on a new
// connection must still be answered with a patch: no input may leave the server stuck.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "../unit/webhook/test_support.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"
#include "operator/webhook/server.hpp"
#include "operator/webhook/tls.hpp"
#include "test/support/chart_set_sources.hpp"

namespace {

using namespace meshop;
using namespace std::chrono_literals;

struct Server {
  metrics::Registry registry;
  webhook::WebhookMetrics metrics{registry};
  webhook::testing::TestCert cert = webhook::testing::make_self_signed("fuzz");
  webhook::ServingCertificate certificate{"", "", &metrics};
  webhook::RevisionStore store;
  std::unique_ptr<webhook::WebhookServer> server;

  Server() {
    if (auto installed = certificate.install_pem(cert.cert_pem, cert.key_pem, "fuzz"); !installed) {
      std::fprintf(stderr, "certificate: %s\n", installed.message().c_str());
      std::abort();
    }
    webhook::Engine engine = webhook::default_engine();
    inject::SnapshotSources sources = test_support::chart_set_sources();
    sources.native_sidecars = inject::NativeSidecars::kDisabled;
    auto built = engine.build(sources);
    if (!built.ok()) std::abort();
    webhook::RevisionConfig config;
    config.revision = "default";
    config.snapshot = *built;
    config.source = "builtin";
    store.publish(config);
    webhook::ServerOptions options;
    options.address = "127.0.0.1:0";
    options.threads = 2;
    // Short bounds, so that an input that leaves a request half-sent costs little time.
    options.handshake_timeout = 2s;
    options.header_timeout = 1s;
    options.request_timeout = 2s;
    options.idle_timeout = 1s;
    options.drain_timeout = 1s;
    server = std::make_unique<webhook::WebhookServer>(options, store, certificate,
                                                      std::move(engine), &metrics);
    if (auto started = server->start(); !started) {
      std::fprintf(stderr, "start: %s\n", started.message().c_str());
      std::abort();
    }
  }
};

Server& server() {
  static Server* s = new Server();  // never destroyed: the process ends with the fuzzer
  return *s;
}

void check_alive(Server& s) {
  webhook::testing::TlsClient client(s.server->port(), {s.cert.cert_pem});
  client.set_timeout(10s);
  auto r = client.post("/inject", "application/json",
                       webhook::testing::review_body("admission.k8s.io/v1", "alive"));
  if (r.status != 200 || r.body.find("\"patch\"") == std::string::npos) {
    std::fprintf(stderr, "the server no longer injects: %d %s\n", r.status, r.body.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Server& s = server();
  static std::uint64_t runs = 0;
  if (runs++ % 256 == 0) check_alive(s);
  try {
    webhook::testing::TlsClient client(s.server->port(), {s.cert.cert_pem});
    client.set_timeout(5s);
    if (size > 0) client.send_raw(std::string(reinterpret_cast<const char*>(data), size));
    client.shutdown_send();
    if (!client.closed_by_server_within(8s)) {
      std::fprintf(stderr, "the server kept the connection open 8 s after the input ended\n");
      std::abort();
    }
  } catch (const std::exception&) {
    // The server may close (or reset) the connection before it has read everything: that is
    // an answer too.
  }
  return 0;
}
