// The snapshot's template memos (template_engine::ConstantMemo over .Values, .MeshConfig ... and,
// for pods with the default proxy, .ProxyConfig/.ProxyImage/.ProxyInitImage) never change an
// answer: pods with and without their own proxy config or image type, injected one after the
// other through one snapshot, get byte for byte what a fresh snapshot (empty memos) gives.
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/snapshot.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::inject {
namespace {

std::shared_ptr<const Snapshot> fresh_snapshot() {
  auto s = build_snapshot(test_support::chart_set_sources());
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
  return s.ok() ? *s : nullptr;
}

std::string pod_json(const std::string& name, const std::string& annotations,
                     const std::string& labels = R"("app":"memo")") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","labels":{)" +
         labels + R"(},"annotations":{)" + annotations +
         R"(}},"spec":{"containers":[{"name":"app","image":"example.com/app:1",)"
         R"("ports":[{"containerPort":8080}]}]}})";
}

TEST(EngineTemplateMemo, PodsWithTheirOwnProxyConfigOrImagesGetTheAnswersOfAFreshSnapshot) {
  auto shared = fresh_snapshot();
  ASSERT_TRUE(shared);
  const std::vector<std::string> annotations = {
      "",
      R"("proxy.istio.io/config":"holdApplicationUntilProxyStarts: true")",
      "",
      R"("sidecar.istio.io/proxyImageType":"distroless")",
      R"("proxy.istio.io/config":"proxyMetadata:\n  FOO: bar\nconcurrency: 3")",
      "",
      R"("proxy.istio.io/config":"image:\n  imageType: debug")",
      R"("sidecar.istio.io/interceptionMode":"TPROXY")",
      "",
  };
  int i = 0;
  for (const std::string& a : annotations) {
    auto pod = api::parse_json(pod_json("memo-" + std::to_string(i++), a));
    ASSERT_TRUE(pod.ok()) << pod.message();
    PodRequest req;
    req.pod = &*pod;
    req.ns = "default";
    InjectResult warm = inject(*shared, req);
    auto cold_snapshot = fresh_snapshot();
    ASSERT_TRUE(cold_snapshot);
    InjectResult cold = inject(*cold_snapshot, req);
    ASSERT_EQ(warm.outcome, Outcome::kInjected) << a << ": " << warm.message;
    ASSERT_EQ(warm.outcome, cold.outcome) << a;
    EXPECT_EQ(warm.patch, cold.patch) << a;
    EXPECT_EQ(api::to_json(warm.pod), api::to_json(cold.pod)) << a;
  }
  // Both memos of the sidecar template were filled, so the comparisons above read them; the
  // default-proxy one knows more constants (.ProxyConfig ...).
  const auto& memos = shared->template_memos.at("sidecar");
  ASSERT_TRUE(memos.any_pod->enabled());
  EXPECT_GT(memos.any_pod->filled(), 0u);
  EXPECT_GT(memos.default_proxy->filled(), 0u);
  EXPECT_GT(memos.default_proxy->constant_expressions(), memos.any_pod->constant_expressions());
}

// The memos also remember, for the pods without them, what the templates' reads of single
// annotations and labels (`annotation .ObjectMeta "k" d`, `isset`, `index`) give: pods with and
// without such keys, one after the other, get what a fresh snapshot gives.
TEST(EngineTemplateMemo,
     PodsWithTheAnnotationsAndLabelsTheTemplatesReadGetTheAnswersOfAFreshSnapshot) {
  auto shared = fresh_snapshot();
  ASSERT_TRUE(shared);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", R"("app":"memo")"},
      {R"("sidecar.istio.io/proxyCPU":"200m","sidecar.istio.io/proxyMemoryLimit":"1Gi")",
       R"("app":"memo")"},
      {"", R"("app":"memo","version":"v2","security.istio.io/tlsMode":"disabled")"},
      {R"("traffic.sidecar.istio.io/excludeOutboundPorts":"53","sidecar.istio.io/logLevel":"debug")",
       ""},
      {"", R"("service.istio.io/canonical-name":"canon","app.kubernetes.io/version":"7")"},
      {R"("status.sidecar.istio.io/port":"0","readiness.status.sidecar.istio.io/periodSeconds":"9")",
       R"("app":"memo")"},
      {R"("sidecar.istio.io/proxyImage":"example.com/proxy:1","kubectl.kubernetes.io/default-container":"app")",
       R"("app":"memo")"},
      {R"("sidecar.istio.io/userVolumeMount":"{\"v\":{\"mountPath\":\"/v\"}}","sidecar.istio.io/userVolume":"{\"v\":{\"emptyDir\":{}}}")",
       R"("app":"memo")"},
      {R"("traffic.sidecar.istio.io/kubevirtInterfaces":"net1","sidecar.istio.io/interceptionMode":"NONE")",
       ""},
      {"", R"("app":"memo")"},
  };
  int i = 0;
  for (const auto& [a, l] : cases) {
    auto pod = api::parse_json(pod_json("keyed-" + std::to_string(i++), a, l));
    ASSERT_TRUE(pod.ok()) << pod.message() << " " << a << " " << l;
    PodRequest req;
    req.pod = &*pod;
    req.ns = "default";
    InjectResult warm = inject(*shared, req);
    auto cold_snapshot = fresh_snapshot();
    ASSERT_TRUE(cold_snapshot);
    InjectResult cold = inject(*cold_snapshot, req);
    ASSERT_EQ(warm.outcome, cold.outcome) << a << " " << l << ": " << warm.message;
    EXPECT_EQ(warm.message, cold.message) << a << " " << l;
    EXPECT_EQ(warm.patch, cold.patch) << a << " " << l;
    EXPECT_EQ(api::to_json(warm.pod), api::to_json(cold.pod)) << a << " " << l;
  }
}

}  // namespace
}  // namespace meshop::inject
