// rewrite_app_probes() and its parts (upstream app_probe.go, applyRewrite and
// mergeOrAppendProbers; cases after app_probe_test.go and webhook_test.go plus edge cases).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"
#include "postprocess_test_support.hpp"

namespace meshop::inject {
namespace {

using namespace postprocess;
using testing::parse;

std::string dump(std::string_view pod_json, int target = 15020) {
  auto pod = parse(pod_json);
  auto r = dump_app_probers(pod, target);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
  return r.ok() ? *r : "<error>";
}

const char* kRewriteOn = R"({"sidecarInjectorWebhook":{"rewriteAppHTTPProbe":true}})";

TEST(PostprocessProbes, ShouldRewriteFollowsAnnotationThenValues) {
  struct Case {
    const char* annotation;  // nullptr: absent
    bool spec, want;
  };
  for (const Case& c :
       {Case{nullptr, false, false}, Case{nullptr, true, true}, Case{"true", false, true},
        Case{"true", true, true}, Case{"false", false, false}, Case{"false", true, false},
        Case{"T", false, true}, Case{"0", true, false}, Case{"yes", true, true},
        Case{"yes", false, false}}) {
    std::string pod = c.annotation == nullptr
                          ? std::string("{}")
                          : std::string(R"({"metadata":{"annotations":{)"
                                        R"("sidecar.istio.io/rewriteAppHTTPProbers":")") +
                                c.annotation + "\"}}}";
    EXPECT_EQ(should_rewrite_app_http_probers(parse(pod), c.spec), c.want)
        << (c.annotation ? c.annotation : "-") << " " << c.spec;
  }
}

TEST(PostprocessProbes, DumpsGrpcProbesWithNullServiceAsGo) {
  // app_probe_test.go TestDumpAppGRPCProbers.
  EXPECT_EQ(
      dump(R"({"spec":{"containers":[{"name":"foo","livenessProbe":{"grpc":{"port":1234}}}]}})"),
      R"({"/app-health/foo/livez":{"grpc":{"port":1234,"service":null}}})");
  EXPECT_EQ(dump(R"({"spec":{"containers":[{"name":"bar","readinessProbe":)"
                 R"({"grpc":{"port":1234,"service":"foo"}}}]}})"),
            R"({"/app-health/bar/readyz":{"grpc":{"port":1234,"service":"foo"}}})");
  EXPECT_EQ(dump(R"({"spec":{"containers":[{"name":"foo","startupProbe":)"
                 R"({"grpc":{"port":1234,"service":"foo"},"timeoutSeconds":10},)"
                 R"("lifecycle":{"preStop":{"httpGet":{"scheme":"HTTP","host":"foo",)"
                 R"("port":1234,"path":"/foo"}}}}]}})"),
            R"({"/app-health/foo/startupz":{"grpc":{"port":1234,"service":"foo"},)"
            R"("timeoutSeconds":10},"/app-lifecycle/foo/prestopz":{"httpGet":{"path":"/foo",)"
            R"("port":1234,"host":"foo","scheme":"HTTP"}}})");
}

TEST(PostprocessProbes, DumpResolvesNamedPortsAndDropsUnknownNames) {
  EXPECT_EQ(
      dump(R"({"spec":{"containers":[{"name":"web","ports":[{"name":"http",)"
           R"("containerPort":8080},{"containerPort":9090}],)"
           R"("readinessProbe":{"httpGet":{"port":"http","path":"/r"}},)"
           R"("livenessProbe":{"tcpSocket":{"port":"nope"}},)"
           R"("startupProbe":{"tcpSocket":{"port":"http","host":"h"},"timeoutSeconds":3}}]}})"),
      R"({"/app-health/web/readyz":{"httpGet":{"path":"/r","port":8080}},)"
      R"("/app-health/web/startupz":{"tcpSocket":{"port":8080,"host":"h"},)"
      R"("timeoutSeconds":3}})");
}

TEST(PostprocessProbes, DumpSkipsRewrittenProbesProxyAndHandlerlessProbes) {
  EXPECT_EQ(
      dump(
          R"({"spec":{"containers":[)"
          R"({"name":"istio-proxy","readinessProbe":{"httpGet":{"port":15021}}},)"
          R"({"name":"a","readinessProbe":{"httpGet":{"port":15020,"path":"/app-health/a/readyz"}},)"
          R"("livenessProbe":{"exec":{"command":["true"]}},)"
          R"("lifecycle":{"preStop":{"exec":{"command":["x"]}},"postStart":{"sleep":{"seconds":1}}}}]}})"),
      "");
  // The same port is kept when the agent listens elsewhere.
  EXPECT_EQ(
      dump(R"({"spec":{"containers":[{"name":"a","readinessProbe":{"httpGet":{"port":15020}}}]}})",
           15030),
      R"({"/app-health/a/readyz":{"httpGet":{"port":15020}}})");
}

TEST(PostprocessProbes, DumpCoversInitContainersHeadersAndHtmlEscaping) {
  EXPECT_EQ(
      dump(
          R"({"spec":{"initContainers":[{"name":"init","startupProbe":{"httpGet":)"
          R"({"port":81,"path":"/a?x=1&y=<2>","httpHeaders":[{"name":"H","value":"v"}]}}}],)"
          R"("containers":[{"name":"app","lifecycle":{"postStart":{"tcpSocket":{"port":93}}}}]}})"),
      R"({"/app-health/init/startupz":{"httpGet":{"path":"/a?x=1\u0026y=\u003c2\u003e",)"
      R"("port":81,"httpHeaders":[{"name":"H","value":"v"}]}},)"
      R"("/app-lifecycle/app/poststartz":{"tcpSocket":{"port":93}}})");
}

TEST(PostprocessProbes, DumpRejectsProbesWithWrongTypes) {
  auto pod =
      parse(R"({"spec":{"containers":[{"name":"a","readinessProbe":{"httpGet":{"port":true}}}]}})");
  auto r = dump_app_probers(pod, 15020);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("spec.containers[0].readinessProbe.httpGet.port"), std::string::npos)
      << r.message();
}

// webhook_test.go TestMergeOrAppendProbers.
TEST(PostprocessProbes, MergeOrAppendAsUpstream) {
  const char* probers =
      R"({"/app-health/bar/livez":{"httpGet":{"path":"/","port":9000,"scheme":"HTTP"}},)"
      R"("/app-health/foo/livez":{"httpGet":{"path":"/","port":8000,"scheme":"HTTP"}}})";
  {
    auto env = parse("[]");
    merge_or_append_probers(false, env, probers, env.GetAllocator(), nullptr);
    EXPECT_EQ(api::to_json(env), std::string(R"([{"name":"ISTIO_KUBE_APP_PROBERS","value":)") +
                                     api::to_json(rapidjson::Value(rapidjson::StringRef(probers))) +
                                     "}]");
  }
  {
    auto env = parse(
        R"([{"name":"TEST_ENV_VAR1","value":"value1"},{"name":"ISTIO_KUBE_APP_PROBERS","value":)"
        R"("{\"/app-health/foo/livez\":{\"httpGet\":{\"path\":\"/\",\"port\":8000,\"scheme\":\"HTTP\"}}}"},)"
        R"({"name":"TEST_ENV_VAR2","value":"value2"}])");
    merge_or_append_probers(
        true, env,
        R"({"/app-health/bar/livez":{"httpGet":{"path":"/","port":9000,"scheme":"HTTP"}}})",
        env.GetAllocator(), nullptr);
    ASSERT_EQ(env.Size(), 3u);
    EXPECT_EQ(api::string_at(env[1], {"value"}), probers);
    EXPECT_EQ(api::string_at(env[2], {"name"}), "TEST_ENV_VAR2");
  }
  {
    auto env = parse(R"([{"name":"TEST_ENV_VAR1","value":"value1"}])");
    merge_or_append_probers(true, env, "{}", env.GetAllocator(), nullptr);
    ASSERT_EQ(env.Size(), 2u);
    EXPECT_EQ(api::string_at(env[1], {"name"}), "ISTIO_KUBE_APP_PROBERS");
  }
}

TEST(PostprocessProbes, MergeKeepsExistingEntriesAndNormalizesThemAsGo) {
  // Existing entries win; encoding/json matches member names case-insensitively, drops unknown
  // members, writes Go's field order, and keeps null entries.
  auto env = parse(
      R"([{"name":"ISTIO_KUBE_APP_PROBERS","value":)"
      R"("{\"/b\":{\"TimeoutSeconds\":2,\"HTTPGET\":{\"port\":\"p\",\"extra\":1,\"path\":\"/x\"}},\"/z\":null}"}])");
  merge_or_append_probers(true, env,
                          R"({"/a":{"tcpSocket":{"port":1}},"/b":{"tcpSocket":{"port":2}}})",
                          env.GetAllocator(), nullptr);
  EXPECT_EQ(api::string_at(env[0], {"value"}),
            R"({"/a":{"tcpSocket":{"port":1}},"/b":{"httpGet":{"path":"/x","port":"p"},)"
            R"("timeoutSeconds":2},"/z":null})");
}

TEST(PostprocessProbes, MergeLeavesUndecodableExistingValueAndWarns) {
  for (const char* existing :
       {R"({"name":"ISTIO_KUBE_APP_PROBERS","valueFrom":{"fieldRef":{"fieldPath":"x"}}})",
        R"({"name":"ISTIO_KUBE_APP_PROBERS","value":"[1]"})",
        R"({"name":"ISTIO_KUBE_APP_PROBERS","value":"{\"/a\":{\"timeoutSeconds\":1.5}}"})"}) {
    auto env = parse(std::string("[") + existing + "]");
    std::string before = api::to_json(env);
    std::vector<std::string> warnings;
    merge_or_append_probers(true, env, R"({"/a":{"tcpSocket":{"port":1}}})", env.GetAllocator(),
                            &warnings);
    EXPECT_EQ(api::to_json(env), before);
    EXPECT_EQ(warnings.size(), 1u) << existing;
  }
}

std::string rewrite(std::string_view pod_json, std::string_view values = kRewriteOn,
                    bool was_injected = false, std::vector<std::string>* warnings = nullptr) {
  auto pod = parse(pod_json);
  auto st = rewrite_app_probes(pod, parse(values), was_injected, 15020, warnings);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.message());
  return api::to_json(pod);
}

TEST(PostprocessProbes, RewritePointsProbesAtAgentAndRecordsOriginals) {
  std::string got = rewrite(
      R"({"spec":{"containers":[{"name":"app","ports":[{"name":"http","containerPort":80}],)"
      R"("readinessProbe":{"httpGet":{"scheme":"HTTPS","port":"http","path":"/ready"},"periodSeconds":5},)"
      R"("livenessProbe":{"initialDelaySeconds":1,"tcpSocket":{"port":80},"timeoutSeconds":2},)"
      R"("startupProbe":{"grpc":{"port":9000},"failureThreshold":3},)"
      R"("lifecycle":{"preStop":{"tcpSocket":{"port":91}},"postStart":{"exec":{"command":["x"]}}}},)"
      R"({"name":"istio-proxy","readinessProbe":{"httpGet":{"port":15021,"path":"/healthz/ready"}}}]}})");
  auto want = parse(
      R"({"spec":{"containers":[{"name":"app","ports":[{"name":"http","containerPort":80}],)"
      R"("readinessProbe":{"httpGet":{"path":"/app-health/app/readyz","port":15020,"scheme":"HTTP"},"periodSeconds":5},)"
      R"("livenessProbe":{"initialDelaySeconds":1,"httpGet":{"path":"/app-health/app/livez","port":15020},"timeoutSeconds":2},)"
      R"("startupProbe":{"httpGet":{"path":"/app-health/app/startupz","port":15020},"failureThreshold":3},)"
      R"("lifecycle":{"preStop":{"httpGet":{"path":"/app-lifecycle/app/prestopz","port":15020}},"postStart":{"exec":{"command":["x"]}}}},)"
      R"({"name":"istio-proxy","readinessProbe":{"httpGet":{"port":15021,"path":"/healthz/ready"}},)"
      R"("env":[{"name":"ISTIO_KUBE_APP_PROBERS","value":"{\"/app-health/app/livez\":{\"tcpSocket\":{\"port\":80},\"timeoutSeconds\":2},\"/app-health/app/readyz\":{\"httpGet\":{\"path\":\"/ready\",\"port\":80,\"scheme\":\"HTTPS\"}},\"/app-health/app/startupz\":{\"grpc\":{\"port\":9000,\"service\":null}},\"/app-lifecycle/app/prestopz\":{\"tcpSocket\":{\"port\":91}}}"}]}]}})");
  EXPECT_TRUE(api::json_equal(parse(got), want)) << got;
  // The replaced handler takes the place of the old one (Go's field order).
  EXPECT_NE(got.find(R"("livenessProbe":{"initialDelaySeconds":1,"httpGet")"), std::string::npos)
      << got;
}

TEST(PostprocessProbes, RewriteIsOffWithoutSettingOrWithAnnotationFalse) {
  const char* pod =
      R"({"spec":{"containers":[{"name":"app","readinessProbe":{"httpGet":{"port":80}}},{"name":"istio-proxy"}]}})";
  EXPECT_TRUE(api::json_equal(parse(rewrite(pod, "{}")), parse(pod)));
  EXPECT_TRUE(api::json_equal(
      parse(rewrite(pod, R"({"sidecarInjectorWebhook":{"rewriteAppHTTPProbe":"true"}})")),
      parse(pod)));
  std::string annotated =
      R"({"metadata":{"annotations":{"sidecar.istio.io/rewriteAppHTTPProbers":"false"}},)" +
      std::string(pod).substr(1);
  EXPECT_TRUE(api::json_equal(parse(rewrite(annotated)), parse(annotated)));
  // The annotation can also switch it on.
  std::string on =
      R"({"metadata":{"annotations":{"sidecar.istio.io/rewriteAppHTTPProbers":"true"}},)" +
      std::string(pod).substr(1);
  EXPECT_NE(rewrite(on, "{}").find("/app-health/app/readyz"), std::string::npos);
}

TEST(PostprocessProbes, RewriteNeedsASidecar) {
  const char* pod =
      R"({"spec":{"containers":[{"name":"app","readinessProbe":{"httpGet":{"port":80}}}]}})";
  EXPECT_TRUE(api::json_equal(parse(rewrite(pod)), parse(pod)));
}

TEST(PostprocessProbes, AlreadyRewrittenPodGetsNoEnvAndStaysTheSame) {
  const char* pod =
      R"({"spec":{"containers":[{"name":"app","readinessProbe":{"httpGet":{"path":"/app-health/app/readyz","port":15020}}},)"
      R"({"name":"istio-proxy"}]}})";
  EXPECT_TRUE(api::json_equal(parse(rewrite(pod)), parse(pod)));
}

TEST(PostprocessProbes, StatusPortAnnotationMovesTheRewrittenPort) {
  auto with_port = [](const char* port) {
    return std::string(R"({"metadata":{"annotations":{"status.sidecar.istio.io/port":")") + port +
           R"("}},"spec":{"containers":[{"name":"app","readinessProbe":{"httpGet":{"port":80}}},)"
           R"({"name":"istio-proxy"}]}})";
  };
  auto got = parse(rewrite(with_port("15999")));
  EXPECT_EQ(api::find(got, "/spec/containers/0/readinessProbe/httpGet/port")->GetInt(), 15999);
  // strconv.Atoi rejects the space the validation accepted: upstream then uses port 0.
  std::vector<std::string> warnings;
  got = parse(rewrite(with_port(" 15999"), kRewriteOn, false, &warnings));
  EXPECT_EQ(api::find(got, "/spec/containers/0/readinessProbe/httpGet/port")->GetInt(), 0);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(PostprocessProbes, ReinjectionMergesWithTheProxysExistingEnv) {
  // As merge-probers.yaml upstream: the old proxy's probers stay, new ones are added.
  std::string got = rewrite(
      R"({"spec":{"containers":[{"name":"istio-proxy","env":[{"name":"A","value":"1"},)"
      R"({"name":"ISTIO_KUBE_APP_PROBERS","value":"{\"/app-health/hello/readyz\":{\"httpGet\":{\"port\":3333}}}"}]},)"
      R"({"name":"hello","readinessProbe":{"httpGet":{"path":"/app-health/hello/readyz","port":15020}}},)"
      R"({"name":"new","livenessProbe":{"httpGet":{"path":"/testLive","port":8008}}}]}})",
      kRewriteOn, /*was_injected=*/true);
  auto pod = parse(got);
  EXPECT_EQ(api::string_at(*api::find(pod, "/spec/containers/0/env/1"), {"value"}),
            R"({"/app-health/hello/readyz":{"httpGet":{"port":3333}},)"
            R"("/app-health/new/livez":{"httpGet":{"path":"/testLive","port":8008}}})");
  EXPECT_EQ(api::find(pod, "/spec/containers/0/env")->Size(), 2u);
  // Not injected before: appended, even when a value is there.
  pod = parse(rewrite(
      R"({"spec":{"containers":[{"name":"istio-proxy","env":[{"name":"ISTIO_KUBE_APP_PROBERS","value":"{}"}]},)"
      R"({"name":"new","livenessProbe":{"httpGet":{"port":8008}}}]}})"));
  EXPECT_EQ(api::find(pod, "/spec/containers/0/env")->Size(), 2u);
}

TEST(PostprocessProbes, RewriteReportsPodWithWrongTypes) {
  auto pod = parse(R"({"spec":{"containers":[{"name":"app","livenessProbe":{"timeoutSeconds":"1",)"
                   R"("httpGet":{"port":80}}},{"name":"istio-proxy"}]}})");
  auto st = rewrite_app_probes(pod, parse(kRewriteOn), false, 15020);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("livenessProbe.timeoutSeconds"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace meshop::inject
