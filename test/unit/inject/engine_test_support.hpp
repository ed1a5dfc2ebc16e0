// Shared helpers of the engine_*_test.cpp files: upstream data from the Go module cache
// (read at test time, never committed) and small JSON builders.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/yaml.hpp"

namespace meshop::inject::engine_test {

// The istio.io/istio module: $MESHOP_ISTIO_MODULE_DIR, else the newest istio.io/istio@* under
// $GOMODCACHE or $HOME/go/pkg/mod (hack/istio-module.sh downloads the pinned one). nullopt when
// none is there.
inline std::optional<std::filesystem::path> istio_module_dir() {
  namespace fs = std::filesystem;
  if (const char* d = std::getenv("MESHOP_ISTIO_MODULE_DIR"); d != nullptr && *d != '\0')
    return fs::path(d);
  std::vector<fs::path> caches;
  if (const char* c = std::getenv("GOMODCACHE"); c != nullptr && *c != '\0') caches.emplace_back(c);
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    caches.emplace_back(fs::path(h) / "go/pkg/mod");
  for (const auto& cache : caches) {
    std::error_code ec;
    std::string best;
    for (const auto& e : fs::directory_iterator(cache / "istio.io", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind("istio@", 0) == 0 && e.path().string() > best) best = e.path().string();
    }
    if (!best.empty()) return fs::path(best);
  }
  return std::nullopt;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline api::Document json(std::string_view text) {
  auto doc = api::parse_json(text);
  if (!doc) {
    api::Document d;
    d.SetNull();
    return d;
  }
  return std::move(*doc);
}

// The operations turning `from` into `to`, for readable failure messages.
inline std::string json_diff(const api::Value& from, const api::Value& to) {
  return api::to_json(api::create_json_patch(from, to), api::JsonWriteOptions{.indent = 1});
}

// `text` with every line indented by `n` spaces (to embed a template in a config).
inline std::string indent(std::string_view text, int n) {
  std::string pad(static_cast<std::size_t>(n), ' ');
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? nl : nl - start + 1);
    if (line != "\n") out += pad;
    out += line;
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (out.empty() || out.back() != '\n') out += '\n';
  return out;
}

}  // namespace meshop::inject::engine_test
