// Shared pieces of the injection golden suite (test/golden) and the injection differential
// test (test/differential/inject): running meshop's engine on one pod the way the webhook does,
// and comparing a result with upstream's through injectoracle (hack/injectoracle).
//
// Comparison form: TestInjection compares pods after decoding them into corev1.Pod and
// re-marshalling (quantities canonical, unknown and empty fields dropped, Go field order).
// meshop cannot reproduce Go's struct decoding faithfully without a schema of all of
// Kubernetes, so both sides go through `injectoracle normalize`, the same Go code, and the
// comparison here is JSON equality of its outputs. Single-threaded; not a library API.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/inject/injector.hpp"

namespace meshop::test {

api::Result<std::string> read_text_file(const std::string& path);
std::string shell_quote(std::string_view s);

// The settings directory of one case (config, values, mesh) as a snapshot. `native` is
// "auto" (decided from `nodes`, the kubelet versions of the cluster's nodes; empty means
// TestInjection's fake cluster, v1.33.0 and v1.34.0), "true" or "false".
api::Result<std::shared_ptr<const inject::Snapshot>> load_snapshot(
    const std::string& settings_dir, std::string_view native, std::string_view compliance,
    std::string_view revision, const std::vector<std::string>& nodes = {}, bool openshift = false);

// One pod through meshop's webhook path: inject(), then the returned JSON patch applied to the
// pod as given (what the API server does). `pod_json` is the compact patched pod when
// injected, the input when skipped. `warning` is set when result.pod differs from the patched
// pod (the patch and the returned pod disagree), which is a bug of its own.
struct MeshopOutcome {
  inject::Outcome outcome = inject::Outcome::kFailed;
  std::string message;  // failure message
  std::string pod_json;
  std::string patch;
  std::string warning;
};
// `namespace_object` is the pod's Namespace (OpenShift UID ranges), or null.
MeshopOutcome run_meshop(const inject::Snapshot& snapshot, const rapidjson::Value& pod,
                         std::string_view ns, const rapidjson::Value* namespace_object = nullptr);

// `injectoracle normalize [--blank-fieldref]` over the given Pod JSON texts, one call for all.
// Each result is the normalised pod (compact JSON) or an error ("does not decode as a Pod").
struct Normalized {
  bool ok = false;
  std::string text;  // pod JSON or error message
};
api::Result<std::vector<Normalized>> normalize_pods(const std::string& oracle,
                                                    const std::string& work_dir,
                                                    const std::vector<std::string>& pods,
                                                    bool blank_fieldref);

// `injectoracle retype` over YAML documents, one call for all: each document as upstream's
// kube-inject writes an object it decoded (typed re-encoding; unknown kinds unchanged), or an
// error message.
api::Result<std::vector<Normalized>> retype_documents(const std::string& oracle,
                                                      const std::string& work_dir,
                                                      const std::vector<std::string>& documents);

// The JSON pointers where `got` and `want` differ, first ones first (object members in sorted
// order, arrays by index), each as "<pointer>: got <json>, want <json>" with long values cut.
std::vector<std::string> json_differences(const rapidjson::Value& got, const rapidjson::Value& want,
                                          std::size_t limit);

}  // namespace meshop::test
