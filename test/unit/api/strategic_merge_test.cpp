#include "api/strategic_merge.hpp"

#include <gtest/gtest.h>

#include "api/yaml.hpp"

namespace meshop::api {
namespace {

std::string smp(std::string_view original_json, std::string_view patch_yaml,
                std::string_view kind = "Pod") {
  auto d = parse_json(original_json);
  EXPECT_TRUE(d.ok()) << d.message();
  auto p = yaml_to_json(patch_yaml);
  EXPECT_TRUE(p.ok()) << p.message();
  Document doc = std::move(d).value();
  // The in-place merge gives the same document (and the same error) as the atomic one.
  Document in_place;
  in_place.CopyFrom(doc, in_place.GetAllocator());
  auto st = apply_strategic_merge_patch(doc, *p, *patch_schema_for_kind(kind));
  auto st_in_place =
      apply_strategic_merge_patch_in_place(in_place, *p, *patch_schema_for_kind(kind));
  EXPECT_EQ(st.ok(), st_in_place.ok());
  if (st.ok() && st_in_place.ok()) {
    EXPECT_EQ(to_json(in_place), to_json(doc));
  } else if (!st.ok() && !st_in_place.ok()) {
    EXPECT_EQ(st_in_place.message(), st.message());
  }
  return st.ok() ? to_json(doc) : "ERR " + st.message();
}

// Expected values below were produced by k8s.io/apimachinery strategicpatch v0.36.3 with
// corev1.Pod metadata (hack/yamloracle), then key order adjusted to meshop's (original order,
// new keys appended).
TEST(StrategicMerge, NewTemplateItemsComeFirstThenPodOnlyItems) {
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"app","image":"a"}],"volumes":[{"name":"data"}]}})",
          "spec:\n  containers:\n  - name: istio-proxy\n    image: p\n  volumes:\n  - name: v1\n  "
          "- name: v2\n"),
      R"({"spec":{"containers":[{"name":"istio-proxy","image":"p"},{"name":"app","image":"a"}],"volumes":[{"name":"v1"},{"name":"v2"},{"name":"data"}]}})");
}

TEST(StrategicMerge, ServerItemsStayBeforePatchItemsTheyPrecededInTheOriginal) {
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})",
          "spec:\n  containers:\n  - name: c\n    image: x\n  - name: new\n  - name: a\n"),
      R"({"spec":{"containers":[{"name":"b"},{"name":"c","image":"x"},{"name":"new"},{"name":"a"}]}})");
}

TEST(StrategicMerge, PortsMergeByContainerPortAndAtomicListsAreReplaced) {
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a","args":["1","2"],"ports":[{"containerPort":80},{"containerPort":81,"protocol":"UDP"}]}]}})",
          "spec:\n  containers:\n  - name: a\n    args: [x]\n    ports:\n    - containerPort: 81\n "
          "     protocol: TCP\n    - containerPort: 90\n"),
      R"({"spec":{"containers":[{"name":"a","args":["x"],"ports":[{"containerPort":80},{"containerPort":81,"protocol":"TCP"},{"containerPort":90}]}]}})");
}

TEST(StrategicMerge, MapsMergeNullDeletesAndScalarMergeListsUnion) {
  EXPECT_EQ(smp(R"({"metadata":{"labels":{"a":"1","b":"2"},"finalizers":["x","y"]}})",
                "metadata:\n  labels:\n    a: null\n    c: '3'\n  finalizers: [z, x]\n"),
            R"({"metadata":{"labels":{"b":"2","c":"3"},"finalizers":["z","x","y"]}})");
}

TEST(StrategicMerge, PatchDirectives) {
  EXPECT_EQ(smp(R"({"spec":{"containers":[{"name":"a","image":"i"}]}})",
                "spec:\n  containers:\n  - $patch: replace\n  - name: b\n"),
            R"({"spec":{"containers":[{"name":"b"}]}})");
  EXPECT_EQ(smp(R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
                "spec:\n  containers:\n  - name: a\n    $patch: delete\n"),
            R"({"spec":{"containers":[{"name":"b"}]}})");
  EXPECT_EQ(smp(R"({"spec":{"securityContext":{"runAsUser":1,"fsGroup":2}}})",
                "spec:\n  securityContext:\n    $patch: replace\n    runAsUser: 5\n"),
            R"({"spec":{"securityContext":{"runAsUser":5}}})");
  EXPECT_EQ(smp(R"({"spec":{"securityContext":{"runAsUser":1}}})",
                "spec:\n  securityContext:\n    $patch: delete\n"),
            R"({"spec":{"securityContext":{}}})");
  EXPECT_EQ(smp(R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
                "spec:\n  $setElementOrder/containers:\n  - name: b\n  - name: a\n  containers:\n  "
                "- name: a\n    image: z\n"),
            R"({"spec":{"containers":[{"name":"b"},{"name":"a","image":"z"}]}})");
  EXPECT_EQ(smp(R"({"metadata":{"finalizers":["a","b","c"]}})",
                "metadata:\n  $deleteFromPrimitiveList/finalizers: [b]\n"),
            R"({"metadata":{"finalizers":["a","c"]}})");
  EXPECT_EQ(smp(R"({"spec":{"volumes":[{"name":"v","emptyDir":{}}]}})",
                "spec:\n  volumes:\n  - name: v\n    $retainKeys: [name, secret]\n    secret:\n    "
                "  secretName: s\n"),
            R"({"spec":{"volumes":[{"name":"v","secret":{"secretName":"s"}}]}})");
}

TEST(StrategicMerge, NullsInNewValuesAreDropped) {
  EXPECT_EQ(
      smp(R"({"spec":{"initContainers":[{"name":"u1"},{"name":"u2"}],"containers":[{"name":"app"}]}})",
          "spec:\n  initContainers:\n  - name: istio-init\n  - name: u2\n    image: q\n  "
          "containers:\n  - name: app\n    x: null\n    w: {a: null, b: 1}\n"),
      R"({"spec":{"initContainers":[{"name":"istio-init"},{"name":"u1"},{"name":"u2","image":"q"}],"containers":[{"name":"app","w":{"b":1}}]}})");
}

TEST(StrategicMerge, WorkloadTemplatesUsePodMetadata) {
  EXPECT_EQ(
      smp(R"({"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"X"}]}]}}}})",
          "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        env:\n       "
          " - name: \"Y\"\n",
          "Deployment"),
      R"({"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y"},{"name":"X"}]}]}}}})");
  EXPECT_EQ(
      smp(R"({"spec":{"jobTemplate":{"spec":{"template":{"spec":{"volumes":[{"name":"a"}]}}}}}})",
          "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          volumes:\n  "
          "        - name: b\n",
          "CronJob"),
      R"({"spec":{"jobTemplate":{"spec":{"template":{"spec":{"volumes":[{"name":"b"},{"name":"a"}]}}}}}})");
  EXPECT_EQ(patch_schema_for_kind("Service"), nullptr);
}

TEST(StrategicMerge, ErrorsNameTheFieldAndLeaveTheTargetUntouched) {
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a"}]}})", "spec:\n  containers:\n  - image: noname\n"),
      R"(ERR strategic merge patch: spec.containers: map: {"image":"noname"} does not contain declared merge key: name)");
  EXPECT_EQ(smp(R"({"spec":{"containers":[{"name":"a"}]}})", "spec:\n  containers: [1, 2]\n"),
            "ERR strategic merge patch: spec.containers: list element types are not identical");
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":1}]}]}})",
          "spec:\n  containers:\n  - name: a\n    ports:\n    - name: p\n"),
      R"(ERR strategic merge patch: spec.containers[name=a].ports: map: {"name":"p"} does not contain declared merge key: containerPort)");
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
          "spec:\n  $setElementOrder/containers:\n  - name: a\n  - name: b\n  containers:\n"
          "  - name: b\n  - name: a\n"),
      R"(ERR strategic merge patch: spec.containers: the order in the patch list [{"name":"b"},{"name":"a"}] doesn't match the $setElementOrder list [{"name":"a"},{"name":"b"}])");
  EXPECT_EQ(
      smp(R"({"spec":{}})", "spec:\n  $patch: frob\n"),
      R"(ERR strategic merge patch: spec: unknown patch type: "frob" in map: {"$patch":"frob"})");
  EXPECT_EQ(
      smp(R"({"spec":{}})", "$patch: frob\n"),
      R"(ERR strategic merge patch: patch: unknown patch type: "frob" in map: {"$patch":"frob"})");
  EXPECT_EQ(
      smp(R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"x":{}}]}]}})",
          "spec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 80\n"
          "      x:\n        $patch: frob\n"),
      R"(ERR strategic merge patch: spec.containers[name=a].ports[containerPort=80].x: unknown patch type: "frob" in map: {"$patch":"frob"})");
  auto d = parse_json(R"({"a":1,"spec":{"containers":[{"name":"a"}]}})");
  Document doc = std::move(d).value();
  auto p = yaml_to_json("a: 2\nspec:\n  containers: [1]\n");
  EXPECT_FALSE(apply_strategic_merge_patch(doc, *p, pod_patch_schema()).ok());
  EXPECT_EQ(to_json(doc), R"({"a":1,"spec":{"containers":[{"name":"a"}]}})");
}

}  // namespace
}  // namespace meshop::api
