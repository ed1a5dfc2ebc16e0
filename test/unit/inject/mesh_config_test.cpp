// parse_mesh_config, proxy_config_for, apply_proxy_config_annotation and the jsonpb codec.
#include "operator/inject/mesh/mesh_config.hpp"

#include <string>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/mesh/go_duration.hpp"
#include "operator/inject/mesh/proto_json.hpp"
#include "operator/inject/mesh/proto_object.hpp"

namespace meshop::inject {
namespace {

std::string jsonpb(const ProxyConfig& pc) {
  return proto::to_jsonpb(proto::proxy_config_descriptor(), pc.json());
}

std::string jsonpb(const MeshConfig& mesh) {
  return proto::to_jsonpb(proto::mesh_config_descriptor(), mesh.json());
}

std::shared_ptr<const MeshConfig> parse_ok(std::string_view text) {
  auto r = parse_mesh_config(text);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : default_mesh_config();
}

std::string parse_error(std::string_view text) {
  auto r = parse_mesh_config(text);
  EXPECT_FALSE(r.ok()) << "parsed: " << text;
  return r.ok() ? std::string() : r.message();
}

TEST(MeshDefaults, ProxyConfigMatchesUpstreamDefaultProxyConfig) {
  // jsonpb of mesh.DefaultProxyConfig(), fields in declaration order.
  EXPECT_EQ(jsonpb(*default_proxy_config()),
            R"({"configPath":"./etc/istio/proxy","binaryPath":"/usr/local/bin/envoy",)"
            R"("serviceCluster":"istio-proxy","drainDuration":"45s",)"
            R"("discoveryAddress":"istiod.istio-system.svc:15012","proxyAdminPort":15000,)"
            R"("controlPlaneAuthPolicy":"MUTUAL_TLS","statNameLength":189,"statusPort":15020,)"
            R"("terminationDrainDuration":"5s"})");
  const ProxyConfig& pc = *default_proxy_config();
  EXPECT_EQ(pc.status_port(), 15020);
  EXPECT_EQ(pc.interception_mode(), "REDIRECT");
  EXPECT_FALSE(pc.hold_application_until_proxy_starts());
  EXPECT_EQ(pc.image_type(), "");
  EXPECT_EQ(pc.proxy_metadata("X"), nullptr);
}

TEST(MeshDefaults, MeshConfigMatchesUpstreamDefaultMeshConfig) {
  auto mesh = default_mesh_config();
  std::string j = jsonpb(*mesh);
  for (
      std::string_view part :
      {R"("enableTracing":true)", R"("ingressService":"istio-ingressgateway")",
       R"("ingressControllerMode":"STRICT")", R"("trustDomain":"cluster.local")",
       R"("enableAutoMtls":true)", R"("outboundTrafficPolicy":{"mode":"ALLOW_ANY"})",
       R"("inboundTrafficPolicy":{})", R"("localityLbSetting":{"enabled":true})",
       R"("protocolDetectionTimeout":"0s")", R"("rootNamespace":"istio-system")",
       R"("proxyListenPort":15001)", R"("proxyInboundListenPort":15006)",
       R"("connectTimeout":"10s")", R"("dnsRefreshRate":"60s")", R"("enablePrometheusMerge":true)",
       R"("defaultProviders":{})",
       R"("extensionProviders":[{"name":"prometheus","prometheus":{}},{"name":"stackdriver","stackdriver":{}},{"name":"envoy","envoyFileAccessLog":{"path":"/dev/stdout"}}])",
       R"("defaultServiceExportTo":["*"])"}) {
    EXPECT_NE(j.find(part), std::string::npos) << part << "\nin " << j;
  }
  EXPECT_EQ(j.find("accessLogEncoding"), std::string::npos) << "TEXT is the zero value";
  EXPECT_TRUE(mesh->enable_prometheus_merge());
  EXPECT_EQ(mesh->inbound_traffic_policy_mode(), "passthrough");
  EXPECT_EQ(jsonpb(*mesh->default_proxy_config()), jsonpb(*default_proxy_config()));
  // An empty text is the default mesh.
  EXPECT_EQ(jsonpb(*parse_ok("")), j);
}

TEST(MeshParse, DefaultConfigIsMergedOverTheDefaultProxyConfig) {
  auto mesh = parse_ok(R"(
defaultConfig:
  interceptionMode: TPROXY
  proxyMetadata: {A: "1"}
  holdApplicationUntilProxyStarts: true
trustDomain: example.org
)");
  const ProxyConfig& pc = *mesh->default_proxy_config();
  EXPECT_EQ(pc.interception_mode(), "TPROXY");
  EXPECT_EQ(pc.status_port(), 15020);
  EXPECT_TRUE(pc.hold_application_until_proxy_starts());
  ASSERT_NE(pc.proxy_metadata("A"), nullptr);
  EXPECT_EQ(*pc.proxy_metadata("A"), "1");
  EXPECT_EQ(api::string_at(pc.json(), {"discoveryAddress"}), "istiod.istio-system.svc:15012");
  EXPECT_EQ(api::string_at(mesh->json(), {"trustDomain"}), "example.org");
  EXPECT_EQ(api::string_at(mesh->json(), {"ingressService"}), "istio-ingressgateway");
}

TEST(MeshParse, MessageFieldsAreReplacedWholeNotMerged) {
  // jsonpb replaces a message field present in the input: the default enabled=true is gone.
  auto mesh = parse_ok("localityLbSetting: {failoverPriority: [topology.istio.io/network]}");
  EXPECT_EQ(api::to_json(*api::find(mesh->json(), "/localityLbSetting")),
            R"({"failoverPriority":["topology.istio.io/network"]})");
}

TEST(MeshParse, ExtensionProvidersMergeByNameAndAppend) {
  auto mesh = parse_ok(R"(
extensionProviders:
- name: envoy
  envoyFileAccessLog: {path: /dev/stderr}
- name: otel
  opentelemetry: {service: otel.svc, port: 4317}
)");
  EXPECT_EQ(api::to_json(*api::find(mesh->json(), "/extensionProviders")),
            R"([{"name":"prometheus","prometheus":{}},{"name":"stackdriver","stackdriver":{}},)"
            R"({"name":"envoy","envoyFileAccessLog":{"path":"/dev/stderr"}},)"
            R"({"name":"otel","opentelemetry":{"service":"otel.svc","port":4317}}])");
}

TEST(MeshParse, TrustDomainAliasesAreSortedAndUnique) {
  auto mesh = parse_ok("trustDomainAliases: [b, a, b]");
  EXPECT_EQ(api::to_json(*api::find(mesh->json(), "/trustDomainAliases")), R"(["a","b"])");
}

TEST(MeshParse, AcceptsProtoNamesQuotedIntegersAndEnumNumbers) {
  auto mesh = parse_ok(R"(
proxy_listen_port: "15002"
defaultConfig:
  statusPort: "15021"
  interceptionMode: 1
  concurrency: 2
  terminationDrainDuration: 1m30.5s
)");
  EXPECT_EQ(api::find(mesh->json(), "/proxyListenPort")->GetInt(), 15002);
  const ProxyConfig& pc = *mesh->default_proxy_config();
  EXPECT_EQ(pc.status_port(), 15021);
  EXPECT_EQ(pc.interception_mode(), "TPROXY");
  EXPECT_EQ(api::to_json(*api::find(pc.json(), "/terminationDrainDuration")), R"("90.500s")");
  EXPECT_EQ(api::find(pc.json(), "/concurrency")->GetInt(), 2);
}

TEST(MeshParse, UnknownFieldsAreIgnoredAndReported) {
  auto mesh = parse_ok("foo: 1\ndefaultConfig: {bar: 2, statusPort: 15099}");
  EXPECT_EQ(mesh->default_proxy_config()->status_port(), 15099);
  std::vector<std::string> ignored(mesh->ignored_fields().begin(), mesh->ignored_fields().end());
  EXPECT_EQ(ignored, (std::vector<std::string>{"defaultConfig.bar", "foo"}));
}

TEST(MeshParse, ErrorsNameTheFieldPath) {
  EXPECT_EQ(parse_error("defaultConfig:\n  concurrency: two"),
            "mesh: defaultConfig.concurrency: expected int32 (an integer), got string \"two\"");
  EXPECT_EQ(parse_error("enableTracing: maybe"),
            "mesh: enableTracing: expected a boolean, got string \"maybe\"");
  EXPECT_EQ(parse_error("defaultConfig: {statusPort: 1.5}"),
            "mesh: defaultConfig.statusPort: expected int32 (an integer), got number 1.5");
  EXPECT_EQ(parse_error("defaultConfig: {statusPort: 3000000000}"),
            "mesh: defaultConfig.statusPort: value number 3000000000 out of range for int32");
  EXPECT_EQ(parse_error("extensionProviders: [{name: x, envoyFileAccessLog: {path: 5}}]"),
            "mesh: extensionProviders[0].envoyFileAccessLog.path: expected a string, got "
            "number 5");
  EXPECT_EQ(parse_error("defaultConfig: {drainDuration: soon}"),
            "mesh: defaultConfig.drainDuration: bad Duration: time: invalid duration \"soon\"");
  EXPECT_EQ(parse_error("defaultConfig: {proxyMetadata: [a]}"),
            "mesh: defaultConfig.proxyMetadata: expected a mapping, got list");
  EXPECT_EQ(parse_error("ingressControllerMode: SOMETIMES"),
            "mesh: ingressControllerMode: unknown value string \"SOMETIMES\" for enum "
            "istio.mesh.v1alpha1.MeshConfig.IngressControllerMode (one of UNSPECIFIED, OFF, "
            "DEFAULT, STRICT)");
  EXPECT_EQ(parse_error("- a"), "mesh: expected a mapping (MeshConfig), got list");
  EXPECT_NE(parse_error("a: [").find("mesh: yaml"), std::string::npos);
}

TEST(MeshParse, NullFieldsKeepTheDefault) {
  auto mesh = parse_ok("trustDomain: null\ndefaultConfig: null\ningressClass: ~");
  EXPECT_EQ(api::string_at(mesh->json(), {"trustDomain"}), "cluster.local");
  EXPECT_EQ(api::string_at(mesh->json(), {"ingressClass"}), "istio");
}

TEST(MeshParse, InboundTrafficPolicyAndPrometheusMerge) {
  auto mesh = parse_ok("inboundTrafficPolicy: {mode: LOCALHOST}\nenablePrometheusMerge: false");
  EXPECT_EQ(mesh->inbound_traffic_policy_mode(), "localhost");
  EXPECT_FALSE(mesh->enable_prometheus_merge());
}

TEST(ProxyConfigFor, AnnotationMergesOverMeshDefaultConfig) {
  auto mesh = parse_ok(R"(
defaultConfig:
  discoveryAddress: istiod.x:15012
  interceptionMode: TPROXY
  proxyMetadata: {A: mesh, B: mesh}
)");
  std::string annotation =
      "proxyMetadata: {B: pod, C: pod}\nconcurrency: 0\ninterceptionMode: REDIRECT";
  auto pc = proxy_config_for(*mesh, &annotation);
  ASSERT_TRUE(pc.ok()) << pc.message();
  EXPECT_EQ(api::to_json(*api::find((*pc)->json(), "/proxyMetadata")),
            R"({"A":"mesh","B":"pod","C":"pod"})");
  EXPECT_EQ(api::string_at((*pc)->json(), {"discoveryAddress"}), "istiod.x:15012");
  // A wrapper holding 0 is set; a zero enum (REDIRECT) is not, so in the webhook path (each
  // layer re-marshalled by jsonpb) it cannot override the mesh's TPROXY.
  EXPECT_EQ(api::find((*pc)->json(), "/concurrency")->GetInt(), 0);
  EXPECT_EQ((*pc)->interception_mode(), "TPROXY");
  // kube-inject's mesh.ApplyProxyConfig applies the YAML itself: REDIRECT wins there.
  auto applied = apply_proxy_config_annotation(*mesh, annotation);
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ((*applied)->default_proxy_config()->interception_mode(), "REDIRECT");
  EXPECT_EQ(api::to_json(*api::find((*applied)->json(), "/defaultConfig/proxyMetadata")),
            R"({"A":"mesh","B":"pod","C":"pod"})");
  // The mesh itself is unchanged.
  EXPECT_EQ(mesh->default_proxy_config()->interception_mode(), "TPROXY");
}

TEST(ProxyConfigFor, WithoutAnnotationIsTheMeshDefaultConfig) {
  auto mesh = parse_ok("defaultConfig: {tracing: {}}");
  auto pc = proxy_config_for(*mesh, nullptr);
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(jsonpb(**pc), jsonpb(*mesh->default_proxy_config()));
  EXPECT_NE(jsonpb(**pc).find(R"("tracing":{})"), std::string::npos);
}

TEST(ProxyConfigFor, ProxyHeadersKeepUnsetMembersOfTheLowerLayer) {
  auto mesh = parse_ok(R"(
defaultConfig:
  proxyHeaders:
    forwardedClientCert: SANITIZE
    server: {disabled: true}
    requestId: {disabled: true}
)");
  std::string annotation = "proxyHeaders: {server: {value: custom}}";
  auto pc = proxy_config_for(*mesh, &annotation);
  ASSERT_TRUE(pc.ok()) << pc.message();
  EXPECT_EQ(
      api::to_json(*api::find((*pc)->json(), "/proxyHeaders")),
      R"({"server":{"value":"custom"},"forwardedClientCert":"SANITIZE","requestId":{"disabled":true}})");
}

TEST(ProxyConfigFor, InvalidAnnotationNamesAnnotationAndField) {
  std::string annotation = "holdApplicationUntilProxyStarts: perhaps";
  auto pc = proxy_config_for(*default_mesh_config(), &annotation);
  ASSERT_FALSE(pc.ok());
  EXPECT_EQ(pc.message(),
            "annotation proxy.istio.io/config: holdApplicationUntilProxyStarts: expected a "
            "boolean, got string \"perhaps\"");
  std::string broken = "{";
  EXPECT_FALSE(proxy_config_for(*default_mesh_config(), &broken).ok());
}

TEST(MeshValidation, RejectsWhatAgentValidateMeshConfigRejects) {
  EXPECT_EQ(parse_error("defaultConfig: {statusPort: 70000}"),
            "mesh: defaultConfig.statusPort: invalid status port: port number 70000 must be in "
            "the range 1..65535");
  EXPECT_EQ(parse_error("defaultConfig: {discoveryAddress: istiod}"),
            "mesh: defaultConfig.discoveryAddress: invalid discovery address: unable to split "
            "\"istiod\": address istiod: missing port in address");
  EXPECT_EQ(parse_error("defaultConfig: {drainDuration: 1.5s}"),
            "mesh: defaultConfig.drainDuration: drain time only supports durations to seconds "
            "precision");
  EXPECT_EQ(parse_error("trustDomain: Bad_Domain"),
            "mesh: trustDomain: trust domain name \"Bad_Domain\" invalid");
  EXPECT_EQ(parse_error("connectTimeout: 2h"),
            "mesh: connectTimeout: invalid connect timeout: time 2h0m0s must be >1ms and <1h0m0s");
  EXPECT_EQ(parse_error("defaultConfig: {tracing: {zipkin: {address: zipkin}}}"),
            "mesh: defaultConfig.tracing.zipkin.address: unable to split \"zipkin\": address "
            "zipkin: missing port in address");
  EXPECT_EQ(parse_error("defaultConfig: {statusPort: 0}\nproxyListenPort: 0"),
            "mesh: proxyListenPort: invalid proxy listen port: port number 0 must be in the "
            "range 1..65535; defaultConfig.statusPort: invalid status port: port number 0 must "
            "be in the range 1..65535");
  // Valid values that look unusual pass.
  parse_ok(R"(
defaultConfig:
  discoveryAddress: "[::1]:15012"
  tracing: {zipkin: {address: "$(HOST_IP):9411"}}
serviceSettings: [{hosts: ["*.example.com", "foo.bar"]}]
trustDomainAliases: [td1.local., td2, Upper.Case]
)");
}

TEST(MeshValidation, AnnotationIsValidatedOverTheDefaultProxyConfig) {
  EXPECT_TRUE(validate_proxy_config_annotation("holdApplicationUntilProxyStarts: true").ok());
  auto st = validate_proxy_config_annotation("statusPort: 0");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "annotation proxy.istio.io/config: statusPort: invalid status port: port number 0 "
            "must be in the range 1..65535");
  std::string annotation = "discoveryAddress: nowhere";
  EXPECT_FALSE(proxy_config_for(*default_mesh_config(), &annotation).ok());
  EXPECT_FALSE(apply_proxy_config_annotation(*default_mesh_config(), annotation).ok());
}

TEST(ProtoJson, OneofMemberReplacesTheOther) {
  api::Document msg;
  msg.SetObject();
  auto in = api::parse_json(R"({"tracingServiceName":"CANONICAL_NAME_ONLY"})");
  api::Document base = std::move(api::parse_json(R"({"serviceCluster":"x"})").value());
  ASSERT_TRUE(
      proto::apply_json(proto::proxy_config_descriptor(), base, msg, msg.GetAllocator(), "").ok());
  ASSERT_TRUE(
      proto::apply_json(proto::proxy_config_descriptor(), *in, msg, msg.GetAllocator(), "").ok());
  EXPECT_EQ(proto::to_jsonpb(proto::proxy_config_descriptor(), msg),
            R"({"tracingServiceName":"CANONICAL_NAME_ONLY"})");
}

TEST(ProtoJson, MapKeysSortedStringsHtmlEscapedInt64Quoted) {
  api::Document msg;
  msg.SetObject();
  auto in = api::parse_json(
      R"({"proxyMetadata":{"b":"<x>","a":"&"},"proxyStatsMatcher":{"inclusionPrefixes":["a"]}})");
  ASSERT_TRUE(
      proto::apply_json(proto::proxy_config_descriptor(), *in, msg, msg.GetAllocator(), "").ok());
  EXPECT_EQ(proto::to_jsonpb(proto::proxy_config_descriptor(), msg),
            R"({"proxyMetadata":{"a":"\u0026","b":"\u003cx\u003e"},)"
            R"("proxyStatsMatcher":{"inclusionPrefixes":["a"]}})");
}

TEST(GoDuration, ParsesLikeTimeParseDuration) {
  EXPECT_EQ(*parse_go_duration("45s"), 45000000000);
  EXPECT_EQ(*parse_go_duration("1h2m3.5s"), 3723500000000);
  EXPECT_EQ(*parse_go_duration("100ms"), 100000000);
  EXPECT_EQ(*parse_go_duration("-1.5us"), -1500);
  EXPECT_EQ(*parse_go_duration("0"), 0);
  EXPECT_EQ(*parse_go_duration(".5s"), 500000000);
  EXPECT_EQ(parse_go_duration("1").message(), "time: missing unit in duration \"1\"");
  EXPECT_EQ(parse_go_duration("1d").message(), "time: unknown unit \"d\" in duration \"1d\"");
  EXPECT_EQ(parse_go_duration("").message(), "time: invalid duration \"\"");
  EXPECT_FALSE(parse_go_duration("9999999999h").ok());
}

TEST(GoDuration, FormatsLikeDurationString) {
  EXPECT_EQ(format_go_duration(0), "0s");
  EXPECT_EQ(format_go_duration(45000000000), "45s");
  EXPECT_EQ(format_go_duration(90000000000), "1m30s");
  EXPECT_EQ(format_go_duration(3600000000000), "1h0m0s");
  EXPECT_EQ(format_go_duration(1500000), "1.5ms");
  EXPECT_EQ(format_go_duration(1500), "1.5\xC2\xB5s");
  EXPECT_EQ(format_go_duration(12), "12ns");
  EXPECT_EQ(format_go_duration(-100000000), "-100ms");
}

TEST(GoDuration, ProtoJsonFormatHasZeroThreeSixOrNineDigits) {
  EXPECT_EQ(format_proto_duration(23, 0), "23s");
  EXPECT_EQ(format_proto_duration(0, 100000000), "0.100s");
  EXPECT_EQ(format_proto_duration(1, 500), "1.000000500s");
  EXPECT_EQ(format_proto_duration(0, 1000), "0.000001s");
  EXPECT_EQ(format_proto_duration(-1, -500000000), "-1.500s");
  std::int64_t s = 0;
  std::int32_t n = 0;
  ASSERT_TRUE(parse_proto_duration("-1.500s", s, n));
  EXPECT_EQ(s, -1);
  EXPECT_EQ(n, -500000000);
}

}  // namespace
}  // namespace meshop::inject
