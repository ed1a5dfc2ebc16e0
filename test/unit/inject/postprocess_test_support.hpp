// Helpers shared by the postprocess_*_test.cpp files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/json.hpp"
#include "operator/inject/mesh/mesh_config.hpp"

namespace meshop::inject::testing {

// A MeshConfig with only what post-processing reads.
class FakeMesh : public MeshConfig {
 public:
  explicit FakeMesh(bool merge = true) : merge_(merge) {}
  const rapidjson::Value& json() const override { return null_; }
  std::shared_ptr<const ProxyConfig> default_proxy_config() const override { return nullptr; }
  bool enable_prometheus_merge() const override { return merge_; }
  std::string_view inbound_traffic_policy_mode() const override { return "passthrough"; }

 private:
  bool merge_;
  rapidjson::Value null_;
};

inline api::Document parse(std::string_view json) {
  auto d = api::parse_json(json);
  if (!d.ok()) {
    ADD_FAILURE() << d.message() << " in " << json;
    return api::Document(rapidjson::kObjectType);
  }
  return std::move(*d);
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// pkg/kube/inject/testdata/inject of the pinned istio.io/istio module (hack/lib/versions.sh),
// or "" when it is not in the Go module cache. MESHOP_ISTIO_DIR overrides the module directory.
inline std::filesystem::path istio_inject_testdata() {
  namespace fs = std::filesystem;
  const fs::path sub = "pkg/kube/inject/testdata/inject";
  if (const char* dir = std::getenv("MESHOP_ISTIO_DIR"); dir != nullptr && *dir != '\0') {
    return fs::is_directory(fs::path(dir) / sub) ? fs::path(dir) / sub : fs::path();
  }
  // The pin (hack/lib/versions.sh) from the source tree: found from this file's path when it
  // is absolute, else upwards from the test binary and from the working directory.
  std::string version;
  std::vector<fs::path> starts = {fs::path(__FILE__).parent_path()};
  std::error_code ec;
  starts.push_back(fs::read_symlink("/proc/self/exe", ec).parent_path());
  starts.push_back(fs::current_path(ec));
  for (fs::path dir : starts) {
    for (; !dir.empty() && version.empty(); dir = dir.parent_path()) {
      std::string text = read_file(dir / "hack/lib/versions.sh");
      if (auto pos = text.find("ISTIO_MODULE_VERSION="); pos != std::string::npos) {
        pos += std::string_view("ISTIO_MODULE_VERSION=").size();
        version = text.substr(pos, text.find('\n', pos) - pos);
      }
      if (dir == dir.parent_path()) break;
    }
    if (!version.empty()) break;
  }
  if (version.empty()) return {};
  std::vector<fs::path> caches;
  if (const char* c = std::getenv("GOMODCACHE"); c != nullptr && *c != '\0') caches.emplace_back(c);
  if (const char* p = std::getenv("GOPATH"); p != nullptr && *p != '\0') {
    caches.push_back(fs::path(p) / "pkg/mod");
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    caches.push_back(fs::path(h) / "go/pkg/mod");
  }
  for (const auto& cache : caches) {
    fs::path candidate = cache / ("istio.io/istio@" + version) / sub;
    if (fs::is_directory(candidate, ec)) return candidate;
  }
  return {};
}

}  // namespace meshop::inject::testing
