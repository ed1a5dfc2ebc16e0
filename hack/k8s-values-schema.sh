#!/usr/bin/env bash
# The Kubernetes-typed spec.values fields of every version of manifests/versions.yaml, as C++
# tables (operator/manifest/k8s_values.hpp): runs hack/k8s-values-schema.py over each version's
# istio.io/istio module and the k8s.io/api and k8s.io/apimachinery modules its go.mod requires,
# all from the Go module cache (downloaded from the module proxy when missing). The build runs
# this (operator/manifest/CMakeLists.txt); the output stays in the build directory.
#   hack/k8s-values-schema.sh OUT.cpp
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions=${MESHOP_VERSIONS_FILE:-$here/../manifests/versions.yaml}
[ $# -eq 1 ] || { echo "usage: hack/k8s-values-schema.sh OUT.cpp" >&2; exit 2; }
command -v go >/dev/null || { echo "k8s-values-schema: Go is needed to fetch the k8s.io/api modules" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
module_dir() {  # MODULE@VERSION
  local dir
  dir=$(cd / && go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "k8s-values-schema: could not download $1" >&2; return 1; }
  echo "$dir"
}
required() {  # GO_MOD MODULE: the version GO_MOD requires (after its replace directives)
  python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
mod = re.escape(sys.argv[2])
rep = re.search(r"^\s*(?:replace\s+)?%s(?:\s+v\S+)?\s+=>\s+(\S+)\s+(v\S+)" % mod, text, re.M)
if rep:
    print(rep.group(1) + "@" + rep.group(2))
else:
    req = re.search(r"^\s*(?:require\s+)?%s\s+(v\S+)" % mod, text, re.M)
    if not req:
        sys.exit("k8s-values-schema: %s does not require %s" % (sys.argv[1], sys.argv[2]))
    print(sys.argv[2] + "@" + req.group(1))
PY
}
args=()
while read -r v; do
  istio=$(bash "$here/chart-sets.sh" --dir "$v")
  api=$(module_dir "$(required "$istio/go.mod" k8s.io/api)")
  machinery=$(module_dir "$(required "$istio/go.mod" k8s.io/apimachinery)")
  args+=("$v=$istio:$api:$machinery")
done < <(python3 -c 'import sys, yaml
for v in yaml.safe_load(open(sys.argv[1]))["versions"]: print(v["version"])' "$versions")
exec python3 "$here/k8s-values-schema.py" "$1" "${args[@]}"
