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

api::Result<std::vector<Normalized>> normalize_pods(const std::string& oracle,
                                                    const std::string& work_dir,
                                                    const std::vector<std::string>& pods,
                                                    bool blank_fieldref) {
  std::string in_path = work_dir + "/normalize.in.jsonl";
  std::string out_path = work_dir + "/normalize.out.jsonl";
  std::string err_path = work_dir + "/normalize.err";
  {
    std::ofstream in(in_path, std::ios::binary | std::ios::trunc);
    for (const auto& p : pods)
      in << p << '\n';
    if (!in) return api::Error{"cannot write " + in_path};
  }
  std::string cmd = shell_quote(oracle) + " normalize" +
                    (blank_fieldref ? " --blank-fieldref" : "") + " < " + shell_quote(in_path) +
                    " > " + shell_quote(out_path) + " 2> " + shell_quote(err_path);
  if (int rc = std::system(cmd.c_str()); rc != 0) {
    auto err = read_text_file(err_path);
    return api::Error{"`" + oracle + " normalize` failed (status " + std::to_string(rc) +
                      "): " + (err ? *err : std::string())};
  }
  std::ifstream out(out_path, std::ios::binary);
  std::vector<Normalized> result;
  std::string line;
  while (std::getline(out, line)) {
    auto doc = api::parse_json(line);
    if (!doc || !doc->IsObject()) return api::Error{"bad normalize output line: " + line};
    Normalized n;
    if (const auto* p = api::find_member(*doc, "pod")) {
      n.ok = true;
      n.text = api::to_json(*p);
    } else {
      n.text = api::string_at(*doc, {"error"});
    }
    result.push_back(std::move(n));
  }
  if (result.size() != pods.size()) {
    return api::Error{"normalize answered " + std::to_string(result.size()) + " lines for " +
                      std::to_string(pods.size()) + " pods"};
  }
  return result;
}

api::Result<std::vector<Normalized>> retype_documents(const std::string& oracle,
                                                      const std::string& work_dir,
                                                      const std::vector<std::string>& documents) {
  std::string in_path = work_dir + "/retype.in.jsonl";
  std::string out_path = work_dir + "/retype.out.jsonl";
  std::string err_path = work_dir + "/retype.err";
  {
    std::ofstream in(in_path, std::ios::binary | std::ios::trunc);
    for (const auto& d : documents) {
      rapidjson::Document line(rapidjson::kObjectType);
      line.AddMember("yaml",
                     rapidjson::Value(d.data(), static_cast<rapidjson::SizeType>(d.size()),
                                      line.GetAllocator()),
                     line.GetAllocator());
      in << api::to_json(line) << '\n';
    }
    if (!in) return api::Error{"cannot write " + in_path};
  }
  std::string cmd = shell_quote(oracle) + " retype < " + shell_quote(in_path) + " > " +
                    shell_quote(out_path) + " 2> " + shell_quote(err_path);
  if (int rc = std::system(cmd.c_str()); rc != 0) {
    auto err = read_text_file(err_path);
    return api::Error{"`" + oracle + " retype` failed (status " + std::to_string(rc) +
                      "): " + (err ? *err : std::string())};
  }
  std::ifstream out(out_path, std::ios::binary);
  std::vector<Normalized> result;
  std::string line;
  while (std::getline(out, line)) {
    auto doc = api::parse_json(line);
    if (!doc || !doc->IsObject()) return api::Error{"bad retype output line: " + line};
    Normalized n;
    if (const auto* y = api::find_member(*doc, "yaml"); y && y->IsString()) {
      n.ok = true;
      n.text = y->GetString();
    } else {
      n.text = api::string_at(*doc, {"error"});
    }
    result.push_back(std::move(n));
  }
  if (result.size() != documents.size()) {
    return api::Error{"retype answered " + std::to_string(result.size()) + " lines for " +
                      std::to_string(documents.size()) + " documents"};
  }
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
