// The restarts reconciler's engine decisions: the decision cache returns what the engine
// decided for the same revision configuration and pod, misses when either changes, and keeps
// only what the last pass used. And the view a pass takes from the informer stores.
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

TEST(RestartsDecisionCache, KeysAreDigestsOfRevisionEngineAndPod) {
  rapidjson::Document pod = json(R"({"metadata":{"namespace":"apps"},"spec":{"containers":[]}})");
  rapidjson::Document other = json(R"({"metadata":{"namespace":"web"},"spec":{"containers":[]}})");
  auto k = DecisionCache::key_of("default", "e1", pod);
  EXPECT_EQ(k, DecisionCache::key_of("default", "e1", pod));
  EXPECT_NE(k, DecisionCache::key_of("canary", "e1", pod));
  EXPECT_NE(k, DecisionCache::key_of("default", "e2", pod));
  EXPECT_NE(k, DecisionCache::key_of("default", "e1", other));
  // The fields are delimited: moving a character from one to the next is another key.
  EXPECT_NE(DecisionCache::key_of("ab", "c", pod), DecisionCache::key_of("a", "bc", pod));

  // Bounded: beyond max_entries decisions are computed, not remembered.
  DecisionCache cache(1);
  cache.put(k, restart::Desired{});
  cache.put(DecisionCache::key_of("default", "e2", pod), restart::Desired{});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_NE(cache.find(k), nullptr);
}

std::vector<rapidjson::Document> docs(std::initializer_list<std::string_view> texts) {
  std::vector<rapidjson::Document> out;
  for (std::string_view t : texts)
    out.push_back(json(t));
  return out;
}

TEST(RestartsCache, ViewFromStoresSharesFiltersAndOrdersAsAList) {
  runtime::Store namespaces, webhooks, iops, deployments, jobs, pods, pdbs, config_maps, nodes;
  RestartsCache cache;
  cache.namespaces = &namespaces;
  cache.webhook_configurations = &webhooks;
  cache.istio_operators = &iops;
  cache.workloads = {&deployments, &jobs};
  cache.deployments = &deployments;
  cache.pods = &pods;
  cache.pod_disruption_budgets = &pdbs;
  cache.config_maps = &config_maps;
  cache.nodes = &nodes;
  RestartsConfig c = config();
  c.control_plane_namespace = "istio-system";

  auto unsynced = cluster_view_from(cache, c);
  ASSERT_FALSE(unsynced.ok());
  EXPECT_NE(unsynced.message().find("has not synced"), std::string::npos) << unsynced.message();

  namespaces.replace(docs({R"({"metadata":{"name":"apps"}})", R"({"metadata":{"name":"web"}})"}));
  webhooks.replace(docs({R"({"metadata":{"name":"zz","resourceVersion":"1"}})",
                         R"({"metadata":{"name":"aa","resourceVersion":"1"}})"}));
  iops.replace(docs({R"({"metadata":{"namespace":"istio-system","name":"b"}})",
                     R"({"metadata":{"namespace":"istio-system","name":"a"}})"}));
  deployments.replace(
      docs({R"({"kind":"Deployment","metadata":{"namespace":"apps","name":"web"}})",
            R"({"kind":"Deployment","metadata":{"namespace":"istio-system","name":"istiod"}})",
            R"({"kind":"Deployment","metadata":{"namespace":"web","name":"front"}})"}));
  jobs.replace(docs({R"({"kind":"Job","metadata":{"namespace":"apps","name":"once"}})"}));
  pods.replace(docs({R"({"kind":"Pod","metadata":{"namespace":"apps","name":"p1"}})",
                     R"({"kind":"Pod","metadata":{"namespace":"web","name":"p2"}})"}));
  pdbs.replace(docs({R"({"metadata":{"namespace":"web","name":"z"}})",
                     R"({"metadata":{"namespace":"apps","name":"y"}})",
                     R"({"metadata":{"namespace":"apps","name":"x"}})"}));
  config_maps.replace(docs({R"({"metadata":{"namespace":"istio-system","name":"istio"}})",
                            R"({"metadata":{"namespace":"apps","name":"other"}})"}));
  nodes.replace(
      docs({R"({"metadata":{"name":"n2"},"status":{"nodeInfo":{"kubeletVersion":"v1.30.0"}}})",
            R"({"metadata":{"name":"n1"},"status":{"nodeInfo":{"kubeletVersion":"v1.29.1"}}})"}));

  auto view = cluster_view_from(cache, c);
  ASSERT_TRUE(view.ok()) << view.message();
  EXPECT_EQ(view->namespaces.size(), 2u);
  ASSERT_EQ(view->webhook_configurations.size(), 2u);
  EXPECT_EQ(runtime::name_of(view->webhook_configurations[0]), "aa");  // as a LIST: by name
  EXPECT_EQ(runtime::name_of(view->istio_operators[0]), "a");
  EXPECT_EQ(view->workloads.size(), 4u);
  EXPECT_EQ(view->pods.size(), 2u);
  ASSERT_EQ(view->pod_disruption_budgets.size(), 3u);
  EXPECT_EQ(runtime::object_key(view->pod_disruption_budgets[0]), "apps/x");
  EXPECT_EQ(runtime::object_key(view->pod_disruption_budgets[2]), "web/z");
  ASSERT_EQ(view->control_plane_deployments.size(), 1u);
  EXPECT_EQ(runtime::name_of(view->control_plane_deployments[0]), "istiod");
  ASSERT_EQ(view->config_maps.size(), 1u);
  EXPECT_EQ(runtime::name_of(view->config_maps[0]), "istio");
  EXPECT_EQ(view->kubelet_versions, (std::vector<std::string>{"v1.29.1", "v1.30.0"}));
  // Shared, not copied.
  bool shared = false;
  for (const rapidjson::Value& p : view->pods)
    shared = shared || &p == pods.get("apps/p1").get();
  EXPECT_TRUE(shared);

  c.namespace_filter = "apps";
  view = cluster_view_from(cache, c);
  ASSERT_TRUE(view.ok()) << view.message();
  EXPECT_EQ(view->workloads.size(), 2u);  // apps/web, apps/once
  ASSERT_EQ(view->pods.size(), 1u);
  EXPECT_EQ(runtime::name_of(view->pods[0]), "p1");
  EXPECT_EQ(view->pod_disruption_budgets.size(), 2u);
  EXPECT_EQ(view->control_plane_deployments.size(), 1u) << "the control planes are not filtered";
  EXPECT_EQ(view->namespaces.size(), 2u);

  cache.nodes = nullptr;
  EXPECT_FALSE(cluster_view_from(cache, c).ok());
}

}  // namespace
}  // namespace meshop::reconcilers
