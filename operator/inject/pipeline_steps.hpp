// The steps of upstream's injectPod around rendering that work on whole pods: stripPod and
// reinsertOverrides (idempotent re-injection), reapplyOverwrittenContainers with
// adjustInitContainerUser (user customisation of istio-proxy), and OpenShift's proxy UID/GID.
// Pure functions over the Documents they are given; thread-safe on distinct documents.
#pragma once

#include <cstdint>
#include <utility>

#include "api/json.hpp"
#include "api/result.hpp"
#include "operator/inject/mesh/mesh_config.hpp"

namespace meshop::inject {

// stripPod: when the pod carries a parseable sidecar.istio.io/status annotation, the
// containers it lists are removed, prometheus annotations pointing at the mesh status port
// cleared, and the annotation dropped. Otherwise nothing changes.
void strip_pod(api::Document& pod, int mesh_status_port);

// reinsertOverrides: containers saved in proxy.istio.io/overrides come back when missing.
// A value that is not JSON is an error naming the annotation.
api::Status reinsert_overrides(api::Document& pod);

// reapplyOverwrittenContainers + adjustInitContainerUser: every container of `template_pod`
// that the user also defined in `original` (or saved in proxy.istio.io/overrides), and that the
// previous injection did not add, is strategic-merged back over `final_pod` (image "auto"
// dropped first); a first injection records them in proxy.istio.io/overrides. Then the user's
// istio-proxy runAsUser/runAsGroup carry over to istio-validation / the iptables -u argument.
api::Status reapply_overwritten_containers(api::Document& final_pod,
                                           const rapidjson::Value& original,
                                           const rapidjson::Value& template_pod,
                                           const ProxyConfig& proxy);

// GetProxyIDs: {uid, gid} = 1337, or the top of the namespace's
// openshift.io/sa.scc.uid-range and of the first block of
// openshift.io/sa.scc.supplemental-groups (falling back to the UID range). `ns` may be null.
std::pair<std::int64_t, std::int64_t> openshift_proxy_ids(const rapidjson::Value* ns);

// OpenShift gives every container the same runAsUser: a user istio-proxy whose runAsUser
// equals the app containers' loses runAsUser/runAsGroup (isSidecarUserMatchingAppUser).
void reset_openshift_sidecar_user(api::Document& pod);

}  // namespace meshop::inject
