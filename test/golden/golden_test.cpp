// meshop_golden: upstream Istio's injection golden tests (TestInjection, webhook path) run
// against meshop's engine.
//
//   meshop_golden [--fixtures DIR] [--case NAME]... [--verbose] [--report FILE]
//                 [--min-pass PERCENT] [--oracle PATH] [--list] [--kube-inject]
//
// DIR is what `hack/injectoracle.sh settings --out DIR` wrote (default: the build tree's
// inject-fixtures, made by the target meshop_golden_fixtures): cases.json, the settings of
// every case and, per case, the input pods (objectToPod of each input document or List item)
// with the normalised objectToPod(golden). For every case on the webhook path, each pod goes
// through meshop::inject::inject with a snapshot built from the case's settings; the returned
// JSON patch is applied to the pod and the result compared with the golden as upstream does:
// both decoded into corev1.Pod and re-marshalled (through `injectoracle normalize`, the same Go
// code), sidecar.istio.io/status dropped, env fieldRef apiVersion blanked in containers, list
// order significant. Expected-error cases must fail with the substring (case-insensitive).
//
// --case takes a case name (cases.json "name", e.g. hello, hello.cni, gateway#46), an upstream
// index (00..127), or a substring (every case containing it). Prints one line per failing case
// with its first differing JSON pointer (--verbose: every case, up to 20 differences) and
// "N passed, M failed". The report FILE holds every difference; FILE.d/ holds the got/want
// pods of failing parts as pretty JSON, for diff(1).
// --kube-inject checks upstream's other path instead: meshop::inject::inject_stream on the
// input file (revision "") must give the golden text exactly (both trimmed), expected errors
// must fail, the expected warning must be among the warnings. A text that differs is written
// again as upstream writes the objects it decoded (`injectoracle retype`) and compared once
// more, so Go's typed re-encoding (status: {}, strategy: {}) is not counted as a difference.
// A text difference is reported with its first line and, when the documents differ as JSON
// too, the first JSON pointer.
// Exit status: with --min-pass, 0 iff the pass rate is at least PERCENT; otherwise 0 iff no
// selected case failed. 2 on usage or fixture errors.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/inject/workloads.hpp"
#include "test/golden/inject_oracle.hpp"

#ifndef MESHOP_GOLDEN_FIXTURES_DEFAULT
#define MESHOP_GOLDEN_FIXTURES_DEFAULT "inject-fixtures"
#endif
#ifndef MESHOP_GOLDEN_REPORT_DEFAULT
#define MESHOP_GOLDEN_REPORT_DEFAULT "golden-report.txt"
#endif

namespace {

namespace api = meshop::api;
namespace mt = meshop::test;
using meshop::inject::Outcome;

struct Options {
  std::string fixtures = MESHOP_GOLDEN_FIXTURES_DEFAULT;
  std::string report = MESHOP_GOLDEN_REPORT_DEFAULT;
  std::string oracle;
  std::vector<std::string> cases;
  bool verbose = false;
  bool list = false;
  bool kube_inject = false;
  double min_pass = -1;
};

struct CaseInfo {
  int index = 0;
  std::string name, upstream_name, settings, native, compliance, revision, expect_error, pods,
      oracle_check, input, golden, expected_log;
  bool webhook = false, openshift = false, kube_inject = false;
  std::vector<std::string> nodes;  // kubelet versions of upstream's fake cluster
  std::vector<std::string> notes;
};

struct PartRun {
  std::string ns;
  api::Document input;
  std::string want;  // normalised golden pod (compact JSON); empty for error cases
  mt::MeshopOutcome meshop;
  int normalized_index = -1;
};

struct CaseResult {
  bool pass = false;
  bool retyped = false;  // kube-inject: equal only after Go's typed re-encoding
  std::string got_text;  // kube-inject: meshop's output when it differs from the golden text
  std::string cause;     // one line
  std::vector<std::string> details;  // differences, warnings
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string file_safe(std::string s) {
  for (char& c : s) {
    if (c == '/' || c == '#' || c == ' ') c = '_';
  }
  return s;
}

int usage(const char* msg) {
  std::cerr << "meshop_golden: " << msg
            << "\nusage: meshop_golden [--fixtures DIR] [--case NAME]... [--verbose] "
               "[--report FILE] [--min-pass PERCENT] [--oracle PATH] [--list] [--kube-inject]\n";
  return 2;
}

bool selected(const CaseInfo& c, const std::vector<std::string>& wanted,
              const std::vector<CaseInfo>& all) {
  if (wanted.empty()) return true;
  for (const auto& w : wanted) {
    if (c.name == w) return true;
    bool exact_elsewhere =
        std::any_of(all.begin(), all.end(), [&](const CaseInfo& o) { return o.name == w; });
    if (exact_elsewhere) continue;
    if (!w.empty() &&
        std::all_of(w.begin(), w.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
      if (std::stoi(w) == c.index) return true;
      continue;
    }
    if (c.name.find(w) != std::string::npos) return true;
  }
  return false;
}

std::vector<CaseInfo> read_cases(const api::Value& root) {
  std::vector<CaseInfo> out;
  const auto* cases = api::find_member(root, "cases");
  if (cases == nullptr || !cases->IsArray()) return out;
  for (const auto& c : cases->GetArray()) {
    CaseInfo info;
    if (const auto* i = api::find_member(c, "index"); i && i->IsInt()) info.index = i->GetInt();
    info.name = api::string_at(c, {"name"});
    info.upstream_name = api::string_at(c, {"upstream_name"});
    info.settings = api::string_at(c, {"settings"});
    info.native = api::string_at(c, {"native_sidecars"});
    info.compliance = api::string_at(c, {"compliance_policy"});
    info.revision = api::string_at(c, {"revision"});
    info.expect_error = api::string_at(c, {"expect_error"});
    info.pods = api::string_at(c, {"pods"});
    info.oracle_check = api::string_at(c, {"oracle_check"});
    info.input = api::string_at(c, {"input"});
    info.golden = api::string_at(c, {"golden"});
    info.expected_log = api::string_at(c, {"expected_log"});
    if (const auto* w = api::find_member(c, "webhook_path"); w && w->IsBool()) {
      info.webhook = w->GetBool();
    }
    if (const auto* k = api::find_member(c, "kube_inject_path"); k && k->IsBool()) {
      info.kube_inject = k->GetBool();
    }
    if (const auto* o = api::find_member(c, "openshift"); o && o->IsBool()) {
      info.openshift = o->GetBool();
    }
    if (const auto* n = api::find_member(c, "node_kubelet_versions"); n && n->IsArray()) {
      for (const auto& v : n->GetArray()) {
        if (v.IsString()) info.nodes.emplace_back(v.GetString(), v.GetStringLength());
      }
    }
    if (const auto* n = api::find_member(c, "notes"); n && n->IsArray()) {
      for (const auto& s : n->GetArray()) {
        if (s.IsString()) info.notes.emplace_back(s.GetString(), s.GetStringLength());
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Upstream's kube-inject check: IntoResourceFile's output equals the golden text (both
// trimmed). When the texts differ, the documents are also compared as JSON to tell a
// formatting difference from a content one.
CaseResult check_kube_inject(const CaseInfo& c, const meshop::inject::Snapshot& snapshot,
                             const std::string& report_dir) {
  CaseResult res;
  auto input = mt::read_text_file(c.input);
  if (!input) {
    res.cause = input.message();
    return res;
  }
  meshop::inject::KubeInjectReport kreport;
  api::Result<std::string> out = api::Error{"not run"};
  try {
    out = meshop::inject::inject_stream(snapshot, *input, kreport);
  } catch (const std::exception& e) {
    out = api::Error{std::string("EXCEPTION escaped inject_stream(): ") + e.what()};
  }
  if (!c.expect_error.empty()) {
    if (out) {
      res.cause = "expected an error containing \"" + c.expect_error + "\", meshop succeeded";
    } else if (lower(out.message()).find(c.expect_error) == std::string::npos) {
      res.cause = "error does not contain \"" + c.expect_error + "\": " + out.message();
    } else {
      res.pass = true;
    }
    return res;
  }
  if (!out) {
    res.cause = "meshop failed: " + out.message();
    return res;
  }
  for (const auto& w : kreport.warnings)
    res.details.push_back("warning: " + w);
  if (!c.expected_log.empty() &&
      std::none_of(kreport.warnings.begin(), kreport.warnings.end(), [&](const std::string& w) {
        return w.find(c.expected_log) != std::string::npos;
      })) {
    res.cause = "no warning containing \"" + c.expected_log + "\"";
    return res;
  }
  auto want = mt::read_text_file(c.golden);
  if (!want) {
    res.cause = want.message();
    return res;
  }
  std::string got_text = trim(*out), want_text = trim(*want);
  if (got_text == want_text) {
    res.pass = true;
    return res;
  }
  std::string base = report_dir + "/" + file_safe(c.name) + ".kube-inject";
  std::ofstream(base + ".got.yaml") << *out;
  res.got_text = got_text;
  // First differing line, for the one-line cause.
  std::istringstream gs(got_text), ws(want_text);
  std::string gl, wl;
  int line = 0;
  while (true) {
    ++line;
    bool g = static_cast<bool>(std::getline(gs, gl)), w = static_cast<bool>(std::getline(ws, wl));
    if (!g && !w) break;
    if (!g || !w || gl != wl) {
      res.details.push_back("line " + std::to_string(line) + ": got " +
                            (g ? "`" + gl + "`" : "EOF") + ", want " +
                            (w ? "`" + wl + "`" : "EOF"));
      break;
    }
  }
  auto got_docs = api::yaml_stream_to_json(got_text);
  auto want_docs = api::yaml_stream_to_json(want_text);
  std::string semantic;
  if (!got_docs || !want_docs) {
    semantic = "output does not parse: " + (got_docs ? want_docs.message() : got_docs.message());
  } else if (got_docs->size() != want_docs->size()) {
    semantic =
        std::to_string(got_docs->size()) + " documents, want " + std::to_string(want_docs->size());
  } else {
    for (std::size_t i = 0; i < got_docs->size() && semantic.empty(); ++i) {
      auto diffs = mt::json_differences((*got_docs)[i], (*want_docs)[i], 20);
      if (diffs.empty()) continue;
      semantic = "document " + std::to_string(i) + ": " + diffs.front();
      for (auto& d : diffs)
        res.details.push_back("document " + std::to_string(i) + ": " + d);
    }
  }
  res.cause =
      semantic.empty() ? "same documents, different text: " + res.details.front() : semantic;
  res.details.push_back("diff -u " + c.golden + " " + base + ".got.yaml");
  return res;
}

// Prints and reports the results; the exit status of the program.
int summarize(const Options& opt, const std::vector<const CaseInfo*>& run,
              std::vector<CaseResult>& results, const char* path, const std::string& note = "") {
  int passed = 0, failed = 0;
  std::ofstream report(opt.report, std::ios::trunc);
  for (std::size_t ci = 0; ci < run.size(); ++ci) {
    const CaseInfo& c = *run[ci];
    CaseResult& res = results[ci];
    (res.pass ? passed : failed)++;
    std::string status = res.pass ? "PASS" : "FAIL";
    report << status << " [" << c.index << "] " << c.name << " (settings " << c.settings
           << ", native " << c.native << ")";
    if (!res.cause.empty()) report << ": " << res.cause;
    report << '\n';
    for (const auto& d : res.details)
      report << "    " << d << '\n';
    if (!res.pass || opt.verbose) {
      std::cout << status << " " << c.name;
      if (!res.cause.empty()) std::cout << ": " << res.cause;
      std::cout << '\n';
      if (opt.verbose) {
        std::size_t shown = 0;
        for (const auto& d : res.details) {
          if (shown++ == 20) break;
          std::cout << "    " << d << '\n';
        }
      }
    }
  }
  double rate = run.empty() ? 0.0 : 100.0 * passed / static_cast<double>(run.size());
  std::ostringstream summary;
  summary << path << " path: " << passed << " passed, " << failed << " failed ("
          << static_cast<int>(rate * 10) / 10.0 << "% of " << run.size() << " cases" << note << ")";
  report << summary.str() << '\n';
  std::cout << summary.str() << "\nreport: " << opt.report << '\n';
  if (opt.min_pass >= 0) {
    if (rate + 1e-9 < opt.min_pass) {
      std::cout << "pass rate below the required " << opt.min_pass << "%\n";
      return 1;
    }
    return 0;
  }
  return failed == 0 ? 0 : 1;
}

template <class SnapshotFor>
int run_kube_inject(const Options& opt, const std::vector<const CaseInfo*>& run,
                    SnapshotFor& snapshot_for, const std::string& report_dir) {
  std::vector<CaseResult> results(run.size());
  for (std::size_t ci = 0; ci < run.size(); ++ci) {
    const CaseInfo& c = *run[ci];
    // Upstream's kube-inject runs with revision "".
    const auto& built = snapshot_for(c, std::string());
    if (!built) {
      results[ci].cause = "build_snapshot failed: " + built.message();
      continue;
    }
    results[ci] = check_kube_inject(c, **built, report_dir);
  }
  // Upstream writes what it decoded into typed objects (status: {}, strategy: {}, containers'
  // resources: {}, zero values dropped); meshop writes the documents as given. Texts that
  // differ are written again as upstream would write them (injectoracle retype, upstream's own
  // decoding) and compared once more: equal then means equal content.
  std::vector<std::string> docs;
  std::vector<std::pair<std::size_t, std::size_t>> ranges(run.size());  // [first, end) in docs
  for (std::size_t ci = 0; ci < run.size(); ++ci) {
    ranges[ci] = {docs.size(), docs.size()};
    if (results[ci].pass || results[ci].got_text.empty()) continue;
    std::istringstream in(results[ci].got_text);
    std::string line, doc;
    auto flush = [&] {
      if (doc.find_first_not_of(" \t\n") != std::string::npos) docs.push_back(doc);
      doc.clear();
    };
    while (std::getline(in, line)) {
      if (line.rfind("---", 0) == 0 && line.find_first_not_of(" \t", 3) == std::string::npos) {
        flush();
      } else {
        doc += line + '\n';
      }
    }
    flush();
    ranges[ci].second = docs.size();
  }
  std::size_t exact = 0, retyped = 0;
  std::string note;
  if (!docs.empty() && opt.oracle.empty()) {
    note = "; no oracle to retype differing texts";
  } else if (!docs.empty()) {
    auto typed = mt::retype_documents(opt.oracle, report_dir, docs);
    if (!typed) {
      std::cerr << "golden: " << typed.message() << "\n";
      return 2;
    }
    for (std::size_t ci = 0; ci < run.size(); ++ci) {
      CaseResult& res = results[ci];
      if (ranges[ci].first == ranges[ci].second) continue;
      std::string text, error;
      for (std::size_t d = ranges[ci].first; d < ranges[ci].second; ++d) {
        const auto& r = (*typed)[d];
        if (!r.ok && error.empty()) error = r.text;
        text += r.text + "---\n";
      }
      auto want = mt::read_text_file(run[ci]->golden);
      if (!error.empty()) {
        res.details.push_back("upstream cannot decode meshop's output: " + error);
      } else if (want && trim(text) == trim(*want)) {
        res.pass = res.retyped = true;
        res.cause = "equal after Go's typed re-encoding (" + res.cause + ")";
      } else {
        std::string base = report_dir + "/" + file_safe(run[ci]->name) + ".kube-inject";
        std::ofstream(base + ".retyped.yaml") << text;
        res.details.push_back("as upstream would write it: diff -u " + run[ci]->golden + " " +
                              base + ".retyped.yaml");
      }
    }
  }
  for (const auto& r : results) {
    if (r.pass) (r.retyped ? retyped : exact)++;
  }
  note = "; " + std::to_string(exact) + " byte-identical, " + std::to_string(retyped) +
         " identical after Go's typed re-encoding" + note;
  return summarize(opt, run, results, "kube-inject", note);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--verbose" || a == "-v") {
      opt.verbose = true;
    } else if (a == "--kube-inject") {
      opt.kube_inject = true;
    } else if (a == "--list") {
      opt.list = true;
    } else if (a == "--fixtures" || a == "--case" || a == "--report" || a == "--oracle" ||
               a == "--min-pass") {
      const char* v = next();
      if (v == nullptr) return usage(("missing value for " + a).c_str());
      if (a == "--fixtures") opt.fixtures = v;
      if (a == "--case") opt.cases.emplace_back(v);
      if (a == "--report") opt.report = v;
      if (a == "--oracle") opt.oracle = v;
      if (a == "--min-pass") opt.min_pass = std::atof(v);
    } else {
      return usage(("unknown argument " + a).c_str());
    }
  }

  auto cases_text = mt::read_text_file(opt.fixtures + "/cases.json");
  if (!cases_text) {
    return usage((cases_text.message() +
                  " (generate it: cmake --build <build dir> --target meshop_golden_fixtures)")
                     .c_str());
  }
  auto root = api::parse_json(*cases_text);
  if (!root) return usage(("cases.json: " + root.message()).c_str());
  if (opt.oracle.empty()) opt.oracle = api::string_at(*root, {"oracle"});
  std::vector<CaseInfo> all = read_cases(*root);
  if (all.empty()) return usage("cases.json has no cases");

  std::vector<const CaseInfo*> run;
  for (const auto& c : all) {
    if (!selected(c, opt.cases, all)) continue;
    if (opt.list) {
      std::cout << c.index << '\t' << c.name << '\t' << c.settings << '\t'
                << (c.webhook                ? "webhook"
                    : c.expect_error.empty() ? "kube-inject-only"
                                             : "error")
                << '\t' << c.oracle_check << '\n';
      continue;
    }
    if (opt.kube_inject ? c.kube_inject : (c.webhook || !c.expect_error.empty())) {
      run.push_back(&c);
    }
  }
  if (opt.list) return 0;
  if (run.empty()) return usage("no case on the selected path matches --case");

  std::string report_dir = opt.report + ".d";
  std::filesystem::remove_all(report_dir);
  std::filesystem::create_directories(report_dir);

  // Snapshots are shared by the cases of one (settings, native, compliance, revision).
  std::map<std::string, api::Result<std::shared_ptr<const meshop::inject::Snapshot>>> snapshots;
  auto snapshot_for = [&](const CaseInfo& c, const std::string& revision) -> const auto& {
    std::string key = c.settings + "|" + c.native + "|" + c.compliance + "|" + revision +
                      (c.openshift ? "|openshift" : "");
    for (const auto& n : c.nodes)
      key += "|" + n;
    auto it = snapshots.find(key);
    if (it == snapshots.end()) {
      it = snapshots
               .emplace(key, mt::load_snapshot(opt.fixtures + "/settings/" + c.settings, c.native,
                                               c.compliance, revision, c.nodes, c.openshift))
               .first;
    }
    return it->second;
  };
  if (opt.kube_inject) return run_kube_inject(opt, run, snapshot_for, report_dir);
  std::vector<std::vector<PartRun>> parts(run.size());
  std::vector<CaseResult> results(run.size());
  std::vector<std::string> to_normalize;

  for (std::size_t ci = 0; ci < run.size(); ++ci) {
    const CaseInfo& c = *run[ci];
    CaseResult& res = results[ci];
    if (c.oracle_check != "ok") {
      res.cause =
          "fixture: upstream's own injector does not reproduce the golden with these "
          "settings (" +
          c.oracle_check + ")";
      continue;
    }
    const auto& built = snapshot_for(c, c.revision);
    if (!built) {
      res.cause = "build_snapshot failed: " + built.message();
      continue;
    }
    const auto& snapshot = **built;
    std::string pods_path = c.pods.starts_with("/") ? c.pods : opt.fixtures + "/" + c.pods;
    std::ifstream pods(pods_path, std::ios::binary);
    std::string line;
    while (std::getline(pods, line)) {
      auto doc = api::parse_json(line);
      if (!doc) {
        res.cause = "fixture " + pods_path + ": " + doc.message();
        break;
      }
      PartRun part;
      part.ns = api::string_at(*doc, {"namespace"});
      if (const auto* p = api::find_member(*doc, "pod")) {
        part.input.CopyFrom(*p, part.input.GetAllocator());
      }
      if (const auto* w = api::find_member(*doc, "want")) part.want = api::to_json(*w);
      // Upstream's fake cluster: namespace test-ns carries OpenShift's UID/GID ranges.
      static const api::Document test_ns =
          api::parse_json(
              R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"test-ns","annotations":{)"
              R"("openshift.io/sa.scc.uid-range":"1000620000/10000",)"
              R"("openshift.io/sa.scc.supplemental-groups":"1000620000/10000"}}})")
              .value();
      part.meshop = mt::run_meshop(snapshot, part.input, part.ns,
                                   c.openshift && part.ns == "test-ns" ? &test_ns : nullptr);
      if (!part.meshop.pod_json.empty()) {
        part.normalized_index = static_cast<int>(to_normalize.size());
        to_normalize.push_back(part.meshop.pod_json);
      }
      parts[ci].push_back(std::move(part));
    }
    if (parts[ci].empty() && res.cause.empty()) res.cause = "fixture " + pods_path + ": no parts";
  }

  std::vector<mt::Normalized> normalized;
  if (!to_normalize.empty()) {
    auto n = mt::normalize_pods(opt.oracle, report_dir, to_normalize, /*blank_fieldref=*/true);
    if (!n) return usage(n.message().c_str());
    normalized = std::move(*n);
  }

  for (std::size_t ci = 0; ci < run.size(); ++ci) {
    const CaseInfo& c = *run[ci];
    CaseResult& res = results[ci];
    if (res.cause.empty()) {
      res.pass = true;
      for (std::size_t pi = 0; pi < parts[ci].size(); ++pi) {
        PartRun& part = parts[ci][pi];
        std::string where = parts[ci].size() > 1 ? "part " + std::to_string(pi) + ": " : "";
        if (!part.meshop.warning.empty()) res.details.push_back(where + part.meshop.warning);
        if (!c.expect_error.empty()) {
          if (part.meshop.outcome != Outcome::kFailed) {
            res.pass = false;
            res.cause = where + "expected an error containing \"" + c.expect_error + "\", meshop " +
                        (part.meshop.outcome == Outcome::kSkipped ? "skipped" : "injected");
          } else if (lower(part.meshop.message).find(c.expect_error) == std::string::npos) {
            res.pass = false;
            res.cause =
                where + "error does not contain \"" + c.expect_error + "\": " + part.meshop.message;
          }
          if (!res.pass) break;
          continue;
        }
        if (part.meshop.outcome == Outcome::kFailed) {
          res.pass = false;
          res.cause = where + "meshop failed: " + part.meshop.message;
          break;
        }
        const mt::Normalized& got = normalized[part.normalized_index];
        if (!got.ok) {
          res.pass = false;
          res.cause = where + "meshop's pod does not decode as a corev1.Pod: " + got.text;
          break;
        }
        if (got.text == part.want) continue;
        auto got_doc = api::parse_json(got.text);
        auto want_doc = api::parse_json(part.want);
        if (got_doc && want_doc && api::json_equal(*got_doc, *want_doc)) continue;
        res.pass = false;
        if (got_doc && want_doc) {
          auto diffs = mt::json_differences(*got_doc, *want_doc, 50);
          res.cause = where + (diffs.empty() ? "differs" : diffs.front());
          for (auto& d : diffs)
            res.details.push_back(where + d);
          std::string base = report_dir + "/" + file_safe(c.name) + "." + std::to_string(pi);
          std::ofstream(base + ".got.json") << api::to_pretty_json(*got_doc) << '\n';
          std::ofstream(base + ".want.json") << api::to_pretty_json(*want_doc) << '\n';
          std::ofstream(base + ".patch.json") << part.meshop.patch << '\n';
          res.details.push_back("diff -u " + base + ".want.json " + base + ".got.json");
        } else {
          res.cause = where + "unparseable normalised pod";
        }
        break;
      }
    }
    if (c.openshift && !res.pass) {
      res.details.push_back(
          "note: OpenShift case (PLATFORM=openshift, namespace uid-range 1000620000/10000); "
          "SnapshotSources has no way to say so");
    }
  }
  return summarize(opt, run, results, "webhook");
}
