// Strategic-merge patch metadata: the patchStrategy/patchMergeKey struct tags of k8s.io/api
// (core/v1, apps/v1, batch/v1) and ObjectMeta, for the fields that lead to them. Fields not
// listed merge as plain maps (objects) or are replaced (lists), which is what Kubernetes does for
// every field without tags.
#include <array>

#include "api/strategic_merge.hpp"

namespace meshop::api {
namespace {

template <std::size_t N>
constexpr PatchSchemaType make_type(std::string_view name,
                                    const std::array<PatchSchemaField, N>& f) {
  return PatchSchemaType{name, f.data(), N};
}

constexpr PatchSchemaType kNone{"", nullptr, 0};

constexpr std::array<PatchSchemaField, 4> kContainerFields{{
    {"ports", &kNone, true, "containerPort"},
    {"env", &kNone, true, "name"},
    {"volumeMounts", &kNone, true, "mountPath"},
    {"volumeDevices", &kNone, true, "devicePath"},
}};
constexpr PatchSchemaType kContainer = make_type("Container", kContainerFields);

constexpr std::array<PatchSchemaField, 9> kPodSpecFields{{
    {"volumes", &kNone, true, "name"},
    {"initContainers", &kContainer, true, "name"},
    {"containers", &kContainer, true, "name"},
    {"ephemeralContainers", &kContainer, true, "name"},
    {"imagePullSecrets", &kNone, true, "name"},
    {"hostAliases", &kNone, true, "ip"},
    {"topologySpreadConstraints", &kNone, true, "topologyKey"},
    {"schedulingGates", &kNone, true, "name"},
    {"resourceClaims", &kNone, true, "name"},
}};
constexpr PatchSchemaType kPodSpec = make_type("PodSpec", kPodSpecFields);

constexpr std::array<PatchSchemaField, 2> kObjectMetaFields{{
    {"ownerReferences", &kNone, true, "uid"},
    {"finalizers", &kNone, true, ""},
}};
constexpr PatchSchemaType kObjectMeta = make_type("ObjectMeta", kObjectMetaFields);

constexpr std::array<PatchSchemaField, 4> kPodStatusFields{{
    {"conditions", &kNone, true, "type"},
    {"hostIPs", &kNone, true, "ip"},
    {"podIPs", &kNone, true, "ip"},
    {"resourceClaimStatuses", &kNone, true, "name"},
}};
constexpr PatchSchemaType kPodStatus = make_type("PodStatus", kPodStatusFields);

constexpr std::array<PatchSchemaField, 3> kPodFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"spec", &kPodSpec, false, ""},
    {"status", &kPodStatus, false, ""},
}};
constexpr PatchSchemaType kPod = make_type("Pod", kPodFields);

constexpr std::array<PatchSchemaField, 2> kPodTemplateSpecFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"spec", &kPodSpec, false, ""},
}};
constexpr PatchSchemaType kPodTemplateSpec = make_type("PodTemplateSpec", kPodTemplateSpecFields);

constexpr std::array<PatchSchemaField, 2> kPodTemplateFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"template", &kPodTemplateSpec, false, ""},
}};
constexpr PatchSchemaType kPodTemplate = make_type("PodTemplate", kPodTemplateFields);

// Workload specs embed the pod template; their statuses merge conditions by type.
constexpr std::array<PatchSchemaField, 1> kWorkloadSpecFields{{
    {"template", &kPodTemplateSpec, false, ""},
}};
constexpr PatchSchemaType kWorkloadSpec = make_type("WorkloadSpec", kWorkloadSpecFields);

constexpr std::array<PatchSchemaField, 1> kWorkloadStatusFields{{
    {"conditions", &kNone, true, "type"},
}};
constexpr PatchSchemaType kWorkloadStatus = make_type("WorkloadStatus", kWorkloadStatusFields);

constexpr std::array<PatchSchemaField, 3> kWorkloadFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"spec", &kWorkloadSpec, false, ""},
    {"status", &kWorkloadStatus, false, ""},
}};
constexpr PatchSchemaType kWorkload = make_type("Workload", kWorkloadFields);

constexpr std::array<PatchSchemaField, 2> kJobTemplateSpecFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"spec", &kWorkloadSpec, false, ""},
}};
constexpr PatchSchemaType kJobTemplateSpec = make_type("JobTemplateSpec", kJobTemplateSpecFields);

constexpr std::array<PatchSchemaField, 1> kCronJobSpecFields{{
    {"jobTemplate", &kJobTemplateSpec, false, ""},
}};
constexpr PatchSchemaType kCronJobSpec = make_type("CronJobSpec", kCronJobSpecFields);

constexpr std::array<PatchSchemaField, 2> kCronJobFields{{
    {"metadata", &kObjectMeta, false, ""},
    {"spec", &kCronJobSpec, false, ""},
}};
constexpr PatchSchemaType kCronJob = make_type("CronJob", kCronJobFields);

}  // namespace

const PatchSchemaField* PatchSchemaType::field(std::string_view field_name) const {
  for (std::size_t i = 0; i < field_count; ++i) {
    if (fields[i].name == field_name) return &fields[i];
  }
  return nullptr;
}

const PatchSchemaType& pod_patch_schema() {
  return kPod;
}

const PatchSchemaType* patch_schema_for_kind(std::string_view kind) {
  if (kind == "Pod") return &kPod;
  if (kind == "PodTemplate") return &kPodTemplate;
  if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" ||
      kind == "ReplicaSet" || kind == "Job") {
    return &kWorkload;
  }
  if (kind == "CronJob") return &kCronJob;
  return nullptr;
}

}  // namespace meshop::api
