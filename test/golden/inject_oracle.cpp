#include "test/golden/inject_oracle.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "api/json.hpp"
#include "api/json_patch.hpp"

namespace meshop::test {

api::Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return api::Error{"cannot read " + path};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

api::Result<std::shared_ptr<const inject::Snapshot>> load_snapshot(
    const std::string& settings_dir, std::string_view native, std::string_view compliance,
    std::string_view revision, const std::vector<std::string>& nodes, bool openshift) {
  inject::SnapshotSources sources;
  sources.revision = std::string(revision);
  sources.openshift = openshift;
  for (auto [name, field] :
       {std::pair{"config", &sources.config}, std::pair{"values", &sources.values},
        std::pair{"mesh", &sources.mesh}}) {
    auto text = read_text_file(settings_dir + "/" + name);
    if (!text) return text.error();
    *field = std::move(*text);
  }
  if (native == "true") {
    sources.native_sidecars = inject::NativeSidecars::kEnabled;
  } else if (native == "false") {
    sources.native_sidecars = inject::NativeSidecars::kDisabled;
  } else {
    sources.native_sidecars = inject::NativeSidecars::kAuto;
    sources.node_kubelet_versions = nodes;
    // Upstream's fake cluster in TestInjection.
    if (nodes.empty()) sources.node_kubelet_versions = {"v1.33.0", "v1.34.0"};
  }
  sources.compliance_policy = std::string(compliance);
  return inject::build_snapshot(sources);
}

MeshopOutcome run_meshop(const inject::Snapshot& snapshot, const rapidjson::Value& pod,
                         std::string_view ns, const rapidjson::Value* namespace_object) {
  MeshopOutcome out;
  inject::PodRequest request;
  request.pod = &pod;
  request.ns = std::string(ns);
  request.namespace_object = namespace_object;
  inject::InjectResult result;
  try {
    result = inject::inject(snapshot, request);
  } catch (const std::exception& e) {
    // The contract says errors are values; an exception is a bug to report, not a crash here.
    out.outcome = inject::Outcome::kFailed;
    out.message = std::string("EXCEPTION escaped inject(): ") + e.what();
    return out;
  }
  out.outcome = result.outcome;
  switch (result.outcome) {
    case inject::Outcome::kFailed:
      out.message = result.message.empty() ? result.failure_type : result.message;
      return out;
    case inject::Outcome::kSkipped:
      out.pod_json = api::to_json(pod);
      return out;
    case inject::Outcome::kInjected:
      break;
  }
  out.patch = result.patch;
  api::Document patched;
  patched.CopyFrom(pod, patched.GetAllocator());
  auto patch = api::parse_json(result.patch);
  if (!patch) {
    out.outcome = inject::Outcome::kFailed;
    out.message = "meshop returned a patch that is not JSON: " + patch.message();
    return out;
  }
  if (auto st = api::apply_json_patch(patched, *patch); !st) {
    out.outcome = inject::Outcome::kFailed;
    out.message = "meshop's patch does not apply to the pod: " + st.message();
    return out;
  }
  out.pod_json = api::to_json(patched);
  // Upstream fills in an empty metadata.namespace from the request before it computes the
  // patch, so the patch never carries it; InjectResult.pod may. Not a disagreement.
  api::Document returned;
  returned.CopyFrom(result.pod, returned.GetAllocator());
  if (auto* meta = api::find_member(returned, "metadata");
      meta != nullptr && meta->IsObject() && api::find(patched, "/metadata/namespace") == nullptr) {
    meta->RemoveMember("namespace");
  }
  if (!returned.IsNull() && !api::json_equal(returned, patched)) {
    auto diffs = json_differences(patched, returned, 1);
    out.warning = "InjectResult.pod differs from the pod patched with InjectResult.patch" +
                  (diffs.empty() ? std::string() : ": " + diffs.front());
  }
  return out;
}

namespace {

// Runs `oracle ARGS` with the JSON `lines` on stdin (through files in `work_dir` named after
// the first argument) and returns its output lines parsed, one per input line.
api::Result<std::vector<api::Document>> run_oracle_lines(const std::string& oracle,
                                                         const std::string& args,
                                                         const std::string& work_dir,
                                                         const std::vector<std::string>& lines) {
  const std::string name = args.substr(0, args.find(' '));
  std::string in_path = work_dir + "/" + name + ".in.jsonl";
  std::string out_path = work_dir + "/" + name + ".out.jsonl";
  std::string err_path = work_dir + "/" + name + ".err";
  {
    std::ofstream in(in_path, std::ios::binary | std::ios::trunc);
    for (const auto& l : lines)
      in << l << '\n';
    if (!in) return api::Error{"cannot write " + in_path};
  }
  std::string cmd = shell_quote(oracle) + " " + args + " < " + shell_quote(in_path) + " > " +
                    shell_quote(out_path) + " 2> " + shell_quote(err_path);
  if (int rc = std::system(cmd.c_str()); rc != 0) {
    auto err = read_text_file(err_path);
    return api::Error{"`" + oracle + " " + args + "` failed (status " + std::to_string(rc) +
                      "): " + (err ? *err : std::string())};
  }
  std::ifstream out(out_path, std::ios::binary);
  std::vector<api::Document> result;
  std::string line;
  while (std::getline(out, line)) {
    auto doc = api::parse_json(line);
    if (!doc || !doc->IsObject()) return api::Error{"bad " + name + " output line: " + line};
    result.push_back(std::move(*doc));
  }
  if (result.size() != lines.size()) {
    return api::Error{name + " answered " + std::to_string(result.size()) + " lines for " +
                      std::to_string(lines.size())};
  }
  return result;
}

// An output line: the string or object under `key`, else the line's "error".
Normalized normalized(const api::Document& line, std::string_view key) {
  Normalized n;
  if (const auto* v = api::find_member(line, key)) {
    n.ok = true;
    n.text = v->IsString() ? std::string(api::string_view_of(*v)) : api::to_json(*v);
  } else {
    n.text = api::string_at(line, {"error"});
  }
  return n;
}

}  // namespace

api::Result<std::vector<Normalized>> normalize_pods(const std::string& oracle,
                                                    const std::string& work_dir,
                                                    const std::vector<std::string>& pods,
                                                    bool blank_fieldref) {
  auto lines = run_oracle_lines(oracle, blank_fieldref ? "normalize --blank-fieldref" : "normalize",
                                work_dir, pods);
  if (!lines) return api::Error{lines.message()};
  std::vector<Normalized> result;
  for (const auto& l : *lines)
    result.push_back(normalized(l, "pod"));
  return result;
}

api::Result<std::vector<Normalized>> retype_documents(const std::string& oracle,
                                                      const std::string& work_dir,
                                                      const std::vector<std::string>& documents) {
  std::vector<std::string> requests;
  for (const auto& d : documents) {
    rapidjson::Document line(rapidjson::kObjectType);
    line.AddMember(
        "yaml",
        rapidjson::Value(d.data(), static_cast<rapidjson::SizeType>(d.size()), line.GetAllocator()),
        line.GetAllocator());
    requests.push_back(api::to_json(line));
  }
  auto lines = run_oracle_lines(oracle, "retype", work_dir, requests);
  if (!lines) return api::Error{lines.message()};
  std::vector<Normalized> result;
  for (const auto& l : *lines)
    result.push_back(normalized(l, "yaml"));
  return result;
}

namespace {

std::string excerpt(const rapidjson::Value* v) {
  if (v == nullptr) return "(absent)";
  std::string s = api::to_json(*v);
  if (s.size() > 160) s = s.substr(0, 160) + "...";
  return s;
}

void diff_into(const rapidjson::Value* got, const rapidjson::Value* want, const std::string& path,
               std::size_t limit, std::vector<std::string>& out) {
  if (out.size() >= limit) return;
  if (got != nullptr && want != nullptr) {
    if (got->IsObject() && want->IsObject()) {
      std::set<std::string> keys;
      for (const auto& m : got->GetObject())
        keys.emplace(m.name.GetString(), m.name.GetStringLength());
      for (const auto& m : want->GetObject())
        keys.emplace(m.name.GetString(), m.name.GetStringLength());
      for (const auto& k : keys) {
        diff_into(api::find_member(*got, k), api::find_member(*want, k),
                  path + "/" + api::escape_json_pointer_token(k), limit, out);
      }
      return;
    }
    if (got->IsArray() && want->IsArray()) {
      auto n = std::max(got->Size(), want->Size());
      for (rapidjson::SizeType i = 0; i < n; ++i) {
        diff_into(i < got->Size() ? &(*got)[i] : nullptr, i < want->Size() ? &(*want)[i] : nullptr,
                  path + "/" + std::to_string(i), limit, out);
      }
      return;
    }
    if (api::json_equal(*got, *want)) return;
  } else if (got == nullptr && want == nullptr) {
    return;
  }
  out.push_back((path.empty() ? "/" : path) + ": got " + excerpt(got) + ", want " + excerpt(want));
}

}  // namespace

std::vector<std::string> json_differences(const rapidjson::Value& got, const rapidjson::Value& want,
                                          std::size_t limit) {
  std::vector<std::string> out;
  diff_into(&got, &want, "", limit, out);
  return out;
}

}  // namespace meshop::test
