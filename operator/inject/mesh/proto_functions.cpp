// add_proto_functions(): the template functions whose upstream signatures take protobuf types.
// Each one handles meshop's typed objects (proto_object.hpp) itself and hands any other
// argument to the function it replaces, so JSON-shaped data keeps working as before.
#include <memory>
#include <utility>

#include "operator/inject/mesh/go_duration.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/inject/mesh/proto_json.hpp"
#include "operator/inject/mesh/proto_object.hpp"

namespace meshop::inject {
namespace {

using template_engine::Args;
using template_engine::Function;
using template_engine::ParamType;
using template_engine::Result;
using template_engine::Value;

// The function currently registered as `name` (to delegate to), or one returning `fallback`.
Function previous(const template_engine::FunctionMap& functions, std::string_view name,
                  std::string fallback) {
  if (const Function* f = functions.find(name)) return *f;
  return Function({{ParamType::any()}},
                  [fallback](Args) -> Result<Value> { return Value::string(fallback); });
}

bool otel_semantic_conventions(const proto::MessageRef& mesh) {
  if (mesh.msg == nullptr) return false;
  const api::Value* providers = api::find_member(*mesh.msg, "extensionProviders");
  if (providers == nullptr || !providers->IsArray()) return false;
  for (const auto& p : providers->GetArray()) {
    const api::Value* otel = api::find_member(p, "opentelemetry");
    const api::Value* e =
        otel != nullptr ? api::find_member(*otel, "serviceAttributeEnrichment") : nullptr;
    if (e != nullptr && e->IsString() && api::string_view_of(*e) == "OTEL_SEMANTIC_CONVENTIONS")
      return true;
  }
  return false;
}

}  // namespace

void add_proto_functions(template_engine::FunctionMap& functions) {
  // protoToJSON(proto.Message): cleanProxyConfig for a ProxyConfig, then legacy jsonpb. A nil
  // message fails to marshal upstream, which returns "{}".
  Function proto_to_json = previous(functions, "protoToJSON", "{}");
  functions.add("protoToJSON", {{ParamType::any()}}, [proto_to_json](Args a) -> Result<Value> {
    auto m = proto::as_message(a[0]);
    if (!m) return proto_to_json.call(a);
    if (m->msg == nullptr) return Value::string("{}");
    if (m->type == &proto::proxy_config_descriptor()) {
      api::Document clean = proto::clean_proxy_config(*m->msg);
      return Value::string(proto::to_jsonpb(*m->type, clean));
    }
    return Value::string(proto::to_jsonpb(*m->type, *m->msg));
  });

  // formatDuration(*durationpb.Duration): AsDuration().String(); a nil Duration is 0s.
  Function format_duration = previous(functions, "formatDuration", "0s");
  functions.add("formatDuration", {{ParamType::any()}}, [format_duration](Args a) -> Result<Value> {
    if (proto::is_nil_duration(a[0])) return Value::string("0s");
    if (auto n = proto::as_duration_nanos(a[0])) return Value::string(format_go_duration(*n));
    return format_duration.call(a);
  });

  // otelResourceAttributes(mesh, annotations, labels, namespace, containers): with a typed
  // MeshConfig, decide from its extension providers and let the existing implementation
  // (which reads JSON-shaped data by Go field name) build the attribute string.
  if (const Function* otel = functions.find("otelResourceAttributes")) {
    Function inner = *otel;
    functions.add("otelResourceAttributes", inner.signature(), [inner](Args a) -> Result<Value> {
      auto m = a.empty() ? std::nullopt : proto::as_message(a[0]);
      if (!m || m->type != &proto::mesh_config_descriptor()) return inner.call(a);
      if (!otel_semantic_conventions(*m)) return Value::string("");
      auto enrichment = std::make_shared<template_engine::Map>();
      enrichment->set("ServiceAttributeEnrichment", Value::string("OTEL_SEMANTIC_CONVENTIONS"));
      auto provider = std::make_shared<template_engine::Map>();
      provider->set("Opentelemetry", Value::map(std::move(enrichment)));
      auto list = std::make_shared<template_engine::List>();
      list->items.push_back(Value::map(std::move(provider)));
      auto mesh = std::make_shared<template_engine::Map>();
      mesh->set("ExtensionProviders", Value::list(std::move(list)));
      std::vector<Value> args(a.begin(), a.end());
      args[0] = Value::map(std::move(mesh));
      return inner.call(args);
    });
  }
}

}  // namespace meshop::inject
