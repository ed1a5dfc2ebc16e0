#!/usr/bin/env bash
# Builds and runs injectoracle (hack/injectoracle): upstream Istio's sidecar injector, from the
# istio.io/istio module pinned in hack/lib/versions.sh, used as the oracle of meshop's engine.
#
#   hack/injectoracle.sh --build          build if needed, print the binary path
#   hack/injectoracle.sh settings --out DIR
#       render the settings of every upstream TestInjection case into DIR (cases.json,
#       settings/<id>/{config,values,mesh}, pods/<case>.jsonl) and self-check them
#   hack/injectoracle.sh inject --settings DIR/settings/<id> [--native auto|true|false]
#       [--revision default] [--compliance P] [--openshift] [--path /inject/...]
#       [--nodes v1.33.0,v1.34.0]  (kubelet versions of the fake nodes, for --native auto)
#       (or --fixtures DIR --case NAME: the settings and switches of that golden case)
#       stdin JSON lines {"namespace","pod"} -> stdout {"pod","patch"}|{"error"}|{"skipped":true}
#   hack/injectoracle.sh serve --settings DIR --cert F --key F --addr 127.0.0.1:PORT
#       upstream's webhook over HTTPS at /inject (for side-by-side benchmarks)
#   hack/injectoracle.sh normalize [--blank-fieldref]     Pod JSON lines -> comparison form
#   hack/injectoracle.sh genpods --seed N --count K       random pods for the differential test
#
# The binary lives in ${MESHOP_INJECTORACLE_DIR:-${MESHOP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop}/injectoracle}
# and is rebuilt when go.sum or a source file changes (stamp = sha256 of go.sum and *.go).
# GOTOOLCHAIN=local; the istio module is large: a cold build takes several minutes (-p 2).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/injectoracle"
. "$here/lib/versions.sh"

out=${MESHOP_INJECTORACLE_DIR:-$(meshop_cache_dir)/injectoracle}
bin="$out/injectoracle"
stamp=$(cat "$mod/go.sum" "$mod"/go.mod "$mod"/*.go | sha256sum | cut -c1-16)

build() {
  if [ -x "$bin" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  command -v go >/dev/null || { echo "injectoracle: no Go toolchain on PATH" >&2; exit 1; }
  mkdir -p "$out"
  echo "injectoracle: building into $bin (a cold build of istio.io/istio takes minutes)" >&2
  start=$(date +%s)
  (cd "$mod" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -p 2 -trimpath -o "$bin.tmp" .) >&2
  mv "$bin.tmp" "$bin"
  echo "$stamp" > "$out/.stamp"
  echo "injectoracle: built in $(( $(date +%s) - start ))s" >&2
}

build
case "${1:---build}" in
  --build) echo "$bin" ;;
  settings)
    MESHOP_ISTIO_DIR=${MESHOP_ISTIO_DIR:-$(bash "$here/istio-module.sh")} exec "$bin" "$@" ;;
  *) exec "$bin" "$@" ;;
esac
