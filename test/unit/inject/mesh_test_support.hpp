// Test helpers of the mesh-config tests: where upstream's test data is.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace meshop::inject::test_support {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The istio.io/istio module directory: $MESHOP_ISTIO_MODULE_DIR, else the newest
// istio.io/istio@* in the Go module cache ($GOMODCACHE, `go env GOMODCACHE`, ~/go/pkg/mod).
// Empty when there is none (tests then skip).
inline std::string istio_module_dir() {
  namespace fs = std::filesystem;
  if (const char* d = std::getenv("MESHOP_ISTIO_MODULE_DIR"); d != nullptr && *d != '\0')
    return fs::is_directory(d) ? d : "";
  std::string cache;
  if (const char* c = std::getenv("GOMODCACHE"); c != nullptr && *c != '\0') cache = c;
  if (cache.empty()) {
    if (FILE* p = popen("go env GOMODCACHE 2>/dev/null", "r")) {
      char buf[4096];
      while (fgets(buf, sizeof buf, p) != nullptr)
        cache += buf;
      pclose(p);
      while (!cache.empty() && (cache.back() == '\n' || cache.back() == '\r'))
        cache.pop_back();
    }
  }
  if (cache.empty())
    if (const char* home = std::getenv("HOME")) cache = std::string(home) + "/go/pkg/mod";
  std::error_code ec;
  std::string best;
  for (const auto& e : fs::directory_iterator(fs::path(cache) / "istio.io", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("istio@", 0) == 0 && e.path().string() > best) best = e.path().string();
  }
  return best;
}

}  // namespace meshop::inject::test_support
