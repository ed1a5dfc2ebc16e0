// The engine's building blocks: resource quantity canonical form, Go struct marshalling and
// normalisation of pods, container reordering, the status annotation, OpenShift and bad input.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/strategic_merge.hpp"
#include "engine_test_support.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/kube_view.hpp"
#include "operator/inject/pod_ops.hpp"
#include "operator/inject/quantity.hpp"
#include "operator/inject/snapshot.hpp"
#include "operator/template/value.hpp"
#include "test/support/chart_set_sources.hpp"

namespace meshop::inject {
namespace {

using engine_test::json;

TEST(EngineQuantity, CanonicalFormAsGoWritesIt) {
  EXPECT_EQ(canonical_quantity("2000m"), "2");
  EXPECT_EQ(canonical_quantity("100m"), "100m");
  EXPECT_EQ(canonical_quantity("0.5"), "500m");
  EXPECT_EQ(canonical_quantity("1500"), "1500");
  EXPECT_EQ(canonical_quantity("3000"), "3k");
  EXPECT_EQ(canonical_quantity("1024Mi"), "1Gi");
  EXPECT_EQ(canonical_quantity("1.5Gi"), "1536Mi");
  EXPECT_EQ(canonical_quantity("512Ki"), "512Ki");
  EXPECT_EQ(canonical_quantity("0.5Ki"), "512");  // below 1024 bytes: decimal
  EXPECT_EQ(canonical_quantity("1e3"), "1e3");
  EXPECT_EQ(canonical_quantity("0"), "0");
  EXPECT_EQ(canonical_quantity("-2000m"), "-2");
  EXPECT_EQ(canonical_quantity("abc"), std::nullopt);
  EXPECT_EQ(canonical_quantity("1Xi"), std::nullopt);
}

TEST(EngineKubeView, ContainerMarshalsInGoFieldOrderWithOmitempty) {
  api::Document c = json(R"({"securityContext":{"runAsUser":0},"image":"",
    "ports":[{"protocol":"TCP","containerPort":80,"hostPort":0}],"name":"istio-proxy",
    "readinessProbe":{"periodSeconds":0,"httpGet":{"path":"/x","port":1}}})");
  EXPECT_EQ(go_json(c, container_type()),
            R"({"name":"istio-proxy","ports":[{"containerPort":80,"protocol":"TCP"}],)"
            R"("resources":{},"readinessProbe":{"httpGet":{"path":"/x","port":1}},)"
            R"("securityContext":{"runAsUser":0}})");
}

// Go writes resource.Quantity canonically: the proxy.istio.io/overrides annotation of a
// kube-injected pod with "3000m" holds "3" (upstream's proxy-override golden).
TEST(EngineKubeView, GoJsonWritesQuantitiesCanonically) {
  api::Document c = json(R"({"name":"istio-proxy","resources":{"limits":{"cpu":"3000m",
    "memory":"1024Mi"},"requests":{"cpu":"123m","memory":2048}}})");
  EXPECT_EQ(go_json(c, container_type()),
            R"({"name":"istio-proxy","resources":{"limits":{"cpu":"3","memory":"1Gi"},)"
            R"("requests":{"cpu":"123m","memory":"2048"}}})");
}

TEST(EngineKubeView, NormalizeDropsZeroOmitemptyFieldsAndCanonicalisesQuantities) {
  api::Document pod = json(R"({"metadata":{"labels":{},"annotations":{"a":"b"},"name":""},
    "spec":{"hostNetwork":false,"initContainers":[],"containers":[{"name":"c",
      "resources":{"limits":{"cpu":"2000m","memory":"1024Mi"},"requests":{}},
      "readinessProbe":{"initialDelaySeconds":0,"periodSeconds":15},
      "securityContext":{"privileged":false,"runAsUser":0},
      "env":[{"name":"E","value":"","valueFrom":null}]},{"name":"d"}],
      "volumes":[{"name":"v","emptyDir":{}}]}})");
  normalize_go_pod(pod, pod.GetAllocator());
  api::Document want = json(R"({"metadata":{"annotations":{"a":"b"}},
    "spec":{"containers":[{"name":"c",
      "resources":{"limits":{"cpu":"2","memory":"1Gi"}},
      "readinessProbe":{"periodSeconds":15},
      "securityContext":{"privileged":false,"runAsUser":0},
      "env":[{"name":"E"}]},{"name":"d","resources":{}}],
      "volumes":[{"name":"v","emptyDir":{}}]}})");
  EXPECT_TRUE(api::json_equal(pod, want)) << api::to_json(pod);
}

TEST(EnginePodOps, ModifyContainersKeepsLastMatchAndOrder) {
  api::Document pod = json(
      R"({"spec":{"initContainers":[{"name":"a"},{"name":"x","v":1},{"name":"b"},{"name":"x","v":2}]}})");
  modify_containers(pod, "initContainers", "x", Reorder::kMoveFirst);
  EXPECT_EQ(api::to_json(*api::find(pod, "/spec/initContainers")),
            R"([{"name":"x","v":2},{"name":"a"},{"name":"b"}])");
  modify_containers(pod, "initContainers", "a", Reorder::kMoveLast);
  EXPECT_EQ(api::to_json(*api::find(pod, "/spec/initContainers")),
            R"([{"name":"x","v":2},{"name":"b"},{"name":"a"}])");
  modify_containers(pod, "initContainers", "missing", Reorder::kRemove);
  EXPECT_EQ(api::find(pod, "/spec/initContainers")->Size(), 3u);
  move_container(pod, "initContainers", "containers", "b");
  EXPECT_EQ(api::to_json(*api::find(pod, "/spec/containers")), R"([{"name":"b"}])");
}

TEST(EnginePodOps, StatusAnnotationWritesNullForEmptyListsAndEscapesLikeGo) {
  api::Document tp = json(R"({"spec":{"initContainers":[{"name":"<i>"}],"volumes":[]}})");
  EXPECT_EQ(injection_status(tp, ""),
            R"({"initContainers":["\u003ci\u003e"],"containers":null,"volumes":null,)"
            R"("imagePullSecrets":null,"revision":"default"})");
  StatusContainers s = parse_status(R"({"containers":["a"],"initContainers":null})");
  EXPECT_TRUE(s.valid);
  EXPECT_EQ(s.containers, std::vector<std::string>{"a"});
  EXPECT_FALSE(parse_status("not json").valid);
}

TEST(EnginePodOps, ClusterEnvsReplacedAndAppendedInKeyOrder) {
  api::Document pod = json(R"({"spec":{"containers":[{"name":"istio-proxy","env":[
    {"name":"ISTIO_META_NETWORK","value":"old"},{"name":"KEEP","value":"k"}]}]}})");
  overwrite_cluster_envs(pod, {{"ISTIO_META_NETWORK", "n1"}, {"ISTIO_META_CLUSTER_ID", "c1"}});
  EXPECT_EQ(api::to_json(*api::find(pod, "/spec/containers/0/env")),
            R"([{"name":"KEEP","value":"k"},{"name":"ISTIO_META_CLUSTER_ID","value":"c1"},)"
            R"({"name":"ISTIO_META_NETWORK","value":"n1"}])");
}

std::shared_ptr<const Snapshot> tiny_snapshot(bool openshift = false) {
  SnapshotSources src;
  src.config = R"(policy: enabled
templates:
  t: |
    metadata:
      annotations:
        uid: "{{ .ProxyUID }}/{{ .ProxyGID }}"
    spec:
      containers:
      - name: istio-proxy
        image: proxy
        securityContext:
          runAsUser: {{ .ProxyUID }}
defaultTemplates: [t]
)";
  src.values = "{}";
  src.openshift = openshift;
  auto s = build_snapshot(src);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
  return s.ok() ? *s : nullptr;
}

TEST(EngineInject, MalformedPodIsAFailureValue) {
  auto s = tiny_snapshot();
  ASSERT_TRUE(s);
  for (std::string_view text :
       {R"({"spec":{"containers":"x"}})", R"({"metadata":{"labels":{"a":1}}})", R"({"spec":[1]})",
        R"({"spec":{"initContainers":[1]}})"}) {
    api::Document pod = json(text);
    PodRequest req;
    req.pod = &pod;
    req.ns = "default";
    InjectResult r = inject(*s, req);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << text;
    EXPECT_EQ(r.failure_type, "invalid_pod") << text;
  }
}

// The engine reads the request's pod in place when it is already in decoded form (no
// managedFields, its namespace set) and a copy it completes otherwise: the same pod either way
// gives the same answer, and the patch applies to the pod as sent.
TEST(EngineInject, APodAsSentAndItsDecodedFormGetTheSameAnswer) {
  auto s = tiny_snapshot();
  ASSERT_TRUE(s);
  const std::string spec = R"("spec":{"containers":[{"name":"app","image":"i"}]})";
  api::Document decoded = json(R"({"metadata":{"name":"p","namespace":"default"},)" + spec + "}");
  PodRequest req;
  req.pod = &decoded;
  req.ns = "default";
  InjectResult want = inject(*s, req);
  ASSERT_EQ(want.outcome, Outcome::kInjected) << want.message;
  for (std::string text :
       {R"({"metadata":{"name":"p","managedFields":[{"manager":"m"}],"namespace":"default"},)",
        R"({"metadata":{"name":"p"},)", R"({"metadata":{"name":"p","namespace":""},)"}) {
    api::Document sent = json(text + spec + "}");
    req.pod = &sent;
    InjectResult got = inject(*s, req);
    ASSERT_EQ(got.outcome, Outcome::kInjected) << text << got.message;
    EXPECT_EQ(api::to_json(got.pod), api::to_json(want.pod)) << text;
    api::Document applied;
    applied.CopyFrom(sent, applied.GetAllocator());
    auto patch = api::parse_json(got.patch);
    ASSERT_TRUE(patch.ok()) << patch.message();
    ASSERT_TRUE(api::apply_json_patch(applied, *patch).ok()) << text;
  }
  EXPECT_EQ(api::to_json(decoded), R"({"metadata":{"name":"p","namespace":"default"},)" + spec +
                                       "}");  // read, not changed
}

TEST(EngineInject, OpenShiftTakesProxyIdsFromNamespaceRanges) {
  auto s = tiny_snapshot(true);
  ASSERT_TRUE(s);
  api::Document ns = json(R"({"metadata":{"annotations":{
    "openshift.io/sa.scc.uid-range":"1000620000/10000",
    "openshift.io/sa.scc.supplemental-groups":"5000-5009,7000/10"}}})");
  api::Document pod = json(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "test-ns";
  req.namespace_object = &ns;
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "uid"}), "1000629999/5009");

  auto plain = tiny_snapshot(false);
  ASSERT_TRUE(plain);
  r = inject(*plain, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "uid"}), "1337/1337");
}

TEST(EngineInject, UserProxyOverridesAreMergedAndRecorded) {
  auto s = tiny_snapshot();
  ASSERT_TRUE(s);
  api::Document pod = json(R"({"metadata":{"name":"p"},"spec":{"containers":[
    {"name":"app"},{"name":"istio-proxy","image":"auto","args":["custom"]}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  InjectResult r = inject(*s, req);
  ASSERT_EQ(r.outcome, Outcome::kInjected) << r.message;
  // The template image wins over "auto"; the user's args are kept; the proxy goes last.
  const api::Value* proxy = api::find(r.pod, "/spec/containers/1");
  ASSERT_NE(proxy, nullptr);
  EXPECT_EQ(api::string_at(*proxy, {"name"}), "istio-proxy");
  EXPECT_EQ(api::string_at(*proxy, {"image"}), "proxy");
  EXPECT_EQ(api::to_json((*proxy)["args"]), R"(["custom"])");
  EXPECT_EQ(api::string_at(r.pod, {"metadata", "annotations", "proxy.istio.io/overrides"}),
            R"({"containers":[{"name":"istio-proxy","args":["custom"],"resources":{}}]})");
}

std::string pod_with_containers(std::size_t containers, std::size_t init_containers) {
  std::string pod = R"({"metadata":{"name":"many"},"spec":{"initContainers":[)";
  for (std::size_t i = 0; i < init_containers; ++i)
    pod += (i ? "," : "") + std::string(R"({"name":"i)") + std::to_string(i) + R"("})";
  pod += R"(],"containers":[)";
  for (std::size_t i = 0; i < containers; ++i)
    pod += (i ? "," : "") + std::string(R"({"name":"c)") + std::to_string(i) + R"("})";
  return pod + "]}}";
}

TEST(EngineInject, PodBeyondTheContainerLimitIsRefusedBeforeAnyTemplateRuns) {
  SnapshotSources sources = test_support::chart_set_sources();
  sources.native_sidecars = NativeSidecars::kDisabled;
  auto built = build_snapshot(sources);
  ASSERT_TRUE(built.ok()) << built.message();
  // At the limit (containers and init containers together): injected, with the real template.
  api::Document at_limit = json(pod_with_containers(kMaxPodContainers - 10, 10));
  PodRequest req;
  req.pod = &at_limit;
  req.ns = "default";
  InjectResult r = inject(**built, req);
  EXPECT_EQ(r.outcome, Outcome::kInjected) << r.message.substr(0, 500);
  // One more: refused, saying how many and what the limit is.
  api::Document over = json(pod_with_containers(kMaxPodContainers - 9, 10));
  req.pod = &over;
  r = inject(**built, req);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.failure_type, "pod_too_large");
  EXPECT_EQ(r.message, "pod has " + std::to_string(kMaxPodContainers + 1) +
                           " containers and init containers; sidecar injection handles at most " +
                           std::to_string(kMaxPodContainers));
  // A pod that is not injected is never refused for its size.
  std::string skipped_text = pod_with_containers(kMaxPodContainers + 1, 0);
  skipped_text.replace(skipped_text.find(R"("name":"many")"),
                       std::string(R"("name":"many")").size(),
                       R"("name":"many","annotations":{"sidecar.istio.io/inject":"false"})");
  api::Document skipped = json(skipped_text);
  req.pod = &skipped;
  EXPECT_EQ(inject(**built, req).outcome, Outcome::kSkipped);
  // The limit is the revision's to choose.
  sources.max_pod_containers = 0;
  built = build_snapshot(sources);
  ASSERT_TRUE(built.ok());
  req.pod = &over;
  EXPECT_EQ(inject(**built, req).outcome, Outcome::kInjected);
}

// The work one injection does, in the two counters the engine keeps for this: elements copied
// by list functions (Istio's sidecar template builds lists with `append` in a range over the
// containers) and merge-key comparisons of the strategic merge (the pod's containers against the
// template's). Counted on this thread around one inject() of a pod with `containers`.
struct InjectionWork {
  std::uint64_t list_copies = 0;
  std::uint64_t merge_comparisons = 0;
};

InjectionWork work_for(const Snapshot& s, std::size_t containers) {
  api::Document pod = json(pod_with_containers(containers, containers / 10));
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  const std::uint64_t copies = template_engine::list_elements_copied();
  const std::uint64_t comparisons = api::strategic_merge_key_comparisons();
  InjectResult r = inject(s, req);
  EXPECT_EQ(r.outcome, Outcome::kInjected) << r.message.substr(0, 500);
  return {template_engine::list_elements_copied() - copies,
          api::strategic_merge_key_comparisons() - comparisons};
}

TEST(EngineInject, WorkGrowsLinearlyWithThePodsContainers) {
  // Doubling the pod at most doubles the work, plus a constant for the template's own lists:
  // a quadratic step (a list copied per container, a nested scan of merge keys) quadruples it.
  // Counted, not timed, so that a busy machine cannot make it pass or fail.
  SnapshotSources sources = test_support::chart_set_sources();
  sources.native_sidecars = NativeSidecars::kDisabled;
  sources.max_pod_containers = 0;
  auto built = build_snapshot(sources);
  ASSERT_TRUE(built.ok()) << built.message();
  const InjectionWork small = work_for(**built, 1000);
  const InjectionWork twice = work_for(**built, 2000);
  const InjectionWork four = work_for(**built, 4000);
  // The merge does see every container (the counter measures something).
  EXPECT_GE(small.merge_comparisons, 1000U);
  for (const auto& [a, b] : {std::pair{small, twice}, std::pair{twice, four}}) {
    EXPECT_LE(b.list_copies, 2 * a.list_copies + 64)
        << "list elements copied: " << a.list_copies << " then " << b.list_copies;
    EXPECT_LE(b.merge_comparisons, 2 * a.merge_comparisons + 64)
        << "merge-key comparisons: " << a.merge_comparisons << " then " << b.merge_comparisons;
  }
}

std::shared_ptr<const Snapshot> snapshot_with_template(
    const std::string& tmpl,
    template_engine::ExecOptions limits = template_engine::ExecOptions::untrusted()) {
  SnapshotSources src;
  src.config = "policy: enabled\ntemplates:\n  runaway: |\n" + engine_test::indent(tmpl, 4) +
               "defaultTemplates: [runaway]\n";
  src.values = "{}";
  src.template_limits = limits;
  auto s = build_snapshot(src);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
  return s.ok() ? *s : nullptr;
}

InjectResult inject_one_container(const Snapshot& s) {
  api::Document pod = json(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]}})");
  PodRequest req;
  req.pod = &pod;
  req.ns = "default";
  return inject(s, req);
}

TEST(EngineInject, RunawayTemplatesFailNamingTheTemplateAndTheBound) {
  // Nested until loops: 10^10 iterations unbounded; the default step bound stops them (the
  // time bound is off here so that a slow machine still meets the step bound first).
  template_engine::ExecOptions steps = template_engine::ExecOptions::untrusted();
  steps.max_duration = std::chrono::milliseconds(0);
  auto loops = snapshot_with_template(
      "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}metadata: {}\n", steps);
  ASSERT_TRUE(loops);
  InjectResult r = inject_one_container(*loops);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.failure_type, "template_render");
  EXPECT_THAT(r.message, ::testing::HasSubstr("template: inject:1:"));
  EXPECT_THAT(r.message, ::testing::HasSubstr("execution exceeded the limit of 10000000 steps"));

  // Output: 100 MB of YAML comments.
  auto output = snapshot_with_template(
      "{{ range until 100000 }}# {{ repeat 1000 \"x\" }}\n{{ end }}metadata: {}\n");
  ASSERT_TRUE(output);
  r = inject_one_container(*output);
  EXPECT_EQ(r.failure_type, "template_render");
  EXPECT_THAT(r.message, ::testing::HasSubstr("output exceeded the limit of 16777216 bytes"));

  // Time: each step is slow (a 100,000-element list built per iteration), steps are few.
  template_engine::ExecOptions timed;
  timed.max_duration = std::chrono::milliseconds(50);
  auto slow = snapshot_with_template(
      "{{ range until 1000000 }}{{ $l := until 100000 }}{{ end }}metadata: {}\n", timed);
  ASSERT_TRUE(slow);
  r = inject_one_container(*slow);
  EXPECT_EQ(r.failure_type, "template_render");
  EXPECT_THAT(r.message, ::testing::HasSubstr("execution exceeded the time limit of 50ms"));

  // Unbounded on request (as Go): the same output template then renders.
  template_engine::ExecOptions none;
  auto small = snapshot_with_template(
      "{{ range until 2 }}# {{ repeat 10 \"x\" }}\n{{ end }}metadata: {}\n", none);
  ASSERT_TRUE(small);
  EXPECT_EQ(inject_one_container(*small).outcome, Outcome::kInjected);
}

}  // namespace
}  // namespace meshop::inject
