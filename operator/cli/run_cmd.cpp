// `meshop run`: the operator. One process runs
//   - informers on IstioOperators, Namespaces, MutatingWebhookConfigurations, the injector
//     ConfigMaps and the webhook Secret of --namespace, the Deployments/DaemonSets meshop
//     installed (label app.kubernetes.io/managed-by=meshop), and, metadata only, the other
//     kinds it installs (Services, ServiceAccounts, PDBs, HPAs, RBAC) so their drift is
//     repaired at once; every Pod (restart::project_pod: what the planners read) and, with
//     --restarts, every workload, PodDisruptionBudget and Node, which the revisions and
//     restarts passes read instead of listing (RevisionsCache, RestartsCache);
//   - on the elected leader only (--leader-elect), the controllers of reconcilers/: install,
//     webhooks, certificates, revisions and restarts (--restarts=false turns the last off);
//   - on every replica, the sidecar-injection webhook (webhook::WebhookServer) with one
//     configuration per revision from the injector ConfigMaps, and the serving certificate
//     from the Secret the certificates reconciler keeps (installed without dropping a request
//     when it is renewed). The server starts once the Secret has a certificate.
//   - /healthz, /readyz (informers synced) and /metrics on --health-addr.
//
//   meshop run [--kubeconfig K] [--context C] [--namespace istio-system]
//              [--local] [--webhook-addr 127.0.0.1:15017] [--webhook-service meshop-webhook]
//              [--health-addr 127.0.0.1:8081] [--leader-elect] [--restarts=true|false]
//
// --local is for a meshop running outside the cluster (development, tests): the webhook
// configurations call `https://127.0.0.1:<port of --webhook-addr>` and the serving certificate
// names 127.0.0.1. Otherwise they call the Service --webhook-service in --namespace (port 443),
// which a meshop Deployment puts in front of this process.
// SIGTERM/SIGINT: controllers finish what they are doing, the lease is released, the webhook
// answers the requests in progress, exit 0. Losing the lease exits 1.
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
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/installed_kinds.hpp"
#include "operator/metrics/registry.hpp"
#include "operator/restart/projection.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/controller.hpp"
#include "operator/runtime/enqueue.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/kube_source.hpp"
#include "operator/runtime/manager.hpp"
#include "operator/runtime/metrics.hpp"
#include "operator/runtime/store.hpp"
#include "operator/runtime/work_queue.hpp"
#include "operator/webhook/configmap_source.hpp"
#include "operator/webhook/server.hpp"
#include "reconcilers/certificates.hpp"
#include "reconcilers/install.hpp"
#include "reconcilers/restarts.hpp"
#include "reconcilers/revisions.hpp"
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
};

// The single key of the reconcilers that look at everything at once.
constexpr const char* kAll = "all";

runtime::StoreHandlers enqueue_all(runtime::WorkQueue& queue) {
  return runtime::enqueue_mapped(
      queue, [](const rapidjson::Value&) { return std::vector<std::string>{kAll}; });
}

// An informer with its source and store; the store outlives handlers added to it.
struct Watched {
  Watched(const std::string& name, const std::shared_ptr<kube::Client>& client,
          runtime::Clock& clock, const kube::ResourceType& type, std::string ns,
          runtime::KubeListWatchOptions options,
          runtime::Projection projection = runtime::strip_managed_fields,
          runtime::Informer::Options informer_options = {})
      : type(type),
        source(client, type, std::move(ns), std::move(options)),
        store(std::move(projection)),
        informer(name, client->get_executor(), clock, source, store, std::move(informer_options)) {}
  kube::ResourceType type;
  runtime::KubeListWatch source;
  runtime::Store store;
  runtime::Informer informer;
};

// Kept whole (less managedFields) with apiVersion and kind set, as the restart plan reads them.
runtime::Projection whole(const kube::ResourceType& type) {
  return [api_version = type.api_version(), kind = type.kind](rapidjson::Document& o) {
    restart::project_whole(o, api_version, kind);
  };
}

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

  // --- informers -------------------------------------------------------------------------
  runtime::KubeListWatchOptions managed;
  managed.label_selector = "app.kubernetes.io/managed-by=meshop";
  runtime::KubeListWatchOptions secret_only;
  secret_only.field_selector = "metadata.name=meshop-webhook-certs";
  Watched iops("istiooperators", client, clock, reconcilers::istio_operator_resource(), "", {});
  Watched namespaces("namespaces", client, clock, kube::resources::kNamespaces, "", {});
  Watched webhooks("mutatingwebhookconfigurations", client, clock,
                   kube::resources::kMutatingWebhookConfigurations, "", {});
  Watched configmaps("configmaps", client, clock, kube::resources::kConfigMaps, opts.ns, {});
  Watched secrets("secrets", client, clock, kube::resources::kSecrets, opts.ns, secret_only);
  Watched deployments("deployments", client, clock, kube::resources::kDeployments, "", managed);
  Watched daemonsets("daemonsets", client, clock, kube::resources::kDaemonSets, "", managed);
  // The other kinds install applies, watched for drift only: metadata is enough to know that
  // one changed and which IstioOperator owns it.
  runtime::KubeListWatchOptions managed_metadata = managed;
  managed_metadata.metadata_only = true;
  std::vector<std::unique_ptr<Watched>> drift;
  for (const manifest::InstalledKind& k : manifest::installed_kinds()) {
    if (k.watch != manifest::InstalledKind::Watch::kMetadata) continue;
    kube::ResourceType type{std::string(k.group), std::string(k.version), std::string(k.resource),
                            std::string(k.kind), k.namespaced};
    drift.push_back(
        std::make_unique<Watched>(type.resource, client, clock, type, "", managed_metadata));
  }

  // What the revisions and restarts passes read instead of listing (issue 13): every Pod as
  // restart::project_pod keeps it and, for restarts, every workload, PDB and Node. First lists
  // are quorum reads in pages of 500 (Informer::Options): an rv=0 answer comes in one body,
  // hundreds of MB at 100k pods.
  runtime::Informer::Options paged;
  paged.initial_list_resource_version = "";
  Watched pods("pods", client, clock, kube::resources::kPods, "", {}, restart::project_pod, paged);
  std::vector<std::unique_ptr<Watched>> planned;  // the restart plan's workloads, PDBs, Nodes
  reconcilers::RestartsCache restarts_cache;
  if (opts.restarts) {
    auto watch = [&](const kube::ResourceType& type, runtime::Projection projection) {
      planned.push_back(std::make_unique<Watched>(type.resource + "-all", client, clock, type, "",
                                                  runtime::KubeListWatchOptions{},
                                                  std::move(projection), paged));
      return &planned.back()->store;
    };
    using namespace kube::resources;
    for (const kube::ResourceType* t : {&kDeployments, &kStatefulSets, &kDaemonSets, &kReplicaSets,
                                        &kReplicationControllers, &kJobs, &kCronJobs})
      restarts_cache.workloads.push_back(watch(*t, whole(*t)));
    restarts_cache.deployments = restarts_cache.workloads.front();
    restarts_cache.pod_disruption_budgets =
        watch(kPodDisruptionBudgets, whole(kPodDisruptionBudgets));
    restarts_cache.nodes = watch(kNodes, restart::project_node);
    restarts_cache.namespaces = &namespaces.store;
    restarts_cache.webhook_configurations = &webhooks.store;
    restarts_cache.istio_operators = &iops.store;
    restarts_cache.pods = &pods.store;
    restarts_cache.config_maps = &configmaps.store;
  }

  // --- the webhook (every replica) ------------------------------------------------------
  webhook::RevisionStore revisions_store;
  webhook::Engine engine = webhook::default_engine();
  webhook::ServingCertificate certificate("", "", &webhook_metrics);
  webhook::ServerOptions so;
  so.address = opts.webhook_address;
  so.default_revision = "default";
  so.threads = opts.threads;
  webhook::WebhookServer server(so, revisions_store, certificate, engine, &webhook_metrics);
  bool serving = false;
  webhook::ConfigMapSource injector_config(client->get_executor(), configmaps.store,
                                           revisions_store, engine, &webhook_metrics,
                                           configmap_rejection_reporter(events), defaults);
  injector_config.start();
  auto install_certificate = [&](const rapidjson::Value& secret) {
    std::string cert = secret_value(secret, "tls.crt");
    std::string key = secret_value(secret, "tls.key");
    if (cert.empty() || key.empty()) return;
    if (auto err =
            certificate.install_pem(cert, key, "Secret " + opts.ns + "/meshop-webhook-certs")) {
      log::warn("webhook certificate in the Secret not usable; keeping the current one",
                {{"error", *err}});
      return;
    }
    if (serving) return;
    if (auto err = server.start()) {
      log::error("cannot start the webhook server", {{"error", *err}});
      return;
    }
    serving = true;
    log::info("webhook serving",
              {{"address", opts.webhook_address}, {"port", static_cast<int>(server.port())}});
  };
  secrets.store.add_handlers(
      {.on_add = [&](const runtime::Object& o) { install_certificate(*o); },
       .on_update = [&](const runtime::Object&,
                        const runtime::Object& o) { install_certificate(*o); }});

  // --- reconcilers (leader only) --------------------------------------------------------
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
  reconcilers::CertificatesReconciler certificates(client, cc, &registry, events);

  // Install skips what nobody changed since it applied it; the informers tell it the live
  // resourceVersion of each kind it watches (the injector ConfigMaps only in --namespace).
  reconcilers::InstallConfig ic;
  ic.live = [&](const reconcilers::ObjectId& id) -> runtime::Object {
    const runtime::Store* store = nullptr;
    if (id.group == "apps" && id.kind == "Deployment") store = &deployments.store;
    if (id.group == "apps" && id.kind == "DaemonSet") store = &daemonsets.store;
    if (id.group.empty() && id.kind == "ConfigMap" && id.ns == opts.ns) store = &configmaps.store;
    for (const auto& w : drift)
      if (w->type.kind == id.kind && w->type.group == id.group) store = &w->store;
    if (store == nullptr || !store->has_synced()) return nullptr;
    return store->get(runtime::make_key(id.ns, id.name));
  };
  reconcilers::InstallReconciler install(client, ic, &registry, events);

  reconcilers::WebhooksConfig wc;
  wc.service_name = opts.webhook_service;
  wc.service_namespace = opts.ns;
  if (opts.local) wc.url_base = "https://127.0.0.1:" + std::to_string(host_port->second);
  wc.secret_namespace = opts.ns;
  reconcilers::WebhooksReconciler webhooks_reconciler(client, wc, &registry, events);

  reconcilers::RevisionsCache revisions_cache{&namespaces.store, &webhooks.store, &iops.store,
                                              &pods.store};
  reconcilers::RevisionsConfig rvc;
  rvc.cache = &revisions_cache;
  reconcilers::RevisionsReconciler revisions(client, rvc, &registry, events);

  reconcilers::RestartsConfig rc;
  rc.control_plane_namespace = opts.ns;
  rc.native_sidecars = defaults.native_sidecars;
  rc.cache = &restarts_cache;
  reconcilers::RestartsReconciler restarts(client, rc, &registry, events);

  auto executor = client->get_executor();
  runtime::WorkQueue install_q("install", executor, clock, nullptr, &runtime_metrics);
  runtime::WorkQueue webhooks_q("webhooks", executor, clock, nullptr, &runtime_metrics);
  runtime::WorkQueue revisions_q("revisions", executor, clock, nullptr, &runtime_metrics);
  runtime::WorkQueue certificates_q("certificates", executor, clock, nullptr, &runtime_metrics);
  runtime::WorkQueue restarts_q("restarts", executor, clock, nullptr, &runtime_metrics);
  // Two install workers: IstioOperators are independent (the queue never hands one key to
  // two workers), and one slow apply must not hold up another revision.
  runtime::Controller install_c(
      "install", install_q, [&](const std::string& key) { return install.reconcile(key); },
      {.workers = 2}, clock, &runtime_metrics);
  runtime::Controller webhooks_c(
      "webhooks", webhooks_q,
      [&](const std::string& key) { return webhooks_reconciler.reconcile(key); }, {.workers = 1},
      clock, &runtime_metrics);
  runtime::Controller revisions_c(
      "revisions", revisions_q, [&](const std::string& key) { return revisions.reconcile(key); },
      {.workers = 1}, clock, &runtime_metrics);
  runtime::Controller certificates_c(
      "certificates", certificates_q,
      [&](const std::string& key) { return certificates.reconcile(key); }, {.workers = 1}, clock,
      &runtime_metrics);
  runtime::Controller restarts_c(
      "restarts", restarts_q, [&](const std::string& key) { return restarts.reconcile(key); },
      {.workers = 1}, clock, &runtime_metrics);

  // Level-triggered: each watched change only says "look again".
  // Every IstioOperator when one comes or goes, or its spec, labels, annotations, finalizers
  // or deletion change: revision and shared-object ownership may move (reconcilers/
  // ownership.hpp). Status-only updates are install's own writes and wake nothing, so an
  // ERROR is retried with per-key backoff.
  auto enqueue_iops = [&install_q, &iops](const runtime::Object& o) {
    install_q.add(runtime::object_key(*o));
    for (const std::string& k : iops.store.keys())
      install_q.add(k);
  };
  iops.store.add_handlers(
      {.on_add = enqueue_iops,
       .on_update =
           [enqueue_iops](const runtime::Object& old_object, const runtime::Object& new_object) {
             if (reconcilers::install_relevant_change(*old_object, *new_object))
               enqueue_iops(new_object);
           },
       .on_delete = enqueue_iops});
  auto owner_of = [](const rapidjson::Value& o) {
    std::vector<std::string> keys;
    if (auto k = reconcilers::owner_key(o)) keys.push_back(*k);
    return keys;
  };
  // Drift of what install applied (and the workloads' readiness, which is its status): any
  // change to an owned object enqueues its IstioOperator.
  for (auto* w : {&deployments, &daemonsets, &configmaps})
    w->store.add_handlers(runtime::enqueue_mapped(install_q, owner_of));
  for (auto& w : drift)
    w->store.add_handlers(runtime::enqueue_mapped(install_q, owner_of));
  for (auto* w : {&iops, &webhooks, &secrets})
    w->store.add_handlers(enqueue_all(webhooks_q));
  for (auto* w : {&iops, &namespaces, &webhooks})
    w->store.add_handlers(enqueue_all(revisions_q));
  webhooks_q.add(kAll);
  revisions_q.add(kAll);
  secrets.store.add_handlers(enqueue_all(certificates_q));
  webhooks.store.add_handlers(enqueue_all(certificates_q));
  certificates_q.add(kAll);  // create the Secret when there is none
  if (opts.restarts) {
    for (auto* w : {&iops, &namespaces, &webhooks, &configmaps})
      w->store.add_handlers(enqueue_all(restarts_q));
    restarts_q.add(kAll);
  }

  runtime::ManagerOptions mo;
  mo.health_address = opts.health_address;
  mo.leader_election = opts.leader_elect;
  mo.leader_election_config.identity = runtime::default_identity();
  mo.not_ready = [&server] { return server.stuck_reason(); };
  runtime::Manager manager(control, clock, runtime_metrics, mo);
  runtime::KubeLeaseLock lease(client, opts.ns, opts.lease_name);
  if (opts.leader_elect) manager.set_lease_lock(lease);
  for (auto* w :
       {&iops, &namespaces, &webhooks, &configmaps, &secrets, &deployments, &daemonsets, &pods})
    manager.add_informer(w->informer);
  for (auto& w : planned)
    manager.add_informer(w->informer);
  for (auto& w : drift)
    manager.add_informer(w->informer);
  for (auto* q : {&install_q, &webhooks_q, &revisions_q, &certificates_q})
    manager.add_queue(*q);
  for (auto* c : {&install_c, &webhooks_c, &revisions_c, &certificates_c})
    manager.add_controller(*c);
  if (opts.restarts) {
    manager.add_queue(restarts_q);
    manager.add_controller(restarts_c);
  }
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
  cmd->callback([opts, &ctx] { ctx.action = [opts, &ctx] { return run_operator(*opts, ctx); }; });
}

}  // namespace meshop::cli
