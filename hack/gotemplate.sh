#!/usr/bin/env bash
# Builds meshop's Go text/template oracle (hack/gotemplate: Go text/template + sprig v3 +
# the Istio injection functions) and prints the path of the binary.
#   hack/gotemplate.sh [OUT_DIR]
# OUT_DIR defaults to ${MESHOP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop}/gotemplate; the
# build is skipped when the binary is newer than every file of the module.
# Also: hack/gotemplate.sh --istio-dir   prints the module-cache directory of the pinned
# istio.io/istio version (downloading it if needed), whose manifests the tests render.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/gotemplate"
. "$here/lib/versions.sh"

command -v go >/dev/null || { echo "gotemplate: no Go toolchain on PATH" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly

if [ "${1:-}" = "--istio-dir" ]; then
  exec bash "$here/istio-module.sh"  # the pinned istio.io/istio (hack/lib/versions.sh)
fi

out=${1:-${MESHOP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop}/gotemplate}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin="$out/gotemplate"
if [ -x "$bin" ] && [ -z "$(find "$mod" -newer "$bin" -type f | head -1)" ]; then
  echo "$bin"
  exit 0
fi
(cd "$mod" && go build -trimpath -o "$bin.tmp" .) >&2
mv "$bin.tmp" "$bin"
echo "$bin"
