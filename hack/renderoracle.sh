#!/usr/bin/env bash
# Builds and runs renderoracle (hack/renderoracle): upstream Istio's `istioctl manifest generate`
# and Helm's chart engine, from the istio.io/istio module pinned in hack/lib/versions.sh (its
# module graph brings helm.sh/helm/v4), as the oracle of meshop's renderer and meshop::helm.
#
#   hack/renderoracle.sh --build        build if needed, print the binary path
#   hack/renderoracle.sh generate [-f iop.yaml]... [--set k=v]... [--force] [--revision R]
#       istioctl manifest generate's YAML stream (no cluster)
#   hack/renderoracle.sh helm-template CHARTDIR [-f values.yaml]... [--namespace ns] [--name rel]
#       one chart through Helm's engine; JSON {"templates": {path: text}, "crds": {path: text}}
#
# The binary lives in ${MESHOP_RENDERORACLE_DIR:-$(cache)/renderoracle} and is rebuilt when
# go.mod, go.sum or a source file changes. GOTOOLCHAIN=local; a cold build takes minutes (-p 2).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/renderoracle"
. "$here/lib/versions.sh"

out=${MESHOP_RENDERORACLE_DIR:-$(meshop_cache_dir)/renderoracle}
bin="$out/renderoracle"
stamp=$(cat "$mod/go.sum" "$mod"/go.mod "$mod"/*.go | sha256sum | cut -c1-16)

build() {
  if [ -x "$bin" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  command -v go >/dev/null || { echo "renderoracle: no Go toolchain on PATH" >&2; exit 1; }
  mkdir -p "$out"
  echo "renderoracle: building into $bin (a cold build of istio.io/istio takes minutes)" >&2
  start=$(date +%s)
  (cd "$mod" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -p 2 -trimpath -o "$bin.tmp" .) >&2
  mv "$bin.tmp" "$bin"
  echo "$stamp" > "$out/.stamp"
  echo "renderoracle: built in $(( $(date +%s) - start ))s" >&2
}

build
case "${1:---build}" in
  --build) echo "$bin" ;;
  *) exec "$bin" "$@" ;;
esac
