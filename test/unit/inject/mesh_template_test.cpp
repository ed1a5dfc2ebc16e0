// The typed MeshConfig/ProxyConfig objects through meshop's template engine: every
// `.ProxyConfig.`/`.MeshConfig.` expression the upstream templates use, Go's behaviour on nil
// messages, and the proto template functions.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/template/template.hpp"
#include "test/unit/inject/mesh_test_support.hpp"

namespace meshop::inject {
namespace {

using template_engine::Template;
using template_engine::Value;

template_engine::FunctionMap functions() {
  template_engine::FunctionMap fm = template_engine::default_functions();
  add_proto_functions(fm);
  return fm;
}

Value data(std::shared_ptr<const MeshConfig> mesh, std::shared_ptr<const ProxyConfig> pc,
           const std::vector<std::pair<std::string, std::string>>& annotations = {}) {
  auto root = std::make_shared<template_engine::Map>();
  root->set("MeshConfig", as_template_value(mesh));
  root->set("ProxyConfig", as_template_value(pc));
  auto meta = std::make_shared<template_engine::Map>();
  auto anns = std::make_shared<template_engine::Map>();
  for (const auto& [k, v] : annotations)
    anns->set(k, Value::string(v));
  meta->set("Annotations", Value::map(anns));
  meta->set("Labels", Value::map(std::make_shared<template_engine::Map>()));
  root->set("ObjectMeta", Value::map(meta));
  auto spec = std::make_shared<template_engine::Map>();
  spec->set("Containers", Value::list(std::make_shared<template_engine::List>()));
  root->set("Spec", Value::map(spec));
  auto values = std::make_shared<template_engine::Map>();
  root->set("Values", Value::map(values));
  return Value::map(root);
}

std::string render(std::string_view text, const Value& d) {
  auto t = Template::parse("t", text, functions());
  if (!t.ok()) return "PARSE ERROR: " + t.message();
  auto out = (*t)->execute(d);
  if (!out.ok()) return "ERROR: " + out.message();
  return *out;
}

std::shared_ptr<const MeshConfig> mesh_of(std::string_view text) {
  auto r = parse_mesh_config(text);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : default_mesh_config();
}

Value default_data() {
  auto mesh = default_mesh_config();
  return data(mesh, mesh->default_proxy_config());
}

Value data_for(std::string_view mesh_text) {
  auto mesh = mesh_of(mesh_text);
  return data(mesh, mesh->default_proxy_config());
}

TEST(MeshTemplate, EnumsPrintTheirNameAndHaveString) {
  Value d = default_data();
  EXPECT_EQ(render("{{ .ProxyConfig.InterceptionMode }}", d), "REDIRECT");
  EXPECT_EQ(render("{{ .ProxyConfig.InterceptionMode.String }}", d), "REDIRECT");
  EXPECT_EQ(render("{{ printf \"%T %d %v\" .ProxyConfig.InterceptionMode "
                   ".ProxyConfig.InterceptionMode .ProxyConfig.ControlPlaneAuthPolicy }}",
                   d),
            "v1alpha1.ProxyConfig_InboundInterceptionMode 0 MUTUAL_TLS");
  EXPECT_EQ(render("{{ .ProxyConfig.InterceptionMode }}",
                   data_for("defaultConfig: {interceptionMode: TPROXY}")),
            "TPROXY");
  EXPECT_EQ(render("{{ eq (annotation .ObjectMeta `sidecar.istio.io/interceptionMode` "
                   ".ProxyConfig.InterceptionMode) `TPROXY` }}",
                   data_for("defaultConfig: {interceptionMode: TPROXY}")),
            "true");
}

TEST(MeshTemplate, WrappersOnNilAndSetMessages) {
  EXPECT_EQ(render("{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }}", default_data()),
            "false");
  EXPECT_EQ(render("{{ .ProxyConfig.HoldApplicationUntilProxyStarts }}", default_data()), "<nil>");
  Value held = data_for("defaultConfig: {holdApplicationUntilProxyStarts: true, concurrency: 2}");
  EXPECT_EQ(
      render("{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }} "
             "{{ .ProxyConfig.Concurrency.Value }} {{ printf \"%T\" .ProxyConfig.Concurrency }}",
             held),
      "true 2 *wrapperspb.Int32Value");
  EXPECT_EQ(render("{{ (or .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue "
                   ".Values.global) }}",
                   held),
            "true");
  // Field access on a nil wrapper is Go's nil pointer error.
  EXPECT_NE(render("{{ .ProxyConfig.HoldApplicationUntilProxyStarts.Value }}", default_data())
                .find("nil pointer evaluating *wrapperspb.BoolValue.Value"),
            std::string::npos);
}

TEST(MeshTemplate, GettersWorkThroughAbsentMessages) {
  Value d = default_data();
  EXPECT_EQ(render("{{ .ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates }}|"
                   "{{ if .ProxyConfig.GetTracing.GetTlsSettings }}tls{{ end }}",
                   d),
            "|");
  EXPECT_EQ(render("{{ .ProxyConfig.GetTracing }}", d), "<nil>");
  EXPECT_NE(render("{{ .ProxyConfig.Tracing.Sampling }}", d)
                .find("nil pointer evaluating *v1alpha1.Tracing.Sampling"),
            std::string::npos);
  // Oneof members are not fields of the Go struct (they live in the `Tracer` interface).
  EXPECT_NE(render("{{ .ProxyConfig.Tracing.Zipkin }}", d)
                .find("can't evaluate field Zipkin in type *v1alpha1.Tracing"),
            std::string::npos);
  Value tls = data_for(R"(
defaultConfig:
  tracing:
    tlsSettings: {caCertificates: /etc/certs/lightstep/ca.pem}
    lightstep: {address: "ls:443", accessToken: t}
)");
  EXPECT_EQ(render("{{ if .ProxyConfig.GetTracing.GetTlsSettings }}{{ directory "
                   ".ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates }}{{ end }}",
                   tls),
            "/etc/certs/lightstep/");
  EXPECT_EQ(render("{{ .ProxyConfig.Tracing.Tracer.Lightstep.Address }} "
                   "{{ .ProxyConfig.Tracing.GetLightstep.GetAddress }} "
                   "{{ .ProxyConfig.Tracing.GetZipkin.GetAddress }}|"
                   "{{ printf \"%T\" .ProxyConfig.Tracing.Tracer }}",
                   tls),
            "ls:443 ls:443 |*v1alpha1.Tracing_Lightstep_");
}

TEST(MeshTemplate, ScalarsMapsAndListsHaveGoTypes) {
  Value d = data_for(R"(
defaultConfig:
  proxyMetadata: {ISTIO_META_ENABLE_HBONE: "true", B: b}
  extraStatTags: [x, z]
)");
  EXPECT_EQ(render("{{ index .ProxyConfig.ProxyMetadata \"ISTIO_META_ENABLE_HBONE\" }}|"
                   "{{ index .ProxyConfig.ProxyMetadata \"MISSING\" }}|"
                   "{{ range $k, $v := .ProxyConfig.ProxyMetadata }}{{ $k }}={{ $v }};{{ end }}",
                   d),
            "true||B=b;ISTIO_META_ENABLE_HBONE=true;");
  EXPECT_EQ(render("{{ printf \"%T %T %T %T %T\" .ProxyConfig.ProxyMetadata "
                   ".ProxyConfig.ExtraStatTags .MeshConfig.ProxyListenPort "
                   ".MeshConfig.ExtensionProviders .ProxyConfig.DrainDuration }}",
                   d),
            "map[string]string []string int32 []*v1alpha1.MeshConfig_ExtensionProvider "
            "*durationpb.Duration");
  EXPECT_EQ(render("{{ if .ProxyConfig.ProxyMetadata }}yes{{ else }}no{{ end }}", default_data()),
            "no");
  EXPECT_EQ(render("{{ .MeshConfig.ProxyListenPort | default \"15001\" | quote }} "
                   "{{ .MeshConfig.ProxyInboundListenPort | default \"15006\" | quote }} "
                   "{{ .MeshConfig.TrustDomain }} {{ .ProxyConfig.DiscoveryAddress | quote }}",
                   default_data()),
            "\"15001\" \"15006\" cluster.local \"istiod.istio-system.svc:15012\"");
  EXPECT_EQ(render("{{ (index .MeshConfig.ExtensionProviders 2).GetEnvoyFileAccessLog.Path }} "
                   "{{ len .MeshConfig.ExtensionProviders }}",
                   default_data()),
            "/dev/stdout 3");
}

TEST(MeshTemplate, OneofIsAnInterfaceHoldingTheWrapperStruct) {
  Value d = default_data();
  EXPECT_EQ(
      render("{{ .ProxyConfig.ClusterName.ServiceCluster }} {{ .ProxyConfig.GetServiceCluster }} "
             "{{ printf \"%T\" .ProxyConfig.ClusterName }} "
             "{{ .ProxyConfig.GetTracingServiceName }}",
             d),
      "istio-proxy istio-proxy *v1alpha1.ProxyConfig_ServiceCluster APP_LABEL_AND_NAMESPACE");
}

// Expected strings are what Go's text/template printed for the same data (checked with a
// throwaway Go program over istio.io/istio).
TEST(MeshTemplate, MessagesPrintAsProtobufTextLikeGo) {
  Value d = default_data();
  EXPECT_EQ(render("{{ .MeshConfig.OutboundTrafficPolicy }}|{{ .ProxyConfig.DrainDuration }}|"
                   "{{ .MeshConfig.LocalityLbSetting }}|{{ .MeshConfig.DefaultProviders }}|"
                   "{{ .ProxyConfig.Tracing }}",
                   d),
            "mode:ALLOW_ANY|seconds:45|enabled:{value:true}||<nil>");
  EXPECT_EQ(render("{{ .MeshConfig.ExtensionProviders }}", d),
            R"([name:"prometheus" prometheus:{} name:"stackdriver" stackdriver:{} )"
            R"(name:"envoy" envoy_file_access_log:{path:"/dev/stdout"}])");
  EXPECT_EQ(render("{{ .ProxyConfig.ClusterName }}|{{ printf \"%v|%+v\" .ProxyConfig.ClusterName "
                   ".ProxyConfig.ClusterName }}",
                   d),
            "&{istio-proxy}|&{istio-proxy}|&{ServiceCluster:istio-proxy}");
  EXPECT_EQ(
      render(
          "{{ kindOf .ProxyConfig }} {{ typeOf .ProxyConfig.InterceptionMode }} "
          "{{ kindOf .ProxyConfig.InterceptionMode }} {{ empty .ProxyConfig.Tracing }} "
          "{{ empty .ProxyConfig.InterceptionMode }} {{ default \"x\" .ProxyConfig.Concurrency }} "
          "{{ .ProxyConfig.ProxyMetadata.A }} {{ printf \"%q\" .ProxyConfig.InterceptionMode }}",
          d),
      "ptr v1alpha1.ProxyConfig_InboundInterceptionMode int32 true true x <no value> "
      "\"REDIRECT\"");
  Value nan = data_for(R"(
defaultConfig: {tracing: {sampling: NaN, customTags: {b: {literal: {value: x}}, a: {environment: {name: E}}}}}
extensionProviders:
- name: al
  envoyFileAccessLog: {path: /dev/stdout, logFormat: {labels: {b: 1, a: [x, {z: null}]}}}
)");
  EXPECT_EQ(render("{{ .ProxyConfig.Tracing }}", nan),
            R"(custom_tags:{key:"a" value:{environment:{name:"E"}}} )"
            R"(custom_tags:{key:"b" value:{literal:{value:"x"}}} sampling:nan)");
  EXPECT_EQ(
      render("{{ (index .MeshConfig.ExtensionProviders 3).GetEnvoyFileAccessLog.LogFormat }}", nan),
      R"(labels:{fields:{key:"a" value:{list_value:{values:{string_value:"x"} )"
      R"(values:{struct_value:{fields:{key:"z" value:{null_value:NULL_VALUE}}}}}}} )"
      R"(fields:{key:"b" value:{number_value:1}}})");
}

TEST(MeshTemplate, DurationsAndFormatDuration) {
  Value d = data_for("defaultConfig: {drainDuration: 90s, terminationDrainDuration: 0.1s}");
  EXPECT_EQ(render("{{ formatDuration .ProxyConfig.DrainDuration }} "
                   "{{ formatDuration .ProxyConfig.TerminationDrainDuration }} "
                   "{{ formatDuration .ProxyConfig.FileFlushInterval }} "
                   "{{ .ProxyConfig.DrainDuration.Seconds }} "
                   "{{ .ProxyConfig.TerminationDrainDuration.GetNanos }} "
                   "{{ .ProxyConfig.DrainDuration.AsDuration }}",
                   d),
            "1m30s 100ms 0s 90 100000000 1m30s");
}

TEST(MeshTemplate, ProtoToJsonStripsDefaultsAndStructToJsonDoesNot) {
  EXPECT_EQ(render("{{ protoToJSON .ProxyConfig }}", default_data()), "{}");
  Value d = data_for(
      "defaultConfig: {drainDuration: 23s, statusPort: 15021, image: {imageType: distroless}}");
  EXPECT_EQ(render("{{ protoToJSON .ProxyConfig }}", d),
            R"({"drainDuration":"23s","statusPort":15021,"image":{"imageType":"distroless"}})");
  // encoding/json uses the types' MarshalJSON, which is jsonpb without cleaning.
  EXPECT_EQ(render("{{ structToJSON .ProxyConfig.Image }}", d), R"({"imageType":"distroless"})");
  EXPECT_NE(
      render("{{ structToJSON .ProxyConfig }}", d).find(R"("configPath":"./etc/istio/proxy")"),
      std::string::npos);
  EXPECT_EQ(render("{{ protoToJSON .ProxyConfig.GetImage }}", default_data()), "{}");
  EXPECT_EQ(render("{{ protoToJSON .MeshConfig.DefaultProviders }}", default_data()), "{}");
}

TEST(MeshTemplate, OtelResourceAttributesReadsTypedExtensionProviders) {
  const char* tmpl =
      "{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations .ObjectMeta.Labels "
      "\"ns1\" .Spec.Containers }}";
  EXPECT_EQ(render(tmpl, default_data()), "");
  Value d = data_for(R"(
extensionProviders:
- name: otel
  opentelemetry: {service: otel, port: 4317, serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS}
)");
  std::string out = render(tmpl, d);
  EXPECT_NE(out.find("service.namespace=ns1"), std::string::npos) << out;
}

TEST(MeshTemplate, NilConfigsAreNilPointers) {
  Value d = data(nullptr, nullptr);
  EXPECT_EQ(render("{{ .ProxyConfig.GetInterceptionMode }} {{ .ProxyConfig.GetProxyMetadata }} "
                   "{{ protoToJSON .ProxyConfig }}",
                   d),
            "REDIRECT map[] {}");
  EXPECT_NE(render("{{ .ProxyConfig.InterceptionMode }}", d).find("nil pointer evaluating"),
            std::string::npos);
}

// Mesh texts and what upstream's protoToJSON printed for the resulting ProxyConfig (or that
// upstream rejected the text), recorded from istio.io/istio's mesh.ApplyMeshConfigDefaults,
// EffectiveProxyConfig and InjectionFuncmap["protoToJSON"].
TEST(MeshTemplate, ProtoToJsonMatchesUpstreamOnEdgeCases) {
  struct Case {
    const char* mesh;
    const char* want;  // nullptr: upstream rejects the mesh
  };
  const Case cases[] = {
      {"defaultConfig: {statusPort: 15021.0}", R"({"statusPort":15021})"},
      {"defaultConfig: {statusPort: '15021.0'}", nullptr},
      {"defaultConfig: {statusPort: ' 15021 '}", R"({"statusPort":15021})"},
      {"defaultConfig: {statusPort: 1e4}", R"({"statusPort":10000})"},
      {"defaultConfig: {statusPort: 0x3AAF}", R"({"statusPort":15023})"},
      {"defaultConfig: {statusPort: true}", nullptr},
      {"defaultConfig: {interceptionMode: 7}", R"({"interceptionMode":7})"},
      {"defaultConfig: {interceptionMode: '1'}", nullptr},
      {"defaultConfig: {interceptionMode: 1.0}", R"({"interceptionMode":"TPROXY"})"},
      {"defaultConfig: {concurrency: '3'}", R"({"concurrency":3})"},
      {"defaultConfig: {concurrency: null}", "{}"},
      {"defaultConfig: {holdApplicationUntilProxyStarts: 'true'}", nullptr},
      {"defaultConfig: {holdApplicationUntilProxyStarts: yes}",
       R"({"holdApplicationUntilProxyStarts":true})"},
      {"defaultConfig: {terminationDrainDuration: 1h}", R"({"terminationDrainDuration":"3600s"})"},
      {"defaultConfig: {terminationDrainDuration: -1s}", R"({"terminationDrainDuration":"-1s"})"},
      {"defaultConfig: {terminationDrainDuration: 1h2m3.000000001s}",
       R"({"terminationDrainDuration":"3723.000000001s"})"},
      {"defaultConfig: {terminationDrainDuration: 1us}",
       R"({"terminationDrainDuration":"0.000001s"})"},
      {"defaultConfig: {terminationDrainDuration: '+5s'}", "{}"},
      {"defaultConfig: {terminationDrainDuration: 100}", nullptr},
      {"defaultConfig: {extraStatTags: [a, null, b]}", R"({"extraStatTags":["a","","b"]})"},
      {"defaultConfig: {proxyMetadata: {A: null}}", R"({"proxyMetadata":{"A":""}})"},
      {"defaultConfig: {tracing: {sampling: '2.5'}}", R"({"tracing":{"sampling":2.5}})"},
      {"defaultConfig: {tracing: {sampling: 'NaN'}}", R"({"tracing":{"sampling":"NaN"}})"},
      {"defaultConfig: {tracing: {sampling: '0.5e1'}}", R"({"tracing":{"sampling":5}})"},
      {"defaultConfig: {tracing: {sampling: '0e-30x'}}", nullptr},
      {"defaultConfig: {tracing: {sampling: '.5'}}", nullptr},
      {"defaultConfig: {tracing: {sampling: 1e300}}", R"({"tracing":{"sampling":1e+300}})"},
      {"defaultConfig: {tracing: {stackdriver: {maxNumberOfAttributes: 5, "
       "maxNumberOfAnnotations: '7'}}}",
       R"({"tracing":{"stackdriver":{"maxNumberOfAttributes":"5","maxNumberOfAnnotations":"7"}}})"},
      {"defaultConfig: {serviceCluster: '', tracingServiceName: APP_LABEL_AND_NAMESPACE}",
       R"({"tracingServiceName":"APP_LABEL_AND_NAMESPACE"})"},
      {"defaultConfig: {service_cluster: x}", R"({"serviceCluster":"x"})"},
      {"defaultConfig: {serviceCluster: a, service_cluster: b}", R"({"serviceCluster":"a"})"},
      {"defaultConfig: {readinessProbe: {tcpSocket: {port: 9}, periodSeconds: 5}}",
       R"({"readinessProbe":{"periodSeconds":5,"tcpSocket":{"port":9}}})"},
      {"defaultConfig: {proxyHeaders: {forwardedClientCert: APPEND_FORWARD, requestId: "
       "{disabled: true}, setCurrentClientCertDetails: {subject: true, dns: true}}}",
       R"({"proxyHeaders":{"forwardedClientCert":"APPEND_FORWARD",)"
       R"("setCurrentClientCertDetails":{"subject":true,"dns":true},"requestId":{"disabled":true}}})"},
      {"defaultConfig: {fileFlushInterval: 1s, fileFlushMinSizeKb: 64, statsCompression: false}",
       R"({"fileFlushInterval":"1s","fileFlushMinSizeKb":64,"statsCompression":false})"},
      {"defaultConfig: {connectionSettings: {profile: HIGH_THROUGHPUT}}", nullptr},
      {"defaultConfig: {image: {imageType: 5}}", nullptr},
      {"defaultConfig: {statusPort: 15021}\ndefaultConfig: {statusPort: 15022}",
       R"({"statusPort":15022})"},
      {"localityLbSetting: {distribute: [{from: 'us/*', to: {'us/a/*': 60}}]}", nullptr},
      {"localityLbSetting: {failover: [{from: a, to: a}]}", nullptr},
      {"meshMTLS: {ecdhCurves: [P-256]}", nullptr},
      {"trustDomain: ''", nullptr},
      {"''", nullptr},
      {"defaultConfig: ''", nullptr},
      {"extensionProviders: {a: b}", nullptr},
      {"null", "{}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mesh);
    auto mesh = parse_mesh_config(c.mesh);
    if (c.want == nullptr) {
      EXPECT_FALSE(mesh.ok());
      continue;
    }
    ASSERT_TRUE(mesh.ok()) << mesh.message();
    auto pc = proxy_config_for(**mesh, nullptr);
    ASSERT_TRUE(pc.ok());
    EXPECT_EQ(render("{{ protoToJSON .ProxyConfig }}", data(*mesh, *pc)), c.want);
  }
}

// Every `.ProxyConfig.X.Y`/`.MeshConfig.X` chain in upstream's templates executes, on the
// default mesh and on a mesh that sets the fields the templates look at.
TEST(MeshTemplate, EveryUpstreamTemplateExpressionExecutes) {
  std::string dir = test_support::istio_module_dir();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio module not found";
  std::filesystem::path files =
      std::filesystem::path(dir) / "manifests/charts/istio-control/istio-discovery/files";
  std::set<std::string> expressions;
  std::regex expr(R"(\.(ProxyConfig|MeshConfig)(\.[A-Za-z]+)+)");
  for (const auto& entry : std::filesystem::directory_iterator(files)) {
    if (entry.path().extension() != ".yaml") continue;
    std::string text = test_support::read_file(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), expr), end; it != end; ++it)
      expressions.insert(it->str());
  }
  ASSERT_GE(expressions.size(), 10u);
  EXPECT_TRUE(expressions.count(".ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates"));
  std::vector<Value> datas = {default_data(), data_for(R"(
defaultConfig:
  holdApplicationUntilProxyStarts: true
  interceptionMode: TPROXY
  proxyMetadata: {ISTIO_META_ENABLE_HBONE: "true"}
  tracing: {tlsSettings: {caCertificates: /ca.pem}}
)")};
  for (const Value& d : datas) {
    for (const std::string& e : expressions) {
      std::string out = render("{{ " + e + " }}", d);
      EXPECT_EQ(out.find("ERROR"), std::string::npos) << e << ": " << out;
    }
  }
  // The function calls on them, as the templates write them.
  for (std::string_view call : {"{{ protoToJSON .ProxyConfig }}",
                                "{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations "
                                ".ObjectMeta.Labels \"ns\" .Spec.Containers }}",
                                "{{ (valueOrDefault .MeshConfig.TrustDomain .Values.x) }}",
                                "{{ annotation .ObjectMeta `sidecar.istio.io/interceptionMode` "
                                ".ProxyConfig.InterceptionMode }}"}) {
    std::string out = render(call, datas[0]);
    EXPECT_EQ(out.find("ERROR"), std::string::npos) << call << ": " << out;
  }
}

// The upstream templates themselves parse with the proto functions registered.
TEST(MeshTemplate, UpstreamTemplatesParse) {
  std::string dir = test_support::istio_module_dir();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio module not found";
  std::filesystem::path files =
      std::filesystem::path(dir) / "manifests/charts/istio-control/istio-discovery/files";
  for (std::string_view name : {"injection-template.yaml", "gateway-injection-template.yaml",
                                "grpc-agent.yaml", "waypoint.yaml", "kube-gateway.yaml"}) {
    auto t =
        Template::parse("inject", test_support::read_file((files / name).string()), functions());
    EXPECT_TRUE(t.ok()) << name << ": " << (t.ok() ? "" : t.message());
  }
}

}  // namespace
}  // namespace meshop::inject
