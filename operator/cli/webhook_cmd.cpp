// `meshop webhook`: the sidecar-injection webhook, standalone.
//
//   meshop webhook --cert tls.crt --key tls.key [--config-dir DIR] [--addr 127.0.0.1:15017]
//                  [--revision default] [--metrics-addr 127.0.0.1:15014] [--threads N]
//                  [--kubeconfig K [--context C] --namespace istio-system]
//                  [--native-sidecars auto|true|false] [--memoize-entries N]
//                  [--drain-delay 2s] [--drain-timeout 5s]
//
// Where the injector configuration comes from (exactly one):
//   --config-dir DIR   files config, values[, mesh] (as istiod's /var/lib/istio/inject),
//                      watched and reloaded, for --revision
//   --kubeconfig K     ConfigMaps istio-sidecar-injector[-<rev>] and istio[-<rev>] of
//                      --namespace, every revision found there, watched through an informer;
//                      a rejected ConfigMap gets a Warning Event
//   neither            the injector ConfigMaps an install of the bundled default chart set
//                      renders for --revision (manifest/injector_defaults.hpp)
// The HTTPS server answers /inject for --revision and /inject/rev/<r> for revision <r> (see
// operator/webhook/path_params.hpp); /metrics and /readyz are on --metrics-addr (plain HTTP),
// served by a thread of their own (never behind the control loop's work).
// Answers of identical reviews are memoized (operator/webhook/injection_cache.hpp): at most
// --memoize-entries of them (0 turns memoization off, e.g. to benchmark the engine over HTTPS).
// The certificate files are watched and reloaded without dropping requests. SIGTERM/SIGINT:
// /readyz turns 503 at once and the server drains (server.hpp shutdown(): answers say
// Connection: close; after --drain-delay the listener closes and idle connections are closed;
// requests in progress are answered; at most --drain-timeout), then exit 0. A second signal
// exits at once (1).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "api/json.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/cli/drain.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/injector_defaults.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/health_server.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/kube_source.hpp"
#include "operator/runtime/store.hpp"
#include "operator/webhook/config_dir.hpp"
#include "operator/webhook/configmap_source.hpp"
#include "operator/webhook/server.hpp"

namespace meshop::cli {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct WebhookOptions {
  std::string cert_file;
  std::string key_file;
  std::string config_dir;
  std::string address = "127.0.0.1:15017";
  std::string metrics_address = "127.0.0.1:15014";
  std::string revision = "default";
  std::string kubeconfig;
  std::string context;
  std::string ns = "istio-system";
  std::string native_sidecars;
  unsigned threads = 0;
  std::size_t memoize_entries = webhook::InjectionCacheLimits{}.max_entries;
  std::string drain_delay = "2s";
  std::string drain_timeout = "5s";
};

// The cluster side: kube client, ConfigMap informer, Event recorder. Lives on the control
// loop's io_context (one thread), as the runtime requires.
struct Cluster {
  std::shared_ptr<kube::Client> client;
  std::shared_ptr<kube::EventRecorder> events;
  runtime::SteadyClock clock;
  std::unique_ptr<runtime::KubeListWatch> source;
  runtime::Store configmaps{runtime::strip_managed_fields};
  std::unique_ptr<runtime::Informer> informer;
  std::unique_ptr<webhook::ConfigMapSource> injector_config;
};

// istiod's ENABLE_NATIVE_SIDECARS=auto asks the nodes; without a cluster there is no one to
// ask, and meshop (like `meshop kube-inject`) then injects a regular container.
asio::awaitable<void> start_cluster(Cluster& c, webhook::RevisionStore& store,
                                    const webhook::Engine& engine, webhook::WebhookMetrics& metrics,
                                    inject::SnapshotSources defaults, std::string ns) {
  if (defaults.native_sidecars == inject::NativeSidecars::kAuto)
    co_await detect_native_sidecars(c.client, &defaults);
  c.injector_config = std::make_unique<webhook::ConfigMapSource>(
      c.client->get_executor(), c.configmaps, store, engine, &metrics,
      configmap_rejection_reporter(c.events), std::move(defaults));
  c.injector_config->start();
  c.source = std::make_unique<runtime::KubeListWatch>(c.client, kube::resources::kConfigMaps, ns);
  c.informer = std::make_unique<runtime::Informer>("configmaps", c.client->get_executor(), c.clock,
                                                   *c.source, c.configmaps);
  co_await c.informer->run();
}

asio::awaitable<void> poll_files(asio::steady_timer& timer, const bool& stopping,
                                 webhook::ServingCertificate& certificate,
                                 webhook::ConfigDirSource* dir_source) {
  while (!stopping) {
    timer.expires_after(100ms);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (stopping || ec == asio::error::operation_aborted) break;
    certificate.reload_if_changed();
    if (dir_source) dir_source->poll();
  }
}

// After SIGTERM, on the control loop: waits (polling) until the server has drained, then
// stops it and `on_stopped`.
asio::awaitable<void> finish_shutdown(webhook::WebhookServer& server,
                                      std::function<void()> on_stopped) {
  asio::steady_timer poll(co_await asio::this_coro::executor);
  while (!server.drained()) {
    poll.expires_after(20ms);
    co_await poll.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  // Answers requests in progress, then joins the webhook threads; one stuck in a request
  // is abandoned after the drain timeout (server.hpp), and then the process leaves at once.
  if (!server.stop()) {
    std::fflush(nullptr);
    std::_Exit(kExitError);
  }
  on_stopped();
}

int serve(const WebhookOptions& opts, Context& ctx) {
  auto native = native_sidecars_setting(opts.native_sidecars, ctx.err);
  if (!native) return kExitUsage;
  auto drain = drain_settings(opts.drain_delay, opts.drain_timeout, ctx.err);
  if (!drain) return kExitUsage;
  if (!opts.config_dir.empty() && !opts.kubeconfig.empty()) {
    ctx.err << "Error: --config-dir and --kubeconfig are exclusive: the configuration comes "
               "either from files or from the cluster's ConfigMaps\n";
    return kExitUsage;
  }

  metrics::Registry registry;
  webhook::WebhookMetrics metrics(registry);
  webhook::RevisionStore store;
  webhook::Engine engine = webhook::default_engine();
  webhook::ServingCertificate certificate(opts.cert_file, opts.key_file, &metrics);
  if (auto loaded = certificate.load(); !loaded) {
    ctx.err << "Error: " << loaded.message() << '\n';
    return kExitError;
  }

  inject::SnapshotSources defaults;
  defaults.native_sidecars = *native;
  std::unique_ptr<webhook::ConfigDirSource> dir_source;
  if (!opts.config_dir.empty()) {
    dir_source = std::make_unique<webhook::ConfigDirSource>(opts.config_dir, opts.revision, store,
                                                            engine, &metrics);
    if (auto loaded = dir_source->load(); !loaded) {
      ctx.err << "Error: --config-dir " << opts.config_dir << ": " << loaded.message() << '\n';
      return kExitError;
    }
  } else if (opts.kubeconfig.empty()) {
    auto bundled = manifest::chart_set_injector_sources("", opts.revision);
    if (!bundled.ok()) {
      ctx.err << "Error: injector configuration of the bundled chart set: " << bundled.message()
              << '\n';
      return kExitError;
    }
    inject::SnapshotSources sources = std::move(*bundled);
    sources.native_sidecars =
        *native == inject::NativeSidecars::kAuto ? inject::NativeSidecars::kDisabled : *native;
    auto snapshot = engine.build(sources);
    if (!snapshot.ok()) {
      ctx.err << "Error: injector configuration of the bundled chart set: " << snapshot.message()
              << '\n';
      return kExitError;
    }
    webhook::RevisionConfig config;
    config.revision = opts.revision;
    config.snapshot = std::move(*snapshot);
    config.source = "chart-set";
    store.publish(std::move(config));
    log::info("injector configuration loaded",
              {{"revision", opts.revision}, {"source", "chart-set"}});
  }

  asio::io_context control;  // the control loop: signals, polling, metrics, cluster watch
  Cluster cluster;
  if (!opts.kubeconfig.empty()) {
    cluster.client = connect(control.get_executor(), opts.kubeconfig, opts.context, ctx.err);
    if (!cluster.client) return kExitError;
    kube::EventRecorderOptions eo;
    eo.controller = "meshop-webhook";
    cluster.events = kube::EventRecorder::create(cluster.client, eo);
    asio::co_spawn(control, start_cluster(cluster, store, engine, metrics, defaults, opts.ns),
                   asio::detached);
  }

  // /healthz, /readyz, /metrics and the signals: a thread of their own.
  asio::io_context health_ioc(1);
  std::atomic<webhook::WebhookServer*> serving{nullptr};  // set once the server exists
  runtime::HealthServer health(health_ioc.get_executor(),
                               {.not_ready_reason =
                                    [&store, &serving, rev = opts.revision] {
                                      webhook::WebhookServer* server = serving.load();
                                      if (server && server->draining())
                                        return std::string("shutting down");
                                      if (store.get(rev)) {
                                        if (server) return server->stuck_reason();
                                        return std::string();
                                      }
                                      std::string why =
                                          "no injector configuration for revision " + rev;
                                      if (auto err = store.last_error(rev); !err.empty())
                                        why += ": " + err;
                                      return why;
                                    },
                                .metrics = [&registry] { return registry.expose(); }});
  if (auto listening = health.listen(opts.metrics_address); !listening) {
    ctx.err << "Error: --metrics-addr: " << listening.message() << '\n';
    return kExitError;
  }

  webhook::ServerOptions so;
  so.address = opts.address;
  so.default_revision = opts.revision;
  so.threads = opts.threads;
  so.injection_cache.max_entries = opts.memoize_entries;
  so.drain_delay = drain->delay;
  so.drain_timeout = drain->timeout;
  webhook::WebhookServer server(so, store, certificate, engine, &metrics);
  if (auto started = server.start(); !started) {
    ctx.err << "Error: " << started.message() << '\n';
    return kExitError;
  }
  serving = &server;

  // Certificate and --config-dir changes are noticed by polling: it sees a mounted Secret or
  // ConfigMap's symlink swap as surely as a plain rewrite, and costs a few stat() calls.
  asio::steady_timer poll_timer(control);
  bool stopping = false;
  asio::co_spawn(control, poll_files(poll_timer, stopping, certificate, dir_source.get()),
                 asio::detached);

  asio::steady_timer give_up(control);
  auto stopped = [&] {  // on the control loop, once the webhook server has stopped
    health.stop();
    if (cluster.informer) cluster.informer->stop();
    if (!cluster.informer) {
      control.stop();  // nothing left worth waiting for
      return;
    }
    // Give queued Events and the closing watch up to 3 s to finish.
    give_up.expires_after(3s);
    give_up.async_wait([&control](const boost::system::error_code& e) {
      if (!e) control.stop();
    });
  };
  // Signals are taken on the health thread: the drain and the readiness flip never wait for
  // the control loop.
  asio::signal_set signals(health_ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    log::info("signal received; draining", {{"signal", signo}});
    signals.async_wait([](const boost::system::error_code& ec2, int signo2) {
      if (ec2) return;
      log::error("second signal; exiting at once", {{"signal", signo2}});
      std::fflush(nullptr);
      std::_Exit(kExitError);
    });
    server.shutdown();  // /readyz says 503 from here on (draining())
    asio::post(control, [&] {
      stopping = true;
      poll_timer.cancel();
      asio::co_spawn(control, finish_shutdown(server, stopped), asio::detached);
    });
  });
  asio::co_spawn(health_ioc, health.run(), asio::detached);
  std::thread health_thread([&health_ioc] { health_ioc.run(); });
  log::info("webhook ready", {{"address", opts.address},
                              {"port", static_cast<int>(server.port())},
                              {"metrics", opts.metrics_address},
                              {"revision", opts.revision}});
  control.run();
  health.stop();
  health_ioc.stop();
  health_thread.join();
  return kExitOk;
}

}  // namespace

void add_webhook_command(CLI::App& root, Context& ctx) {
  auto opts = std::make_shared<WebhookOptions>();
  auto* cmd = root.add_subcommand(
      "webhook",
      "Serve the sidecar-injection admission webhook (HTTPS) standalone.\n"
      "Configuration from --config-dir, from the cluster's ConfigMaps (--kubeconfig), or\n"
      "meshop's built-in defaults; /inject serves --revision, /inject/rev/<r> revision <r>.");
  cmd->add_option("--cert", opts->cert_file, "Serving certificate (PEM), reloaded on change")
      ->required();
  cmd->add_option("--key", opts->key_file, "Private key (PEM) of --cert, reloaded on change")
      ->required();
  cmd->add_option("--config-dir", opts->config_dir,
                  "Directory with files config, values and optionally mesh (reloaded on change)");
  cmd->add_option("--addr", opts->address, "HTTPS listen address host:port")->capture_default_str();
  cmd->add_option("--metrics-addr", opts->metrics_address,
                  "Plain-HTTP address for /metrics, /healthz and /readyz")
      ->capture_default_str();
  cmd->add_option("--revision", opts->revision, "Revision served at /inject")
      ->capture_default_str();
  cmd->add_option(
      "--kubeconfig", opts->kubeconfig,
      "Read ConfigMaps istio-sidecar-injector[-<rev>] and istio[-<rev>] from this cluster");
  cmd->add_option("--context", opts->context, "Kubeconfig context");
  cmd->add_option("--namespace", opts->ns, "Namespace of the injector ConfigMaps")
      ->capture_default_str();
  cmd->add_option("--threads", opts->threads, "Server threads (0 = one per core)")
      ->capture_default_str();
  cmd->add_option("--memoize-entries", opts->memoize_entries,
                  "Memoized answers of identical reviews kept at most (0 = off)")
      ->capture_default_str();
  add_drain_options(*cmd, opts->drain_delay, opts->drain_timeout);
  cmd->add_option("--native-sidecars", opts->native_sidecars,
                  "Inject istio-proxy as a native sidecar: true, false or auto (from the nodes' "
                  "kubelet versions with --kubeconfig, else false; default $ENABLE_NATIVE_SIDECARS "
                  "or auto)");
  cmd->callback([opts, &ctx] { ctx.action = [opts, &ctx] { return serve(*opts, ctx); }; });
}

}  // namespace meshop::cli
