// libFuzzer target for the injection engine on what any pod creator controls: the Pod the
// apiserver sends to the webhook (labels, annotations such as proxy.istio.io/config,
// traffic.sidecar.istio.io/*, sidecar.istio.io/*, probes, ports, containers named istio-proxy,
// owner references) and, for kube-inject, a YAML stream of workloads.
//
// The first input byte picks the path and settings: bit 0 the path (0 webhook, 1 kube-inject),
// bit 1 native sidecars. The rest is the Pod JSON (webhook) or the YAML stream (kube-inject).
// Whatever the input, the engine must return injected, skipped or failed: no crash, no
// sanitizer report, no hang. An injected pod's JSON patch must apply to the pod it was computed
// against, and injecting that result again must not fail.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "operator/inject/injector.hpp"
#include "operator/inject/workloads.hpp"
#include "test/support/chart_set_sources.hpp"

namespace {

using namespace meshop;

std::shared_ptr<const inject::Snapshot> build(inject::NativeSidecars native) {
  inject::SnapshotSources sources = test_support::chart_set_sources();
  sources.native_sidecars = native;
  auto built = inject::build_snapshot(sources);
  if (!built.ok()) std::abort();  // the chart set's configuration must always build
  return *built;
}

const inject::Snapshot& snapshot(bool native) {
  static const auto off = build(inject::NativeSidecars::kDisabled);
  static const auto on = build(inject::NativeSidecars::kEnabled);
  return native ? *on : *off;
}

void webhook_path(const inject::Snapshot& snap, std::string_view text) {
  auto pod = api::parse_json(text);
  if (!pod.ok() || !pod->IsObject()) return;
  inject::PodRequest req;
  req.pod = &*pod;
  req.ns = "fuzz";
  inject::InjectResult r = inject::inject(snap, req);
  if (r.outcome != inject::Outcome::kInjected) return;
  // The patch is what the apiserver applies to the pod as sent; the result must be the pod
  // the engine returned, but for managedFields (dropped before injection) and the namespace
  // (filled in from the request, never patched).
  auto patch = api::parse_json(r.patch);
  if (!patch.ok()) std::abort();
  api::Document patched;
  patched.CopyFrom(*pod, patched.GetAllocator());
  if (auto st = api::apply_json_patch(patched, *patch); !st.ok()) {
    std::fprintf(stderr, "the patch does not apply: %s\npatch: %s\npod:   %s\n",
                 st.message().c_str(), r.patch.c_str(), api::to_json(*pod).c_str());
    std::abort();
  }
  api::Document returned;
  returned.CopyFrom(r.pod, returned.GetAllocator());
  for (api::Document* d : {&patched, &returned}) {
    if (auto* meta = api::find_member(*d, "metadata"); meta != nullptr && meta->IsObject()) {
      meta->RemoveMember("managedFields");
      meta->RemoveMember("namespace");
    }
  }
  if (!api::json_equal(patched, returned)) {
    std::fprintf(stderr,
                 "patch and returned pod disagree\npatch:    %s\npatched:  %s\nreturned: %s\n",
                 r.patch.c_str(), api::to_json(patched).c_str(), api::to_json(returned).c_str());
    std::abort();
  }
  // Injecting the injected pod again (a re-created pod, kube-inject twice) may skip or inject,
  // and may fail only as the first run could have: never crash.
  inject::PodRequest again;
  again.pod = &r.pod;
  again.ns = "fuzz";
  (void)inject::inject(snap, again);
}

void kube_inject_path(const inject::Snapshot& snap, std::string_view text) {
  inject::KubeInjectReport report;
  (void)inject::inject_stream(snap, text, report);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const inject::Snapshot& snap = snapshot((mode & 2) != 0);
  if ((mode & 1) == 0)
    webhook_path(snap, text);
  else
    kube_inject_path(snap, text);
  return 0;
}
