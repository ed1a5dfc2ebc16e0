// libFuzzer target for the install renderer — istioctl's pipeline over Istio's own charts of
// the bundled chart sets (manifest::render_istio_operator -> istioctl::generate, rendered by
// meshop::helm) — on what an IstioOperator author controls: the whole resource (version,
// profile, components on/off, gateways with labels, k8s settings and overlays, values,
// meshConfig, revision, hub/tag), as the YAML `kubectl apply` would send.
//
// Whatever the input: validation and rendering return a result or an error, never a crash, a
// sanitizer report or a hang; a rendered object always has apiVersion, kind and a name, and the
// multi-document YAML of a render reads back as the same objects (json_equal), in order.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/istio_operator.hpp"
#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/render.hpp"

namespace {

using namespace meshop;

void check(bool ok, const char* what, const api::Value& object) {
  if (ok) return;
  std::fprintf(stderr, "rendered object without %s: %s\n", what, api::to_json(object).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Bigger inputs only slow the search; the apiserver bounds objects at 1.5 MB anyway.
  if (size > 64 * 1024) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto iop = api::yaml_to_json(text);
  if (!iop.ok() || !iop->IsObject()) return 0;
  api::IstioOperatorValidation validation = api::validate_istio_operator(*iop);
  if (!validation.ok()) return 0;
  auto rendered = manifest::render_istio_operator(*iop);
  if (!rendered.ok()) return 0;
  for (const manifest::RenderedObject& r : rendered->objects) {
    check(r.object.IsObject(), "an object body", r.object);
    check(!api::string_at(r.object, {"apiVersion"}).empty(), "apiVersion", r.object);
    check(!api::string_at(r.object, {"kind"}).empty(), "kind", r.object);
    check(!api::string_at(r.object, {"metadata", "name"}).empty(), "metadata.name", r.object);
  }
  std::string yaml = manifest::to_multi_document_yaml(*rendered);
  std::size_t documents = 0;
  std::size_t pos = 0;
  while (pos < yaml.size()) {
    std::size_t end = yaml.find("\n---\n", pos);
    std::string_view doc(yaml.data() + pos, (end == std::string::npos ? yaml.size() : end) - pos);
    if (!doc.empty() && doc != "---") {
      auto back = api::yaml_to_json(doc);
      if (!back.ok()) {
        std::fprintf(stderr, "rendered YAML does not read back: %s\n%.*s\n", back.message().c_str(),
                     static_cast<int>(doc.size()), doc.data());
        std::abort();
      }
      if (documents < rendered->objects.size() &&
          !api::json_equal(*back, rendered->objects[documents].object)) {
        std::fprintf(stderr, "rendered YAML reads back as another object:\n%.*s\nwas %s\n",
                     static_cast<int>(doc.size()), doc.data(),
                     api::to_json(rendered->objects[documents].object).c_str());
        std::abort();
      }
      ++documents;
    }
    if (end == std::string::npos) break;
    pos = end + 5;
  }
  if (documents != rendered->objects.size()) {
    std::fprintf(stderr, "%zu objects rendered, %zu YAML documents written\n",
                 rendered->objects.size(), documents);
    std::abort();
  }
  return 0;
}
