#!/usr/bin/env bash
# Benchmarks meshop's template engine against Go's text/template + sprig on the same machine,
# in one run: renders upstream's sidecar injection template (istio.io/istio module cache)
# over the data of test/differential/data/sidecar-*.json, and prints both timings and the ratio.
#   hack/bench-template.sh [BUILD_DIR]      (default build/relwithdebinfo; configured if needed)
# The issue's target is meshop >= 3x faster than Go for the render. Also prints each number as
# a `RESULT key value` line (for hack/bench.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/relwithdebinfo}
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHOP_BUILD_BENCHMARKS=ON >/dev/null
fi
cmake --build "$build" --target meshop_template_bench -j2 >/dev/null
oracle=$(bash "$root/hack/gotemplate.sh" "$build/gotemplate")
istio=$(bash "$root/hack/gotemplate.sh" --istio-dir)
files="$istio/manifests/charts/istio-control/istio-discovery/files"
work="$build/bench-template"
mkdir -p "$work"

export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
printf '%-12s %14s %14s %8s\n' fixture "meshop ns/op" "go ns/op" "go/meshop"
results=()
for fixture in "$root"/test/differential/data/sidecar-default.json "$root"/test/differential/data/sidecar-native-cni.json; do
  name=$(basename "$fixture" .json); name=${name#sidecar-}
  "$oracle" sidecar-data -values "$files/../values.yaml" -fixture "$fixture" -out "$work/$name.json"
  export MESHOP_BENCH_TEMPLATE="$files/injection-template.yaml" MESHOP_BENCH_DATA="$work/$name.json"
  # Median of 3 repetitions on each side: the numbers are wall time, so a busy machine adds
  # noise; run it on an otherwise idle machine for a meaningful ratio.
  cpp=$("$build/test/bench/meshop_template_bench" --benchmark_filter=BM_RenderSidecar \
        --benchmark_min_time=1 --benchmark_repetitions=3 --benchmark_format=json |
        python3 -c 'import json,sys
bs=[b for b in json.load(sys.stdin)["benchmarks"] if b.get("aggregate_name")=="median"]
b=bs[0]; print(b["real_time"]*{"ns":1,"us":1e3,"ms":1e6}[b["time_unit"]])')
  gons=$(cd "$root/hack/gotemplate" && go test -run '^$' -bench 'BenchmarkRenderSidecar$' -benchtime 1s -count 3 . |
         awk '/^BenchmarkRenderSidecar/ {print $3}' | sort -n | sed -n 2p)
  ratio=$(python3 -c "print(f'{float($gons)/float($cpp):.2f}x')")
  printf '%-12s %14.0f %14.0f %8s\n' "$name" "$cpp" "$gons" "$ratio"
  results+=("RESULT template.$name.meshop_ns $cpp" "RESULT template.$name.go_ns $gons"
            "RESULT template.$name.ratio_go_meshop ${ratio%x}")
done
printf '%s\n' "${results[@]}"
