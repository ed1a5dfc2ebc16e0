// Informer memory and sync benchmark (issue 4 "Performance"; a measurement, not a test).
//
//   meshop_informer_bench populate NAMESPACES PODS   # create bench-N namespaces and pods
//   meshop_informer_bench sync [--full] [--paged]    # time a pods+namespaces informer sync
//
// `sync` starts metadata-only (PartialObjectMetadata) informers on pods and namespaces in all
// namespaces (--full: whole objects; managedFields stripped in both modes; --paged: first list
// is a quorum read paged by 500 instead of one rv=0 answer from the watch cache), waits until both
// are synced and prints the time from start to synced, the objects held, the process RSS (VmRSS and
// peak VmHWM from /proc/self/status) and the API body bytes received. Uses $KUBECONFIG.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <malloc.h>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "operator/kube/client.hpp"
#include "operator/log/log.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/kube_source.hpp"

using namespace meshop;
using namespace meshop::runtime;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

asio::awaitable<void> sleep_for(Duration d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(d);
  co_await t.async_wait(asio::use_awaitable);
}

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  return d;
}

asio::awaitable<void> populate(std::shared_ptr<kube::Client> c, int namespaces, int pods) {
  auto nodes = co_await c->list(kube::resources::kNodes, "");
  std::string node;
  if (nodes.ok() && nodes->list["items"].Size() > 0) {
    node = std::string(name_of(nodes->list["items"][0]));
  }
  int next = 0;
  int running = 0;
  auto ex = co_await asio::this_coro::executor;
  auto run_parallel = [&](int total, std::function<asio::awaitable<void>(int)> op) {
    next = 0;
    for (int w = 0; w < 32; ++w) {
      ++running;
      asio::co_spawn(
          ex,
          [&, total, op]() -> asio::awaitable<void> {
            while (next < total)
              co_await op(next++);
          },
          [&](std::exception_ptr) { --running; });
    }
  };
  run_parallel(namespaces, [c](int i) -> asio::awaitable<void> {
    auto r = co_await c->create(
        kube::resources::kNamespaces, "",
        parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench-)" +
              std::to_string(i) + R"("}})"));
    if (!r.ok() && !r.error().is(kube::ErrorKind::kAlreadyExists)) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
    }
  });
  while (running > 0)
    co_await sleep_for(10ms);
  std::fprintf(stderr, "created %d namespaces\n", namespaces);
  run_parallel(pods, [c, namespaces, node](int i) -> asio::awaitable<void> {
    std::string ns = "bench-" + std::to_string(i % namespaces);
    std::string json =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-)" + std::to_string(i) +
        R"(","labels":{"app":"bench"}},"spec":{"nodeName":")" + node +
        R"(","automountServiceAccountToken":false,"containers":[{"name":"c","image":"busybox"}]}})";
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto r = co_await c->create(kube::resources::kPods, ns, parse(json));
      if (r.ok() || r.error().is(kube::ErrorKind::kAlreadyExists)) co_return;
      co_await sleep_for(500ms);  // e.g. the namespace's default ServiceAccount is not there yet
    }
    std::fprintf(stderr, "gave up on pod %d\n", i);
  });
  while (running > 0)
    co_await sleep_for(10ms);
  std::fprintf(stderr, "created %d pods\n", pods);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "populate" && mode != "sync") {
    std::fprintf(stderr, "usage: %s populate NAMESPACES PODS | sync [--full]\n", argv[0]);
    return 2;
  }
  log::set_level(log::Level::warn);
  asio::io_context ioc;
  auto config = kube::load_default_config();
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.error().message.c_str());
    return 1;
  }
  auto client = kube::Client::create(ioc.get_executor(), *config, {.qps = 1000, .burst = 2000});
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.error().message.c_str());
    return 1;
  }
  std::shared_ptr<kube::Client> c = *client;
  int rc = 0;
  if (mode == "populate") {
    if (argc != 4) return 2;
    asio::co_spawn(ioc, populate(c, std::stoi(argv[2]), std::stoi(argv[3])), asio::detached);
    ioc.run();
    return 0;
  }
  bool full = false;
  std::string initial_rv = "0";
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--full") full = true;
    if (std::string(argv[i]) == "--paged") initial_rv = "";  // quorum list, paged by 500
  }
  long rss_before = status_kib("VmRSS:");
  SteadyClock clock;
  Projection projection = strip_managed_fields;
  Store pods(projection);
  Store namespaces(projection);
  KubeListWatch pod_source(c, kube::resources::kPods, "", {.metadata_only = !full});
  KubeListWatch ns_source(c, kube::resources::kNamespaces, "", {.metadata_only = !full});
  Informer::Options options{
      .backoff = {}, .random01 = {}, .initial_list_resource_version = initial_rv};
  Informer pod_informer("pods", ioc.get_executor(), clock, pod_source, pods, options);
  Informer ns_informer("namespaces", ioc.get_executor(), clock, ns_source, namespaces, options);
  auto start = std::chrono::steady_clock::now();
  asio::co_spawn(ioc, pod_informer.run(), asio::detached);
  asio::co_spawn(ioc, ns_informer.run(), asio::detached);
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        while (!pod_informer.has_synced() || !ns_informer.has_synced())
          co_await sleep_for(5ms);
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        co_await sleep_for(1s);  // let the watches open
        std::size_t store_bytes = 0;
        for (const Store* s : {&pods, &namespaces}) {
          for (const auto& o : s->list())
            store_bytes += compact_size(*o);
        }
        long rss = status_kib("VmRSS:");
        malloc_trim(0);  // hand freed list buffers back: what the process keeps for good
        std::printf(
            "mode=%s%s pods=%zu namespaces=%zu sync_seconds=%.2f store_json_kib=%zu "
            "rss_start_kib=%ld rss_kib=%ld rss_after_trim_kib=%ld peak_rss_kib=%ld "
            "api_bytes=%llu requests=%llu\n",
            full ? "full" : "metadata", initial_rv.empty() ? ",paged" : "", pods.size(),
            namespaces.size(), secs, store_bytes / 1024, rss_before, rss, status_kib("VmRSS:"),
            status_kib("VmHWM:"), static_cast<unsigned long long>(c->stats().bytes_received),
            static_cast<unsigned long long>(c->stats().requests));
        pod_informer.stop();
        ns_informer.stop();
        ioc.stop();
      },
      asio::detached);
  ioc.run();
  return rc;
}
