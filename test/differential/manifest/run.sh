#!/usr/bin/env bash
# The ctest command of manifest_differential: meshop_manifest_differential against the render
# oracle (hack/renderoracle.sh) over the pinned module's inputs and every other version of
# manifests/versions.yaml (each one's manifests/ from the Go module cache, hack/chart-sets.sh
# --dir: its profiles and a share of the generated IstioOperators are rendered from it by both
# sides).
#   run.sh DIFF_BIN ISTIO_MODULE_DIR SOURCE_DIR WORK_DIR MIN_IDENTICAL GENERATED [ARGS...]
set -euo pipefail
[ $# -ge 6 ] || { echo "usage: run.sh DIFF_BIN ISTIO_MODULE_DIR SOURCE_DIR WORK_DIR MIN_IDENTICAL GENERATED [ARGS...]" >&2; exit 2; }
bin=$1 istio=$2 src=$3 work=$4 min=$5 generated=$6
shift 6
oracle=$(bash "$src/hack/renderoracle.sh" --build)
pinned=$(cd "$istio" && pwd -P)
also=()
while read -r v; do
  dir=$(bash "$src/hack/chart-sets.sh" --dir "$v")
  [ "$(cd "$dir" && pwd -P)" = "$pinned" ] && continue
  also+=(--also-manifests "$v=$dir/manifests")
done < <(python3 -c 'import sys, yaml
for v in yaml.safe_load(open(sys.argv[1]))["versions"]: print(v["version"])' "$src/manifests/versions.yaml")
echo "manifest_differential: pinned module $pinned; other bundled chart sets: ${also[*]:-none}"
exec "$bin" --istio "$istio" --oracle "$oracle" --min-identical "$min" --generated "$generated" \
  --work "$work" --file "$src/test/e2e/testdata/cni-annotations.yaml" "${also[@]}" "$@"
