// End-to-end tests of the informer against the real local control plane (hack/cluster.sh):
// the store must match the server exactly after many changes, across an apiserver restart,
// and after a 410 Gone forces a relist. Needs KUBECONFIG, MESHOP_CLUSTER_DIR and
// MESHOP_SOURCE_DIR (set by the ctest fixture in test/e2e/CMakeLists.txt).
#include <cstdlib>
#include <map>
#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "operator/kube/client.hpp"
#include "operator/runtime/informer.hpp"
#include "operator/runtime/kube_source.hpp"

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using kube::resources::kConfigMaps;
using kube::resources::kNamespaces;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string cluster_sh() {
  return "bash " + env("MESHOP_SOURCE_DIR") + "/hack/cluster.sh";
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

// Per-key history of the resourceVersions the handlers saw, to prove nothing was delivered
// twice or out of order.
struct EventLog {
  std::map<std::string, std::vector<long long>> rvs;
  std::map<std::string, int> deletes;
  int duplicates = 0;

  StoreHandlers handlers() {
    auto seen = [this](const Object& o) {
      std::string key = object_key(*o);
      long long rv = std::stoll(std::string(resource_version_of(*o)));
      auto& v = rvs[key];
      if (!v.empty() && v.back() >= rv) ++duplicates;
      v.push_back(rv);
    };
    return {.on_add = seen,
            .on_update = [seen](const Object&, const Object& o) { seen(o); },
            .on_delete = [this](const Object& o) { ++deletes[object_key(*o)]; }};
  }
};

class InformerE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("KUBECONFIG").empty()) GTEST_SKIP() << "KUBECONFIG not set (run through ctest -L e2e)";
    auto config = kube::load_default_config();
    ASSERT_TRUE(config.ok()) << config.error().message;
    auto client = kube::Client::create(ioc_.get_executor(), *config, {.qps = 500, .burst = 1000});
    ASSERT_TRUE(client.ok()) << client.error().message;
    client_ = *client;
    std::random_device rd;
    ns_ = "h5-e2e-" + std::to_string(rd() % 1000000);
  }

  // Runs `body` on the io_context until it completes.
  void run(std::function<asio::awaitable<void>()> body) {
    bool done = false;
    std::exception_ptr error;
    asio::co_spawn(ioc_, body(), [&](std::exception_ptr e) {
      error = e;
      done = true;
      ioc_.stop();
    });
    ioc_.restart();
    ioc_.run();
    ASSERT_TRUE(done);
    if (error) std::rethrow_exception(error);
  }

  asio::awaitable<void> wait_api_ready() {
    for (int i = 0; i < 600; ++i) {
      auto r = co_await client_->raw("GET", "/readyz");
      if (r.ok() && r->status == 200) co_return;
      co_await sleep_for(100ms);
    }
    ADD_FAILURE() << "apiserver did not become ready";
  }

  asio::awaitable<void> create_namespace() {
    auto r = co_await client_->create(
        kNamespaces, "",
        parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns_ + R"("}})"));
    EXPECT_TRUE(r.ok()) << r.error().message;
  }

  asio::awaitable<void> delete_namespace() {
    auto r = co_await client_->remove(kNamespaces, "", ns_);
    (void)r;
  }

  // Runs `op(i)` for i in [begin, end) with `parallel` requests in flight.
  asio::awaitable<void> for_each(int begin, int end, int parallel,
                                 std::function<asio::awaitable<void>(int)> op) {
    int next = begin;
    int running = 0;
    auto ex = co_await asio::this_coro::executor;
    for (int w = 0; w < parallel; ++w) {
      ++running;
      asio::co_spawn(
          ex,
          [&]() -> asio::awaitable<void> {
            while (next < end) {
              int i = next++;
              co_await op(i);
            }
          },
          [&](std::exception_ptr) { --running; });
    }
    while (running > 0)
      co_await sleep_for(5ms);
  }

  asio::awaitable<void> create_cm(int i, std::string value) {
    std::string json = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" +
                       std::to_string(i) + R"("},"data":{"v":")" + value + R"("}})";
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto r = co_await client_->create(kConfigMaps, ns_, parse(json));
      if (r.ok()) co_return;
      if (attempt == 4) ADD_FAILURE() << r.error().message;
      co_await sleep_for(500ms);
    }
  }
  asio::awaitable<void> update_cm(int i, std::string value) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto r =
          co_await client_->patch(kConfigMaps, ns_, "cm-" + std::to_string(i),
                                  kube::PatchType::kMerge, R"({"data":{"v":")" + value + R"("}})");
      if (r.ok()) co_return;
      if (attempt == 4) ADD_FAILURE() << r.error().message;
      co_await sleep_for(500ms);
    }
  }
  asio::awaitable<void> delete_cm(int i) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto r = co_await client_->remove(kConfigMaps, ns_, "cm-" + std::to_string(i));
      if (r.ok() || r.error().is(kube::ErrorKind::kNotFound)) co_return;
      if (attempt == 4) ADD_FAILURE() << r.error().message;
      co_await sleep_for(500ms);
    }
  }

  // key -> resourceVersion, as the server has it now (quorum read).
  asio::awaitable<std::map<std::string, std::string>> server_state() {
    std::map<std::string, std::string> out;
    auto page = co_await client_->list_all(kConfigMaps, ns_);
    EXPECT_TRUE(page.ok()) << page.error().message;
    if (!page.ok()) co_return out;
    for (auto& item : page->list["items"].GetArray()) {
      out[object_key(item)] = std::string(resource_version_of(item));
    }
    co_return out;
  }

  static std::map<std::string, std::string> store_state(const Store& store) {
    std::map<std::string, std::string> out;
    for (const auto& o : store.list())
      out[object_key(*o)] = std::string(resource_version_of(*o));
    return out;
  }

  // Waits (up to `limit`) until the store equals the server, then asserts it.
  // Objects the test made: kube-controller-manager also puts kube-root-ca.crt into every
  // namespace, at a moment of its own choosing, so counts leave it out.
  static std::size_t test_objects(const Store& store) {
    std::size_t n = 0;
    for (const auto& key : store.keys())
      if (!key.ends_with("/kube-root-ca.crt")) ++n;
    return n;
  }

  asio::awaitable<void> expect_converged(const Store& store, Duration limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::map<std::string, std::string> server;
    for (;;) {
      server = co_await server_state();
      if (store_state(store) == server) break;
      if (std::chrono::steady_clock::now() > deadline) break;
      co_await sleep_for(200ms);
    }
    auto mine = store_state(store);
    EXPECT_EQ(mine.size(), server.size());
    int mismatched = 0;
    for (const auto& [key, rv] : server) {
      auto it = mine.find(key);
      if (it == mine.end() || it->second != rv) ++mismatched;
    }
    for (const auto& [key, rv] : mine) {
      if (server.count(key) == 0) ++mismatched;
    }
    EXPECT_EQ(mismatched, 0) << "store and server differ";
  }

  asio::io_context ioc_;
  std::shared_ptr<kube::Client> client_;
  std::string ns_;
  SteadyClock clock_;
};

TEST_F(InformerE2E, StoreMatchesServerAfterAThousandConfigMapChanges) {
  run([&]() -> asio::awaitable<void> {
    co_await create_namespace();
    Store store;
    EventLog log;
    store.add_handlers(log.handlers());
    KubeListWatch source(client_, kConfigMaps, ns_);
    Informer informer("configmaps", ioc_.get_executor(), clock_, source, store);
    bool stopped = false;
    asio::co_spawn(ioc_, informer.run(), [&](std::exception_ptr) { stopped = true; });
    while (!informer.has_synced())
      co_await sleep_for(10ms);

    co_await for_each(0, 1000, 25, [&](int i) { return create_cm(i, "1"); });
    co_await for_each(0, 1000, 25, [&](int i) -> asio::awaitable<void> {
      if (i % 2 == 0) co_await update_cm(i, "2");
    });
    co_await for_each(0, 1000, 25, [&](int i) -> asio::awaitable<void> {
      if (i % 3 == 0) co_await delete_cm(i);
    });
    co_await expect_converged(store, 120s);

    EXPECT_EQ(test_objects(store), 666u);
    EXPECT_EQ(log.duplicates, 0) << "an event was delivered twice or out of order";
    int deleted_seen = 0;
    for (const auto& [key, n] : log.deletes) {
      EXPECT_EQ(n, 1) << key;
      ++deleted_seen;
    }
    EXPECT_EQ(deleted_seen, 334);
    EXPECT_EQ(informer.lists(), 1) << "a healthy watch must not relist";
    int updated_seen = 0;
    for (const auto& [key, rvs] : log.rvs) {
      if (key.find("/cm-") != std::string::npos && rvs.size() >= 2) ++updated_seen;
    }
    EXPECT_EQ(updated_seen, 500) << "every update must reach the handlers";

    informer.stop();
    while (!stopped)
      co_await sleep_for(10ms);
    co_await delete_namespace();
  });
}

TEST_F(InformerE2E, StoreConvergesAcrossAnApiserverRestart) {
  run([&]() -> asio::awaitable<void> {
    co_await create_namespace();
    Store store;
    KubeListWatch source(client_, kConfigMaps, ns_);
    Informer informer("configmaps", ioc_.get_executor(), clock_, source, store);
    bool stopped = false;
    asio::co_spawn(ioc_, informer.run(), [&](std::exception_ptr) { stopped = true; });
    while (!informer.has_synced())
      co_await sleep_for(10ms);
    co_await for_each(0, 200, 20, [&](int i) { return create_cm(i, "1"); });
    co_await expect_converged(store, 60s);

    EXPECT_EQ(shell(cluster_sh() + " restart kube-apiserver --dir " + env("MESHOP_CLUSTER_DIR")),
              0);
    co_await wait_api_ready();
    co_await for_each(200, 300, 20, [&](int i) { return create_cm(i, "1"); });
    co_await for_each(0, 100, 20, [&](int i) { return delete_cm(i); });
    co_await for_each(100, 150, 20, [&](int i) { return update_cm(i, "2"); });
    co_await expect_converged(store, 120s);
    EXPECT_EQ(test_objects(store), 200u);
    EXPECT_GE(informer.watches(), 2) << "the watch must have been re-opened after the restart";

    informer.stop();
    while (!stopped)
      co_await sleep_for(10ms);
    co_await delete_namespace();
  });
}

// The informer lists, then (before it opens its watch) the server moves on: objects are
// created and deleted, etcd is compacted and the apiserver restarted, so the listed
// resourceVersion can no longer be watched from. The watch must get 410 Gone, the informer
// must relist, and the deletes it never saw must vanish from the store.
TEST_F(InformerE2E, GoneTriggersARelistThatDropsMissedDeletes) {
  run([&]() -> asio::awaitable<void> {
    co_await create_namespace();
    co_await for_each(0, 50, 10, [&](int i) { return create_cm(i, "1"); });
    Store store;
    KubeListWatch source(client_, kConfigMaps, ns_);
    Informer informer("configmaps", ioc_.get_executor(), clock_, source, store);
    auto first = co_await informer.step();  // the list only
    EXPECT_EQ(first, Informer::StepResult::kProgress);

    co_await for_each(0, 25, 10, [&](int i) { return delete_cm(i); });
    co_await for_each(50, 60, 10, [&](int i) { return create_cm(i, "1"); });
    std::string dir = env("MESHOP_CLUSTER_DIR");
    std::string compact =
        "ec=$(cat " + dir +
        "/ports/etcd-client) && "
        "rev=$(curl -sf -X POST http://127.0.0.1:$ec/v3/kv/range -d '{\"key\":\"AA==\"}' | "
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"header\"][\"revision\"])') && "
        "curl -sf -X POST http://127.0.0.1:$ec/v3/kv/compaction "
        "-d \"{\\\"revision\\\":\\\"$rev\\\",\\\"physical\\\":true}\" > /dev/null";
    EXPECT_EQ(shell(compact), 0) << "etcd compaction failed";
    EXPECT_EQ(shell(cluster_sh() + " restart kube-apiserver --dir " + dir), 0);
    co_await wait_api_ready();

    bool stopped = false;
    asio::co_spawn(ioc_, informer.run(), [&](std::exception_ptr) { stopped = true; });
    co_await expect_converged(store, 120s);
    EXPECT_EQ(test_objects(store), 35u);
    EXPECT_GE(informer.gone_errors(), 1) << "the stale watch must have been answered with 410";
    EXPECT_GE(informer.lists(), 2) << "410 must trigger a relist";

    informer.stop();
    while (!stopped)
      co_await sleep_for(10ms);
    co_await delete_namespace();
  });
}

}  // namespace
}  // namespace meshop::runtime
