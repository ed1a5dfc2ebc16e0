// `meshop run`: the operator. One process runs
//   - one shared runtime::Cache of informers (each reconciler's setup_* asks for the watches
//     it reads, reconcilers/watches.hpp), on IstioOperators, Namespaces,
//     MutatingWebhookConfigurations, the injector ConfigMaps and the webhook Secret of --namespace,
//     the Deployments/DaemonSets meshop installed (label app.kubernetes.io/managed-by=meshop), and,
//     metadata only, the other kinds it installs (Services, ServiceAccounts, PDBs, HPAs, RBAC) so
//     their drift is repaired at once; every Pod (restart::project_pod: what the planners read)
//     and, with
//     --restarts, every workload, PodDisruptionBudget and Node, which the revisions and
//     restarts passes read instead of listing (RevisionsCache, RestartsCache);
//   - on the elected leader only (--leader-elect), the controllers of reconcilers/: install,
//     webhooks, certificates, revisions and restarts (--restarts=false turns the last off). The
//     first four read through a runtime::CachedReader: what the watches above cover is answered
//     from their stores, the rest from the apiserver (meshop_cached_reader_requests_total);
//   - on every replica, the sidecar-injection webhook (webhook::WebhookServer) with one
//     configuration per revision from the injector ConfigMaps, and the serving certificate
//     from the Secret the certificates reconciler keeps (installed without dropping a request
//     when it is renewed). The server starts once the Secret has a certificate.
//   - /healthz, /readyz (informers synced) and /metrics on --health-addr.
//
//   meshop run [--kubeconfig K] [--context C] [--namespace istio-system]
//              [--local] [--webhook-addr 127.0.0.1:15017] [--webhook-service meshop-webhook]
//              [--health-addr 127.0.0.1:8081] [--leader-elect] [--restarts=true|false]
//              [--drain-delay 2s] [--drain-timeout 5s]
//
// --local is for a meshop running outside the cluster (development, tests): the webhook
// configurations call `https://127.0.0.1:<port of --webhook-addr>` and the serving certificate
// names 127.0.0.1. Otherwise they call the Service --webhook-service in --namespace (port 443),
// which a meshop Deployment puts in front of this process.
// SIGTERM/SIGINT: /readyz turns 503 at once and the webhook drains (server.hpp shutdown():
// answers say Connection: close; after --drain-delay the listener closes and idle connections
// are closed; requests in progress are answered; at most --drain-timeout), while controllers
// finish what they are doing and the lease is released; exit 0. A second signal exits at once
// (1). Losing the lease exits 1.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/drain.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/kube/reader.hpp"
#include "operator/log/log.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/runtime/cache.hpp"
#include "operator/runtime/cached_reader.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/heap.hpp"
#include "operator/runtime/kube_source.hpp"
#include "operator/runtime/manager.hpp"
#include "operator/runtime/metrics.hpp"
#include "operator/webhook/configmap_source.hpp"
#include "operator/webhook/server.hpp"
#include "reconcilers/certificates.hpp"
#include "reconcilers/install.hpp"
#include "reconcilers/restarts.hpp"
#include "reconcilers/revisions.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"
#include "reconcilers/webhooks.hpp"

namespace meshop::cli {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct RunOptions {
  std::string kubeconfig;
  std::string context;
  std::string ns = "istio-system";
  bool local = false;
  std::string webhook_address = "127.0.0.1:15017";
  std::string webhook_service = "meshop-webhook";
  std::string health_address = "127.0.0.1:8081";
  bool leader_elect = false;
  std::string lease_name = "meshop-leader";
  bool restarts = true;
  std::string native_sidecars;
  unsigned threads = 0;
  std::string drain_delay = "2s";
  std::string drain_timeout = "5s";
};

std::string secret_value(const rapidjson::Value& secret, const char* key) {
  std::string encoded = api::string_at(secret, {"data", key});
  auto decoded = api::base64_decode(encoded);
  return decoded ? *decoded : std::string();
}

// A free function, not a lambda: a coroutine lambda's captures die with the closure when
// co_spawn returns.
asio::awaitable<void> detect_then_flag(std::shared_ptr<kube::Client> client,
                                       inject::SnapshotSources* defaults, bool* done) {
  co_await detect_native_sidecars(std::move(client), defaults);
  *done = true;
}

int run_operator(const RunOptions& opts, Context& ctx) {
  runtime::keep_large_blocks_off_the_heap();
  auto native = native_sidecars_setting(opts.native_sidecars, ctx.err);
  if (!native) return kExitUsage;
  auto host_port = webhook::split_host_port(opts.webhook_address);
  if (!host_port.ok()) {
    ctx.err << "Error: --webhook-addr: " << host_port.message() << '\n';
    return kExitUsage;
  }
  if (opts.local && host_port->second == 0) {
    ctx.err << "Error: --webhook-addr: --local needs a fixed port (the webhook configurations "
               "name it)\n";
    return kExitUsage;
  }

  auto drain = drain_settings(opts.drain_delay, opts.drain_timeout, ctx.err);
  if (!drain) return kExitUsage;

  asio::io_context control;
  std::shared_ptr<kube::Client> client =
      connect(control.get_executor(), opts.kubeconfig, opts.context, ctx.err);
  if (!client) return kExitError;

  metrics::Registry registry;
  runtime::RuntimeMetrics runtime_metrics(registry);
  client->set_request_observer([&runtime_metrics](const kube::Client::RequestRecord& r) {
    runtime_metrics.count_request(r.verb, r.resource, r.method, r.code, r.host);
  });
  webhook::WebhookMetrics webhook_metrics(registry);
  runtime::SteadyClock clock;
  kube::EventRecorderOptions eo;
  eo.controller = "meshop";
  auto events = kube::EventRecorder::create(client, eo);

  // istiod's ENABLE_NATIVE_SIDECARS=auto asks the nodes' kubelet versions, once at start.
  inject::SnapshotSources defaults;
  defaults.native_sidecars = *native;
  defaults.stamp_fingerprint = true;  // lets the restarts reconciler see TemplateChanged
  if (*native == inject::NativeSidecars::kAuto) {
    bool done = false;
    asio::co_spawn(control, detect_then_flag(client, &defaults, &done), asio::detached);
    // The guard keeps run_one() from finding the context idle while the request is in
    // flight; releasing it with no other work left stops the context, hence restart().
    {
      auto guard = asio::make_work_guard(control);
      while (!done)
        control.run_one();
    }
    control.restart();
  }

  // --- the manager, and the cache every reader shares ----------------------------------
  webhook::RevisionStore revisions_store;
  webhook::Engine engine = webhook::default_engine();
  webhook::ServingCertificate certificate("", "", &webhook_metrics);
  webhook::ServerOptions so;
  so.address = opts.webhook_address;
  so.default_revision = std::string(api::kDefaultRevision);
  so.threads = opts.threads;
  so.drain_delay = drain->delay;
  so.drain_timeout = drain->timeout;
  webhook::WebhookServer server(so, revisions_store, certificate, engine, &webhook_metrics);

  runtime::Cache cache(runtime::kube_sources(client), control.get_executor(), clock);
  runtime::ManagerOptions mo;
  mo.health_address = opts.health_address;
  mo.leader_election = opts.leader_elect;
  mo.leader_election_config.identity = runtime::default_identity();
  mo.not_ready = [&server] { return server.stuck_reason(); };
  // On the signal's thread (not the control loop, which may be busy): the webhook starts
  // draining while /readyz already says 503.
  mo.on_shutdown = [&server] { server.shutdown(); };
  mo.drained = [&server] { return server.drained(); };
  runtime::Manager manager(control, clock, runtime_metrics, mo);
  runtime::KubeLeaseLock lease(client, opts.ns, opts.lease_name);
  if (opts.leader_elect) manager.set_lease_lock(lease);

  // --- the webhook (every replica) ------------------------------------------------------
  bool serving = false;
  webhook::ConfigMapSource injector_config(
      client->get_executor(), cache.store(reconcilers::watches::control_plane_config_maps(opts.ns)),
      revisions_store, engine, &webhook_metrics, configmap_rejection_reporter(events), defaults);
  injector_config.start();
  auto install_certificate = [&](const rapidjson::Value& secret) {
    std::string cert = secret_value(secret, "tls.crt");
    std::string key = secret_value(secret, "tls.key");
    if (cert.empty() || key.empty()) return;
    if (auto installed =
            certificate.install_pem(cert, key, "Secret " + opts.ns + "/meshop-webhook-certs");
        !installed) {
      log::warn("webhook certificate in the Secret not usable; keeping the current one",
                {{"error", installed.message()}});
      return;
    }
    if (serving) return;
    if (auto started = server.start(); !started) {
      log::error("cannot start the webhook server", {{"error", started.message()}});
      return;
    }
    serving = true;
    log::info("webhook serving",
              {{"address", opts.webhook_address}, {"port", static_cast<int>(server.port())}});
  };
  cache.store(reconcilers::watches::webhook_secret(opts.ns))
      .add_handlers({.on_add = [&](const runtime::Object& o) { install_certificate(*o); },
                     .on_update = [&](const runtime::Object&,
                                      const runtime::Object& o) { install_certificate(*o); }});

  // --- the controllers (leader only) ----------------------------------------------------
  // The reconcilers observe from the cache: reads a watch covers are answered by its store,
  // the rest go to the apiserver and are counted (meshop_cached_reader_requests_total).
  auto cached_reader = std::make_shared<runtime::CachedReader>(cache, kube::client_reader(client),
                                                               &registry, &clock);
  reconcilers::OperatorSetup setup{client, &registry, events,       manager,
                                   cache,  opts.ns,   cached_reader};

  reconcilers::CertificatesConfig cc;
  cc.namespace_name = opts.ns;
  if (opts.local) {
    cc.dns_names = {"localhost"};
    cc.ip_addresses = {"127.0.0.1"};
  } else {
    const std::string svc = opts.webhook_service;
    cc.dns_names = {svc, svc + "." + opts.ns, svc + "." + opts.ns + ".svc",
                    svc + "." + opts.ns + ".svc.cluster.local"};
  }
  reconcilers::setup_certificates(setup, cc);

  reconcilers::setup_install(setup);

  reconcilers::WebhooksConfig wc;
  wc.service_name = opts.webhook_service;
  wc.service_namespace = opts.ns;
  if (opts.local) wc.url_base = "https://127.0.0.1:" + std::to_string(host_port->second);
  wc.secret_namespace = opts.ns;
  reconcilers::setup_webhooks(setup, wc);

  reconcilers::setup_revisions(setup);

  if (opts.restarts) {
    reconcilers::RestartsConfig rc;
    rc.control_plane_namespace = opts.ns;
    rc.native_sidecars = defaults.native_sidecars;
    rc.revisions = &revisions_store;  // plans with the engines the webhook serves
    reconcilers::setup_restarts(setup, rc);
  }
  cache.add_to(manager);

  log::info("meshop operator starting",
            {{"namespace", opts.ns},
             {"webhook", opts.local ? "https://127.0.0.1:" + std::to_string(host_port->second)
                                    : "service " + opts.webhook_service + "." + opts.ns},
             {"leader_election", opts.leader_elect}});
  int code = manager.run();
  if (!server.stop()) {
    // A webhook thread is stuck in a request and was abandoned (server.hpp): what it uses is
    // about to be destroyed, so leave now rather than unwind under it.
    std::fflush(nullptr);
    std::_Exit(code == 0 ? 1 : code);
  }
  return code;
}

}  // namespace

void add_run_command(CLI::App& root, Context& ctx) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = root.add_subcommand(
      "run",
      "Run the operator: reconcile IstioOperators (install, webhook configurations, certificates,\n"
      "revisions, paced restarts) and serve the sidecar-injection webhook.");
  cmd->add_option("--kubeconfig", opts->kubeconfig, "Kubeconfig file (default $KUBECONFIG)");
  cmd->add_option("--context", opts->context, "Kubeconfig context");
  cmd->add_option("--namespace", opts->ns,
                  "Namespace of meshop's Secret, lease, injector ConfigMaps and Service")
      ->capture_default_str();
  cmd->add_flag("--local", opts->local,
                "meshop runs outside the cluster: webhooks call https://127.0.0.1:<port>");
  cmd->add_option("--webhook-addr", opts->webhook_address, "HTTPS address of the webhook")
      ->capture_default_str();
  cmd->add_option("--webhook-service", opts->webhook_service,
                  "Service in front of the webhook (not --local)")
      ->capture_default_str();
  cmd->add_option("--health-addr", opts->health_address,
                  "Plain-HTTP address for /healthz, /readyz and /metrics")
      ->capture_default_str();
  cmd->add_flag("--leader-elect", opts->leader_elect,
                "Reconcile only while holding the Lease --lease-name in --namespace");
  cmd->add_option("--lease-name", opts->lease_name, "Leader election Lease")->capture_default_str();
  cmd->add_option("--restarts", opts->restarts,
                  "Run the restarts reconciler (policy per IstioOperator spec.restarts)")
      ->capture_default_str();
  cmd->add_option("--native-sidecars", opts->native_sidecars,
                  "Inject istio-proxy as a native sidecar: true, false or auto (default "
                  "$ENABLE_NATIVE_SIDECARS or auto: from the nodes' kubelet versions)");
  cmd->add_option("--threads", opts->threads, "Webhook server threads (0 = one per core)")
      ->capture_default_str();
  add_drain_options(*cmd, opts->drain_delay, opts->drain_timeout);
  cmd->callback([opts, &ctx] { ctx.action = [opts, &ctx] { return run_operator(*opts, ctx); }; });
}

}  // namespace meshop::cli
