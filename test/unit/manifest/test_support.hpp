// Helpers shared by the manifest tests: render from YAML texts and flags (the bundled chart
// set), find objects.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/manifest/render.hpp"

namespace meshop::manifest::testing {

// What `bash hack/<script> <args>` prints on stdout, trailing newlines dropped (stderr
// discarded), or "" when it cannot run. Needs MESHOP_SOURCE_DIR.
inline std::string hack_output(const std::string& script,
                               const std::vector<std::string>& args = {}) {
  std::string cmd = "bash '" + std::string(MESHOP_SOURCE_DIR) + "/hack/" + script + "'";
  for (const std::string& a : args)
    cmd += " '" + a + "'";
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  char buf[4096];
  std::string out;
  while (fgets(buf, sizeof buf, p) != nullptr)
    out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

// The pinned istio.io/istio module directory ($MESHOP_ISTIO_MODULE, else hack/istio-module.sh,
// which downloads it), or "" when unavailable (tests then skip).
inline std::string istio_module() {
  if (const char* env = std::getenv("MESHOP_ISTIO_MODULE")) return env;
  return hack_output("istio-module.sh");
}

// `meshop manifest generate -f file1 -f file2 ... --set flag ... [--revision r]` over the
// default bundled chart set (istioctl's pipeline over Istio's own charts). A file without
// `kind: IstioOperator` gets the IstioOperator apiVersion and kind prepended (istioctl refuses a
// file without them).
inline api::Result<RenderResult> render_texts(std::vector<std::string> files,
                                              std::vector<std::string> flags = {},
                                              std::string revision = {}) {
  istioctl::PipelineInputs in;
  int i = 0;
  for (std::string& f : files) {
    if (f.find("kind: IstioOperator") == std::string::npos)
      f = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n" + f;
    in.files.push_back({"file" + std::to_string(++i), std::move(f)});
  }
  in.set_flags = std::move(flags);
  in.revision = std::move(revision);
  auto generated = istioctl::generate(in);
  if (!generated.ok()) return generated.error();
  RenderResult out;
  out.warnings = std::move(generated->warnings);
  for (istioctl::PipelineObject& o : generated->objects)
    out.objects.push_back({std::move(o.component), std::move(o.object)});
  return out;
}

inline const api::Value* find_object(const RenderResult& r, std::string_view kind,
                                     std::string_view name) {
  for (const RenderedObject& o : r.objects)
    if (api::string_at(o.object, {"kind"}) == kind &&
        api::string_at(o.object, {"metadata", "name"}) == name)
      return &o.object;
  return nullptr;
}

inline std::vector<std::string> names_of_kind(const RenderResult& r, std::string_view kind) {
  std::vector<std::string> out;
  for (const RenderedObject& o : r.objects)
    if (api::string_at(o.object, {"kind"}) == kind)
      out.push_back(api::string_at(o.object, {"metadata", "name"}));
  return out;
}

inline std::string json_at(const api::Value& v, std::string_view pointer) {
  const api::Value* x = api::find(v, pointer);
  return x == nullptr ? "<missing>" : api::to_json(*x);
}

}  // namespace meshop::manifest::testing
