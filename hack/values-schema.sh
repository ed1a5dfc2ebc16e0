#!/usr/bin/env bash
# The spec.values schema of every version of manifests/versions.yaml, as C++ tables: runs
# operator/inject/mesh/generate_schema.py --values over each version's istio.io/istio module in
# the Go module cache (hack/chart-sets.sh --dir fetches it when missing). The build runs this
# (operator/manifest/CMakeLists.txt); the output stays in the build directory.
#   hack/values-schema.sh OUT.cpp
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions=${MESHOP_VERSIONS_FILE:-$here/../manifests/versions.yaml}
[ $# -eq 1 ] || { echo "usage: hack/values-schema.sh OUT.cpp" >&2; exit 2; }
args=()
while read -r v; do
  args+=("$v=$(bash "$here/chart-sets.sh" --dir "$v")")
done < <(python3 -c 'import sys, yaml
for v in yaml.safe_load(open(sys.argv[1]))["versions"]: print(v["version"])' "$versions")
exec python3 "$here/../operator/inject/mesh/generate_schema.py" --values "$1" "${args[@]}"
