#include "operator/runtime/builder.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "operator/log/log.hpp"
#include "test/unit/runtime/fake_source.hpp"
#include "test/unit/runtime/test_util.hpp"

namespace meshop::runtime {
namespace {

using testing::run_ready;
using testing::spawn;
namespace asio = boost::asio;

WatchSpec spec_of(const std::string& resource, const std::string& ns = {},
                  const std::string& label_selector = {}) {
  WatchSpec s;
  s.type = {"", "v1", resource, resource + "Kind", true};
  s.ns = ns;
  s.options.label_selector = label_selector;
  return s;
}

rapidjson::Document object(const std::string& ns, const std::string& name, const std::string& rv,
                           const std::string& owner = {}) {
  rapidjson::Document d = testing::make_obj(ns, name, rv);
  if (!owner.empty()) {
    rapidjson::Value labels(rapidjson::kObjectType);
    labels.AddMember("owner", rapidjson::Value(owner.c_str(), d.GetAllocator()), d.GetAllocator());
    d["metadata"].AddMember("labels", labels, d.GetAllocator());
  }
  return d;
}

struct BuilderTest : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  metrics::Registry registry;
  RuntimeMetrics m{registry};
  int sources_made = 0;
  Cache cache{[this](const WatchSpec&) -> std::unique_ptr<ListWatch> {
                ++sources_made;
                return std::make_unique<testing::FakeSource>(clock, ioc.get_executor());
              },
              ioc.get_executor(), clock};
  Manager manager{ioc, clock, m, ManagerOptions{.handle_signals = false}};
  std::map<std::string, std::vector<std::string>> seen;  // controller -> keys reconciled
  std::vector<Controller*> running;

  Reconciler recorder(const std::string& controller) {
    return [this, controller](const std::string& key) -> asio::awaitable<Action> {
      seen[controller].push_back(key);
      co_return Action::done();
    };
  }
  // The manager starts controllers only on the leader after a sync; here they run at once.
  void start(Controller& c) {
    running.push_back(&c);
    spawn(ioc, [&c]() -> asio::awaitable<void> { co_await c.run(); });
    run_ready(ioc);
  }
  void SetUp() override {
    log::set_sink([](std::string_view) {});
  }
  void TearDown() override {
    log::set_sink(nullptr);
    for (Controller* c : running)
      c->stop();
    run_ready(ioc);
  }
};

TEST_F(BuilderTest, OneSpecIsOneWatchWhoeverAsks) {
  Store& a = cache.store(spec_of("configmaps", "istio-system"));
  Store& b = cache.store(spec_of("configmaps", "istio-system"));
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &cache.store(spec_of("configmaps")));
  EXPECT_NE(&a, &cache.store(spec_of("configmaps", "istio-system", "app=x")));
  WatchSpec meta = spec_of("configmaps", "istio-system");
  meta.options.metadata_only = true;
  EXPECT_NE(&a, &cache.store(meta));
  WatchSpec projected = spec_of("configmaps", "istio-system");
  projected.projection_name = "other";
  EXPECT_NE(&a, &cache.store(projected));
  WatchSpec paged = spec_of("configmaps", "istio-system");
  paged.initial_list_resource_version = "";
  EXPECT_NE(&a, &cache.store(paged));
  EXPECT_EQ(cache.size(), 6u);
  EXPECT_EQ(sources_made, 6);
  EXPECT_EQ(cache.find(spec_of("configmaps", "istio-system")), &a);
  EXPECT_EQ(cache.find(spec_of("secrets")), nullptr);
}

TEST_F(BuilderTest, ForKindEnqueuesTheObjectAndWatchesEnqueueWhatTheMapperNames) {
  Controller& c = ControllerBuilder(manager, cache, "owners")
                      .for_kind(spec_of("owners"))
                      .watches(spec_of("children"),
                               [](const rapidjson::Value& o) {
                                 std::vector<std::string> keys;
                                 const auto& md = o["metadata"];
                                 if (md.HasMember("labels"))
                                   keys.push_back(std::string(md["namespace"].GetString()) + "/" +
                                                  md["labels"]["owner"].GetString());
                                 return keys;
                               })
                      .complete(recorder("owners"));
  start(c);
  cache.store(spec_of("owners")).apply(object("ns", "o1", "1"));
  cache.store(spec_of("children")).apply(object("ns", "c1", "2", "o2"));
  cache.store(spec_of("children")).apply(object("ns", "c2", "3"));  // no owner: nothing
  run_ready(ioc);
  EXPECT_EQ(seen["owners"], (std::vector<std::string>{"ns/o1", "ns/o2"}));
  EXPECT_EQ(c.name(), "owners");
}

TEST_F(BuilderTest, SingletonRunsAtStartAndOnEveryWatchedChange) {
  Controller& c = ControllerBuilder(manager, cache, "all-at-once")
                      .singleton("all")
                      .watches(spec_of("namespaces"))
                      .watches(spec_of("configmaps", "istio-system"))
                      .complete(recorder("all-at-once"));
  start(c);
  EXPECT_EQ(seen["all-at-once"], (std::vector<std::string>{"all"})) << "queued at start";
  cache.store(spec_of("namespaces")).apply(object("", "default", "5"));
  run_ready(ioc);
  cache.store(spec_of("configmaps", "istio-system")).apply(object("istio-system", "x", "6"));
  run_ready(ioc);
  cache.store(spec_of("configmaps")).apply(object("other", "y", "7"));  // another watch
  run_ready(ioc);
  EXPECT_EQ(seen["all-at-once"], (std::vector<std::string>{"all", "all", "all"}));
}

TEST_F(BuilderTest, TwoControllersShareOneWatch) {
  Controller& a = ControllerBuilder(manager, cache, "a")
                      .singleton("all")
                      .watches(spec_of("namespaces"))
                      .complete(recorder("a"));
  Controller& b = ControllerBuilder(manager, cache, "b")
                      .for_kind(spec_of("namespaces"))
                      .complete(recorder("b"));
  EXPECT_EQ(cache.size(), 1u);
  start(a);
  start(b);
  cache.store(spec_of("namespaces")).apply(object("", "n1", "1"));
  run_ready(ioc);
  EXPECT_EQ(seen["a"], (std::vector<std::string>{"all", "all"}));
  EXPECT_EQ(seen["b"], (std::vector<std::string>{"n1"}));
}

TEST_F(BuilderTest, HandlersSeeTheQueueAndTheStore) {
  // Enqueue every object of the kind when one changes (install's rule for IstioOperators).
  Controller& c = ControllerBuilder(manager, cache, "every")
                      .handlers(spec_of("iops"),
                                [](WorkQueue& q, const Store& store) {
                                  return StoreHandlers{.on_add = [&q, &store](const Object&) {
                                    for (const std::string& k : store.keys())
                                      q.add(k);
                                  }};
                                })
                      .complete(recorder("every"));
  start(c);
  cache.store(spec_of("iops")).apply(object("ns", "a", "1"));
  run_ready(ioc);
  cache.store(spec_of("iops")).apply(object("ns", "b", "2"));
  run_ready(ioc);
  std::vector<std::string> keys = seen["every"];
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"ns/a", "ns/a", "ns/b"}));
}

TEST_F(BuilderTest, WatchesWithoutAMapperNeedASingleton) {
  ControllerBuilder b(manager, cache, "no-key");
  EXPECT_THROW(b.watches(spec_of("namespaces")), std::logic_error);
}

}  // namespace
}  // namespace meshop::runtime
