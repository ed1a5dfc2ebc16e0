#!/usr/bin/env bash
# Benchmark (not a test): rendering one chart of the pinned Istio module with default values,
# meshop::helm against Helm v4's engine (hack/renderoracle.sh helm-template --repeat), same
# machine, one run each; prints both mean times and the ratio (also as `RESULT key value` lines).
#   hack/bench-helm.sh [CHART (relative to manifests/charts, default istio-control/istio-discovery)] [N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
chart=$(bash "$here/istio-module.sh")/manifests/charts/${1:-istio-control/istio-discovery}
n=${2:-50}
bin=${MESHOP_HELM_DIFF_BIN:-$here/../build/relwithdebinfo/test/differential/helm/meshop_helm_differential}
oracle=$(bash "$here/renderoracle.sh" --build)
go_ms=$("$oracle" helm-template "$chart" --name istio --namespace istio-system --repeat "$n" 2>&1 >/dev/null |
  sed -n 's/.*, \([0-9.]*\) ms each/\1/p')
cpp_ms=$("$bin" --bench "$chart" "$n" 2>&1 | sed -n 's/.*, \([0-9.]*\) ms each/\1/p')
echo "chart $(basename "$chart"), $n renders: helm (Go) ${go_ms} ms, meshop::helm ${cpp_ms} ms each"
awk -v g="$go_ms" -v c="$cpp_ms" 'BEGIN { printf "meshop::helm is %.2fx the speed of Helm'"'"'s engine\n", g / c }'
awk -v g="$go_ms" -v c="$cpp_ms" -v n="$(basename "$chart")" \
  'BEGIN { printf "RESULT helm.%s.go_ms %s\nRESULT helm.%s.meshop_ms %s\nRESULT helm.%s.ratio_go_meshop %.2f\n", n, g, n, c, n, g / c }'
