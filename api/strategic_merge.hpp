// Kubernetes strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) applied with
// the patch metadata of the Pod and the workload kinds that embed a pod template.
//
// Semantics reproduced (StrategicMergeMapPatchUsingLookupPatchMeta, i.e. MergeParallelList and
// IgnoreUnmatchedNulls on, as Istio's injector and kubectl use it):
//   - maps merge recursively; a null value deletes the member; nulls inside new values are dropped;
//   - lists tagged patchStrategy=merge merge by their merge key (containers, initContainers,
//     ephemeralContainers, volumes, env, imagePullSecrets, resourceClaims, schedulingGates by
//     name; ports by containerPort ONLY: two ports that differ only in protocol collide, as in
//     Kubernetes; volumeMounts by mountPath; volumeDevices by devicePath; hostAliases by ip;
//     topologySpreadConstraints by topologyKey; ownerReferences by uid; conditions by type);
//     merge lists of scalars (finalizers) are unions;
//   - every other list (args, command, tolerations, ...) is replaced by the patch's list;
//   - directives: `$patch: replace` (a map or a merge list replaced whole), `$patch: delete`
//     (a map emptied; in a list, the element with that merge key removed), `$retainKeys`,
//     `$setElementOrder/<list>` (checked against the patch list's order, as Kubernetes does),
//     `$deleteFromPrimitiveList/<list>` (applied after the other keys of its map);
//   - list ORDER as Kubernetes: patch items in patch order (merged or new), server-only items
//     inserted among them only before a patch item that they precede in the original list, so
//     new items come first and pod-only items follow (istio-injection.md §4.1).
// Divergences from Go, both outside what valid Pod patches contain: a map or list field that is
// not in the schema table is merged as a plain map / replaced as a list, where Go fails with
// "unable to find api field"; and a merge list of scalars that already holds duplicates is
// deduplicated keeping the original order, where Go's in-place deduplication can reorder it.
// Numbers compare by value (Go decodes all JSON numbers as float64 as well).
//
// Errors name the field path ("spec.containers[name=app].ports: ...") and what is wrong.
// apply_strategic_merge_patch is atomic: on error `target` is unchanged.
// Thread-safe: the schema tables are immutable.
#pragma once

#include <cstdint>
#include <string_view>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::api {

struct PatchSchemaType;

// Patch metadata of one object field. `type` is null for fields without nested metadata.
struct PatchSchemaField {
  std::string_view name;
  const PatchSchemaType* type = nullptr;
  bool merge_list = false;     // patchStrategy=merge on a list
  std::string_view merge_key;  // patchMergeKey; empty for a merge list of scalars
};

// The fields of one Go struct that carry patch metadata or lead to some that do.
struct PatchSchemaType {
  std::string_view name;
  const PatchSchemaField* fields = nullptr;
  std::size_t field_count = 0;

  const PatchSchemaField* field(std::string_view field_name) const;
};

// Schemas by kind: Pod, PodTemplate, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job,
// CronJob. nullptr for other kinds.
const PatchSchemaType* patch_schema_for_kind(std::string_view kind);
const PatchSchemaType& pod_patch_schema();

// Merges `patch` (a JSON object) into `target` (a JSON object) with `schema`.
Status apply_strategic_merge_patch(Document& target, const Value& patch,
                                   const PatchSchemaType& schema);
// The same merge without the copy that makes it atomic: on error `target` is left partly merged
// (and must be discarded). For callers that drop the target on error anyway (the injector).
Status apply_strategic_merge_patch_in_place(Document& target, const Value& patch,
                                            const PatchSchemaType& schema);

// Merge-key (or list-scalar) equality tests made while merging and ordering lists, on this
// thread, since it started. For tests: lists are matched through a hash index, so merging two
// lists of n elements makes O(n) comparisons, not O(n^2).
std::uint64_t& strategic_merge_key_comparisons();

}  // namespace meshop::api
