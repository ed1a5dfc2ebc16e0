#include "operator/inject/workloads.hpp"

#include <array>
#include <utility>

#include "api/json.hpp"
#include "api/yaml.hpp"

namespace meshop::inject {
namespace {

// Kinds are matched by name only: upstream registers them as unversioned kinds, so
// extensions/v1beta1 Deployments are injected too.
struct KindEntry {
  std::string_view kind;
  PodTemplatePaths paths;
};

constexpr PodTemplatePaths kPodPaths{"/metadata", "/spec"};
constexpr PodTemplatePaths kTemplatePaths{"/spec/template/metadata", "/spec/template/spec"};
// A CronJob's labels and annotations go on the Job template, not on its pod template: that is
// what upstream's kube-inject writes (the jobs it creates still get an injected pod spec).
constexpr PodTemplatePaths kCronJobPaths{"/spec/jobTemplate/metadata",
                                         "/spec/jobTemplate/spec/template/spec"};

constexpr std::array<KindEntry, 9> kKinds{{
    {"Pod", kPodPaths},
    {"Deployment", kTemplatePaths},
    {"ReplicaSet", kTemplatePaths},
    {"StatefulSet", kTemplatePaths},
    {"DaemonSet", kTemplatePaths},
    {"Job", kTemplatePaths},
    {"ReplicationController", kTemplatePaths},
    {"DeploymentConfig", kTemplatePaths},  // apps.openshift.io
    {"CronJob", kCronJobPaths},
}};

std::string quoted(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

// "spec.template.spec" for messages.
std::string dotted(std::string_view pointer) {
  std::string out(pointer.substr(pointer.empty() ? 0 : 1));
  for (char& c : out)
    if (c == '/') c = '.';
  return out;
}

// Replaces or adds `name` in `object` (an object Value).
void set_member(rapidjson::Value& object, std::string_view name, rapidjson::Value value,
                rapidjson::Document::AllocatorType& allocator) {
  if (rapidjson::Value* existing = api::find_member(object, name)) {
    *existing = std::move(value);
    return;
  }
  object.AddMember(api::make_string(name, allocator), value, allocator);
}

// The pointer's parent and last token ("/spec/template/metadata" → "/spec/template", "metadata").
std::pair<std::string_view, std::string_view> split_pointer(std::string_view pointer) {
  auto slash = pointer.find_last_of('/');
  return {pointer.substr(0, slash), pointer.substr(slash + 1)};
}

bool is_true(const rapidjson::Value* v) {
  return v != nullptr && v->IsBool() && v->GetBool();
}

api::Status inject_workload(const Snapshot& snapshot, rapidjson::Value& object,
                            rapidjson::Document::AllocatorType& allocator,
                            const PodTemplatePaths& paths, KubeInjectReport& report,
                            bool& changed) {
  std::string kind = api::string_at(object, {"kind"});
  std::string workload_name = api::string_at(object, {"metadata", "name"});
  std::string workload_ns = api::string_at(object, {"metadata", "namespace"});
  bool is_pod = paths.spec == kPodPaths.spec;

  const rapidjson::Value* meta = api::find(object, paths.metadata);
  if (meta != nullptr && !meta->IsObject()) meta = nullptr;
  std::string name = meta != nullptr ? api::string_at(*meta, {"name"}) : std::string();
  if (name.empty()) name = workload_name;
  std::string ns = meta != nullptr ? api::string_at(*meta, {"namespace"}) : std::string();
  if (ns.empty()) ns = workload_ns;
  // How upstream names the object in its messages: Kind "namespace/name".
  std::string full_name = workload_ns.empty() ? name : workload_ns + "/" + name;
  std::string described = kind + " " + quoted(full_name);

  const rapidjson::Value* spec = api::find(object, paths.spec);
  if (spec == nullptr || !spec->IsObject())
    return api::Error{described + ": " + dotted(paths.spec) + " is required (an object)"};

  // The iptables rules would change the node's routing, not the pod's: never inject.
  if (is_true(api::find_member(*spec, "hostNetwork"))) {
    report.warnings.push_back("===> Skipping injection because " + described +
                              " has host networking enabled");
    return api::ok_status();
  }

  // The pod the engine sees: the template's metadata and spec, as upstream builds it.
  rapidjson::Document pod(rapidjson::kObjectType);
  auto& pa = pod.GetAllocator();
  pod.AddMember(
      "metadata",
      meta != nullptr ? rapidjson::Value(*meta, pa) : rapidjson::Value(rapidjson::kObjectType), pa);
  pod.AddMember("spec", rapidjson::Value(*spec, pa), pa);
  // The template data's DeploymentMeta.Namespace (ISTIO_META_OWNER) is the workload's
  // namespace; the engine reads it from the pod, so lend it to the template's metadata and
  // take it back afterwards (a pod template normally has no namespace of its own).
  bool lent_namespace = false;
  if (!is_pod && !workload_ns.empty() && api::string_at(pod, {"metadata", "namespace"}).empty()) {
    set_member(pod["metadata"], "namespace", api::make_string(workload_ns, pa), pa);
    lent_namespace = true;
  }

  PodRequest request;
  request.pod = &pod;
  request.ns = ns;
  request.kube_inject = true;
  if (!is_pod) {
    request.workload_api_version = api::string_at(object, {"apiVersion"});
    request.workload_kind = kind;
    request.workload_name = workload_name;
  }
  InjectResult result = inject(snapshot, request);
  switch (result.outcome) {
    case Outcome::kFailed:
      return api::Error{described + ": " + result.message};
    case Outcome::kSkipped:
      report.warnings.push_back("===> Skipping injection because " + described +
                                (result.decision.reason == Reason::kHostNetwork
                                     ? " has host networking enabled"
                                     : " has sidecar injection disabled") +
                                " (" + std::string(reason_name(result.decision.reason)) + ")");
      return api::ok_status();
    case Outcome::kInjected:
      break;
  }
  if (!result.pod.IsObject())
    return api::Error{described + ": the injection engine returned no pod"};

  // Write the injected metadata and spec back where they came from.
  rapidjson::Value* new_meta = api::find_member(result.pod, "metadata");
  if (lent_namespace && new_meta != nullptr && new_meta->IsObject())
    new_meta->RemoveMember("namespace");
  const rapidjson::Value* new_spec = api::find_member(result.pod, "spec");
  if (new_spec == nullptr || !new_spec->IsObject())
    return api::Error{described + ": the injection engine returned a pod without spec"};
  auto [meta_parent_ptr, meta_key] = split_pointer(paths.metadata);
  auto [spec_parent_ptr, spec_key] = split_pointer(paths.spec);
  rapidjson::Value* meta_parent = api::find(object, meta_parent_ptr);
  rapidjson::Value* spec_parent = api::find(object, spec_parent_ptr);
  // Both parents exist: the spec was found under them.
  if (meta_parent == nullptr || !meta_parent->IsObject() || spec_parent == nullptr)
    return api::Error{described + ": " + dotted(meta_parent_ptr) + " is not an object"};
  if (new_meta != nullptr && new_meta->IsObject())
    set_member(*meta_parent, meta_key, rapidjson::Value(*new_meta, allocator), allocator);
  set_member(*spec_parent, spec_key, rapidjson::Value(*new_spec, allocator), allocator);
  ++report.injected;
  changed = true;
  return api::ok_status();
}

}  // namespace

const PodTemplatePaths* pod_template_paths(std::string_view kind) {
  for (const KindEntry& k : kKinds)
    if (k.kind == kind) return &k.paths;
  return nullptr;
}

api::Status inject_object(const Snapshot& snapshot, rapidjson::Value& object,
                          rapidjson::Document::AllocatorType& allocator, KubeInjectReport& report,
                          bool& changed) {
  if (!object.IsObject()) return api::ok_status();
  std::string kind = api::string_at(object, {"kind"});
  if (kind == "List") {
    rapidjson::Value* items = api::find_member(object, "items");
    if (items == nullptr || !items->IsArray()) return api::ok_status();
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      auto status = inject_object(snapshot, (*items)[i], allocator, report, changed);
      if (!status.ok())
        return api::Error{"List item " + std::to_string(i) + ": " + status.message()};
    }
    return api::ok_status();
  }
  const PodTemplatePaths* paths = pod_template_paths(kind);
  if (paths == nullptr) return api::ok_status();
  return inject_workload(snapshot, object, allocator, *paths, report, changed);
}

api::Result<std::vector<RawDocument>> split_yaml_documents(std::string_view stream) {
  std::vector<RawDocument> docs;
  std::size_t begin = 0;  // start of the current document's text
  int begin_line = 1;
  int line_no = 1;
  std::size_t pos = 0;
  while (pos < stream.size()) {
    std::size_t eol = stream.find('\n', pos);
    std::size_t next = eol == std::string_view::npos ? stream.size() : eol + 1;
    std::string_view line = stream.substr(pos, next - pos);
    if (line.starts_with("---")) {
      // Only spaces or a comment may follow a separator (k8s.io/apimachinery YAMLReader).
      std::string_view rest = line.substr(3);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t' ||
                               rest.front() == '\r' || rest.front() == '\n'))
        rest.remove_prefix(1);
      if (!rest.empty() && rest.front() != '#') {
        std::string shown(line);
        while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r'))
          shown.pop_back();
        return api::Error{"yaml: line " + std::to_string(line_no) +
                          ": invalid document separator: " + quoted(shown)};
      }
      if (pos > begin) docs.push_back({stream.substr(begin, pos - begin), begin_line});
      begin = next;
      begin_line = line_no + 1;
    }
    pos = next;
    ++line_no;
  }
  if (stream.size() > begin) docs.push_back({stream.substr(begin), begin_line});
  return docs;
}

api::Result<std::string> inject_stream(const Snapshot& snapshot, std::string_view stream,
                                       KubeInjectReport& report) {
  // Syntax first, over the whole stream, so positions are the file's lines and columns.
  if (auto all = api::yaml_stream_to_json(stream); !all.ok()) return api::Error{all.message()};
  auto docs = split_yaml_documents(stream);
  if (!docs.ok()) return api::Error{docs.message()};

  std::string out;
  for (std::size_t i = 0; i < docs->size(); ++i) {
    const RawDocument& doc = (*docs)[i];
    auto parsed = api::yaml_to_json(doc.text);
    if (!parsed.ok())
      return api::Error{"document " + std::to_string(i + 1) + " (from line " +
                        std::to_string(doc.first_line) + "): " + parsed.message()};
    bool changed = false;
    auto status = inject_object(snapshot, *parsed, parsed->GetAllocator(), report, changed);
    if (!status.ok())
      return api::Error{"document " + std::to_string(i + 1) + " (from line " +
                        std::to_string(doc.first_line) + "): " + status.message()};
    if (changed) {
      out += api::json_to_yaml(*parsed);
    } else {
      out += doc.text;
      if (!doc.text.empty() && doc.text.back() != '\n') out += '\n';
    }
    out += "---\n";
  }
  return out;
}

}  // namespace meshop::inject
