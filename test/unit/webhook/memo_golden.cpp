// meshop_webhook_memo_golden: every pod of upstream's injection golden corpus (the fixtures of
// test/golden, hack/injectoracle.sh settings) through the webhook's serve() three times with
// the real engine: without memoization (fresh), then twice with an InjectionCache (a miss
// that stores, then a hit with another uid). The memoized replies must be the fresh one byte
// for byte, with their own uid; a configuration the engine calls memoizable must produce hits.
//
//   meshop_webhook_memo_golden --fixtures DIR [--verbose]
//
// Exit status 0 when every pod passes and at least one answer came from memory; 1 otherwise;
// 2 on usage or fixture errors.
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "api/json.hpp"
#include "operator/webhook/admission.hpp"
#include "operator/webhook/injection_cache.hpp"
#include "test/golden/inject_oracle.hpp"

namespace {

namespace api = meshop::api;
namespace mt = meshop::test;
namespace wh = meshop::webhook;

std::string review(const std::string& uid, const std::string& ns, const std::string& pod) {
  std::string body =
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":)";
  api::append_json(body, rapidjson::Value(rapidjson::StringRef(uid.c_str())));
  body += R"(,"kind":{"group":"","version":"v1","kind":"Pod"},"namespace":)";
  api::append_json(body, rapidjson::Value(rapidjson::StringRef(ns.c_str())));
  body += R"(,"operation":"CREATE","object":)" + pod + "}}";
  return body;
}

wh::HttpReply post(const wh::AdmissionContext& ctx, const std::string& body) {
  wh::HttpRequest r;
  r.method = "POST";
  r.target = "/inject";
  r.content_type = "application/json";
  r.body = body;
  return wh::serve(ctx, r);
}

int usage(const std::string& message) {
  std::cerr << "meshop_webhook_memo_golden: " << message
            << "\nusage: meshop_webhook_memo_golden --fixtures DIR [--verbose]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--fixtures" && i + 1 < argc) {
      fixtures = argv[++i];
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      return usage("unknown argument " + a);
    }
  }
  if (fixtures.empty()) return usage("--fixtures is required");
  auto cases_text = mt::read_text_file(fixtures + "/cases.json");
  if (!cases_text) return usage(cases_text.message());
  auto root = api::parse_json(*cases_text);
  if (!root) return usage("cases.json: " + root.message());
  const auto* cases = api::find_member(*root, "cases");
  if (cases == nullptr || !cases->IsArray()) return usage("cases.json has no cases");

  wh::Engine engine = wh::default_engine();
  std::map<std::string, std::shared_ptr<const meshop::inject::Snapshot>> snapshots;
  int pods = 0, failures = 0, hits_expected = 0, hits = 0, case_count = 0;
  for (const auto& c : cases->GetArray()) {
    const auto* webhook = api::find_member(c, "webhook_path");
    if (webhook == nullptr || !webhook->IsBool() || !webhook->GetBool()) continue;
    std::string name = api::string_at(c, {"name"});
    std::string settings = api::string_at(c, {"settings"});
    std::string native = api::string_at(c, {"native_sidecars"});
    std::string compliance = api::string_at(c, {"compliance_policy"});
    std::string revision = api::string_at(c, {"revision"});
    bool openshift = false;
    if (const auto* o = api::find_member(c, "openshift"); o && o->IsBool())
      openshift = o->GetBool();
    std::vector<std::string> nodes;
    if (const auto* n = api::find_member(c, "node_kubelet_versions"); n && n->IsArray())
      for (const auto& v : n->GetArray())
        if (v.IsString()) nodes.emplace_back(v.GetString(), v.GetStringLength());
    auto built = mt::load_snapshot(fixtures + "/settings/" + settings, native, compliance, revision,
                                   nodes, openshift);
    if (!built) {
      // The golden suite reports these; nothing to serve here.
      if (verbose) std::cout << "SKIP " << name << ": " << built.message() << "\n";
      continue;
    }
    ++case_count;
    // One store, context and cache per case: its configuration is the store's default.
    wh::RevisionStore store;
    wh::RevisionConfig config;
    config.revision = "default";
    config.snapshot = *built;
    store.publish(config);
    wh::InjectionCache cache;
    wh::AdmissionContext fresh_ctx{store, engine, nullptr, "default", nullptr};
    wh::AdmissionContext memo_ctx{store, engine, nullptr, "default", &cache};
    bool memoizable = engine.memoizable(*store.get("default"));

    std::string pods_path = api::string_at(c, {"pods"});
    if (!pods_path.starts_with("/")) pods_path = fixtures + "/" + pods_path;
    std::ifstream in(pods_path, std::ios::binary);
    std::string line;
    int part = 0;
    while (std::getline(in, line)) {
      auto doc = api::parse_json(line);
      if (!doc) return usage(pods_path + ": " + doc.message());
      const auto* pod = api::find_member(*doc, "pod");
      if (pod == nullptr) continue;
      std::string ns = api::string_at(*doc, {"namespace"});
      std::string pod_json = api::to_json(*pod);
      std::string where = name + " part " + std::to_string(part++);
      ++pods;
      auto fresh = post(fresh_ctx, review("uid-a", ns, pod_json));
      auto stored = post(memo_ctx, review("uid-a", ns, pod_json));
      auto before = cache.stats().hits;
      auto again = post(memo_ctx, review("uid-b", ns, pod_json));
      bool hit = cache.stats().hits == before + 1;
      std::string want_again = fresh.body;
      if (auto at = want_again.find("\"uid\":\"uid-a\""); at != std::string::npos)
        want_again.replace(at, 13, "\"uid\":\"uid-b\"");
      bool answered = fresh.body.find("\"allowed\":true") != std::string::npos;
      std::string problem;
      if (stored.body != fresh.body || stored.status != fresh.status) {
        problem = "the storing reply differs from the fresh one";
      } else if (again.body != want_again || again.status != fresh.status) {
        problem = "the memoized reply differs from the fresh one";
      } else if (memoizable && answered && !hit) {
        problem = "a memoizable answer was not found again";
      } else if (!answered && hit) {
        problem = "a failure was memoized";
      }
      if (memoizable && answered) ++hits_expected;
      if (hit) ++hits;
      if (!problem.empty()) {
        ++failures;
        std::cout << "FAIL " << where << ": " << problem
                  << "\n  fresh:    " << fresh.body.substr(0, 300)
                  << "\n  memoized: " << again.body.substr(0, 300) << "\n";
      } else if (verbose) {
        std::cout << "PASS " << where << (hit ? " (hit)" : " (not memoized)") << "\n";
      }
    }
  }
  std::cout << "memoized webhook answers over the golden corpus: " << case_count << " cases, "
            << pods << " pods, " << failures << " failed, " << hits << " of " << hits_expected
            << " memoizable answers found again\n";
  if (pods == 0) return usage("no pods in the fixtures");
  return failures == 0 && hits > 0 && hits == hits_expected ? 0 : 1;
}
