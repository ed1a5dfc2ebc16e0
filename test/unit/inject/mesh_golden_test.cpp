// protoToJSON against upstream's injection goldens: the PROXY_CONFIG env value in
// pkg/kube/inject/testdata/inject/*.injected, for the mesh settings inject_test.go uses and the
// pod's proxy.istio.io/config annotation, through both the webhook path (proxy_config_for)
// and the kube-inject path (apply_proxy_config_annotation).
#include <string>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/template/template.hpp"
#include "test/unit/inject/mesh_test_support.hpp"

namespace meshop::inject {
namespace {

struct GoldenCase {
  const char* input;
  const char* golden;
  const char* mesh;  // the inject_test.go mesh mutation, as mesh config YAML
  const char* want;  // expected PROXY_CONFIG, to make sure the golden says what we think
};

const GoldenCase kCases[] = {
    {"hello.yaml", "hello.yaml.injected", "", "{}"},
    {"hello.yaml", "hello-tproxy.yaml.injected", "defaultConfig: {interceptionMode: TPROXY}",
     R"({"interceptionMode":"TPROXY"})"},
    {"format-duration.yaml", "format-duration.yaml.injected", "defaultConfig: {drainDuration: 23s}",
     R"({"drainDuration":"23s"})"},
    {"traffic-annotations.yaml", "traffic-annotations.yaml.injected",
     "defaultConfig: {proxyMetadata: {ISTIO_META_TLS_CLIENT_KEY: "
     "/etc/identity/client/keys/client-key.pem}}",
     R"({"discoveryAddress":"foo:123","concurrency":0,"proxyMetadata":{"FOO":"bar",)"
     R"("ISTIO_META_TLS_CLIENT_KEY":"/etc/identity2/client/keys/client-key.pem"}})"},
    {"hello-probes-proxyHoldApplication-ProxyConfig.yaml",
     "hello-probes-proxyHoldApplication-ProxyConfig.yaml.injected", "",
     R"({"holdApplicationUntilProxyStarts":true})"},
    {"hello-probes-noProxyHoldApplication-ProxyConfig.yaml",
     "hello-probes-noProxyHoldApplication-ProxyConfig.yaml.injected", "",
     R"({"holdApplicationUntilProxyStarts":false})"},
    {"hello-tracing-disabled.yaml", "hello-tracing-disabled.yaml.injected",
     "defaultConfig: {tracing: {}}", R"({"tracing":{}})"},
    {"proxy-override-runas.yaml", "proxy-override-runas.yaml.tproxy.injected",
     "defaultConfig: {interceptionMode: TPROXY}", R"({"interceptionMode":"TPROXY"})"},
};

// The first proxy.istio.io/config annotation of the pod (template) in a manifest.
bool find_annotation(const api::Value& v, std::string& out) {
  if (v.IsObject()) {
    if (const api::Value* a = api::find(v, "/metadata/annotations/proxy.istio.io~1config");
        a != nullptr && a->IsString()) {
      out = std::string(api::string_view_of(*a));
      return true;
    }
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
      if (find_annotation(it->value, out)) return true;
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      if (find_annotation(e, out)) return true;
  }
  return false;
}

// The value of the first env var PROXY_CONFIG anywhere in a manifest.
bool find_proxy_config(const api::Value& v, std::string& out) {
  if (v.IsObject()) {
    const api::Value* name = api::find_member(v, "name");
    const api::Value* value = api::find_member(v, "value");
    if (name != nullptr && name->IsString() && api::string_view_of(*name) == "PROXY_CONFIG" &&
        value != nullptr && value->IsString()) {
      out = std::string(api::string_view_of(*value));
      while (!out.empty() && out.back() == '\n')
        out.pop_back();
      return true;
    }
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
      if (find_proxy_config(it->value, out)) return true;
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      if (find_proxy_config(e, out)) return true;
  }
  return false;
}

std::string proto_to_json(const template_engine::Value& pc) {
  template_engine::FunctionMap fm = template_engine::default_functions();
  add_proto_functions(fm);
  auto t = template_engine::Template::parse("t", "{{ protoToJSON .ProxyConfig }}", fm);
  auto root = std::make_shared<template_engine::Map>();
  root->set("ProxyConfig", pc);
  auto out = (*t)->execute(template_engine::Value::map(root));
  return out.ok() ? *out : "ERROR: " + out.message();
}

TEST(MeshGolden, ProtoToJsonMatchesUpstreamProxyConfigEnv) {
  std::string dir = test_support::istio_module_dir();
  if (dir.empty()) GTEST_SKIP() << "istio.io/istio module not found";
  std::string data = dir + "/pkg/kube/inject/testdata/inject/";
  for (const GoldenCase& c : kCases) {
    SCOPED_TRACE(c.golden);
    auto input = api::yaml_stream_to_json(test_support::read_file(data + c.input));
    ASSERT_TRUE(input.ok()) << input.message();
    auto golden = api::yaml_stream_to_json(test_support::read_file(data + c.golden));
    ASSERT_TRUE(golden.ok()) << golden.message();
    std::string annotation;
    bool has_annotation = false;
    for (const auto& d : *input)
      if (!has_annotation) has_annotation = find_annotation(d, annotation);
    std::string want;
    bool found = false;
    for (const auto& d : *golden)
      if (!found) found = find_proxy_config(d, want);
    ASSERT_TRUE(found);
    EXPECT_EQ(want, c.want);

    auto mesh = parse_mesh_config(c.mesh);
    ASSERT_TRUE(mesh.ok()) << mesh.message();
    auto webhook = proxy_config_for(**mesh, has_annotation ? &annotation : nullptr);
    ASSERT_TRUE(webhook.ok()) << webhook.message();
    EXPECT_EQ(proto_to_json(as_template_value(*webhook)), want) << "webhook path";

    auto kube_inject = has_annotation ? apply_proxy_config_annotation(**mesh, annotation) : *mesh;
    ASSERT_TRUE(kube_inject.ok()) << kube_inject.message();
    EXPECT_EQ(proto_to_json(as_template_value((*kube_inject)->default_proxy_config())), want)
        << "kube-inject path";
  }
}

}  // namespace
}  // namespace meshop::inject
