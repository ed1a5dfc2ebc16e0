#!/usr/bin/env bash
# `meshop manifest generate` against upstream's renderer (istioctl's mesh.ManifestGenerate,
# hack/renderoracle.sh generate), whole commands (process start included), same machine, one
# run (a benchmark, not a test). Two inputs: the default profile, and the seeds' CNI
# IstioOperator (test/e2e/testdata/cni-annotations.yaml). Two meshop modes:
#   charts    `meshop manifest generate --manifests $(hack/istio-module.sh)/manifests`: upstream's
#             charts and profiles of the pinned module through istioctl's pipeline, the output
#             the oracle prints (object for object: ctest -R manifest_differential); the ratio
#             that compares like with like
#   builtin   `meshop manifest generate` without --manifests: the default bundled chart set
#             compiled into the binary (what install applies; the same charts, the bundled
#             version's hub and tag)
#
#   hack/bench-manifest.sh [BUILD_DIR] [-n 20]
#
# Uses hyperfine (Debian's; installed when missing and run as root) with 2 warm-up runs, else
# a loop of N runs (mean). Prints a table and `RESULT key value` lines (for hack/bench.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/relwithdebinfo
runs=20
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    -*) echo "unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
if ! command -v hyperfine >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "bench-manifest: installing hyperfine" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y hyperfine >/dev/null 2>&1 || true
fi
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target meshop -j2 >/dev/null
meshop=$build/operator/meshop
oracle=$(bash "$root/hack/renderoracle.sh" --build)
istio=$(bash "$root/hack/istio-module.sh")
work=$build/bench-manifest
rm -rf "$work"; mkdir -p "$work"
cni=$root/test/e2e/testdata/cni-annotations.yaml

mean_seconds() {  # NAME COMMAND... -> mean wall seconds of one run
  local name=$1; shift
  if command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/$name.json" --output=null \
      "$(printf '%q ' "$@")" >"$work/$name.txt" 2>&1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$work/$name.json"
  else
    local t0 t1
    "$@" >/dev/null; "$@" >/dev/null
    t0=$(date +%s.%N)
    for _ in $(seq 1 "$runs"); do "$@" >/dev/null; done
    t1=$(date +%s.%N)
    python3 -c "print(($t1 - $t0) / $runs)"
  fi
}

printf '%-16s %14s %14s %14s %10s %12s\n' input "upstream ms" "charts ms" "builtin ms" "up/charts" "same bytes"
for input in default cni-annotations; do
  files=()
  [ "$input" = cni-annotations ] && files=(-f "$cni")
  "$oracle" generate "${files[@]}" > "$work/upstream-$input.yaml"
  "$meshop" manifest generate --manifests "$istio/manifests" "${files[@]}" > "$work/charts-$input.yaml"
  "$meshop" manifest generate "${files[@]}" > "$work/builtin-$input.yaml"
  same=no
  cmp -s "$work/upstream-$input.yaml" "$work/charts-$input.yaml" && same=yes
  up=$(mean_seconds "upstream-$input" "$oracle" generate "${files[@]}")
  ch=$(mean_seconds "charts-$input" "$meshop" manifest generate --manifests "$istio/manifests" "${files[@]}")
  bi=$(mean_seconds "builtin-$input" "$meshop" manifest generate "${files[@]}")
  python3 - "$input" "$up" "$ch" "$bi" "$same" \
    "$(wc -c < "$work/upstream-$input.yaml")" "$(wc -c < "$work/charts-$input.yaml")" "$(wc -c < "$work/builtin-$input.yaml")" <<'PY'
import sys
name, up, ch, bi, same, ub, cb, bb = sys.argv[1:]
up, ch, bi = float(up) * 1e3, float(ch) * 1e3, float(bi) * 1e3
print(f"{name:<16} {up:14.1f} {ch:14.1f} {bi:14.1f} {up/ch:9.1f}x {same:>12}")
print(f"RESULT manifest.{name}.upstream_ms {up:.2f}")
print(f"RESULT manifest.{name}.meshop_charts_ms {ch:.2f}")
print(f"RESULT manifest.{name}.meshop_builtin_ms {bi:.2f}")
print(f"RESULT manifest.{name}.ratio_upstream_charts {up/ch:.2f}")
print(f"RESULT manifest.{name}.ratio_upstream_builtin {up/bi:.2f}")
print(f"RESULT manifest.{name}.bytes_upstream {ub}")
print(f"RESULT manifest.{name}.bytes_charts {cb}")
print(f"RESULT manifest.{name}.bytes_builtin {bb}")
print(f"RESULT manifest.{name}.charts_identical {1 if same == 'yes' else 0}")
PY
done
echo "($runs runs each$(command -v hyperfine >/dev/null && echo ', hyperfine -N, 2 warm-up runs'); same bytes: meshop --manifests printed exactly upstream's stream; $(nproc) cores)"
