# Versions of the Go-built control plane, shared by the hack/ scripts. Keep in step
# with hack/cluster/go.mod.
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

meshop_cache_dir() { echo "${MESHOP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop}"; }
meshop_cluster_bin() { echo "$(meshop_cache_dir)/k8s-$K8S_VERSION/bin"; }
# istio.io/istio has no semver tags on the module proxy; tests read upstream data (profiles,
# IstioOperator files, injection templates and golden files) from this pseudo-version in the
# Go module cache. Never committed.
ISTIO_MODULE_VERSION=v0.0.0-20260827124520-eed52ebb66ad
