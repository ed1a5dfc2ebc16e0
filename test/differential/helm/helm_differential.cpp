// Differential test of meshop::helm against Helm's own engine (hack/renderoracle.sh
// helm-template, helm.sh/helm/v4 from the pinned istio.io/istio module graph): every chart of
// the module's manifests/charts with its default values, `revision: canary`, and every
// profile, platform and compatibility version its files/profile-*.yaml offer. Each template's
// output is compared as parsed YAML documents (empty documents dropped, as istioctl's splitter
// does); a case where both renderers fail counts as identical when meshop's error names the
// same file location as Helm's.
//
//   meshop_helm_differential --istio DIR --oracle BIN --work DIR [--charts DIR]...
//       [--min-identical N] [--max-differ M] [--verbose]
//   meshop_helm_differential --bench CHARTDIR N      (mean render time, for hack/bench-helm.sh)
// --charts adds every chart under DIR (meshop's own feature charts in testdata/).
//
// Prints "N identical, M differ" and the differing template paths; exits 1 when fewer than
// N outputs are identical or more than M differ (and when nothing is identical: the suite
// must not pass vacuously).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/helm/render.hpp"
#include "operator/template/funcs_support.hpp"

namespace fs = std::filesystem;
using namespace meshop;

namespace {

struct Case {
  std::string label;
  std::string values_yaml;  // the override values
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  int rc = pclose(p);
  return {rc, out};
}

// The non-empty documents of a YAML stream as JSON text, or the parse error.
std::vector<std::string> documents(const std::string& text) {
  auto docs = api::yaml_stream_to_json(text);
  if (!docs) return {"<unparsable: " + docs.message() + ">"};
  std::vector<std::string> out;
  for (const auto& d : *docs)
    if (!d.IsNull()) out.push_back(api::to_json(d));
  return out;
}

std::vector<Case> cases_for(const fs::path& chart) {
  std::vector<Case> cases{{"default", ""}, {"revision=canary", "revision: canary\n"}};
  std::vector<std::string> profiles;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(chart / "files", ec)) {
    std::string n = e.path().filename().string();
    if (n.starts_with("profile-") && n.ends_with(".yaml"))
      profiles.push_back(n.substr(8, n.size() - 13));
  }
  std::sort(profiles.begin(), profiles.end());
  // chart-testing's convention: ci/*-values.yaml are value sets the chart must render with.
  std::vector<fs::path> ci;
  for (const auto& e : fs::directory_iterator(chart / "ci", ec))
    if (e.path().filename().string().ends_with("-values.yaml")) ci.push_back(e.path());
  std::sort(ci.begin(), ci.end());
  for (const fs::path& p : ci) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    cases.push_back({"ci/" + p.filename().string(), ss.str()});
  }
  for (const std::string& p : profiles) {
    if (p.starts_with("compatibility-version-"))
      cases.push_back({"compatibilityVersion=" + p.substr(22),
                       "compatibilityVersion: \"" + p.substr(22) + "\"\n"});
    else if (p.starts_with("platform-"))
      cases.push_back({"platform=" + p.substr(9), "platform: " + p.substr(9) + "\n"});
    else
      cases.push_back({"profile=" + p, "profile: " + p + "\n"});
  }
  return cases;
}

// "execution error at (base/templates/x.yaml:3:4): ..." -> "base/templates/x.yaml:3:4".
std::string error_location(const std::string& e) {
  auto open = e.find(" at (");
  auto close = e.find(')', open);
  if (open != std::string::npos && close != std::string::npos)
    return e.substr(open + 5, close - open - 5);
  auto t = e.find("template: ");
  if (t == std::string::npos) return e;
  auto colon = e.find(": ", t + 10);
  return e.substr(t + 10, colon - t - 10);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--bench") {
    // --bench CHARTDIR N: the mean time of N renders (coalescing and rendering, not loading),
    // the same work as renderoracle helm-template --repeat N; for hack/bench-helm.sh.
    auto chart = helm::load_chart(argv[2]);
    if (!chart) {
      std::cerr << chart.message() << "\n";
      return 1;
    }
    long n = std::stol(argv[3]);
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
      auto r = helm::render(*chart, template_engine::Value(),
                            {.name = "istio", .namespace_ = "istio-system"});
      if (!r) {
        std::cerr << r.message() << "\n";
        return 1;
      }
    }
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "render: " << n << " runs, " << ms / static_cast<double>(n) << " ms each\n";
    return 0;
  }
  std::string istio, oracle, work;
  long min_identical = -1, max_differ = -1;
  std::vector<std::string> extra_roots;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--istio")
      istio = next();
    else if (a == "--oracle")
      oracle = next();
    else if (a == "--work")
      work = next();
    else if (a == "--min-identical")
      min_identical = std::stol(next());
    else if (a == "--max-differ")
      max_differ = std::stol(next());
    else if (a == "--charts")
      extra_roots.push_back(next());
    else if (a == "--verbose")
      verbose = true;
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  if (istio.empty() || oracle.empty() || work.empty()) {
    std::cerr << "usage: meshop_helm_differential --istio DIR --oracle BIN --work DIR "
                 "[--min-identical N] [--verbose]\n";
    return 2;
  }
  fs::create_directories(work);
  std::vector<fs::path> charts;
  extra_roots.insert(extra_roots.begin(), (fs::path(istio) / "manifests/charts").string());
  for (const std::string& root : extra_roots)
    for (const auto& e : fs::recursive_directory_iterator(root))
      // Subcharts (<chart>/charts/<sub>) are rendered with their parent.
      if (e.path().filename() == "Chart.yaml" &&
          !(e.path().parent_path().parent_path().filename() == "charts" &&
            fs::exists(e.path().parent_path().parent_path().parent_path() / "Chart.yaml")))
        charts.push_back(e.path().parent_path());
  std::sort(charts.begin(), charts.end());

  long identical = 0, differ = 0;
  std::vector<std::string> failures;
  for (const fs::path& dir : charts) {
    auto chart = helm::load_chart(dir);
    for (const Case& c : cases_for(dir)) {
      std::string label = dir.string() + " [" + c.label + "]";
      fs::path vf = fs::path(work) / "values.yaml";
      std::ofstream(vf) << c.values_yaml;
      auto [rc, out] = run(shell_quote(oracle) + " helm-template " + shell_quote(dir.string()) +
                           " -f " + shell_quote(vf.string()) +
                           " --name istio --namespace istio-system --kube-version v1.36.0 2>" +
                           shell_quote((fs::path(work) / "stderr").string()));
      std::string upstream_err;
      std::map<std::string, std::string> upstream;
      if (rc != 0) {
        std::ifstream in(fs::path(work) / "stderr");
        std::stringstream ss;
        ss << in.rdbuf();
        upstream_err = ss.str();
      } else {
        auto doc = api::parse_json(out);
        if (!doc || !doc->IsObject()) {
          std::cerr << label << ": oracle output is not JSON\n";
          return 1;
        }
        for (const auto& m : (*doc)["templates"].GetObject())
          upstream[m.name.GetString()] = m.value.GetString();
      }

      std::string meshop_err;
      std::map<std::string, std::string> mine;
      if (!chart) {
        meshop_err = chart.message();
      } else {
        auto vals = api::yaml_to_json(c.values_yaml);
        template_engine::Value overrides =
            vals && vals->IsObject()
                ? template_engine::funcs::from_rapidjson(*vals)
                : template_engine::Value::map(std::make_shared<template_engine::Map>());
        helm::Capabilities caps;
        caps.kube_version = "v1.36.0";
        auto r =
            helm::render(*chart, overrides, {.name = "istio", .namespace_ = "istio-system"}, caps);
        if (!r)
          meshop_err = r.message();
        else
          mine = r->templates;
      }

      if (!upstream_err.empty() || !meshop_err.empty()) {
        bool same = !upstream_err.empty() && !meshop_err.empty() &&
                    upstream_err.find(error_location(meshop_err)) != std::string::npos;
        (same ? identical : differ) += 1;
        if (!same || verbose)
          failures.push_back(label + ": error: upstream=" + upstream_err.substr(0, 300) +
                             " meshop=" + meshop_err.substr(0, 300));
        continue;
      }
      for (const auto& [path, text] : upstream) {
        auto it = mine.find(path);
        if (it == mine.end()) {
          ++differ;
          failures.push_back(label + " " + path + ": not rendered by meshop");
          continue;
        }
        if (documents(text) == documents(it->second)) {
          ++identical;
        } else {
          ++differ;
          failures.push_back(label + " " + path + ": differs");
          if (verbose) {
            auto a = documents(text), b = documents(it->second);
            for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
              std::string x = i < a.size() ? a[i] : "<none>", y = i < b.size() ? b[i] : "<none>";
              if (x != y) {
                std::cerr << "  upstream: " << x << "\n  meshop:   " << y << "\n";
                break;
              }
            }
          }
        }
      }
      for (const auto& [path, text] : mine)
        if (!upstream.count(path)) {
          ++differ;
          failures.push_back(label + " " + path + ": not rendered by Helm");
        }
    }
  }
  for (const std::string& f : failures)
    std::cout << "DIFF " << f << "\n";
  std::cout << charts.size() << " charts: " << identical << " identical, " << differ << " differ\n";
  if (charts.empty() || identical == 0) return 1;
  if (min_identical >= 0 && identical < min_identical) {
    std::cout << "FAIL: fewer than " << min_identical << " identical\n";
    return 1;
  }
  if (max_differ >= 0 && differ > max_differ) {
    std::cout << "FAIL: more than " << max_differ << " differ\n";
    return 1;
  }
  return 0;
}
