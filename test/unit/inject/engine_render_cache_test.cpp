// The snapshot's parse memo (RenderCache) never changes an answer: pods injected one after the
// other through one snapshot (the memo warm, its parses re-read for renderings that differ in a
// few values) get byte for byte the patch and pod a fresh snapshot (an empty memo) gives.
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

// A pod of workload `app` whose rendering differs from the others' in values only (names,
// labels, ports), in structure (a second container, annotations that add lines), or not at all.
std::string pod_json(const std::string& name, const std::string& app, int port, bool second,
                     const std::string& annotations) {
  std::string containers = R"({"name":")" + app + R"(","image":"example.com/)" + app +
                           R"(:1","ports":[{"name":"http","containerPort":)" +
                           std::to_string(port) + "}]}";
  if (second) containers += R"(,{"name":"helper","image":"example.com/helper:1"})";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":")" + app + R"(","version":"v1"},"annotations":{)" + annotations +
         R"(}},"spec":{"containers":[)" + containers + "]}}";
}

TEST(EngineRenderCache, MemoizedParsesGiveTheAnswersOfAFreshSnapshot) {
  auto shared = fresh_snapshot();
  ASSERT_TRUE(shared);
  struct Case {
    std::string ns, pod;
  };
  std::vector<Case> cases;
  for (std::string ns : {"default", "team-a"}) {
    for (int i = 0; i < 3; ++i) {
      cases.push_back({ns, pod_json("hello-" + std::to_string(i), "hello", 80, false, "")});
      cases.push_back({ns, pod_json("web-" + std::to_string(i), "web-" + std::to_string(i),
                                    8080 + i, false, "")});
      cases.push_back({ns, pod_json("two-" + std::to_string(i), "two", 9000 + i, true, "")});
      cases.push_back(
          {ns, pod_json("ann-" + std::to_string(i), "ann", 80, false,
                        R"("sidecar.istio.io/proxyCPU":")" + std::to_string(100 + i) + R"(m")")});
      cases.push_back({ns, pod_json("hello-0", "hello", 80, false, "")});  // the same pod again
      cases.push_back(
          {ns,
           pod_json("q-" + std::to_string(i), i == 1 ? "yes" : "0" + std::to_string(i), 80, false,
                    R"("proxy.istio.io/config":"concurrency: )" + std::to_string(i) + R"(")")});
    }
  }
  for (const Case& c : cases) {
    auto pod = api::parse_json(c.pod);
    ASSERT_TRUE(pod.ok()) << pod.message();
    PodRequest req;
    req.pod = &*pod;
    req.ns = c.ns;
    InjectResult warm = inject(*shared, req);
    auto cold_snapshot = fresh_snapshot();
    ASSERT_TRUE(cold_snapshot);
    InjectResult cold = inject(*cold_snapshot, req);
    ASSERT_EQ(warm.outcome, cold.outcome) << c.pod;
    EXPECT_EQ(warm.message, cold.message) << c.pod;
    EXPECT_EQ(warm.patch, cold.patch) << c.ns << " " << c.pod;
    EXPECT_EQ(api::to_json(warm.pod), api::to_json(cold.pod)) << c.pod;
  }
  // The memo was used both ways, so the comparison above covered them.
  auto st = shared->render_cache.stats();
  EXPECT_GT(st.hits, 0u);
  EXPECT_GT(st.rereads, 0u);
}

}  // namespace
}  // namespace meshop::inject
