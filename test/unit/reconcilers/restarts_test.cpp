// The restarts reconciler's engine decisions: the decision cache returns what the engine
// decided for the same revision configuration and pod, misses when either changes, and keeps
// only what the last pass used. The view a pass takes from the informer stores. And passes
// against a scripted apiserver whose informer stores lag behind the restarts they start.
#include "reconcilers/restarts.hpp"

#include <ctime>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/record.hpp"
#include "operator/manifest/chart_sets.hpp"
#include "operator/metrics/registry.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/ownership.hpp"
#include "reconcilers/watches.hpp"
#include "test/support/chart_set_sources.hpp"
#include "test/support/fake_api.hpp"
#include "test/support/recording_writer.hpp"
#include "test/unit/kube/fake_apiserver.hpp"
#include "test/unit/restart/fixtures.hpp"

namespace meshop::reconcilers {
namespace {

rapidjson::Document json(std::string_view text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok());
  return std::move(*d);
}

// A view whose only content is the default revision's injector ConfigMap, built from the
// default chart set's (test/support/chart_set_sources.hpp) with `values` as given.
restart::ClusterView view_with(const std::string& values) {
  restart::ClusterView view;
  inject::SnapshotSources src = test_support::chart_set_sources();
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
  const std::string values = test_support::chart_set_sources().values;
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

// `meshop run`: the engines are the snapshots the webhook serves (the same objects), keyed by
// their generation; a revision the webhook has not published is built from the view's
// ConfigMaps as the webhook builds it, and one without ConfigMaps has an error.
TEST(RestartsEngines, FromTheWebhooksRevisionStore) {
  const std::string values = test_support::chart_set_sources().values;
  restart::ClusterView view = view_with(values);
  view.webhook_configurations.push_back(json(
      R"({"metadata":{"name":"istio-sidecar-injector-canary","labels":{"istio.io/rev":"canary"}}})"));
  view.webhook_configurations.push_back(json(
      R"({"metadata":{"name":"istio-sidecar-injector-gone","labels":{"istio.io/rev":"gone"}}})"));
  rapidjson::Document canary = json(api::to_json(view.config_maps[0]));
  canary["metadata"]["name"].SetString("istio-sidecar-injector-canary", canary.GetAllocator());
  view.config_maps.push_back(std::move(canary));

  Engines built = build_engines(view, config());
  ASSERT_EQ(built.snapshots.size(), 2u);
  ASSERT_EQ(built.errors.count("gone"), 1u);

  webhook::RevisionStore store;
  webhook::RevisionConfig published;
  published.revision = "default";
  published.snapshot = built.snapshots.at("default");
  store.publish(published);
  const std::uint64_t generation = store.get("default")->generation;

  Engines engines = engines_from(store, view, config());
  EXPECT_EQ(engines.snapshots.at("default"), built.snapshots.at("default"))
      << "the webhook's snapshot itself";
  EXPECT_EQ(engines.engine_keys.at("default"), "webhook#" + std::to_string(generation));
  ASSERT_EQ(engines.snapshots.count("canary"), 1u) << "not published: built from the view";
  EXPECT_EQ(engines.engine_keys.at("canary"), built.engine_keys.at("canary"));
  EXPECT_NE(engines.errors.at("gone").find("istio-sidecar-injector-gone not found"),
            std::string::npos)
      << engines.errors.at("gone");

  // Both decide alike for a pod.
  rapidjson::Document pod = json(R"({"metadata":{"namespace":"apps","labels":{"app":"a"}},
      "spec":{"containers":[{"name":"app","image":"a:1"}]}})");
  auto from_store = engines.desired()("default", pod);
  auto from_view = built.desired()("default", pod);
  ASSERT_TRUE(from_store && from_view);
  EXPECT_EQ(from_store->proxy_image, from_view->proxy_image);
  EXPECT_EQ(from_store->fingerprint, from_view->fingerprint);
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

// The pods grouped by controller as the store changes: a group is replaced when one of its pods
// changes, and only then; a pod that changes controller moves; a deleted pod leaves.
TEST(RestartsPodIndex, FollowsTheStoreGroupByGroup) {
  auto pod = [](const std::string& name, const std::string& owner, const std::string& rv) {
    std::string refs = owner.empty() ? ""
                                     : R"(,"ownerReferences":[{"apiVersion":"apps/v1",
        "kind":"ReplicaSet","name":"rs","uid":")" +
                                           owner + R"(","controller":true}])";
    return json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"apps","name":")" +
                name + R"(","resourceVersion":")" + rv + "\"" + refs + "}}");
  };
  runtime::Store pods;
  pods.apply(pod("a-1", "rs-a", "1"));  // before the index: replayed
  PodIndex index(pods);
  pods.apply(pod("a-2", "rs-a", "1"));
  pods.apply(pod("b-1", "rs-b", "1"));
  pods.apply(pod("bare", "", "1"));
  auto first = index.groups();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(first->at("rs-a")->pods.size(), 2u);
  EXPECT_EQ(first->at("rs-b")->pods.size(), 1u);
  EXPECT_EQ(first->at("")->pods.size(), 1u);
  EXPECT_EQ(index.groups(), first) << "no change: the same snapshot";

  pods.apply(pod("b-1", "rs-b", "2"));  // a change in b: a's group is the same object
  auto second = index.groups();
  EXPECT_NE(second, first);
  EXPECT_EQ(second->at("rs-a"), first->at("rs-a"));
  EXPECT_NE(second->at("rs-b"), first->at("rs-b"));
  EXPECT_EQ(runtime::resource_version_of(*second->at("rs-b")->pods.at(0)), "2");

  pods.apply(pod("a-2", "rs-b", "3"));  // adopted by b
  pods.remove_key("apps/bare");
  auto third = index.groups();
  EXPECT_EQ(third->at("rs-a")->pods.size(), 1u);
  EXPECT_EQ(third->at("rs-b")->pods.size(), 2u);
  EXPECT_EQ(third->count(""), 0u) << "an empty group goes";
  EXPECT_EQ(first->at("rs-a")->pods.size(), 2u) << "an earlier snapshot never changes";
  // The index changes its groups in place only while no snapshot of them is out.
  EXPECT_EQ(second->at("rs-a")->pods.size(), 2u);
  EXPECT_EQ(second->count(""), 1u);
  EXPECT_EQ(first->size(), 3u);
  EXPECT_EQ(index.groups(), third);
}

// One Deployment (apps/web, its ReplicaSet and pod on the default revision) in a namespace
// relabelled to the canary revision, whose IstioOperator restarts automatically; the stores a
// `meshop run` pass reads, and a scripted apiserver that takes the restart and status patches.
class RestartsPass : public ::testing::Test {
 protected:
  void SetUp() override {
    namespaces_.replace(docs({R"({"kind":"Namespace","metadata":{"name":"apps",
        "labels":{"istio.io/rev":"canary"}}})"}));
    webhooks_.replace(
        docs({restart::configuration("istio-sidecar-injector", "default", "default", true),
              restart::configuration("istio-sidecar-injector-canary", "canary", "canary", false)}));
    iops_.replace(docs({R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
        "metadata":{"namespace":"istio-system","name":"canary"},
        "spec":{"revision":"canary","restarts":{"mode":"Auto","maxConcurrent":1,
          "minInterval":"0s","rolloutTimeout":"2m"}},"status":{"status":"HEALTHY"}})"}));
    deployments_.replace(docs({web(1, "")}));
    replica_sets_.replace(docs({R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{
        "namespace":"apps","name":"web-1","uid":"rs-uid","ownerReferences":[{"apiVersion":"apps/v1",
        "kind":"Deployment","name":"web","uid":"web-uid","controller":true}]},"spec":{}})"}));
    rapidjson::Document pod = json(restart::pod("web-1-a", "default"));
    auto& a = pod.GetAllocator();
    pod.AddMember("kind", "Pod", a);
    pod["metadata"].AddMember("namespace", "apps", a);
    pod["metadata"].AddMember("uid", "pod-uid", a);
    rapidjson::Value refs;
    refs.CopyFrom(json(R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1",
        "uid":"rs-uid","controller":true}])"),
                  a);
    pod["metadata"].AddMember("ownerReferences", refs, a);
    std::vector<rapidjson::Document> pods;
    pods.push_back(std::move(pod));
    pods_.replace(std::move(pods));
    pdbs_.replace(docs({}));
    std::vector<rapidjson::Document> cms;
    for (const char* name : {"istio-sidecar-injector", "istio-sidecar-injector-canary"}) {
      inject::SnapshotSources src = test_support::chart_set_sources();
      rapidjson::Document cm = json(R"({"kind":"ConfigMap","metadata":{"namespace":"istio-system"},
          "data":{}})");
      auto& ca = cm.GetAllocator();
      cm["metadata"].AddMember("name", rapidjson::Value(name, ca), ca);
      cm["data"].AddMember("config", rapidjson::Value(src.config.c_str(), ca), ca);
      cm["data"].AddMember("values", rapidjson::Value(src.values.c_str(), ca), ca);
      cms.push_back(std::move(cm));
    }
    config_maps_.replace(std::move(cms));
    nodes_.replace(docs({}));
    for (runtime::Store* s : {&deployments_, &replica_sets_, &empty_})
      cache_.workloads.push_back(s);
    empty_.replace(docs({}));
    cache_.namespaces = &namespaces_;
    cache_.webhook_configurations = &webhooks_;
    cache_.istio_operators = &iops_;
    cache_.deployments = &deployments_;
    cache_.pods = &pods_;
    cache_.pod_disruption_budgets = &pdbs_;
    cache_.config_maps = &config_maps_;
    cache_.nodes = &nodes_;
    cache_.pod_index = std::make_shared<PodIndex>(pods_);  // as `meshop run` sets it up

    server_.handler = [this](const kube::fake::Exchange& ex) {
      using kube::fake::response;
      if (ex.method == "GET" && ex.target == "/apis/install.istio.io/v1alpha1")
        return kube::fake::Script{{response(200, R"({"kind":"APIResourceList",
            "groupVersion":"install.istio.io/v1alpha1","resources":[{"name":"istiooperators",
            "kind":"IstioOperator","namespaced":true}]})")}};
      if (ex.method == "PATCH" && ex.target == "/apis/apps/v1/namespaces/apps/deployments/web") {
        // As the apiserver: a resourceVersion in the patch is a precondition (409 when the
        // object is at another one). The Deployment's resourceVersion is its generation.
        rapidjson::Document body = json(ex.body);
        if (std::string rv = api::string_at(body, {"metadata", "resourceVersion"});
            !rv.empty() && rv != std::to_string(generation_)) {
          ++refused_patches_;
          return kube::fake::Script{{response(409, R"({"kind":"Status","status":"Failure",
              "reason":"Conflict","code":409,"message":"Operation cannot be fulfilled on )"
                                                   R"(deployments.apps \"web\": the object )"
                                                   R"(has been modified"})")}};
        }
        ++restart_patches_;
        last_restart_patch_ = ex.body;
        ++generation_;
        return kube::fake::Script{{response(200, web(generation_, ex.body))}};
      }
      if (ex.method == "PATCH" &&
          ex.target ==
              "/apis/install.istio.io/v1alpha1/namespaces/istio-system/istiooperators/"
              "canary/status") {
        // The informer delivers what was written before the next pass reads the store.
        reflect_status(ex.body);
        return kube::fake::Script{{response(200, R"({"kind":"IstioOperator"})")}};
      }
      return kube::fake::Script{{response(404, R"({"kind":"Status","reason":"NotFound","code":404,
          "message":"not scripted"})")}};
    };
    kube::Config cfg;
    cfg.server = "https://127.0.0.1:" + std::to_string(server_.port());
    cfg.ca_pem = kube::fake::TestCert::get().cert;
    kube::ClientOptions opts;
    opts.qps = 0;
    auto c = kube::Client::create(io_.get_executor(), cfg, opts);
    ASSERT_TRUE(c) << c.error().message;
    client_ = *c;
  }

  // The status merge patch `body` applied to the canary IstioOperator of the store.
  void reflect_status(const std::string& body) {
    runtime::Object current = iops_.get("istio-system/canary");
    if (current == nullptr) return;
    rapidjson::Document patch = json(body);
    patch.RemoveMember("metadata");  // the resourceVersion precondition
    rapidjson::Document updated;
    updated.CopyFrom(*current, updated.GetAllocator());
    api::apply_merge_patch(updated, patch, updated.GetAllocator());
    iops_.apply(std::move(updated));
  }

  // The Deployment at `generation`; with the template annotations of `restart_patch` (the
  // strategic-merge patch of a restart) when given.
  static std::string web(std::int64_t generation, const std::string& restart_patch) {
    std::string annotations = "{}";
    if (!restart_patch.empty()) {
      rapidjson::Document p = json(restart_patch);
      annotations = api::to_json(p["spec"]["template"]["metadata"]["annotations"]);
    }
    return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"apps",
        "name":"web","uid":"web-uid","generation":)" +
           std::to_string(generation) + R"(,"resourceVersion":")" + std::to_string(generation) +
           R"("},"spec":{"replicas":1,"template":{"metadata":{
        "annotations":)" +
           annotations + R"(},"spec":{"containers":[{"name":"app","image":"app:1"}]}}},
        "status":{"observedGeneration":)" +
           std::to_string(generation) + R"(,"replicas":1,"updatedReplicas":1,
        "availableReplicas":1}})";
  }

  // web's one pod, injected by `revision` with `image`.
  void set_pod(const std::string& name, const std::string& revision, const std::string& image) {
    rapidjson::Document pod = json(restart::pod(name, revision, image));
    auto& a = pod.GetAllocator();
    pod.AddMember("kind", "Pod", a);
    pod["metadata"].AddMember("namespace", "apps", a);
    pod["metadata"].AddMember("uid", rapidjson::Value((name + "-uid").c_str(), a), a);
    rapidjson::Document refs = json(R"([{"apiVersion":"apps/v1","kind":"ReplicaSet",
        "name":"web-1","uid":"rs-uid","controller":true}])");
    pod["metadata"].AddMember("ownerReferences", rapidjson::Value().CopyFrom(refs, a), a);
    std::vector<rapidjson::Document> pods;
    pods.push_back(std::move(pod));
    pods_.replace(std::move(pods));
  }

  // With `default_istio_version`, a second reconciler (without metrics: the registry has the
  // first one's families).
  std::unique_ptr<RestartsReconciler> reconciler(const std::string& default_istio_version = "") {
    RestartsConfig c = config();
    c.cache = &cache_;
    c.default_istio_version = default_istio_version;
    return std::make_unique<RestartsReconciler>(
        client_, c, default_istio_version.empty() ? &registry_ : nullptr, nullptr,
        [this] { return now_; });
  }

  api::Result<PassReport> pass(RestartsReconciler& r, bool execute = true) {
    std::optional<api::Result<PassReport>> out;
    auto run = [&]() -> kube::Task<void> { out.emplace(co_await r.pass(execute)); };
    boost::asio::co_spawn(io_, run(), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    while (!out)
      io_.run_one();
    return std::move(*out);
  }

  std::string started_total() const {
    const std::string text = registry_.expose();
    const std::string series =
        R"(meshop_restarts_total{reason="RevisionChanged",result="started"} )";
    auto at = text.find(series);
    if (at == std::string::npos) return "absent";
    at += series.size();
    return text.substr(at, text.find('\n', at) - at);
  }

  boost::asio::io_context io_;
  kube::fake::FakeApiServer server_{io_};
  std::shared_ptr<kube::Client> client_;
  metrics::Registry registry_;
  runtime::Store namespaces_, webhooks_, iops_, empty_, pdbs_, config_maps_, nodes_;
  // As `meshop run` keeps workloads (watches::every): projected, an owned ReplicaSet only the
  // link from its pods to its Deployment; the executor's readers (OwnedIndex, the rollout
  // follower) read those.
  runtime::Store deployments_{watches::every(kube::resources::kDeployments).projection,
                              watches::every(kube::resources::kDeployments).shared_paths};
  runtime::Store replica_sets_{watches::every(kube::resources::kReplicaSets).projection,
                               watches::every(kube::resources::kReplicaSets).shared_paths};
  // As `meshop run` keeps pods: projected, a controlled pod a record (api/record.hpp) whose base
  // its siblings share; the executor's readers (readiness, creation time, health) read those.
  runtime::Store pods_{watches::pods().projection, watches::pods().shared_paths};
  RestartsCache cache_;
  std::chrono::system_clock::time_point now_ = std::chrono::system_clock::now();
  int restart_patches_ = 0;  // applied
  int refused_patches_ = 0;  // refused: the resourceVersion they name is not the current one
  std::string last_restart_patch_;
  std::int64_t generation_ = 1;
};

// The informer delivers the restarted Deployment after the next pass has begun (its watch
// stream behind the IstioOperator's, whose status the first pass wrote): that pass sees the
// old copy, without the cause record, and must not restart the Deployment again.
TEST_F(RestartsPass, ARestartTheStoreDoesNotShowYetIsInProgressNotStartedAgain) {
  auto r = reconciler();
  auto first = pass(*r);
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(first->started, (std::vector<std::string>{"Deployment/apps/web"}));
  ASSERT_EQ(restart_patches_, 1);
  EXPECT_NE(last_restart_patch_.find("RevisionChanged/canary"), std::string::npos);
  EXPECT_EQ(started_total(), "1");

  now_ += std::chrono::seconds(1);  // another second: a second patch would roll the pods again
  auto second = pass(*r);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_TRUE(second->started.empty()) << "restarted twice: " << second->started[0];
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_EQ(started_total(), "1");
  ASSERT_EQ(second->progressing.size(), 1u);
  EXPECT_EQ(second->progressing[0].key, "Deployment/apps/web");
  ASSERT_EQ(second->plan.size(), 1u);
  EXPECT_EQ(second->plan[0].action, restart::Action::kInProgress) << second->plan[0].why;

  // The store catches up: in progress by the template's cause record, still no second start.
  deployments_.apply(json(web(generation_, last_restart_patch_)));
  now_ += std::chrono::seconds(1);
  auto third = pass(*r);
  ASSERT_TRUE(third.ok()) << third.message();
  EXPECT_TRUE(third->started.empty());
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_EQ(started_total(), "1");
  ASSERT_EQ(third->plan.size(), 1u);
  EXPECT_EQ(third->plan[0].action, restart::Action::kInProgress) << third->plan[0].why;
}

// The memory is bounded by the policy's rolloutTimeout; then the store alone decides, as far
// as the apiserver agrees: a store that never showed the restart plans it again, but the patch
// names the resourceVersion of the store's copy, which the apiserver has moved past (409), so
// nothing is restarted twice. Once the store shows the workload as it is (say, with its record
// removed by hand), the cluster decides again.
TEST_F(RestartsPass, ARestartNeverShownIsForgottenAfterTheRolloutTimeout) {
  auto r = reconciler();
  ASSERT_TRUE(pass(*r).ok());
  ASSERT_EQ(restart_patches_, 1);
  now_ += std::chrono::seconds(119);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_EQ(refused_patches_, 0);
  now_ += std::chrono::seconds(1);
  auto later = pass(*r);
  ASSERT_TRUE(later.ok()) << later.message();
  ASSERT_EQ(later->plan.size(), 1u);
  EXPECT_EQ(later->plan[0].action, restart::Action::kRestart) << later->plan[0].why;
  EXPECT_TRUE(later->started.empty());
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_EQ(refused_patches_, 1);
  EXPECT_EQ(started_total(), "1");

  ++generation_;  // the record removed by hand; the store shows it
  deployments_.apply(json(web(generation_, "")));
  now_ += std::chrono::seconds(1);
  auto again = pass(*r);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->started, (std::vector<std::string>{"Deployment/apps/web"}));
  EXPECT_EQ(restart_patches_, 2);
  EXPECT_EQ(started_total(), "2");
}

// The version gate between a revision whose IstioOperator sets no spec.version and one with a
// versioned proxy: the unversioned one installs the bundled default (the install path's
// manifest::default_chart_set()), and the pass plans with that version unless told another.
TEST_F(RestartsPass, AnUnversionedRevisionIsOnTheBundledDefaultVersion) {
  iops_.replace(docs({R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
        "metadata":{"namespace":"istio-system","name":"default"},"spec":{"profile":"default"},
        "status":{"status":"HEALTHY"}})",
                      R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
        "metadata":{"namespace":"istio-system","name":"canary"},
        "spec":{"revision":"canary","restarts":{"mode":"Auto","maxConcurrent":1,
          "minInterval":"0s","rolloutTimeout":"2m","maxVersionSkew":"Patch"}},
        "status":{"status":"HEALTHY"}})"}));
  // The running proxy's image names no version (a digest): its revision's IstioOperator decides.
  set_pod("web-1-a", "default", "hub/proxyv2@sha256:0123");
  const std::string bundled = manifest::default_chart_set().version;
  ASSERT_FALSE(bundled.empty());

  // The canary's proxy is the default chart set's (the bundled version's tag).
  // Told another default, a minor away from the target: the move waits for an approval.
  auto told = reconciler("1.29");
  auto report = pass(*told);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->plan.size(), 1u);
  const restart::PlanEntry& e = report->plan[0];
  EXPECT_EQ(e.current_version, "1.29");
  EXPECT_EQ(e.target_version.rfind(bundled, 0), 0u) << e.target_version;
  EXPECT_EQ(e.action, restart::Action::kApprovalNeeded) << e.why;
  EXPECT_EQ(e.why, "Istio 1.29 -> " + e.target_version +
                       " exceeds maxVersionSkew Patch; approve with meshop restart approve "
                       "Deployment/web -n apps");
  EXPECT_EQ(restart_patches_, 0);

  // Not told: the unversioned default revision is on the bundled default, the target's minor.
  auto r = reconciler();
  auto again = pass(*r);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->plan[0].current_version, bundled)
      << "the default revision installs the bundled default";
  EXPECT_EQ(again->plan[0].action, restart::Action::kRestart) << again->plan[0].why;
  EXPECT_EQ(restart_patches_, 1);
}

// Issue 17 (a restart wave under faults): the leader restarts web and dies; the process elected
// next (no memory of that restart) plans from a store whose copy of web predates it, as when its
// watch broke just before (an apiserver restart, a 410 relist not done yet). It must not
// restart web a second time: the patch names the resourceVersion the plan read, the apiserver
// refuses it (409), and the pass goes on without an error, a start or a count. Once the store
// catches up, web is in progress for the previous leader's restart.
TEST_F(RestartsPass, ARestartByThePreviousLeaderTheStoreDoesNotShowIsNotMadeAgain) {
  last_restart_patch_ =
      restart::restart_patch("RevisionChanged/canary", now_ - std::chrono::seconds(3));
  generation_ = 2;  // the apiserver's copy: restarted, with the cause record
  auto r = reconciler();
  auto first = pass(*r);
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(restart_patches_, 0) << "restarted a second time";
  EXPECT_EQ(refused_patches_, 1);
  EXPECT_TRUE(first->started.empty());
  EXPECT_EQ(started_total(), "absent");
  ASSERT_EQ(first->plan.size(), 1u);
  EXPECT_EQ(first->plan[0].action, restart::Action::kRestart) << first->plan[0].why;

  deployments_.apply(json(web(generation_, last_restart_patch_)));
  now_ += std::chrono::seconds(2);
  auto second = pass(*r);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(restart_patches_, 0);
  EXPECT_EQ(refused_patches_, 1);
  EXPECT_TRUE(second->started.empty());
  ASSERT_EQ(second->plan.size(), 1u);
  EXPECT_EQ(second->plan[0].action, restart::Action::kInProgress) << second->plan[0].why;
}

// A halted wave (status.restarts.wave, as a previous process left it) starts nothing, shows its
// entries as Halted and reports the condition and the metric; the resume annotation lifts it,
// the workload is restarted in the same pass and the annotation is removed.
class RestartsHalt : public RestartsPass {
 protected:
  void SetUp() override {
    RestartsPass::SetUp();
    auto scripted = server_.handler;
    server_.handler = [this, scripted](const kube::fake::Exchange& ex) {
      using kube::fake::response;
      const std::string iop =
          "/apis/install.istio.io/v1alpha1/namespaces/istio-system/istiooperators/canary";
      if (ex.method == "PATCH" && ex.target == iop + "/status") status_patches_.push_back(ex.body);
      if (ex.method == "PATCH" && ex.target == iop) {
        iop_patches_.push_back(ex.body);
        return kube::fake::Script{{response(200, R"({"kind":"IstioOperator"})")}};
      }
      return scripted(ex);
    };
  }

  void set_iop(const std::string& annotations) {
    iops_.replace(docs({R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
        "metadata":{"namespace":"istio-system","name":"canary","generation":3,
          "annotations":)" +
                        annotations + R"(},
        "spec":{"revision":"canary","restarts":{"mode":"Auto","maxConcurrent":1,
          "minInterval":"0s","rolloutTimeout":"2m","canary":{"count":1,"soak":"1m"}}},
        "status":{"status":"HEALTHY","restarts":{"wave":{"phase":"Halted",
          "canary":["Deployment/other/db"],"generation":3,"haltedWorkload":"Deployment/other/db",
          "haltReason":"CanaryNotReady","message":"canary Deployment/other/db regressed: pod db-1 is not Ready"}}}})"}));
  }

  std::string halted_gauge() const {
    const std::string text = registry_.expose();
    const std::string series = R"(meshop_restarts_halted{istio_operator="istio-system/canary"} )";
    auto at = text.find(series);
    if (at == std::string::npos) return "absent";
    at += series.size();
    return text.substr(at, text.find('\n', at) - at);
  }

  std::vector<std::string> status_patches_, iop_patches_;
};

TEST_F(RestartsHalt, HaltedNothingStartsAndTheConditionSaysWhy) {
  set_iop("{}");
  auto r = reconciler();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->started.empty());
  EXPECT_EQ(restart_patches_, 0);
  ASSERT_EQ(report->plan.size(), 1u);
  EXPECT_EQ(report->plan[0].action, restart::Action::kHalted);
  EXPECT_NE(report->plan[0].why.find("restarts halted: canary Deployment/other/db regressed"),
            std::string::npos)
      << report->plan[0].why;
  EXPECT_TRUE(report->halted);
  EXPECT_EQ(halted_gauge(), "1");
  ASSERT_EQ(status_patches_.size(), 1u);
  rapidjson::Document status = json(status_patches_[0]);
  EXPECT_TRUE(status["status"]["restarts"]["halted"].GetBool());
  const rapidjson::Value& conds = status["status"]["conditions"];
  ASSERT_EQ(conds.Size(), 1u);
  EXPECT_EQ(api::string_at(conds[0], {"type"}), "RestartsHalted");
  EXPECT_EQ(api::string_at(conds[0], {"status"}), "True");
  EXPECT_EQ(api::string_at(conds[0], {"reason"}), "CanaryNotReady");
  EXPECT_EQ(conds[0]["observedGeneration"].GetInt64(), 3);
  EXPECT_TRUE(iop_patches_.empty()) << "no annotation to remove";

  // Another pass: still halted, nothing written again.
  now_ += std::chrono::seconds(2);
  auto again = pass(*r);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(restart_patches_, 0);
  EXPECT_EQ(status_patches_.size(), 1u);
}

TEST_F(RestartsHalt, ResumeLiftsTheHaltRestartsAndRemovesTheAnnotation) {
  set_iop(R"({"meshop.io/restarts-resume":"2026-12-03T14:00:00Z",
      "meshop.io/restarts-paused":"by hand"})");
  auto r = reconciler();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_FALSE(report->halted);
  EXPECT_EQ(report->started, (std::vector<std::string>{"Deployment/apps/web"}));
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_EQ(halted_gauge(), "0");
  ASSERT_EQ(iop_patches_.size(), 1u);
  EXPECT_EQ(iop_patches_[0], R"({"metadata":{"annotations":{"meshop.io/restarts-resume":null,)"
                             R"("meshop.io/restarts-paused":null}}})");
  ASSERT_EQ(status_patches_.size(), 1u);
  rapidjson::Document status = json(status_patches_[0]);
  const rapidjson::Value& conds = status["status"]["conditions"];
  ASSERT_EQ(conds.Size(), 1u);
  EXPECT_EQ(api::string_at(conds[0], {"status"}), "False");
  EXPECT_EQ(api::string_at(conds[0], {"reason"}), "Resumed");
  EXPECT_EQ(api::string_at(status["status"]["restarts"]["wave"], {"phase"}), "Passed");

  // The store still shows the annotation (its removal not seen yet): honoured once only.
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(iop_patches_.size(), 1u);
}

// Another reconciler (revisions: InUse) wrote a condition after the store's copy of the
// IstioOperator was read. The list of conditions a merge patch sends replaces the apiserver's
// whole, so RestartsHalted must go into the list the apiserver holds: sent with the store's
// (older) list, it would erase InUse, a lost update.
class RestartsConditions : public RestartsHalt {
 protected:
  void SetUp() override {
    RestartsHalt::SetUp();
    set_iop("{}");
    runtime::Object stored = iops_.get("istio-system/canary");
    ASSERT_NE(stored, nullptr);
    // The apiserver's copy: the store's, and InUse (at the version FakeApi gives it).
    rapidjson::Document newer;
    newer.CopyFrom(*stored, newer.GetAllocator());
    newer["status"].AddMember(
        "conditions",
        rapidjson::Value().CopyFrom(json(R"([{"type":"InUse","status":"True","reason":"Used",
            "message":"revision canary is used by 1 namespace",
            "lastTransitionTime":"2026-12-02T09:00:00Z"}])"),
                                    newer.GetAllocator()),
        newer.GetAllocator());
    api_->put(istio_operator_resource(), api::to_json(newer));
    // The store's copy, at an older version.
    rapidjson::Document older;
    older.CopyFrom(*stored, older.GetAllocator());
    older["metadata"].AddMember("resourceVersion", "7", older.GetAllocator());
    iops_.apply(std::move(older));
  }

  // The conditions of the apiserver's copy: "type=status" in order.
  std::vector<std::string> conditions() const {
    std::vector<std::string> out;
    const api::Document* held = api_->object(istio_operator_resource(), "istio-system", "canary");
    const rapidjson::Value* conds =
        held != nullptr ? api::find(*held, "/status/conditions") : nullptr;
    if (conds != nullptr)
      for (const rapidjson::Value& c : conds->GetArray())
        out.push_back(api::string_at(c, {"type"}) + "=" + api::string_at(c, {"status"}));
    return out;
  }

  std::shared_ptr<test_support::FakeApi> api_ = std::make_shared<test_support::FakeApi>();
};

TEST_F(RestartsConditions, AStaleStoreCopyIsRefusedAndTheApiserversListGetsTheCondition) {
  RestartsConfig c = config();
  c.cache = &cache_;
  RestartsReconciler r(c, api_, api_, [this] { return now_; });
  auto report = pass(r);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->halted);
  EXPECT_EQ(conditions(), (std::vector<std::string>{"InUse=True", "RestartsHalted=True"}))
      << "InUse is another reconciler's";
  // Refused at the store's version (409), got again, written once at the apiserver's.
  auto patches = api_->calls_of("patch");
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_TRUE(patches[0].failed);
  EXPECT_NE(patches[0].body.find(R"("resourceVersion":"7")"), std::string::npos) << patches[0].body;
  EXPECT_FALSE(patches[1].failed);
  EXPECT_EQ(api_->calls_of("get").size(), 1u);

  // The informer catches up: nothing more to write.
  iops_.apply(api::parse_json(
                  api::to_json(*api_->object(istio_operator_resource(), "istio-system", "canary")))
                  .value());
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(r).ok());
  EXPECT_EQ(api_->calls_of("patch").size(), 2u);
}

// Without a reader to get the object again, the Conflict is the pass's error (retried at once,
// reconcilers/errors.hpp), and the next pass, on a store that caught up, writes the condition.
TEST_F(RestartsConditions, WithoutAReaderTheConflictIsThePasssAndTheNextPassWrites) {
  RestartsConfig c = config();
  c.cache = &cache_;
  RestartsReconciler r(c, api_, nullptr, nullptr, [this] { return now_; });
  auto first = pass(r);
  EXPECT_EQ(conditions(), (std::vector<std::string>{"InUse=True"})) << "InUse erased";
  ASSERT_FALSE(first.ok());
  EXPECT_TRUE(first.error().conflict()) << first.message();
  EXPECT_EQ(error_action(first.error()).kind, runtime::Action::Kind::kConflict);

  iops_.apply(api::parse_json(
                  api::to_json(*api_->object(istio_operator_resource(), "istio-system", "canary")))
                  .value());
  now_ += std::chrono::seconds(2);
  auto second = pass(r);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(conditions(), (std::vector<std::string>{"InUse=True", "RestartsHalted=True"}));
}

// spec.restarts.maxStaleness under a closed maintenance window: the first pass that sees the
// cause records meshop.io/stale-since on the workload's metadata, once; past the deadline the
// IstioOperator's condition RestartsOverdue turns True and names it (and, with
// restartAfterDeadline, the workload is restarted outside the window); once the workload is up
// to date the condition turns False and the record is removed, so that a later episode of the
// same cause starts its own clock.
class RestartsDeadline : public RestartsPass {
 protected:
  void SetUp() override {
    RestartsPass::SetUp();
    std::tm tm{};
    tm.tm_year = 126;
    tm.tm_mon = 11;
    tm.tm_mday = 2;
    tm.tm_hour = 10;
    now_ = std::chrono::system_clock::from_time_t(timegm(&tm));  // 2026-12-02T10:00:00Z
    set_iop(false, "[]");
    auto scripted = server_.handler;
    server_.handler = [this, scripted](const kube::fake::Exchange& ex) {
      using kube::fake::response;
      if (ex.method == "PATCH" && ex.target == "/apis/apps/v1/namespaces/apps/deployments/web" &&
          ex.body.find("meshop.io/stale-since") != std::string::npos) {
        stale_patches_.push_back(ex.body);
        return kube::fake::Script{{response(200, web(++generation_, ""))}};
      }
      if (ex.method == "PATCH" &&
          ex.target ==
              "/apis/install.istio.io/v1alpha1/namespaces/istio-system/istiooperators/"
              "canary/status")
        status_patches_.push_back(ex.body);
      return scripted(ex);
    };
  }

  // The canary IstioOperator: window 02:00-03:00 (closed at 10:00), maxStaleness 1h, and
  // `conditions` as the apiserver holds them.
  void set_iop(bool restart_after_deadline, const std::string& conditions) {
    iops_.replace(docs({R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
        "metadata":{"namespace":"istio-system","name":"canary","generation":2},
        "spec":{"revision":"canary","restarts":{"mode":"Auto","maxConcurrent":1,
          "minInterval":"0s","rolloutTimeout":"2m",
          "maintenanceWindow":{"start":"02:00","end":"03:00"},"maxStaleness":"1h",
          "restartAfterDeadline":)" +
                        std::string(restart_after_deadline ? "true" : "false") + R"(}},
        "status":{"status":"HEALTHY","conditions":)" +
                        conditions + "}}"}));
  }

  // The Deployment as the store shows it, with meshop.io/stale-since = `record` ("" = none).
  void set_web(const std::string& record, const std::string& restart_patch = "") {
    rapidjson::Document d = json(web(generation_, restart_patch));
    if (!record.empty()) {
      auto& a = d.GetAllocator();
      rapidjson::Value ann(rapidjson::kObjectType);
      ann.AddMember("meshop.io/stale-since", rapidjson::Value(record.c_str(), a), a);
      d["metadata"].AddMember("annotations", ann, a);
    }
    deployments_.apply(std::move(d));
  }

  // The RestartsOverdue condition of status patch `i`; null when the patch writes none.
  const rapidjson::Value* overdue_in(std::size_t i) {
    patch_ = json(status_patches_.at(i));
    const rapidjson::Value* conds = api::find(patch_, "/status/conditions");
    if (conds == nullptr) return nullptr;
    for (const rapidjson::Value& c : conds->GetArray())
      if (api::string_at(c, {"type"}) == "RestartsOverdue") return &c;
    return nullptr;
  }

  static std::string record_patch(const std::string& value) {
    return R"({"metadata":{"annotations":{"meshop.io/stale-since":)" + value + "}}}";
  }

  std::vector<std::string> stale_patches_, status_patches_;
  rapidjson::Document patch_;
};

TEST_F(RestartsDeadline, OverdueTurnsTrueWithItsReasonAndBackToFalseOnceUpToDate) {
  auto r = reconciler();
  auto first = pass(*r);
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(first->plan.size(), 1u);
  EXPECT_EQ(first->plan[0].action, restart::Action::kDeferred) << first->plan[0].why;
  EXPECT_FALSE(first->plan[0].overdue);
  ASSERT_EQ(stale_patches_.size(), 1u);
  EXPECT_EQ(stale_patches_[0], record_patch(R"("2026-12-02T10:00:00Z RevisionChanged/canary")"));
  ASSERT_EQ(status_patches_.size(), 1u);
  EXPECT_EQ(overdue_in(0), nullptr) << "nothing overdue, nothing was: no condition";
  const std::string target_image = first->plan[0].plan.target_proxy_image;
  ASSERT_FALSE(target_image.empty());

  // A lagging store (no record yet), then the record: written once, not on every pass.
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(stale_patches_.size(), 1u) << "rewritten while the store lags";
  set_web("2026-12-02T10:00:00Z RevisionChanged/canary");
  now_ += std::chrono::minutes(30);
  auto half = pass(*r);
  ASSERT_TRUE(half.ok()) << half.message();
  EXPECT_EQ(stale_patches_.size(), 1u);
  EXPECT_TRUE(half->plan[0].stale_since_recorded);
  EXPECT_EQ(restart::rfc3339(half->plan[0].stale_since), "2026-12-02T10:00:00Z");
  EXPECT_FALSE(half->plan[0].overdue);

  // Past the deadline: the condition, naming the workload; not restarted (only reported).
  now_ += std::chrono::minutes(31);
  auto late = pass(*r);
  ASSERT_TRUE(late.ok()) << late.message();
  EXPECT_TRUE(late->plan[0].overdue);
  EXPECT_EQ(late->plan[0].action, restart::Action::kDeferred) << late->plan[0].why;
  EXPECT_EQ(restart_patches_, 0);
  EXPECT_EQ(stale_patches_.size(), 1u);
  const std::size_t with_true = status_patches_.size() - 1;
  const rapidjson::Value* c = overdue_in(with_true);
  ASSERT_NE(c, nullptr) << status_patches_.back();
  EXPECT_EQ(api::string_at(*c, {"status"}), "True");
  EXPECT_EQ(api::string_at(*c, {"reason"}), "StalePastMaxStaleness");
  EXPECT_EQ(api::string_at(*c, {"message"}),
            "1 workload stale past maxStaleness: Deployment/apps/web");
  EXPECT_EQ(api::string_at(*c, {"lastTransitionTime"}), restart::rfc3339(now_));
  EXPECT_EQ((*c)["observedGeneration"].GetInt64(), 2);
  // Another pass: nothing new to write.
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(status_patches_.size(), with_true + 1);
  EXPECT_EQ(stale_patches_.size(), 1u);

  // The apiserver holds the condition (beside another reconciler's); the workload's pods are
  // replaced (by a person) and match canary: False, the other condition kept, the record
  // removed once.
  set_iop(false, R"([{"type":"Reconciled","status":"True","reason":"Installed","message":""},
      {"type":"RestartsOverdue","status":"True","reason":"StalePastMaxStaleness",
       "message":"1 workload stale past maxStaleness: Deployment/apps/web",
       "lastTransitionTime":"2026-12-02T11:01:00Z"}])");
  set_pod("web-1-b", "canary", target_image);
  now_ += std::chrono::minutes(2);
  auto done = pass(*r);
  ASSERT_TRUE(done.ok()) << done.message();
  ASSERT_EQ(done->plan.size(), 1u);
  EXPECT_EQ(done->plan[0].action, restart::Action::kNone) << done->plan[0].why;
  ASSERT_EQ(status_patches_.size(), with_true + 2);
  c = overdue_in(with_true + 1);
  ASSERT_NE(c, nullptr) << status_patches_.back();
  EXPECT_EQ(api::string_at(*c, {"status"}), "False");
  EXPECT_EQ(api::string_at(*c, {"reason"}), "NoneOverdue");
  EXPECT_EQ(api::string_at(*c, {"message"}), "no workload is stale past maxStaleness");
  const rapidjson::Value& conds = patch_["status"]["conditions"];
  ASSERT_EQ(conds.Size(), 2u);
  EXPECT_EQ(api::string_at(conds[0], {"type"}), "Reconciled") << "another writer's, kept";
  ASSERT_EQ(stale_patches_.size(), 2u);
  EXPECT_EQ(stale_patches_[1], record_patch("null"));
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());  // the store still shows the record
  EXPECT_EQ(stale_patches_.size(), 2u) << "removed again while the store lags";
  set_web("");
  set_iop(false, R"([{"type":"RestartsOverdue","status":"False","reason":"NoneOverdue",
       "message":"no workload is stale past maxStaleness"}])");
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(stale_patches_.size(), 2u);
  EXPECT_EQ(status_patches_.size(), with_true + 2) << "False already on the object";

  // The same cause again later (the namespace moved away and back; the pods on default): a new
  // record from now, not overdue by the old episode's clock.
  set_pod("web-1-c", "default", "hub/proxyv2:1.0");
  now_ += std::chrono::hours(1);
  auto again = pass(*r);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_FALSE(again->plan[0].overdue);
  ASSERT_EQ(stale_patches_.size(), 3u);
  EXPECT_EQ(stale_patches_[2],
            record_patch("\"" + restart::rfc3339(now_) + " RevisionChanged/canary\""));
}

TEST_F(RestartsDeadline, PastTheDeadlineRestartsOutsideTheWindowWhenAsked) {
  set_iop(true, "[]");
  set_web("2026-12-02T10:00:00Z RevisionChanged/canary");
  auto r = reconciler();
  now_ += std::chrono::minutes(59);
  auto before = pass(*r);
  ASSERT_TRUE(before.ok()) << before.message();
  EXPECT_EQ(before->plan[0].action, restart::Action::kDeferred) << before->plan[0].why;
  EXPECT_EQ(restart_patches_, 0);
  EXPECT_TRUE(stale_patches_.empty()) << "the store's record is read, not rewritten";

  now_ += std::chrono::minutes(2);
  auto late = pass(*r);
  ASSERT_TRUE(late.ok()) << late.message();
  EXPECT_EQ(late->started, (std::vector<std::string>{"Deployment/apps/web"}));
  EXPECT_EQ(restart_patches_, 1);
  EXPECT_NE(last_restart_patch_.find("RevisionChanged/canary"), std::string::npos);
  EXPECT_NE(late->plan[0].why.find("past maxStaleness 1h: restarted outside the maintenance "
                                   "window"),
            std::string::npos)
      << late->plan[0].why;
  ASSERT_FALSE(status_patches_.empty());
  const rapidjson::Value* c = overdue_in(status_patches_.size() - 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(api::string_at(*c, {"status"}), "True");
  EXPECT_TRUE(stale_patches_.empty());
}

std::string workload_key_of(const restart::PlanEntry& e) {
  return e.plan.kind + "/" + e.plan.ns + "/" + e.plan.name;
}

// Everything a plan entry says, for comparing plans.
std::vector<std::string> describe(const std::vector<restart::PlanEntry>& plan) {
  std::vector<std::string> out;
  for (const restart::PlanEntry& e : plan) {
    std::string line = workload_key_of(e) + "|" + std::string(restart::action_name(e.action)) +
                       "|" + e.why + "|" + e.cause + "|" + e.policy_source + "|" +
                       std::string(restart::verdict_name(e.plan.verdict)) + "|" + e.plan.detail +
                       "|" + e.plan.current_revision + "|" + e.plan.target_revision + "|" +
                       e.plan.target_proxy_image + "|" + e.target_version;
    for (const std::string& p : e.plan.stale_pods)
      line += "|" + p;
    out.push_back(line);
  }
  return out;
}

// Issue 13: a pass over an unchanged cluster reuses the previous pass's plans (the plan memo)
// and engines; what it plans must be what a new reconciler, remembering nothing, plans.
TEST_F(RestartsPass, AWarmPassOverAnUnchangedClusterPlansAsAColdOne) {
  // Besides web (stale: its namespace moved to canary): api, up to date on canary, and a bare
  // pod of no workload.
  deployments_.apply(json(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{
      "namespace":"apps","name":"api","uid":"api-uid","generation":1,"resourceVersion":"1"},
      "spec":{"replicas":1,"template":{"metadata":{},"spec":{"containers":[{"name":"app",
      "image":"app:1"}]}}},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,
      "availableReplicas":1}})"));
  replica_sets_.apply(json(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{
      "namespace":"apps","name":"api-1","uid":"api-rs-uid","ownerReferences":[{"apiVersion":
      "apps/v1","kind":"Deployment","name":"api","uid":"api-uid","controller":true}]},"spec":{}})"));
  auto r = reconciler();
  auto cold = pass(*r, false);
  ASSERT_TRUE(cold.ok()) << cold.message();
  ASSERT_EQ(cold->plan.size(), 2u);
  ASSERT_FALSE(cold->plan[1].plan.target_proxy_image.empty()) << "web is stale";
  for (int i = 0; i < 3; ++i) {
    rapidjson::Document pod = json(restart::pod("api-1-" + std::to_string(i), "canary",
                                                cold->plan[1].plan.target_proxy_image));
    auto& a = pod.GetAllocator();
    pod.AddMember("kind", "Pod", a);
    pod["metadata"].AddMember("namespace", "apps", a);
    pod["metadata"].AddMember("uid", rapidjson::Value(("api-p" + std::to_string(i)).c_str(), a), a);
    pod["metadata"].AddMember("ownerReferences",
                              rapidjson::Value().CopyFrom(json(R"([{"apiVersion":"apps/v1",
        "kind":"ReplicaSet","name":"api-1","uid":"api-rs-uid","controller":true}])"),
                                                          a),
                              a);
    pods_.apply(std::move(pod));
  }
  rapidjson::Document bare = json(restart::pod("bare", ""));
  bare.AddMember("kind", "Pod", bare.GetAllocator());
  bare["metadata"].AddMember("namespace", "apps", bare.GetAllocator());
  pods_.apply(std::move(bare));

  auto first = pass(*r, false);
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(first->plan.size(), 3u);
  EXPECT_EQ(first->plan[0].action, restart::Action::kNone) << first->plan[0].why;     // api
  EXPECT_EQ(first->plan[1].action, restart::Action::kRestart) << first->plan[1].why;  // web
  EXPECT_EQ(first->plan[2].action, restart::Action::kManual) << first->plan[2].why;   // bare
  auto warm = pass(*r, false);
  ASSERT_TRUE(warm.ok()) << warm.message();
  EXPECT_EQ(warm->engines, first->engines) << "the engines are reused, not rebuilt";
  // Another reconciler (told the bundled default version, as the first found it).
  auto fresh = reconciler(manifest::default_chart_set().version);
  auto cold_again = pass(*fresh, false);
  ASSERT_TRUE(cold_again.ok()) << cold_again.message();
  EXPECT_EQ(describe(warm->plan), describe(first->plan));
  EXPECT_EQ(describe(warm->plan), describe(cold_again->plan));

  // A pod changes: the warm pass sees it as a cold one does.
  set_pod("web-1-a", "canary", first->plan[1].plan.target_proxy_image);
  auto changed = pass(*r, false);
  ASSERT_TRUE(changed.ok()) << changed.message();
  auto changed_cold = pass(*reconciler(manifest::default_chart_set().version), false);
  ASSERT_TRUE(changed_cold.ok()) << changed_cold.message();
  EXPECT_EQ(describe(changed->plan), describe(changed_cold->plan));
  EXPECT_NE(describe(changed->plan), describe(first->plan));
}

// The pass's decisions through the writer seam (kube::Writer): a recording fake instead of an
// apiserver, the stores of RestartsPass.
class RestartsSeam : public RestartsPass {
 protected:
  std::unique_ptr<RestartsReconciler> seamed() {
    RestartsConfig c = config();
    c.cache = &cache_;
    return std::make_unique<RestartsReconciler>(c, writer_, nullptr, nullptr,
                                                [this] { return now_; });
  }
  // The restart patches sent to Deployment `name`.
  std::vector<test_support::RecordingWriter::Call> restarts_of(const std::string& name) const {
    std::vector<test_support::RecordingWriter::Call> out;
    for (const auto& c : writer_->of("patch"))
      if (c.resource == "deployments" && c.name == name &&
          c.patch_type == kube::PatchType::kStrategicMerge)
        out.push_back(c);
    return out;
  }

  std::shared_ptr<test_support::RecordingWriter> writer_ =
      std::make_shared<test_support::RecordingWriter>();
};

TEST_F(RestartsSeam, ARestartSendsKubectlsPatchAtTheResourceVersionReadAndSaysSo) {
  writer_->answer =
      [](const test_support::RecordingWriter::Call& c) -> kube::Result<rapidjson::Document> {
    if (c.resource == "deployments") return json(web(2, c.body));
    return test_support::RecordingWriter::ok(c);
  };
  auto r = seamed();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->started, (std::vector<std::string>{"Deployment/apps/web"}));
  auto patches = restarts_of("web");
  ASSERT_EQ(patches.size(), 1u);
  rapidjson::Document body = json(patches[0].body);
  EXPECT_EQ(api::string_at(body, {"metadata", "resourceVersion"}), "1");
  EXPECT_FALSE(api::string_at(body, {"spec", "template", "metadata", "annotations",
                                     restart::kRestartedAtAnnotation})
                   .empty());
  EXPECT_EQ(writer_->event_reasons(), (std::vector<std::string>{"Restarted"}));
  EXPECT_NE(writer_->events[0].note.find("RevisionChanged/canary"), std::string::npos)
      << writer_->events[0].note;
  // status.restarts of the IstioOperator: one InProgress.
  std::vector<test_support::RecordingWriter::Call> status;
  for (const auto& c : writer_->of("patch"))
    if (c.resource == "istiooperators" && c.subresource == "status") status.push_back(c);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(json(status[0].body)["status"]["restarts"]["inProgress"].GetInt(), 1);
}

// 409 on the restart patch: the store's copy was stale (another writer restarted it); not an
// error, nothing started, no Event; the next pass plans again and tries again.
TEST_F(RestartsSeam, AConflictOnTheRestartPatchStartsNothingAndIsNoError) {
  writer_->answer =
      [](const test_support::RecordingWriter::Call& c) -> kube::Result<rapidjson::Document> {
    if (c.resource == "deployments")
      return test_support::status_error(409, "Conflict", "the object has been modified");
    return test_support::RecordingWriter::ok(c);
  };
  auto r = seamed();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->started.empty());
  EXPECT_EQ(restarts_of("web").size(), 1u);
  EXPECT_TRUE(writer_->events.empty());
  now_ += std::chrono::seconds(2);
  ASSERT_TRUE(pass(*r).ok());
  EXPECT_EQ(restarts_of("web").size(), 2u) << "tried again on the next pass";
}

// Issue 13 item 5: the pass's error keeps the kind the apiserver gave it, so the controller's
// error policy (errors.hpp) chooses the requeue: Forbidden slow, 429 after Retry-After.
TEST_F(RestartsSeam, AFailedWriteKeepsItsKind) {
  writer_->answer =
      [](const test_support::RecordingWriter::Call& c) -> kube::Result<rapidjson::Document> {
    if (c.resource == "deployments")
      return test_support::status_error(403, "Forbidden", "deployments.apps \"web\" is forbidden");
    return test_support::RecordingWriter::ok(c);
  };
  auto r = seamed();
  auto report = pass(*r);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(report.error().forbidden());
  EXPECT_NE(report.message().find("restarting Deployment/apps/web: "), std::string::npos)
      << report.message();

  writer_->answer =
      [](const test_support::RecordingWriter::Call& c) -> kube::Result<rapidjson::Document> {
    if (c.resource == "deployments") {
      kube::Error e = test_support::status_error(429, "TooManyRequests", "slow down");
      e.retry_after = std::chrono::seconds(7);
      return e;
    }
    return test_support::RecordingWriter::ok(c);
  };
  auto throttled = pass(*r);
  ASSERT_FALSE(throttled.ok());
  ASSERT_TRUE(throttled.error().retry_after.has_value());
  EXPECT_EQ(*throttled.error().retry_after, std::chrono::seconds(7));
}

// failurePolicy Pause (the default): a restart whose rollout failed stops every further start.
TEST_F(RestartsSeam, AFailedRolloutPausesTheOtherRestarts) {
  // web was restarted for the cause 10 minutes ago (past rolloutTimeout 2m) and its pods still
  // run the old revision; api, stale too, waits.
  deployments_.apply(json(web(
      2, restart::restart_patch("RevisionChanged/canary", now_ - std::chrono::minutes(10), ""))));
  deployments_.apply(json(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{
      "namespace":"apps","name":"api","uid":"api-uid","generation":1,"resourceVersion":"1"},
      "spec":{"replicas":1,"template":{"metadata":{},"spec":{"containers":[{"name":"app",
      "image":"app:1"}]}}},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,
      "availableReplicas":1}})"));
  replica_sets_.apply(json(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{
      "namespace":"apps","name":"api-1","uid":"api-rs-uid","ownerReferences":[{"apiVersion":
      "apps/v1","kind":"Deployment","name":"api","uid":"api-uid","controller":true}]},"spec":{}})"));
  rapidjson::Document pod = json(restart::pod("api-1-a", "default"));
  auto& a = pod.GetAllocator();
  pod.AddMember("kind", "Pod", a);
  pod["metadata"].AddMember("namespace", "apps", a);
  pod["metadata"].AddMember("uid", "api-pod", a);
  pod["metadata"].AddMember("ownerReferences",
                            rapidjson::Value().CopyFrom(json(R"([{"apiVersion":"apps/v1",
      "kind":"ReplicaSet","name":"api-1","uid":"api-rs-uid","controller":true}])"),
                                                        a),
                            a);
  pods_.apply(std::move(pod));
  auto r = seamed();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->failed.size(), 1u);
  EXPECT_EQ(report->failed[0].key, "Deployment/apps/web");
  EXPECT_TRUE(report->paused);
  EXPECT_NE(report->pause_reason.find("failurePolicy Pause"), std::string::npos)
      << report->pause_reason;
  EXPECT_TRUE(report->started.empty());
  EXPECT_TRUE(restarts_of("api").empty());
  EXPECT_TRUE(restarts_of("web").empty());
  auto reasons = writer_->event_reasons();
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "RestartFailed"), reasons.end());
}

// Strategy Evict: a PodDisruptionBudget's refusal (429 naming it) makes the entry Deferred,
// says which budget, and is not retried before the backoff (2 s, doubling).
TEST_F(RestartsSeam, AnEvictionABudgetRefusesIsDeferredAndBacksOff) {
  iops_.replace(docs({R"({"apiVersion":"install.istio.io/v1alpha1","kind":"IstioOperator",
      "metadata":{"namespace":"istio-system","name":"canary"},
      "spec":{"revision":"canary","restarts":{"mode":"Auto","strategy":"Evict",
        "maxConcurrent":1,"minInterval":"0s","rolloutTimeout":"2m"}},
      "status":{"status":"HEALTHY"}})"}));
  rapidjson::Document w = json(web(1, ""));
  w["spec"].AddMember("strategy",
                      rapidjson::Value().CopyFrom(json(R"({"rollingUpdate":{"maxUnavailable":1}})"),
                                                  w.GetAllocator()),
                      w.GetAllocator());
  deployments_.apply(std::move(w));
  set_pod("web-1-a", "default", "hub/proxyv2:1.0");
  {
    // The store keeps a record (api/record.hpp): the pod it stands for, with a status.
    rapidjson::Document p = api::from_record(*pods_.get("apps/web-1-a"));
    p.AddMember("status",
                rapidjson::Value().CopyFrom(
                    json(R"({"conditions":[{"type":"Ready","status":"True"}]})"), p.GetAllocator()),
                p.GetAllocator());
    pods_.apply(std::move(p));
  }
  writer_->answer =
      [](const test_support::RecordingWriter::Call& c) -> kube::Result<rapidjson::Document> {
    if (c.verb == "evict")
      return test_support::status_error(
          429, "TooManyRequests",
          "Cannot evict pod as it would violate the pod's disruption budget.: The disruption "
          "budget web-pdb needs 1 healthy pods and has 1 currently");
    return test_support::RecordingWriter::ok(c);
  };
  auto r = seamed();
  auto report = pass(*r);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(writer_->of("evict").size(), 1u);
  EXPECT_EQ(writer_->of("evict")[0].name, "web-1-a");
  EXPECT_FALSE(writer_->of("evict")[0].dry_run);
  ASSERT_EQ(report->plan.size(), 1u);
  EXPECT_EQ(report->plan[0].action, restart::Action::kDeferred);
  EXPECT_NE(report->plan[0].why.find("PodDisruptionBudget web-pdb refuses the eviction"),
            std::string::npos)
      << report->plan[0].why;
  EXPECT_TRUE(report->started.empty());

  now_ += std::chrono::seconds(1);  // within the backoff: not asked again
  auto again = pass(*r);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(writer_->of("evict").size(), 1u);
  EXPECT_EQ(again->plan[0].action, restart::Action::kDeferred);

  now_ += std::chrono::seconds(2);  // past it: asked again, and evicted
  writer_->answer = test_support::RecordingWriter::ok;
  auto later = pass(*r);
  ASSERT_TRUE(later.ok()) << later.message();
  EXPECT_EQ(writer_->of("evict").size(), 2u);
  EXPECT_EQ(later->pods_evicted, (std::vector<std::string>{"apps/web-1-a"}));
  EXPECT_EQ(later->started, (std::vector<std::string>{"Deployment/apps/web"}));
}

// A pass that does not execute asks the apiserver whether each next eviction would go
// (dry-run) and writes nothing else.
TEST_F(RestartsSeam, APlanOnlyPassWritesNothing) {
  auto r = seamed();
  auto report = pass(*r, false);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->plan[0].action, restart::Action::kRestart);
  EXPECT_TRUE(writer_->calls.empty());
  EXPECT_TRUE(writer_->events.empty());
}

}  // namespace
}  // namespace meshop::reconcilers
