#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from Go modules pinned in hack/cluster/go.mod.
# Binaries are cached outside the work tree, keyed by version:
#   ${MESHOP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop}/k8s-<version>/bin
# A second run with the binaries present does nothing. Prints the bin directory last.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/cluster"
. "$here/lib/versions.sh"

bin=$(meshop_cluster_bin)
want=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
missing=0
for b in "${want[@]}"; do [ -x "$bin/$b" ] || missing=1; done
# The stamp ties the cache to the exact go.sum, so a version bump rebuilds.
stamp=$(sha256sum "$mod/go.sum" | cut -c1-16)
if [ "$missing" = 0 ] && [ "$(cat "$bin/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "build-cluster: no Go toolchain on PATH; Go >= 1.26 is needed" >&2; exit 1; }
gov=$(go env GOVERSION); gov=${gov#go}
case "$gov" in 1.2[6-9]*|1.[3-9]*) ;; *) echo "build-cluster: Go $gov is too old; Kubernetes $K8S_VERSION needs Go >= 1.26" >&2; exit 1 ;; esac
mkdir -p "$bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"
kv=$K8S_VERSION
major=${kv#v}; major=${major%%.*}
minor=${kv#v*.}; minor=${minor%%.*}
ldk="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldk="$ldk -X $pkg.gitVersion=$kv -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
ldk="$ldk -X k8s.io/client-go/pkg/version.buildDate=1970-01-01T00:00:00Z"
ldk="$ldk -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"

cd "$mod"
echo "build-cluster: building control plane $kv into $bin (cold builds take a while)" >&2
start=$(date +%s)
# One invocation for the Kubernetes binaries so shared packages compile once. kubectl is
# built too, so tests use a client of the same version as the server.
go build -p 2 -ldflags "$ldk" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl
go build -p 2 -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
go build -p 2 -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" -o "$bin/kwok" sigs.k8s.io/kwok/cmd/kwok
# kwok's stages ship in its module; keep a copy beside the binaries.
kdir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
: > "$bin/kwok-stages.yaml"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  { echo "---"; cat "$kdir/kustomize/stage/$f"; } >> "$bin/kwok-stages.yaml"
done
echo "$stamp" > "$bin/.stamp"
echo "build-cluster: done in $(( $(date +%s) - start ))s" >&2
echo "$bin"
