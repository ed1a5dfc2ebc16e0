// The restarts reconciler's engine decisions: the decision cache returns what the engine
// decided for the same revision configuration and pod, misses when either changes, and keeps
// only what the last pass used.
#include "reconcilers/restarts.hpp"

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/builtin.hpp"

namespace meshop::reconcilers {
namespace {

rapidjson::Document json(std::string_view text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok());
  return std::move(*d);
}

// A view whose only content is the default revision's injector ConfigMap, built from meshop's
// built-in configuration with `values` as given.
restart::ClusterView view_with(const std::string& values) {
  restart::ClusterView view;
  inject::SnapshotSources src = inject::builtin_sources();
  rapidjson::Document cm = json(R"({"metadata":{"name":"istio-sidecar-injector"},"data":{}})");
  auto& a = cm.GetAllocator();
  cm["data"].AddMember("config", rapidjson::Value(src.config.c_str(), a), a);
  cm["data"].AddMember("values", rapidjson::Value(values.c_str(), a), a);
  view.config_maps.push_back(std::move(cm));
  // The revisions are the ones webhook configurations name.
  view.webhook_configurations.push_back(json(
      R"({"metadata":{"name":"istio-sidecar-injector","labels":{"istio.io/rev":"default"}}})"));
  rapidjson::Document ns = json(R"({"metadata":{"name":"apps"}})");
  view.namespaces.push_back(std::move(ns));
  return view;
}

RestartsConfig config() {
  RestartsConfig c;
  c.native_sidecars = inject::NativeSidecars::kDisabled;
  return c;
}

TEST(RestartsDecisionCache, RemembersDecisionsPerEngineAndPod) {
  const std::string values = inject::builtin_sources().values;
  restart::ClusterView view = view_with(values);
  Engines engines = build_engines(view, config());
  ASSERT_TRUE(engines.errors.empty()) << engines.errors.begin()->second;
  ASSERT_EQ(engines.snapshots.count("default"), 1u);

  DecisionCache cache;
  auto desired = engines.desired(&cache);
  rapidjson::Document pod = json(R"({"metadata":{"namespace":"apps","labels":{"app":"a"}},
      "spec":{"containers":[{"name":"app","image":"a:1"}]}})");
  auto first = desired("default", pod);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->inject);
  EXPECT_FALSE(first->proxy_image.empty());
  EXPECT_EQ(cache.size(), 1u);
  auto again = desired("default", pod);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->proxy_image, first->proxy_image);
  EXPECT_EQ(cache.size(), 1u);  // a hit, not a second entry

  // Another pod template is another decision; an opted-out one is not injected.
  rapidjson::Document opted_out = json(R"({"metadata":{"namespace":"apps",
      "labels":{"app":"a","sidecar.istio.io/inject":"false"}},
      "spec":{"containers":[{"name":"app","image":"a:1"}]}})");
  auto out = desired("default", opted_out);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->inject);
  EXPECT_EQ(cache.size(), 2u);

  // A changed configuration of the revision (its values) never reuses old decisions.
  restart::ClusterView changed = view_with(values + "\n");
  Engines engines2 = build_engines(changed, config());
  EXPECT_NE(engines2.engine_keys.at("default"), engines.engine_keys.at("default"));
  auto desired2 = engines2.desired(&cache);
  ASSERT_TRUE(desired2("default", pod));
  EXPECT_EQ(cache.size(), 3u);

  // Mark and sweep: after a pass that only used one entry, the next pass keeps only that one.
  cache.begin_pass();
  (void)desired2("default", pod);
  cache.begin_pass();
  EXPECT_EQ(cache.size(), 1u);
  cache.begin_pass();
  EXPECT_EQ(cache.size(), 0u);

  // An unknown revision has no engine: nothing decided, nothing cached.
  EXPECT_FALSE(desired("canary", pod).has_value());
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace meshop::reconcilers
