#!/usr/bin/env bash
# Every side-by-side benchmark in one command, and a report (issue 16 item 3):
#   webhook     hack/bench-webhook.sh: HTTPS saturation (wrk), meshop beside upstream's injector
#               and the no-op HTTPS server; in-process injection beside upstream's Go benchmarks
#   rate        hack/bench-webhook-rate.sh: latency at 250/500/1000/2000 reviews/s offered (vegeta)
#   template    hack/bench-template.sh: the sidecar template render vs Go text/template
#   helm        hack/bench-helm.sh: istio-discovery through meshop::helm vs Helm's engine
#   manifest    hack/bench-manifest.sh: manifest generate vs upstream's renderer
#   memory      hack/bench-run-memory.sh: `meshop run` RSS, time to synced and restarts-pass
#               time at 1k and 10k kwok pods (--100k adds 100,000: slow)
# Then writes bench/REPORT.md and its PNG plots (hack/bench-report.py, matplotlib from Debian,
# installed when missing and run as root). One progress line per benchmark on stderr; each
# script's full output is kept in bench/raw/NAME.txt and its `RESULT key value` lines feed
# the report.
#
#   hack/bench.sh [--quick] [--100k] [--only "webhook rate ..."] [--build DIR]
#
# --quick: shorter runs (webhook 5 s, rates 5 s each, fewer repetitions, memory at 1k only).
# MESHOP_BENCH_CONDITIONS: what else ran on the machine, written into the report (e.g.
# "nothing else ran", "two C++ builds beside it").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/relwithdebinfo
quick=0 big=0 only="webhook rate template helm manifest memory"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --100k) big=1; shift ;;
    --only) only=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: hack/bench.sh [--quick] [--100k] [--only \"NAMES\"] [--build DIR]" >&2; exit 2 ;;
  esac
done
out=$root/bench
mkdir -p "$out/raw"
py=/usr/bin/python3  # Debian's, where python3-matplotlib is installed
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: installing python3-matplotlib" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3-matplotlib >/dev/null
  else
    echo "bench: python3-matplotlib is missing (apt-get install python3-matplotlib); no plots" >&2
  fi
fi

echo "bench: building meshop and the benchmark programs" >&2
[ -f "$build/build.ninja" ] || cmake --preset relwithdebinfo >/dev/null
cmake --build "$build" -j2 --target meshop meshop_noop_https meshop_inject_bench \
  meshop_template_bench meshop_helm_differential >/dev/null

if [ "$quick" = 1 ]; then
  wd=5s rd=5s mruns=5 hruns=10 counts=(1000)
else
  wd=10s rd=15s mruns=20 hruns=50 counts=(1000 10000)
fi
[ "$big" = 1 ] && counts+=(100000)

status=()
step() {  # NAME DESCRIPTION COMMAND...
  local name=$1 what=$2 t0 rc=0
  shift 2
  case " $only " in *" $name "*) ;; *) return 0 ;; esac
  t0=$(date +%s)
  echo "bench: [$name] $what ..." >&2
  "$@" > "$out/raw/$name.txt" 2>&1 || rc=$?
  local n
  n=$(grep -c '^RESULT ' "$out/raw/$name.txt" || true)
  echo "bench: [$name] done in $(( $(date +%s) - t0 ))s, exit $rc, $n results" >&2
  status+=("$name $rc $(( $(date +%s) - t0 ))")
}

step webhook "HTTPS saturation (wrk -d $wd) and in-process injection" \
  bash "$root/hack/bench-webhook.sh" "$build" -d "$wd"
step rate "fixed rates 250/500/1000/2000 reviews/s (vegeta, $rd each)" \
  bash "$root/hack/bench-webhook-rate.sh" "$build" -d "$rd"
step template "sidecar template render vs Go" bash "$root/hack/bench-template.sh" "$build"
step helm "istio-discovery chart vs Helm ($hruns renders)" \
  env MESHOP_HELM_DIFF_BIN="$build/test/differential/helm/meshop_helm_differential" \
  bash "$root/hack/bench-helm.sh" istio-control/istio-discovery "$hruns"
step manifest "manifest generate vs upstream's renderer ($mruns runs)" \
  bash "$root/hack/bench-manifest.sh" "$build" -n "$mruns"
step memory "meshop run memory at ${counts[*]} kwok pods" \
  env MESHOP_BUILD_DIR="$build" bash "$root/hack/bench-run-memory.sh" "${counts[@]}"

{
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nproc $(nproc)"
  echo "cpu $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "kernel $(uname -sr)"
  echo "memory_kib $(awk '/^MemTotal/ {print $2}' /proc/meminfo)"
  echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . ':!bench' || echo '-dirty')"
  echo "mode $([ "$quick" = 1 ] && echo quick || echo full)"
  echo "load_after $(cut -d' ' -f1-3 /proc/loadavg)"
  # What else ran on the machine, in the report's words (e.g. "nothing else ran").
  echo "conditions ${MESHOP_BENCH_CONDITIONS:-not stated (set MESHOP_BENCH_CONDITIONS)}"
  for s in "${status[@]}"; do echo "status $s"; done
} > "$out/raw/machine.txt"
echo "bench: writing bench/REPORT.md" >&2
"$py" "$root/hack/bench-report.py" "$out"
echo "bench: bench/REPORT.md written" >&2
