#include "operator/webhook/configmap_source.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "test_support.hpp"

namespace meshop::webhook {
namespace {

rapidjson::Document configmap(const std::string& name, const std::string& key,
                              const std::string& value, const std::string& rv = "1") {
  rapidjson::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  rapidjson::Value meta(rapidjson::kObjectType), data(rapidjson::kObjectType);
  meta.AddMember("name", rapidjson::Value(name.c_str(), a), a);
  meta.AddMember("namespace", "istio-system", a);
  meta.AddMember("resourceVersion", rapidjson::Value(rv.c_str(), a), a);
  data.AddMember(rapidjson::Value(key.c_str(), a), rapidjson::Value(value.c_str(), a), a);
  d.AddMember("metadata", meta, a);
  d.AddMember("data", data, a);
  return d;
}

class ConfigMapSourceTest : public ::testing::Test {
 protected:
  ConfigMapSourceTest()
      : metrics(registry),
        engine(testing::fake_engine()),
        source(ioc.get_executor(), configmaps, revisions, engine, &metrics,
               [this](const rapidjson::Value& cm, const std::string& message) {
                 reports.push_back(std::string(runtime::name_of(cm)) + ": " + message);
               }) {
    // Count builds and remember what the engine saw.
    auto build = engine.build;
    engine.build = [this, build](const inject::SnapshotSources& s) {
      built.push_back(s);
      return build(s);
    };
    source.start();
  }

  // Runs what the handlers posted (restart: poll() leaves the context stopped once out of work).
  void run() {
    ioc.restart();
    ioc.poll();
  }

  boost::asio::io_context ioc;
  metrics::Registry registry;
  WebhookMetrics metrics;
  Engine engine;
  runtime::Store configmaps;
  RevisionStore revisions;
  std::vector<std::string> reports;
  std::vector<inject::SnapshotSources> built;
  ConfigMapSource source;
};

TEST(ConfigMapNames, ClassifiesInjectorAndMeshConfigMapsByRevision) {
  using R = ConfigMapRole;
  EXPECT_EQ(classify_configmap("istio-sidecar-injector"),
            std::pair(R::kInjector, std::string("default")));
  EXPECT_EQ(classify_configmap("istio-sidecar-injector-canary"),
            std::pair(R::kInjector, std::string("canary")));
  EXPECT_EQ(classify_configmap("istio"), std::pair(R::kMesh, std::string("default")));
  EXPECT_EQ(classify_configmap("istio-canary"), std::pair(R::kMesh, std::string("canary")));
  EXPECT_EQ(classify_configmap("kube-root-ca.crt"), std::nullopt);
  EXPECT_EQ(injector_configmap_name("default"), "istio-sidecar-injector");
  EXPECT_EQ(mesh_configmap_name("canary"), "istio-canary");
}

TEST_F(ConfigMapSourceTest, BuildsEachRevisionOnceFromItsConfigMapsAfterEventsCoalesce) {
  configmaps.apply(configmap("istio-sidecar-injector", "config", "policy: enabled"));
  configmaps.apply(configmap("istio", "mesh", "defaultConfig: {}"));
  configmaps.apply(configmap("istio-sidecar-injector-canary", "config", "policy: disabled"));
  run();
  ASSERT_EQ(built.size(), 2u);
  ASSERT_TRUE(revisions.get("default"));
  ASSERT_TRUE(revisions.get("canary"));
  const auto& def = built[0].revision.empty() ? built[0] : built[1];
  EXPECT_EQ(def.config, "policy: enabled");
  EXPECT_EQ(def.mesh, "defaultConfig: {}");
  EXPECT_EQ(revisions.get("canary")->source, "configmap:istio-sidecar-injector-canary");
}

TEST_F(ConfigMapSourceTest, UnchangedTextsAreNotRebuilt) {
  configmaps.apply(configmap("istio-sidecar-injector", "config", "a"));
  run();
  configmaps.apply(configmap("istio-sidecar-injector", "config", "a", "2"));  // e.g. a label edit
  run();
  EXPECT_EQ(built.size(), 1u);
  configmaps.apply(configmap("istio-sidecar-injector", "config", "b", "3"));
  run();
  EXPECT_EQ(built.size(), 2u);
}

TEST_F(ConfigMapSourceTest, BadConfigMapKeepsLastGoodAndIsReportedOnTheConfigMap) {
  configmaps.apply(configmap("istio-sidecar-injector", "config", "good"));
  run();
  auto good = revisions.get("default");
  ASSERT_TRUE(good);
  configmaps.apply(configmap("istio-sidecar-injector", "config", "bad", "2"));
  run();
  EXPECT_EQ(revisions.get("default"), good);
  EXPECT_EQ(revisions.last_error("default"), "config: bad on purpose");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0],
            "istio-sidecar-injector: rejected, keeping the last good configuration: config: bad on "
            "purpose");
  EXPECT_EQ(metrics.config_errors.with({"default", "configmap"}).Value(), 1);
}

TEST_F(ConfigMapSourceTest, DeletedInjectorConfigMapKeepsServingLastGood) {
  configmaps.apply(configmap("istio-sidecar-injector", "config", "good"));
  run();
  configmaps.remove_key("istio-system/istio-sidecar-injector");
  run();
  EXPECT_TRUE(revisions.get("default"));
}

}  // namespace
}  // namespace meshop::webhook
