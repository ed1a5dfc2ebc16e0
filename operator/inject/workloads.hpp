// Manual injection of Kubernetes manifests (`meshop kube-inject`): finds the pod template of
// each workload in a YAML/JSON stream, runs the injection engine on it in kube-inject mode,
// and writes the stream back, as upstream's `istioctl kube-inject` (inject.IntoResourceFile).
//
// Contract:
//   - The input is split into documents the way Kubernetes' YAML reader splits it: at lines
//     that start with "---" followed only by spaces or a comment; empty documents are dropped.
//   - Kinds with a pod template, matched by kind name whatever the apiVersion (as upstream's
//     scheme of unversioned kinds does): Pod (the object itself), Deployment, ReplicaSet,
//     StatefulSet, DaemonSet, Job, ReplicationController, DeploymentConfig
//     (spec.template), CronJob (spec.jobTemplate.spec.template, with the annotations and
//     labels going to spec.jobTemplate.metadata as upstream does). `List` items are handled
//     one by one. Injected documents are re-serialised as sigs.k8s.io/yaml writes them; every
//     other document (other kinds, comments only, non-objects) is copied byte for byte. Each
//     output document is followed by "---\n"; order is kept.
//   - Workloads get the engine's kube-inject mode with their own TypeMeta and name (the
//     DeploymentMeta of the template data); a Pod's are derived by the engine.
//   - A workload with hostNetwork, or one the engine skips (sidecar.istio.io/inject "false",
//     ignored namespace), is passed through unchanged with a warning, worded like upstream's
//     ("===> Skipping injection because Deployment "ns/name" has host networking enabled").
//   - Errors are values and name where: bad YAML ("document 2, line 7, column 5: ..."), a
//     workload without a pod template, or an engine failure ("Deployment "ns/name": ...").
//     Nothing partial is returned on error.
// Thread-safe: pure functions over their arguments; the Snapshot is immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/inject/injector.hpp"

namespace meshop::inject {

// One document of a stream, as the Kubernetes YAML reader cuts it.
struct RawDocument {
  std::string_view text;  // without the separator line; ends with '\n' unless at EOF
  int first_line = 1;     // 1-based line of `text` in the whole stream
};

// Splits a stream; an invalid separator line ("--- foo") is an error naming the line.
api::Result<std::vector<RawDocument>> split_yaml_documents(std::string_view stream);

// Where the pod of a workload object lives.
struct PodTemplatePaths {
  std::string_view metadata;  // JSON pointer of the ObjectMeta that gets labels/annotations
  std::string_view spec;      // JSON pointer of the PodSpec
};

// The pod template of `kind`, or nullptr for kinds kube-inject leaves alone.
const PodTemplatePaths* pod_template_paths(std::string_view kind);

struct KubeInjectReport {
  int injected = 0;                   // pod templates injected
  std::vector<std::string> warnings;  // skipped workloads, one line each
};

// Injects one parsed object (a workload, a List, or anything else) in place. `allocator` is
// the one owning `object`. Objects of other kinds are left as they are (and `changed` stays
// false), so the caller can keep their original text.
api::Status inject_object(const Snapshot& snapshot, rapidjson::Value& object,
                          rapidjson::Document::AllocatorType& allocator, KubeInjectReport& report,
                          bool& changed);

// The whole stream: text in, text out (see the contract above).
api::Result<std::string> inject_stream(const Snapshot& snapshot, std::string_view stream,
                                       KubeInjectReport& report);

}  // namespace meshop::inject
