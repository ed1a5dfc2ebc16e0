#!/usr/bin/env bash
# Prints the directory of the pinned istio.io/istio module in the Go module cache,
# downloading it from the module proxy first if needed. Tests read upstream data from there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/versions.sh"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
cd /  # outside any module, so no go.mod or go.sum is touched
dir=$(go mod download -json "istio.io/istio@$ISTIO_MODULE_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir" ] || { echo "istio-module: could not download istio.io/istio@$ISTIO_MODULE_VERSION" >&2; exit 1; }
echo "$dir"
