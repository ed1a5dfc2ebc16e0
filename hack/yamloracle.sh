#!/usr/bin/env bash
# Builds the Go oracle for meshop::api's differential tests (sigs.k8s.io/yaml and
# k8s.io/apimachinery strategicpatch) from hack/yamloracle into OUT_DIR (default: the cache).
#   hack/yamloracle.sh [OUT_DIR]      -> prints the path of the binary
# Module versions are pinned by the committed go.mod/go.sum; nothing is fetched beyond them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/meshop/yamloracle}"
mkdir -p "$out"
cd "$root/hack/yamloracle"
GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -o "$out/yamloracle" .
echo "$out/yamloracle"
