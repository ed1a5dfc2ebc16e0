// meshop_inject_differential: random pods through meshop's engine and through upstream's
// injector (injectoracle inject, default TestInjection settings), compared.
//
//   meshop_inject_differential --fixtures DIR --pods PODS.jsonl --upstream UPSTREAM.jsonl
//       [--settings ID] [--native auto|true|false] [--case NAME] [--oracle PATH] [--report FILE]
//       [--max-mismatch PERCENT] [--verbose]
//
// PODS.jsonl is what `injectoracle genpods` wrote ({"index", "seed", "namespace", "pod"});
// UPSTREAM.jsonl what `injectoracle inject --settings DIR/settings/ID --native N` answered for
// the same lines (ID defaults to "default", upstream TestInjection's default settings;
// --case NAME takes the settings and native mode of that golden case from cases.json) ({"pod"} |
// {"error"} | {"skipped": true}). Per pod the outcomes must agree: both skipped, both denied with
// the same message (what the user sees from the apiserver), or both injected with equal pods in the
// comparison form of the golden suite (`injectoracle normalize`: decoded into corev1.Pod, status
// annotation dropped). Each mismatch is printed with its seed and index, and the pod, meshop's and
// upstream's results are written to FILE.d/<index>.*.json. Exit status 0 iff mismatches are at most
// PERCENT of the pods (default 0).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "test/golden/inject_oracle.hpp"

namespace {

namespace api = meshop::api;
namespace mt = meshop::test;
using meshop::inject::Outcome;

std::vector<api::Document> read_jsonl(const std::string& path, std::string& error) {
  std::vector<api::Document> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path;
    return out;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto doc = api::parse_json(line);
    if (!doc) {
      error = path + ": " + doc.message();
      return {};
    }
    out.push_back(std::move(*doc));
  }
  return out;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kInjected:
      return "injected";
    case Outcome::kSkipped:
      return "skipped";
    case Outcome::kFailed:
      return "error";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures, pods_path, upstream_path, oracle, report_path = "inject-differential.txt";
  std::string settings = "default", native = "auto", case_name;
  double max_mismatch = 0;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verbose") {
      verbose = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "meshop_inject_differential: bad argument " << a << '\n';
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--fixtures") {
      fixtures = v;
    } else if (a == "--pods") {
      pods_path = v;
    } else if (a == "--upstream") {
      upstream_path = v;
    } else if (a == "--settings") {
      settings = v;
    } else if (a == "--case") {
      case_name = v;
    } else if (a == "--native") {
      native = v;
    } else if (a == "--oracle") {
      oracle = v;
    } else if (a == "--report") {
      report_path = v;
    } else if (a == "--max-mismatch") {
      max_mismatch = std::atof(v.c_str());
    } else {
      std::cerr << "meshop_inject_differential: unknown argument " << a << '\n';
      return 2;
    }
  }
  std::string error;
  auto pods = read_jsonl(pods_path, error);
  auto upstream = error.empty() ? read_jsonl(upstream_path, error) : std::vector<api::Document>{};
  if (!error.empty() || pods.size() != upstream.size() || pods.empty()) {
    std::cerr << "meshop_inject_differential: "
              << (error.empty() ? "pods/upstream line counts differ or are empty" : error) << '\n';
    return 2;
  }
  auto cases = mt::read_text_file(fixtures + "/cases.json");
  auto root = cases ? api::parse_json(*cases) : api::Result<api::Document>(cases.error());
  if (!root) {
    std::cerr << "meshop_inject_differential: " << root.message() << '\n';
    return 2;
  }
  if (oracle.empty()) oracle = api::string_at(*root, {"oracle"});
  if (!case_name.empty()) {
    const auto* list = api::find_member(*root, "cases");
    bool found = false;
    for (rapidjson::SizeType i = 0; list != nullptr && list->IsArray() && i < list->Size(); ++i) {
      const auto& c = (*list)[i];
      if (api::string_at(c, {"name"}) != case_name) continue;
      settings = api::string_at(c, {"settings"});
      native = api::string_at(c, {"native_sidecars"});
      found = true;
    }
    if (!found) {
      std::cerr << "meshop_inject_differential: no case " << case_name << " in cases.json\n";
      return 2;
    }
  }
  // --settings takes an id of the fixtures or, like injectoracle's, a directory.
  std::string settings_dir =
      settings.find('/') == std::string::npos ? fixtures + "/settings/" + settings : settings;
  auto snapshot = mt::load_snapshot(settings_dir, native, "", "default");
  if (!snapshot) {
    std::cerr << "meshop_inject_differential: build_snapshot(settings " << settings
              << "): " << snapshot.message() << '\n';
    return 1;
  }
  std::string report_dir = report_path + ".d";
  std::filesystem::remove_all(report_dir);
  std::filesystem::create_directories(report_dir);

  struct Row {
    mt::MeshopOutcome meshop;
    Outcome upstream = Outcome::kFailed;
    std::string upstream_text;  // error or pod JSON
    int meshop_norm = -1, upstream_norm = -1;
  };
  std::vector<Row> rows(pods.size());
  std::vector<std::string> to_normalize;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const auto* pod = api::find_member(pods[i], "pod");
    std::string ns = api::string_at(pods[i], {"namespace"});
    Row& r = rows[i];
    r.meshop = mt::run_meshop(**snapshot, *pod, ns);
    if (const auto* p = api::find_member(upstream[i], "pod")) {
      r.upstream = Outcome::kInjected;
      r.upstream_text = api::to_json(*p);
    } else if (const auto* s = api::find_member(upstream[i], "skipped"); s && s->IsTrue()) {
      r.upstream = Outcome::kSkipped;
    } else {
      r.upstream = Outcome::kFailed;
      r.upstream_text = api::string_at(upstream[i], {"error"});
    }
    if (r.meshop.outcome == Outcome::kInjected && r.upstream == Outcome::kInjected) {
      r.meshop_norm = static_cast<int>(to_normalize.size());
      to_normalize.push_back(r.meshop.pod_json);
      r.upstream_norm = static_cast<int>(to_normalize.size());
      to_normalize.push_back(r.upstream_text);
    }
  }
  std::vector<mt::Normalized> norm;
  if (!to_normalize.empty()) {
    auto n = mt::normalize_pods(oracle, report_dir, to_normalize, /*blank_fieldref=*/false);
    if (!n) {
      std::cerr << "meshop_inject_differential: " << n.message() << '\n';
      return 2;
    }
    norm = std::move(*n);
  }

  std::ofstream report(report_path, std::ios::trunc);
  int mismatches = 0, both_errors = 0, same_error_text = 0, injected = 0, skipped = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Row& r = rows[i];
    const auto* seed_value = api::find_member(pods[i], "seed");
    std::string seed = seed_value != nullptr ? api::to_json(*seed_value) : "?";
    std::string id = "seed " + seed + " pod " + std::to_string(i);
    std::string problem;
    if (r.meshop.outcome != r.upstream) {
      problem = std::string("meshop ") + outcome_name(r.meshop.outcome) +
                (r.meshop.outcome == Outcome::kFailed ? " (" + r.meshop.message + ")" : "") +
                ", upstream " + outcome_name(r.upstream) +
                (r.upstream == Outcome::kFailed ? " (" + r.upstream_text + ")" : "");
    } else if (r.upstream == Outcome::kFailed) {
      ++both_errors;
      // The message is what `kubectl apply` shows the user: it must be upstream's.
      if (r.meshop.message == r.upstream_text) {
        ++same_error_text;
      } else {
        problem = "both denied, messages differ: meshop \"" + r.meshop.message + "\", upstream \"" +
                  r.upstream_text + "\"";
      }
    } else if (r.upstream == Outcome::kSkipped) {
      ++skipped;
    } else {
      ++injected;
      const auto& m = norm[r.meshop_norm];
      const auto& u = norm[r.upstream_norm];
      if (!m.ok) {
        problem = "meshop's pod does not decode as a corev1.Pod: " + m.text;
      } else if (!u.ok) {
        problem = "upstream's pod does not normalise: " + u.text;
      } else if (m.text != u.text) {
        auto md = api::parse_json(m.text);
        auto ud = api::parse_json(u.text);
        if (md && ud && !api::json_equal(*md, *ud)) {
          auto diffs = mt::json_differences(*md, *ud, 20);
          problem = diffs.empty() ? "differs" : diffs.front();
          std::string base = report_dir + "/" + std::to_string(i);
          std::ofstream(base + ".meshop.json") << api::to_pretty_json(*md) << '\n';
          std::ofstream(base + ".upstream.json") << api::to_pretty_json(*ud) << '\n';
          for (std::size_t d = 1; d < diffs.size(); ++d)
            problem += "\n      " + diffs[d];
        }
      }
    }
    if (!r.meshop.warning.empty()) report << id << ": warning: " << r.meshop.warning << '\n';
    if (problem.empty()) continue;
    ++mismatches;
    std::string pod_file = report_dir + "/" + std::to_string(i) + ".pod.json";
    std::ofstream(pod_file) << api::to_pretty_json(pods[i]) << '\n';
    report << "MISMATCH " << id << ": " << problem << "\n    pod: " << pod_file << '\n';
    if (verbose || mismatches <= 10) {
      std::cout << "MISMATCH " << id << ": " << problem.substr(0, problem.find('\n'))
                << "\n    pod: " << pod_file << '\n';
    }
  }
  double rate = 100.0 * mismatches / static_cast<double>(rows.size());
  std::ostringstream summary;
  summary << (case_name.empty() ? "" : "case " + case_name + ", ") << "settings " << settings
          << ", native " << native << ": " << rows.size() - mismatches << " agree, " << mismatches
          << " mismatches of " << rows.size() << " pods (" << injected << " injected, " << skipped
          << " skipped, " << both_errors << " denied by both; " << same_error_text
          << " of those with the same message)";
  report << summary.str() << '\n';
  std::cout << summary.str() << "\nreport: " << report_path << '\n';
  return rate <= max_mismatch + 1e-9 ? 0 : 1;
}
