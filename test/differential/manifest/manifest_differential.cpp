// Differential test of meshop's istioctl pipeline (operator/manifest/istioctl_pipeline.hpp)
// against upstream's own renderer (hack/renderoracle generate: istioctl's ManifestGenerate from
// the pinned istio.io/istio module, which embeds the same module's manifests/): every file of
// upstream's operator/cmd/mesh/testdata/manifest-generate/input, every profile of the chart set,
// and a few revisioned installs. meshop renders with --manifests <module>/manifests.
//
//   meshop_manifest_differential --istio DIR --oracle BIN [--manifests DIR]
//       [--min-identical N] [--verbose] [CASE...]
//
// Objects are keyed by (API group, kind, namespace, name) and compared as parsed JSON (list
// order counts). Per case and in total it prints
//   N identical, M differ, K only-upstream, L only-meshop
// and, with --verbose, the differing paths. A case where upstream fails must fail in meshop
// too (counted under "errors"). Exits 1 when fewer than N objects are identical (a ratchet:
// raise MESHOP_MANIFEST_DIFF_MIN_IDENTICAL as meshop gets closer) or nothing is.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace fs = std::filesystem;
using namespace meshop;

namespace {

struct Case {
  std::string name;
  std::vector<std::string> files;
  std::vector<std::string> sets;
  std::string revision;
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
  return {pclose(p), out};
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Key = std::tuple<std::string, std::string, std::string, std::string>;

Key key_of(const api::Value& o) {
  std::string av = api::string_at(o, {"apiVersion"});
  std::size_t slash = av.find('/');
  return {slash == std::string::npos ? "" : av.substr(0, slash), api::string_at(o, {"kind"}),
          api::string_at(o, {"metadata", "namespace"}), api::string_at(o, {"metadata", "name"})};
}

std::string key_text(const Key& k) {
  return std::get<0>(k) + "/" + std::get<1>(k) + "/" + std::get<2>(k) + "/" + std::get<3>(k);
}

// JSON pointers where a and b differ (at most `limit`).
void diff_paths(const api::Value& a, const api::Value& b, const std::string& at,
                std::vector<std::string>& out, std::size_t limit) {
  if (out.size() >= limit) return;
  if (a.IsObject() && b.IsObject()) {
    for (const auto& m : a.GetObject()) {
      std::string p = at + "/" + api::escape_json_pointer_token(api::string_view_of(m.name));
      const api::Value* other = api::find_member(b, api::string_view_of(m.name));
      if (other == nullptr)
        out.push_back(p + " (only upstream)");
      else
        diff_paths(m.value, *other, p, out, limit);
      if (out.size() >= limit) return;
    }
    for (const auto& m : b.GetObject())
      if (api::find_member(a, api::string_view_of(m.name)) == nullptr && out.size() < limit)
        out.push_back(at + "/" + api::escape_json_pointer_token(api::string_view_of(m.name)) +
                      " (only meshop)");
    return;
  }
  if (a.IsArray() && b.IsArray() && a.Size() == b.Size()) {
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      diff_paths(a[i], b[i], at + "/" + std::to_string(i), out, limit);
    return;
  }
  if (!api::json_equal(a, b)) {
    std::string ua = api::to_json(a), mb = api::to_json(b);
    if (ua.size() > 120) ua = ua.substr(0, 120) + "...";
    if (mb.size() > 120) mb = mb.substr(0, 120) + "...";
    out.push_back(at + ": upstream " + ua + " meshop " + mb);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string istio, oracle, manifests;
  long min_identical = 1;
  bool verbose = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--istio")
      istio = next();
    else if (a == "--oracle")
      oracle = next();
    else if (a == "--manifests")
      manifests = next();
    else if (a == "--min-identical")
      min_identical = std::stol(next());
    else if (a == "--verbose")
      verbose = true;
    else
      only.push_back(a);
  }
  if (istio.empty() || oracle.empty()) {
    std::cerr << "usage: meshop_manifest_differential --istio DIR --oracle BIN [--manifests DIR] "
                 "[--min-identical N] [--verbose] [CASE...]\n";
    return 2;
  }
  if (manifests.empty()) manifests = istio + "/manifests";

  std::vector<Case> cases;
  fs::path inputs = fs::path(istio) / "operator/cmd/mesh/testdata/manifest-generate/input";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(inputs))
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  for (const std::string& n : names)
    cases.push_back({"file:" + n, {(inputs / n).string()}, {}, ""});
  std::vector<std::string> profiles;
  for (const auto& e : fs::directory_iterator(fs::path(manifests) / "profiles"))
    if (e.path().extension() == ".yaml") profiles.push_back(e.path().stem().string());
  std::sort(profiles.begin(), profiles.end());
  for (const std::string& p : profiles)
    cases.push_back({"profile:" + p, {}, {"profile=" + p}, ""});
  cases.push_back({"revision:canary", {}, {}, "canary"});
  cases.push_back({"revision:canary-minimal", {}, {"profile=minimal"}, "canary"});
  if (!only.empty()) {
    std::vector<Case> kept;
    for (Case& c : cases)
      for (const std::string& o : only)
        if (c.name == o || c.name.substr(c.name.find(':') + 1) == o) kept.push_back(c);
    cases = std::move(kept);
  }

  long identical = 0, differ = 0, only_up = 0, only_me = 0;
  long err_both = 0, err_up = 0, err_me = 0;
  for (const Case& c : cases) {
    std::string cmd = shell_quote(oracle) + " generate";
    for (const std::string& f : c.files)
      cmd += " -f " + shell_quote(f);
    for (const std::string& s : c.sets)
      cmd += " --set " + shell_quote(s);
    if (!c.revision.empty()) cmd += " --revision " + shell_quote(c.revision);
    fs::path err_file = fs::temp_directory_path() / ("manifest-diff-" + std::to_string(getpid()));
    cmd += " 2>" + shell_quote(err_file.string());
    auto [rc, up_text] = run(cmd);
    if (rc != 0) up_text = read_file(err_file);
    fs::remove(err_file);

    manifest::istioctl::PipelineInputs in;
    for (const std::string& f : c.files)
      in.files.push_back({f, read_file(f)});
    in.set_flags = c.sets;
    in.revision = c.revision;
    in.manifests = manifests;
    auto mine = manifest::istioctl::generate(in);

    if (rc != 0 || !mine.ok()) {
      std::string uerr = rc != 0 ? up_text.substr(0, 200) : "";
      std::string merr = mine.ok() ? "" : mine.message().substr(0, 200);
      while (!uerr.empty() && uerr.back() == '\n')
        uerr.pop_back();
      const char* kind =
          rc != 0 && !mine.ok() ? "both" : (rc != 0 ? "only upstream" : "only meshop");
      (rc != 0 && !mine.ok() ? err_both : (rc != 0 ? err_up : err_me)) += 1;
      std::printf("%-50s error (%s): upstream=%s | meshop=%s\n", c.name.c_str(), kind, uerr.c_str(),
                  merr.c_str());
      if (rc != 0) continue;
    }
    auto docs = api::yaml_stream_to_json(up_text);
    if (!docs.ok()) {
      std::printf("%-50s upstream output unparsable: %s\n", c.name.c_str(), docs.message().c_str());
      ++err_up;
      continue;
    }
    std::map<Key, const api::Value*> up, me;
    for (const api::Document& d : *docs)
      if (d.IsObject()) up[key_of(d)] = &d;
    if (mine.ok())
      for (const auto& o : mine->objects)
        me[key_of(o.object)] = &o.object;
    long ci = 0, cd = 0, cu = 0, cm = 0;
    for (const auto& [k, v] : up) {
      auto it = me.find(k);
      if (it == me.end()) {
        ++cu;
        if (verbose) std::printf("  only upstream: %s\n", key_text(k).c_str());
      } else if (api::json_equal(*v, *it->second)) {
        ++ci;
      } else {
        ++cd;
        if (verbose) {
          std::vector<std::string> paths;
          diff_paths(*v, *it->second, "", paths, 8);
          std::printf("  differ: %s\n", key_text(k).c_str());
          for (const std::string& p : paths)
            std::printf("      %s\n", p.c_str());
        }
      }
    }
    for (const auto& [k, v] : me)
      if (up.find(k) == up.end()) {
        ++cm;
        if (verbose) std::printf("  only meshop: %s\n", key_text(k).c_str());
      }
    identical += ci;
    differ += cd;
    only_up += cu;
    only_me += cm;
    std::printf("%-50s %ld identical, %ld differ, %ld only-upstream, %ld only-meshop\n",
                c.name.c_str(), ci, cd, cu, cm);
  }
  std::printf(
      "TOTAL over %zu cases: %ld identical, %ld differ, %ld only-upstream, %ld only-meshop\n",
      cases.size(), identical, differ, only_up, only_me);
  std::printf("errors: %ld both, %ld only upstream, %ld only meshop\n", err_both, err_up, err_me);
  if (identical == 0 || identical < min_identical) {
    std::printf("FAIL: %ld identical objects, at least %ld required\n", identical, min_identical);
    return 1;
  }
  return 0;
}
