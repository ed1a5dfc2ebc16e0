#include "operator/manifest/render.hpp"

#include <string_view>

#include "api/yaml.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace meshop::manifest {
namespace {

using api::Allocator;
using api::Document;
using api::Value;

Value str(std::string_view s, Allocator& a) {
  return api::make_string(s, a);
}

void set_member(Value& object, std::string_view key, Value v, Allocator& a) {
  if (Value* m = api::find_member(object, key))
    *m = std::move(v);
  else
    object.AddMember(str(key, a), v, a);
}

}  // namespace

api::Result<RenderResult> render_istio_operator(const Value& iop) {
  // The object as istioctl reads a -f file: what the cluster added (status, managedFields,
  // resourceVersion, labels, annotations) is not part of the install's input.
  Document input(rapidjson::kObjectType);
  Allocator& a = input.GetAllocator();
  for (std::string_view key : {"apiVersion", "kind"})
    if (const Value* v = api::find_member(iop, key)) set_member(input, key, Value(*v, a), a);
  Value md(rapidjson::kObjectType);
  for (std::string_view key : {"name", "namespace"})
    if (std::string v = api::string_at(iop, {"metadata", key}); !v.empty())
      set_member(md, key, str(v, a), a);
  set_member(input, "metadata", std::move(md), a);
  if (const Value* spec = api::find_member(iop, "spec"))
    set_member(input, "spec", Value(*spec, a), a);
  std::string name = api::string_at(iop, {"metadata", "name"});
  istioctl::PipelineInputs inputs;
  inputs.files.push_back(
      {"IstioOperator " + (name.empty() ? std::string("(unnamed)") : name), api::to_json(input)});
  auto generated = istioctl::generate(inputs);
  if (!generated.ok()) return generated.error();
  RenderResult result;
  result.warnings = std::move(generated->warnings);
  result.objects.reserve(generated->objects.size());
  for (istioctl::PipelineObject& o : generated->objects)
    result.objects.push_back({std::move(o.component), std::move(o.object)});
  return result;
}

std::string to_multi_document_yaml(const RenderResult& result) {
  std::string out;
  for (std::size_t i = 0; i < result.objects.size(); ++i) {
    if (i > 0) out += "---\n";
    out += api::json_to_yaml(result.objects[i].object);
  }
  return out;
}

}  // namespace meshop::manifest
