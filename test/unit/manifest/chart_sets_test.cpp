// The chart sets compiled into the binary (manifests/versions.yaml, hack/chart-sets.sh): both
// bundled versions are there with their table entries, their bytes are the module's files (the
// table's sha256, recomputed here over what the binary holds), and every chart loads from the
// embedded set exactly as from the module's directory in the Go module cache.
#include "operator/manifest/chart_sets.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/helm/chart.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/template/funcs_support.hpp"
#include "test/unit/manifest/test_support.hpp"

namespace meshop::manifest {
namespace {

namespace fs = std::filesystem;

std::string sha256_hex(const ChartSet& s) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (const auto& [path, data] : s.files) {
    std::string head = path + "\n" + std::to_string(data.size()) + "\n";
    EVP_DigestUpdate(ctx, head.data(), head.size());
    EVP_DigestUpdate(ctx, data.data(), data.size());
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

// The module directory of a bundled version (hack/chart-sets.sh --dir), "" when unavailable.
std::string module_dir(const std::string& version) {
  return testing::hack_output("chart-sets.sh", {"--dir", version});
}

std::string json(const template_engine::Value& v) {
  std::string out;
  EXPECT_TRUE(template_engine::funcs::append_json(out, v, {}));
  return out;
}

void expect_same_chart(const helm::Chart& a, const helm::Chart& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  EXPECT_EQ(a.version, b.version) << where;
  EXPECT_EQ(a.full_path, b.full_path) << where;
  EXPECT_EQ(json(a.metadata), json(b.metadata)) << where;
  EXPECT_EQ(json(a.values), json(b.values)) << where;
  ASSERT_EQ(a.templates.size(), b.templates.size()) << where;
  for (std::size_t i = 0; i < a.templates.size(); ++i) {
    EXPECT_EQ(a.templates[i].name, b.templates[i].name) << where;
    EXPECT_EQ(a.templates[i].data, b.templates[i].data) << where << " " << a.templates[i].name;
  }
  ASSERT_EQ(a.files.size(), b.files.size()) << where;
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].name, b.files[i].name) << where;
    EXPECT_EQ(a.files[i].data, b.files[i].data) << where << " " << a.files[i].name;
  }
  ASSERT_EQ(a.dependencies.size(), b.dependencies.size()) << where;
  for (std::size_t i = 0; i < a.dependencies.size(); ++i)
    expect_same_chart(a.dependencies[i], b.dependencies[i], where + " > " + a.dependencies[i].name);
}

TEST(ChartSets, BothVersionsAreBundledAsTheTableSays) {
  ASSERT_EQ(chart_sets().size(), 2u);
  EXPECT_EQ(default_chart_set().version, "1.31");
  const ChartSet* v131 = find_chart_set("1.31");
  const ChartSet* v130 = find_chart_set("1.30");
  ASSERT_NE(v131, nullptr);
  ASSERT_NE(v130, nullptr);
  EXPECT_EQ(find_chart_set("1.29"), nullptr);
  EXPECT_EQ(v131->module, "v0.0.0-20260827124520-eed52ebb66ad");
  EXPECT_EQ(v130->module, "v0.0.0-20260826214018-9739e10eb9d7");
  EXPECT_NE(v131->tag, v130->tag) << "two versions' proxies must differ";
  EXPECT_FALSE(v131->hub.empty());
  for (const ChartSet* s : {v131, v130}) {
    EXPECT_EQ(sha256_hex(*s), s->sha256)
        << "the embedded bytes of " << s->version << " are not the files the table names";
    for (const char* f :
         {"charts/base/Chart.yaml", "charts/istio-control/istio-discovery/values.yaml",
          "charts/istio-control/istio-discovery/files/injection-template.yaml",
          "profiles/default.yaml"})
      EXPECT_TRUE(s->file(f).has_value()) << s->version << " " << f;
    std::vector<std::string> profiles = s->profiles();
    for (const char* p : {"default", "minimal", "demo", "ambient", "openshift", "remote"})
      EXPECT_NE(std::find(profiles.begin(), profiles.end(), p), profiles.end())
          << s->version << " profile " << p;
  }
}

// The CRD's spec.version enum is the bundled versions, newest first, as the table lists them:
// a version added to manifests/versions.yaml but not to crd/istiooperator.yaml (or the other
// way round) would be refused by the apiserver or accepted and then fail to render.
TEST(ChartSets, CrdVersionEnumIsTheBundledVersions) {
  std::ifstream in(std::string(MESHOP_SOURCE_DIR) + "/crd/istiooperator.yaml");
  ASSERT_TRUE(in) << "crd/istiooperator.yaml";
  std::stringstream text;
  text << in.rdbuf();
  auto crd = api::yaml_to_json(text.str());
  ASSERT_TRUE(crd.ok()) << crd.message();
  const api::Value* versions = api::find(*crd, "/spec/versions");
  ASSERT_TRUE(versions != nullptr && versions->IsArray() && !versions->Empty());
  std::vector<std::string> bundled;
  for (const ChartSet& s : chart_sets())
    bundled.push_back(s.version);
  for (const api::Value& v : versions->GetArray()) {
    const api::Value* e =
        api::find(v, "/schema/openAPIV3Schema/properties/spec/properties/version/enum");
    ASSERT_TRUE(e != nullptr && e->IsArray()) << api::string_at(v, {"name"}) << ": no enum";
    std::vector<std::string> listed;
    for (const api::Value& x : e->GetArray())
      listed.push_back(x.IsString() ? x.GetString() : "(not a string)");
    EXPECT_EQ(listed, bundled) << api::string_at(v, {"name"});
  }
  EXPECT_EQ(bundled.front(), default_chart_set().version) << "the default is the newest";
}

TEST(ChartSets, EveryChartLoadsFromTheBinaryAsFromTheModuleCache) {
  for (const ChartSet& s : chart_sets()) {
    std::string dir = module_dir(s.version);
    if (dir.empty() || !fs::exists(dir))
      GTEST_SKIP() << "module of " << s.version << " not available";
    int charts = 0;
    for (const auto& [path, data] : s.files) {
      if (!path.ends_with("/Chart.yaml") || path.rfind("charts/", 0) != 0) continue;
      std::string root = path.substr(0, path.size() - std::string("/Chart.yaml").size());
      if (root.find("/charts/") != std::string::npos)
        continue;  // a subchart: loaded with its parent
      auto embedded = helm::load_chart(s.tree(root), s.version + ":" + root);
      auto on_disk = helm::load_chart(fs::path(dir) / "manifests" / root);
      ASSERT_TRUE(embedded.ok()) << embedded.message();
      ASSERT_TRUE(on_disk.ok()) << on_disk.message();
      expect_same_chart(*embedded, *on_disk, s.version + ":" + root);
      ++charts;
    }
    EXPECT_GE(charts, 8) << s.version;
  }
}

TEST(ChartSets, ErrorsOfAnEmbeddedChartNameIt) {
  helm::ChartTree tree = {{"values.yaml", "a: 1\n"}};
  auto c = helm::load_chart(tree, "1.31:charts/missing");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), "chart 1.31:charts/missing: Chart.yaml file is missing");
  tree = {{"Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n"}, {"charts/sub.tgz", ""}};
  c = helm::load_chart(tree, "x");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("charts/sub.tgz: packaged subcharts are not supported"),
            std::string::npos)
      << c.message();
}

// `--version V` renders the bundled set of V: the same objects as istioctl's pipeline over the
// module's own manifests/ directory (which manifest_differential proves equal to upstream's
// renderer), with V's hub and tag laid over the profile as istioctl's build hub/tag are.
TEST(ChartSets, BundledVersionRendersAsItsModuleDirectoryWithItsHubAndTag) {
  for (const ChartSet& s : chart_sets()) {
    std::string dir = module_dir(s.version);
    if (dir.empty() || !fs::exists(dir))
      GTEST_SKIP() << "module of " << s.version << " not available";
    for (const char* profile : {"default", "ambient", "openshift"}) {
      istioctl::PipelineInputs bundled;
      bundled.version = s.version;
      bundled.set_flags = {std::string("profile=") + profile};
      istioctl::PipelineInputs on_disk;
      on_disk.manifests = dir + "/manifests";
      on_disk.set_flags = {std::string("profile=") + profile, "hub=" + s.hub, "tag=" + s.tag};
      auto a = istioctl::generate(bundled);
      auto b = istioctl::generate(on_disk);
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      std::string sa = istioctl::to_istioctl_stream(*a), sb = istioctl::to_istioctl_stream(*b);
      EXPECT_EQ(sa, sb) << s.version << " " << profile;
      EXPECT_NE(sa.find("image: " + s.hub + "/pilot:" + s.tag), std::string::npos)
          << s.version << " " << profile << ": istiod does not run the version's image";
    }
  }
}

struct Cmd {
  int code;
  std::string out, err;
};
Cmd generate_cmd(std::vector<std::string> args) {
  std::ostringstream out, err;
  cli::Context ctx{out, err, {}};
  CLI::App root{"test", "meshop"};
  root.require_subcommand(1);
  cli::add_manifest_command(root, ctx);
  args.insert(args.begin(), {"manifest", "generate"});
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    root.parse(rev);
  } catch (const CLI::ParseError& e) {
    return {cli::kExitUsage, "", e.what()};
  }
  return {ctx.action(), out.str(), err.str()};
}

TEST(ChartSets, ManifestGenerateVersionFlag) {
  Cmd ok = generate_cmd({"--version", "1.30", "--set", "profile=minimal"});
  EXPECT_EQ(ok.code, cli::kExitOk) << ok.err;
  EXPECT_NE(ok.out.find("1.30-dev.9739e10eb9d7"), std::string::npos);
  EXPECT_EQ(ok.out.find("1.31-dev"), std::string::npos);
  Cmd unknown = generate_cmd({"--version", "1.29"});
  EXPECT_EQ(unknown.code, cli::kExitError);
  EXPECT_NE(unknown.err.find("unknown Istio version \"1.29\" (bundled: 1.31, 1.30)"),
            std::string::npos)
      << unknown.err;
  Cmd profile = generate_cmd({"--version", "1.31", "--set", "profile=nope"});
  EXPECT_EQ(profile.code, cli::kExitError);
  EXPECT_NE(profile.err.find("profile \"nope\" not found in Istio 1.31 (profiles: "),
            std::string::npos)
      << profile.err;
  Cmd both = generate_cmd({"--version", "1.31", "--manifests", "/tmp"});
  EXPECT_EQ(both.code, cli::kExitError);
  EXPECT_NE(both.err.find("--manifests and --version both name a chart set"), std::string::npos);
}

}  // namespace
}  // namespace meshop::manifest
