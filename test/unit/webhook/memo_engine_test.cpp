// Memoized answers with the real injection engine (meshop_webhook): a ConfigMap change through
// ConfigMapSource and the RevisionStore invalidates them, and configurations whose templates
// call clock or random functions are never memoized.
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/template/functions.hpp"
#include "operator/webhook/admission.hpp"
#include "operator/webhook/configmap_source.hpp"
#include "operator/webhook/injection_cache.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::webhook {
namespace {

rapidjson::Document configmap(const std::string& name,
                              const std::vector<std::pair<std::string, std::string>>& data,
                              const std::string& rv) {
  rapidjson::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  rapidjson::Value meta(rapidjson::kObjectType), values(rapidjson::kObjectType);
  meta.AddMember("name", rapidjson::Value(name.c_str(), a), a);
  meta.AddMember("namespace", "istio-system", a);
  meta.AddMember("resourceVersion", rapidjson::Value(rv.c_str(), a), a);
  for (const auto& [k, v] : data)
    values.AddMember(rapidjson::Value(k.c_str(), a), rapidjson::Value(v.c_str(), a), a);
  d.AddMember("metadata", meta, a);
  d.AddMember("data", values, a);
  return d;
}

std::string review(const std::string& uid, const std::string& ns = "apps") {
  return R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":")" +
         uid + R"(","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":")" + ns +
         R"(","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-5d9c-","labels":{"app":"web","pod-template-hash":"5d9c"},"annotations":{"sidecar.istio.io/inject":"true"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c","uid":"r1","controller":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.25","ports":[{"containerPort":80}],"readinessProbe":{"httpGet":{"path":"/","port":80}}}]}}}})";
}

std::string patch_of(const HttpReply& reply) {
  auto doc = api::parse_json(reply.body);
  if (!doc) return "<not json>";
  return api::string_at(*doc, {"response", "patch"});
}

class MemoizedEngineTest : public ::testing::Test {
 protected:
  MemoizedEngineTest()
      : metrics(registry),
        engine(default_engine()),
        source(
            ioc.get_executor(), configmaps, revisions, engine, &metrics,
            [](const rapidjson::Value&, const std::string&) {},
            [] {
              inject::SnapshotSources d;
              d.native_sidecars = inject::NativeSidecars::kDisabled;
              return d;
            }()) {
    source.start();
  }
  void run() {
    ioc.restart();
    ioc.poll();
  }
  void apply_injector(const std::string& config, const std::string& rv) {
    configmaps.apply(
        configmap("istio-sidecar-injector",
                  {{"config", config}, {"values", test_support::chart_set_sources().values}}, rv));
    run();
  }
  HttpReply post(const std::string& body, InjectionCache* with) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/inject";
    r.content_type = "application/json";
    r.body = body;
    return serve(AdmissionContext{revisions, engine, &metrics, "default", with}, r);
  }
  double hits() { return metrics.injection_cache.with({"hit"}).Value(); }

  boost::asio::io_context ioc;
  metrics::Registry registry;
  WebhookMetrics metrics;
  Engine engine;
  runtime::Store configmaps;
  RevisionStore revisions;
  ConfigMapSource source;
  InjectionCache cache;
};

TEST_F(MemoizedEngineTest, AConfigMapChangeInvalidatesMemoizedAnswers) {
  apply_injector(test_support::chart_set_sources().config, "1");
  ASSERT_TRUE(revisions.get("default")) << revisions.last_error("default");
  auto fresh = post(review("u1"), nullptr);
  ASSERT_NE(patch_of(fresh), "") << fresh.body;
  auto first = post(review("u1"), &cache);
  auto second = post(review("u1"), &cache);
  EXPECT_EQ(first.body, fresh.body);
  EXPECT_EQ(second.body, fresh.body);
  EXPECT_EQ(hits(), 1);

  // The same ConfigMap with one more injected annotation: the next answer has it.
  auto changed = api::yaml_to_json(test_support::chart_set_sources().config);
  ASSERT_TRUE(changed.ok()) << changed.message();
  auto& alloc = changed->GetAllocator();
  changed->RemoveMember("injectedAnnotations");
  rapidjson::Value injected(rapidjson::kObjectType);
  injected.AddMember("example.com/changed", "yes", alloc);
  changed->AddMember("injectedAnnotations", injected, alloc);
  apply_injector(api::json_to_yaml(*changed), "2");
  auto after = post(review("u1"), &cache);
  EXPECT_EQ(hits(), 1);
  EXPECT_NE(patch_of(after), patch_of(first));
  EXPECT_EQ(after.body, post(review("u1"), nullptr).body);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_EQ(post(review("u2"), &cache).body.find("\"uid\":\"u2\"") != std::string::npos, true);
  EXPECT_EQ(hits(), 2);
}

TEST_F(MemoizedEngineTest, TheChartSetsTemplatesAreMemoizable) {
  apply_injector(test_support::chart_set_sources().config, "1");
  auto config = revisions.get("default");
  ASSERT_TRUE(config);
  EXPECT_TRUE(engine.memoizable(*config));
  EXPECT_TRUE(config->snapshot->deterministic);
}

TEST_F(MemoizedEngineTest, TemplatesCallingRandomFunctionsAreNeverMemoized) {
  apply_injector(
      "policy: enabled\ntemplates:\n  sidecar: |\n    metadata:\n      annotations:\n"
      "        example.com/token: {{ randAlphaNum 16 | quote }}\n",
      "1");
  auto config = revisions.get("default");
  ASSERT_TRUE(config) << revisions.last_error("default");
  EXPECT_FALSE(engine.memoizable(*config));
  auto a = post(review("u1"), &cache);
  auto b = post(review("u1"), &cache);
  ASSERT_NE(patch_of(a), "") << a.body;
  EXPECT_NE(patch_of(a), patch_of(b));  // two random tokens
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(NondeterministicTemplates, OnlyCallsOfClockRandomOrDnsFunctionsCount) {
  using inject::template_may_call_nondeterministic;
  EXPECT_TRUE(template_may_call_nondeterministic("a: {{ now | date \"2006\" }}"));
  EXPECT_TRUE(template_may_call_nondeterministic("{{- uuidv4 -}}"));
  EXPECT_TRUE(template_may_call_nondeterministic("{{ (getHostByName \"x\") }}"));
  EXPECT_TRUE(template_may_call_nondeterministic("{{ list 1 2 | shuffle }}"));
  EXPECT_TRUE(template_may_call_nondeterministic("{{ if true }}{{ randInt 1 9 }}{{ end }}"));
  EXPECT_FALSE(template_may_call_nondeterministic("now: date, shuffle and uuidv4 in plain text"));
  EXPECT_FALSE(template_may_call_nondeterministic("{{ .Values.now }} {{ $date := 1 }}{{ $date }}"));
  EXPECT_FALSE(template_may_call_nondeterministic("{{ \"now\" }} {{ `date` }} {{/* uuidv4 */}}"));
  EXPECT_FALSE(template_may_call_nondeterministic("{{ toDate \"2006\" \"2024\" | unixEpoch }}"));
  EXPECT_FALSE(template_may_call_nondeterministic("{{ \"}}\" }} now"));
  for (std::string_view name : inject::nondeterministic_functions()) {
    EXPECT_TRUE(template_may_call_nondeterministic("{{ " + std::string(name) + " }}")) << name;
    // A renamed or removed function would leave a stale name here.
    EXPECT_NE(template_engine::default_functions().find(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace meshop::webhook
