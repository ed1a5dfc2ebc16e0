#!/usr/bin/env bash
# The chart sets the meshop binary embeds: for every version of manifests/versions.yaml, the
# manifests/charts and manifests/profiles of its istio.io/istio module, from the Go module cache
# (downloaded from the module proxy first when missing), checked against the table's sha256.
#   hack/chart-sets.sh OUT_BLOB OUT_HEADER   (the build runs this; see operator/manifest/)
#   hack/chart-sets.sh --sum DIR             the sha256 of a manifests/ directory's chart set
#   hack/chart-sets.sh --dir VERSION         the module directory of a bundled version
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions=${MESHOP_VERSIONS_FILE:-$here/../manifests/versions.yaml}  # the override is for tests
if [ "${1:-}" = --sum ]; then exec python3 "$here/chart-sets.py" sum "$2"; fi
command -v go >/dev/null || { echo "chart-sets: Go is needed to fetch the Istio chart sets (istio.io/istio modules)" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
module_dir() {  # MODULE_VERSION
  local dir
  dir=$(cd / && go mod download -json "istio.io/istio@$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "chart-sets: could not download istio.io/istio@$1" >&2; return 1; }
  echo "$dir"
}
table() { python3 -c 'import sys, yaml
for v in yaml.safe_load(open(sys.argv[1]))["versions"]: print(v["version"], v["module"])' "$versions"; }
if [ "${1:-}" = --dir ]; then
  while read -r v m; do [ "$v" = "$2" ] && { module_dir "$m"; exit; }; done < <(table)
  echo "chart-sets: version $2 is not in manifests/versions.yaml" >&2; exit 1
fi
[ $# -eq 2 ] || { echo "usage: hack/chart-sets.sh OUT_BLOB OUT_HEADER | --sum DIR | --dir VERSION" >&2; exit 2; }
args=()
while read -r v m; do
  args+=("$v=$(module_dir "$m")/manifests")
done < <(table)
exec python3 "$here/chart-sets.py" pack "$versions" "$1" "$2" "${args[@]}"
