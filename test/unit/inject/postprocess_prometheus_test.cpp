// apply_prometheus_merge(): upstream's applyPrometheusMerge and applySecurePrometheusAnnotation
// (cases after webhook_test.go's, plus the goldens' exact env values).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"
#include "postprocess_test_support.hpp"

namespace meshop::inject {
namespace {

using testing::FakeMesh;
using testing::parse;

// A pod with the given annotations (a JSON object text) and containers app + istio-proxy.
api::Document pod(std::string_view annotations, std::string_view proxy_env = "[]") {
  return parse(std::string(R"({"metadata":{"annotations":)") + std::string(annotations) +
               R"(},"spec":{"containers":[{"name":"app"},{"name":"istio-proxy","env":)" +
               std::string(proxy_env) + "}]}}");
}

const rapidjson::Value& annotations(const api::Document& p) {
  return *api::find(p, "/metadata/annotations");
}

std::string proxy_env(const api::Document& p, std::string_view name) {
  const rapidjson::Value* env = api::find(p, "/spec/containers/1/env");
  if (env == nullptr) return "<no env>";
  for (const auto& v : env->GetArray()) {
    if (api::string_at(v, {"name"}) == name) return api::string_at(v, {"value"});
  }
  return "<absent>";
}

const char* kMerged = R"({"prometheus.io/port":"15020","prometheus.io/path":"/stats/prometheus",)"
                      R"("prometheus.io/scrape":"true"})";

TEST(PostprocessPrometheus, MovesAppAnnotationsIntoProxyEnvAndPointsAtAgent) {
  auto p = pod(R"({"prometheus.io/scrape":"true","prometheus.io/port":"8080",)"
               R"("prometheus.io/path":"/m?a&b<c>","other":"x"})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"),
            R"({"scrape":"true","path":"/m?a\u0026b\u003cc\u003e","port":"8080"})");
  auto want =
      parse(R"({"other":"x","prometheus.io/port":"15020","prometheus.io/path":"/stats/prometheus",)"
            R"("prometheus.io/scrape":"true"})");
  EXPECT_TRUE(api::json_equal(annotations(p), want)) << api::to_json(annotations(p));
}

TEST(PostprocessPrometheus, EverySpellingPrometheusSanitizesIsCleared) {
  auto p = pod(R"({"prometheus.io.port":"8080","prometheus-io/path":"/x",)"
               R"("prometheus.istio.io/scrape-targets":"9100"})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_TRUE(api::json_equal(annotations(p), parse(kMerged))) << api::to_json(annotations(p));
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"),
            R"({"scrape":"","path":"/metrics","port":"9100",)"
            R"("targets":[{"port":"9100","path":"/metrics"}]})");
}

TEST(PostprocessPrometheus, PodWithoutPrometheusAnnotationsGetsAgentAnnotationsOnly) {
  auto p = parse(R"({"spec":{"containers":[{"name":"app"},{"name":"istio-proxy"}]}})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_TRUE(api::json_equal(annotations(p), parse(kMerged)));
  EXPECT_EQ(api::find(p, "/spec/containers/1/env"), nullptr);
}

TEST(PostprocessPrometheus, ScrapeFalseInAnySpellingLeavesPodAlone) {
  for (const char* key : {"prometheus.io/scrape", "prometheus.io.scrape", "prometheus-io/scrape"}) {
    std::string ann = std::string(R"({")") + key + R"(":"false"})";
    auto p = pod(ann);
    ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
    EXPECT_TRUE(api::json_equal(annotations(p), parse(ann))) << key;
    EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"), "<absent>");
  }
  // A scrape value that is not a bool does not disable merging.
  auto p = pod(R"({"prometheus.io/scrape":"nope"})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"),
            R"({"scrape":"nope","path":"","port":""})");
}

TEST(PostprocessPrometheus, MergeEnablementAnnotationBeatsMeshSetting) {
  struct Case {
    bool mesh;
    const char* annotation;  // prometheus.istio.io/merge-metrics, or nullptr
    bool merged;
  };
  for (const Case& c :
       {Case{true, nullptr, true}, Case{false, nullptr, false}, Case{false, "true", true},
        Case{true, "false", false}, Case{false, "1", true}, Case{true, "invalid", true},
        Case{false, "invalid", false}}) {
    std::string ann =
        c.annotation == nullptr
            ? "{}"
            : std::string(R"({"prometheus.istio.io/merge-metrics":")") + c.annotation + "\"}";
    auto p = pod(ann);
    std::vector<std::string> warnings;
    ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(c.mesh), 15020, &warnings).ok());
    EXPECT_EQ(api::find(p, "/metadata/annotations/prometheus.io~1port") != nullptr, c.merged)
        << "mesh " << c.mesh << " annotation " << (c.annotation ? c.annotation : "-");
    EXPECT_EQ(warnings.size(), std::string_view(c.annotation ? c.annotation : "") == "invalid");
  }
}

TEST(PostprocessPrometheus, PortAlreadyAtAgentIsLeftAsIs) {
  const char* ann = R"({"prometheus.io/scrape":"true","prometheus.io/port":"15020"})";
  auto p = pod(ann);
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_TRUE(api::json_equal(annotations(p), parse(ann)));
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"), "<absent>");
}

TEST(PostprocessPrometheus, ScrapeTargetsGiveLegacyPortAndPathAsInGolden) {
  // hello-multiport-metrics.yaml(.injected) upstream.
  auto p = pod(R"({"prometheus.io/scrape":"true",)"
               R"("prometheus.istio.io/scrape-targets":"8080:/metrics,9100:/custom-metrics"})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"),
            R"({"scrape":"true","path":"/metrics","port":"8080","targets":[{"port":"8080",)"
            R"("path":"/metrics"},{"port":"9100","path":"/custom-metrics"}]})");
  EXPECT_TRUE(api::json_equal(annotations(p), parse(kMerged)));
}

TEST(PostprocessPrometheus, RejectsPortsTheAgentCannotScrapeAndLeavesPodUnchanged) {
  struct Case {
    const char* annotations;
    int status_port;
    const char* error;
  };
  const Case cases[] = {
      {R"({"prometheus.istio.io/scrape-targets":"8080:/metrics,15000:/metrics"})", 15020,
       "invalid prometheus scrape targets: target port 15000 is reserved for Istio (Envoy "
       "admin) and cannot be scraped"},
      {R"({"prometheus.istio.io/scrape-targets":"15020:/metrics"})", 15020,
       "invalid prometheus scrape targets: target port 15020 conflicts with agent port"},
      {R"({"prometheus.istio.io/scrape-targets":"http:/metrics"})", 15020,
       "invalid prometheus scrape targets: invalid target port \"http\""},
      {R"({"prometheus.istio.io/scrape-targets":"0"})", 15020,
       "invalid prometheus scrape targets: invalid target port \"0\""},
      {R"({"prometheus.io/port":"15000"})", 15020,
       "invalid prometheus scrape configuration: port 15000 is reserved for Istio (Envoy admin) "
       "and cannot be scraped"},
      {R"({"prometheus.io/port":"015090"})", 15020,
       "invalid prometheus scrape configuration: port 015090 is reserved for Istio (Envoy "
       "Prometheus (already merged)) and cannot be scraped"},
      {R"({"prometheus.io/port":"+15030"})", 15030,
       "invalid prometheus scrape configuration: port +15030 conflicts with agent port"},
      // 15020 stays reserved when the agent listens elsewhere.
      {R"({"prometheus.io/port":"15020"})", 15030,
       "invalid prometheus scrape configuration: port 15020 is reserved for Istio (pilot-agent "
       "status / merged Prometheus) and cannot be scraped"},
      {R"({"prometheus.io/port":"65536"})", 15020,
       "invalid prometheus scrape configuration: invalid port \"65536\""},
      {R"({"prometheus.io/port":"http-metrics"})", 15020,
       "invalid prometheus scrape configuration: invalid port \"http-metrics\""},
  };
  for (const Case& c : cases) {
    auto p = pod(c.annotations);
    auto before = api::to_json(p);
    auto st = apply_prometheus_merge(p, FakeMesh(), c.status_port);
    ASSERT_FALSE(st.ok()) << c.annotations;
    EXPECT_EQ(st.message(), c.error);
    EXPECT_EQ(api::to_json(p), before);
  }
}

TEST(PostprocessPrometheus, MalformedScrapeTargetsAreIgnoredWithAWarning) {
  auto p = pod(R"({"prometheus.io/port":"8080","prometheus.istio.io/scrape-targets":":/metrics"})");
  std::vector<std::string> warnings;
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020, &warnings).ok());
  EXPECT_EQ(proxy_env(p, "ISTIO_PROMETHEUS_ANNOTATIONS"),
            R"({"scrape":"","path":"","port":"8080"})");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("empty port in scrape target \":/metrics\""), std::string::npos);
}

TEST(PostprocessPrometheus, ParseScrapeTargetsAsPilotAgent) {
  auto t = postprocess::parse_scrape_targets(" 8080:/metrics , 9100:/custom ,,9200:, 9300");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[0].port, "8080");
  EXPECT_EQ((*t)[0].path, "/metrics");
  EXPECT_EQ((*t)[1].path, "/custom");
  EXPECT_EQ((*t)[2].path, "/metrics");
  EXPECT_EQ((*t)[3].port, "9300");
  EXPECT_EQ((*t)[3].path, "/metrics");
  EXPECT_TRUE(postprocess::parse_scrape_targets("")->empty());
  auto bad = postprocess::parse_scrape_targets("8080, :/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "empty port in scrape target \":/x\"");
}

TEST(PostprocessPrometheus, NoSidecarMeansNoEnvButAnnotationsStillMove) {
  auto p = parse(R"({"metadata":{"annotations":{"prometheus.io/port":"8080"}},)"
                 R"("spec":{"containers":[{"name":"app"}]}})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_TRUE(api::json_equal(annotations(p), parse(kMerged)));
  EXPECT_EQ(api::find(p, "/spec/containers/0/env"), nullptr);
}

TEST(PostprocessPrometheus, NativeSidecarInInitContainersGetsTheEnv) {
  auto p = parse(R"({"metadata":{"annotations":{"prometheus.io/port":"8080"}},)"
                 R"("spec":{"initContainers":[{"name":"istio-proxy"}],)"
                 R"("containers":[{"name":"app"}]}})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(), 15020).ok());
  EXPECT_EQ(api::string_at(*api::find(p, "/spec/initContainers/0/env/0"), {"value"}),
            R"({"scrape":"","path":"","port":"8080"})");
}

// The secure port annotation; merging is off here so only applySecurePrometheusAnnotation acts.
std::string secure_port(std::string_view annotations, std::string_view env) {
  auto p = pod(annotations, env);
  EXPECT_TRUE(apply_prometheus_merge(p, FakeMesh(false), 15020).ok());
  const rapidjson::Value* v =
      api::find(p, "/metadata/annotations/prometheus.istio.io~1secure-port");
  return v == nullptr ? "<absent>" : std::string(api::string_view_of(*v));
}

TEST(PostprocessPrometheus, SecurePortAnnotationComesFromProxyEnv) {
  EXPECT_EQ(secure_port("{}", R"([{"name":"ENVOY_SECURE_METRICS_PORT","value":"15091"},)"
                              R"({"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":"15092"}])"),
            "15092");
  // An empty or "0" value does not count; a later duplicate with a port does.
  EXPECT_EQ(secure_port("{}", R"([{"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":"0"}])"),
            "<absent>");
  EXPECT_EQ(secure_port("{}", R"([{"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":""},)"
                              R"({"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":"15093"}])"),
            "15093");
  EXPECT_EQ(secure_port("{}", R"([{"name":"SOME_OTHER_VAR","value":"1"}])"), "<absent>");
}

TEST(PostprocessPrometheus, SecurePortSetByUserInAnySpellingIsKept) {
  const char* env = R"([{"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":"15092"}])";
  EXPECT_EQ(secure_port(R"({"prometheus.istio.io/secure-port":"19999"})", env), "19999");
  auto p = pod(R"({"prometheus.istio.io.secure-port":"19999"})", env);
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(false), 15020).ok());
  EXPECT_EQ(api::find(p, "/metadata/annotations/prometheus.istio.io~1secure-port"), nullptr);
}

TEST(PostprocessPrometheus, SecurePortNeedsAnIstioProxyContainer) {
  auto p = parse(R"({"spec":{"containers":[{"name":"app","env":[)"
                 R"({"name":"ENVOY_SECURE_MERGED_METRICS_PORT","value":"15092"}]}]}})");
  ASSERT_TRUE(apply_prometheus_merge(p, FakeMesh(false), 15020).ok());
  EXPECT_EQ(api::find(p, "/metadata/annotations/prometheus.istio.io~1secure-port"), nullptr);
}

TEST(PostprocessPrometheus, StripRemovesMergedAnnotationsOnlyWhenPortIsTheAgents) {
  auto p = pod(R"({"prometheus.io/port":"15020","prometheus.io/path":"/stats/prometheus",)"
               R"("prometheus.io/scrape":"true","keep":"me"})");
  strip_merged_prometheus_annotations(p, 15020);
  EXPECT_TRUE(api::json_equal(annotations(p), parse(R"({"keep":"me"})")));
  auto q = pod(R"({"prometheus.io/port":"8080","prometheus.io/scrape":"true"})");
  strip_merged_prometheus_annotations(q, 15020);
  EXPECT_TRUE(api::json_equal(annotations(q), parse(R"({"prometheus.io/port":"8080",)"
                                                    R"("prometheus.io/scrape":"true"})")));
}

// sanitized_label_is(s, n) is sanitize_label_name(s) == n, for ASCII, multi-byte runes and
// invalid bytes (each a rune of its own, as Go ranges over a string).
TEST(PrometheusLabels, SanitizedLabelIsTheSanitizedNamesComparison) {
  const std::vector<std::string> pieces = {
      "prometheus", ".",        "io",           "/",    "port", "-", "_", "a",     "Z",
      "9",          "\xc3\xa9", "\xe2\x80\xa8", "\xff", "\xc3", " ", ":", "scrape"};
  std::uint32_t state = 7;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (std::uint32_t n = next() % 7; n > 0; --n)
      s += pieces[(next() >> 8) % pieces.size()];
    std::string sanitized = postprocess::sanitize_label_name(s);
    ASSERT_TRUE(postprocess::sanitized_label_is(s, sanitized)) << s;
    for (std::string_view other : {"prometheus_io_port", "prometheus_io_scrape", "", "a"})
      ASSERT_EQ(postprocess::sanitized_label_is(s, other), sanitized == other) << s;
    if (!sanitized.empty()) {
      ASSERT_FALSE(postprocess::sanitized_label_is(s, sanitized.substr(1))) << s;
    }
  }
}

}  // namespace
}  // namespace meshop::inject
