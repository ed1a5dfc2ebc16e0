// Objects the restart tests share: Istio's injector webhook configurations, workloads and
// pods as the API returns them.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/json.hpp"

namespace meshop::restart {

inline rapidjson::Document parse(const std::string& text) {
  auto d = api::parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message() << "\n" << text;
  return std::move(*d);
}

// Istio's injector entries (reference §2.1): every revision has rev.namespace and rev.object;
// the default revision also has namespace. and object. `match` is the istio.io/rev value the
// rev.* entries select (a revision, or a tag's name).
inline std::string entry(const std::string& name, const std::string& ns_exprs,
                         const std::string& obj_exprs) {
  return R"({"name":")" + name + R"(","clientConfig":{"url":"https://127.0.0.1/inject"},
    "namespaceSelector":{"matchExpressions":[)" +
         ns_exprs + R"(]},
    "objectSelector":{"matchExpressions":[)" +
         obj_exprs + "]}}";
}
inline std::string expr(const std::string& key, const std::string& op,
                        const std::string& values = "") {
  return R"({"key":")" + key + R"(","operator":")" + op + R"(")" +
         (values.empty() ? "" : R"(,"values":[)" + values + "]") + "}";
}
inline std::string configuration(const std::string& name, const std::string& revision,
                                 const std::string& match, bool is_default,
                                 const std::string& tag = "") {
  std::string not_false = expr("sidecar.istio.io/inject", "NotIn", R"("false")");
  std::string hooks =
      entry("rev.namespace.sidecar-injector.istio.io",
            expr("istio.io/rev", "In", "\"" + match + "\"") + "," +
                expr("istio-injection", "DoesNotExist"),
            not_false) +
      "," +
      entry("rev.object.sidecar-injector.istio.io",
            expr("istio.io/rev", "DoesNotExist") + "," + expr("istio-injection", "DoesNotExist"),
            not_false + "," + expr("istio.io/rev", "In", "\"" + match + "\""));
  if (is_default) {
    hooks += "," + entry("namespace.sidecar-injector.istio.io",
                         expr("istio-injection", "In", R"("enabled")"), not_false);
    hooks += "," + entry("object.sidecar-injector.istio.io",
                         expr("istio-injection", "DoesNotExist") + "," +
                             expr("istio.io/rev", "DoesNotExist"),
                         expr("sidecar.istio.io/inject", "In", R"("true")") + "," +
                             expr("istio.io/rev", "DoesNotExist"));
  }
  std::string labels = R"({"istio.io/rev":")" + revision + R"(")" +
                       (tag.empty() ? "" : R"(,"istio.io/tag":")" + tag + R"(")") + "}";
  return R"({"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration",
    "metadata":{"name":")" +
         name + R"(","labels":)" + labels + R"(},"webhooks":[)" + hooks + "]}";
}

inline std::string deployment(const std::string& kind, const std::string& ns,
                              const std::string& template_labels = "{}") {
  std::string tmpl = R"({"metadata":{"labels":)" + template_labels +
                     R"(},"spec":{"containers":[{"name":"app","image":"app:1"}]}})";
  std::string spec = kind == "CronJob" ? R"({"jobTemplate":{"spec":{"template":)" + tmpl + "}}}"
                                       : R"({"template":)" + tmpl + "}";
  return R"({"kind":")" + kind + R"(","metadata":{"name":"w","namespace":")" + ns +
         R"("},"spec":)" + spec + "}";
}
inline std::string pod(const std::string& name, const std::string& revision,
                       const std::string& image = "hub/proxyv2:1.0",
                       const std::string& fingerprint = "") {
  if (revision.empty())
    return R"({"metadata":{"name":")" + name +
           R"("},"spec":{"containers":[{"name":"app","image":"app:1"}]}})";
  std::string status =
      R"({\"initContainers\":[\"istio-init\"],\"containers\":[\"istio-proxy\"],\"revision\":\")" +
      revision + R"(\"})";
  std::string annotations =
      R"({"sidecar.istio.io/status":")" + status + R"(")" +
      (fingerprint.empty() ? "" : R"(,"meshop.io/injector-fingerprint":")" + fingerprint + "\"") +
      "}";
  return R"({"metadata":{"name":")" + name + R"(","annotations":)" + annotations +
         R"(},"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"istio-proxy","image":")" +
         image + R"("}]}})";
}

// Sets metadata fields of a parsed object.
inline rapidjson::Document with_meta(const std::string& json, const std::string& ns,
                                     const std::string& uid, const std::string& owner_kind = "",
                                     const std::string& owner_uid = "") {
  rapidjson::Document d = parse(json);
  auto& a = d.GetAllocator();
  rapidjson::Value& meta = d["metadata"];
  if (meta.HasMember("namespace")) meta.RemoveMember("namespace");
  meta.AddMember("namespace", rapidjson::Value(ns.c_str(), a), a);
  meta.AddMember("uid", rapidjson::Value(uid.c_str(), a), a);
  if (!owner_kind.empty()) {
    rapidjson::Document ref = parse(R"([{"kind":")" + owner_kind + R"(","uid":")" + owner_uid +
                                    R"(","controller":true,"name":"x","apiVersion":"apps/v1"}])");
    rapidjson::Value refs;
    refs.CopyFrom(ref, a);
    meta.AddMember("ownerReferences", refs, a);
  }
  return d;
}

}  // namespace meshop::restart
