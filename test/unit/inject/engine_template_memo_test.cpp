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

std::string pod_json(const std::string& name, const std::string& annotations) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":"memo"},"annotations":{)" + annotations +
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

}  // namespace
}  // namespace meshop::inject
