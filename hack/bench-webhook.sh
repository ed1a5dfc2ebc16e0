#!/usr/bin/env bash
# HTTPS load on the injection webhook, meshop beside upstream, in one run (a benchmark, not a
# test). Both serve the same settings: upstream's default injector ConfigMap texts (templates,
# values, mesh) rendered by the oracle (hack/injectoracle.sh settings), non-native sidecars, and
# both get the same admission.k8s.io/v1 AdmissionReview of upstream's hello pod over HTTPS/1.1
# with keep-alive, from wrk.
#
#   hack/bench-webhook.sh [BUILD_DIR] [-d 10s] [-c 16] [-t 2] [--meshop-threads N]
#
# Beside them, the machine's limit for the same load: meshop_noop_https (test/bench/noop_https.cpp),
# an HTTPS server built like meshop's (Beast, meshop's TLS context, TCP_NODELAY, keep-alive,
# as many threads), answering every request with meshop's own answer to the same review.
#
# Prints requests/s and latency p50/p99 of each server and the ratios meshop/upstream and
# meshop/no-op, then
# the in-process Google Benchmark (meshop_inject_bench) on the same settings beside upstream's
# own in-process Go benchmarks (go test -bench in the module), with their ratios. All
# processes share this machine's cores: run it on an otherwise idle machine.
# Without a Go toolchain (no oracle), only meshop is measured, with its built-in defaults.
# Every number is also printed as a `RESULT key value` line (for hack/bench.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/lib/bench.sh
source "$root/hack/lib/bench.sh"
build=$root/build/relwithdebinfo
duration=10s connections=16 wrk_threads=2 meshop_threads=0
while [ $# -gt 0 ]; do
  case "$1" in
    -d) duration=$2; shift 2 ;;
    -c) connections=$2; shift 2 ;;
    -t) wrk_threads=$2; shift 2 ;;
    --meshop-threads) meshop_threads=$2; shift 2 ;;
    -*) echo "unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
command -v wrk >/dev/null || { echo "bench-webhook: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHOP_BUILD_BENCHMARKS=ON >/dev/null
fi
cmake --build "$build" --target meshop -j2 >/dev/null
noop=
if cmake --build "$build" --target meshop_noop_https -j2 >/dev/null 2>&1 && [ -x "$build/test/bench/meshop_noop_https" ]; then
  noop=$build/test/bench/meshop_noop_https
else
  echo "bench-webhook: meshop_noop_https not built (MESHOP_BUILD_BENCHMARKS=OFF?); no machine-limit comparison" >&2
fi
meshop=$build/operator/meshop
work=$build/bench-webhook
rm -rf "$work"; mkdir -p "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# Settings: upstream's default ones when the oracle can be built, else meshop's built-in.
settings=
if command -v go >/dev/null && bash "$root/hack/injectoracle.sh" settings --out "$work/oracle" >"$work/oracle-settings.log" 2>&1 \
   && [ -f "$work/oracle/settings/default/config" ]; then
  settings=$work/oracle/settings/default
  oracle=$(bash "$root/hack/injectoracle.sh" --build)
else
  echo "bench-webhook: oracle unavailable (see $work/oracle-settings.log); measuring meshop alone" >&2
fi

# A serving certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=bench" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null

# The review: upstream's hello Deployment's pod template as the Pod the apiserver would send.
istio=$(bash "$root/hack/istio-module.sh")
python3 - "$istio/pkg/kube/inject/testdata/inject/hello.yaml" > "$work/review.json" <<'PY'
import json, sys, re
# hello.yaml is small and regular; read it with a YAML parser if there is one.
try:
    import yaml
    d = yaml.safe_load(open(sys.argv[1]))
except ImportError:
    sys.exit("bench-webhook: python3-yaml is needed to read hello.yaml")
t = d["spec"]["template"]
meta = dict(t["metadata"]); meta["name"] = "hello-abc"; meta["namespace"] = "default"
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": t["spec"]}
print(json.dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
  "request": {"uid": "0df28fbd-5f5f-11e8-bc74-36e6bb280816",
              "kind": {"group": "", "version": "v1", "kind": "Pod"},
              "resource": {"group": "", "version": "v1", "resource": "pods"},
              "namespace": "default", "operation": "CREATE", "object": pod}}))
PY
cat > "$work/post.lua" <<LUA
local f = io.open("$work/review.json", "r")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA

mport=$(free_port); port=$(free_port)
args=(--log-level warn webhook --cert "$work/tls.crt" --key "$work/tls.key" --addr "127.0.0.1:$port"
      --metrics-addr "127.0.0.1:$mport" --native-sidecars false --threads "$meshop_threads")
[ -n "$settings" ] && args+=(--config-dir "$settings")
"$meshop" "${args[@]}" 2>"$work/meshop.log" &
pids+=($!)
wait_https "https://127.0.0.1:$port/inject"
targets=("meshop https://127.0.0.1:$port/inject")
if [ -n "$noop" ]; then
  start_noop "$noop" "https://127.0.0.1:$port/inject" "$meshop_threads"
  targets+=("noop $noop_url")
fi
if [ -n "$settings" ]; then
  oport=$(free_port)
  "$oracle" serve --settings "$settings" --native false --cert "$work/tls.crt" --key "$work/tls.key" \
    --addr "127.0.0.1:$oport" 2>"$work/oracle.log" &
  pids+=($!)
  wait_https "https://127.0.0.1:$oport/inject"
  targets+=("upstream https://127.0.0.1:$oport/inject")
fi

to_ms() {  # wrk latency "812.00us" / "1.23ms" / "1.01s" -> milliseconds
  python3 -c "import sys,re; v=sys.argv[1]; m=re.match(r'([0-9.]+)(us|ms|s)',v); print(round(float(m.group(1))*{'us':1e-3,'ms':1,'s':1e3}[m.group(2)], 3))" "$1"
}

declare -A rps p50 p99
for t in "${targets[@]}"; do
  name=${t%% *}; url=${t#* }
  wrk -t"$wrk_threads" -c"$connections" -d5s -s "$work/post.lua" "$url" >/dev/null  # warm-up
  wrk -t"$wrk_threads" -c"$connections" -d"$duration" --latency -s "$work/post.lua" "$url" > "$work/wrk-$name.txt"
  rps[$name]=$(awk '/^Requests\/sec:/ {print $2}' "$work/wrk-$name.txt")
  p50[$name]=$(to_ms "$(awk '$1 == "50%" {print $2}' "$work/wrk-$name.txt")")
  p99[$name]=$(to_ms "$(awk '$1 == "99%" {print $2}' "$work/wrk-$name.txt")")
  if grep -q "Non-2xx" "$work/wrk-$name.txt"; then echo "bench-webhook: $name answered non-2xx:" >&2; cat "$work/wrk-$name.txt" >&2; fi
done

echo "HTTPS load: wrk -t$wrk_threads -c$connections -d$duration, AdmissionReview v1 of upstream's hello pod ($(wc -c < "$work/review.json") bytes), $(nproc) cores"
printf '%-10s %12s %10s %10s\n' server "requests/s" "p50 ms" "p99 ms"
for t in "${targets[@]}"; do
  name=${t%% *}
  printf '%-10s %12s %10.3f %10.3f\n' "$name" "${rps[$name]}" "${p50[$name]}" "${p99[$name]}"
done
if [ -n "${rps[noop]:-}" ]; then
  python3 -c "import sys; print(f'throughput meshop/no-op: {float(sys.argv[1])/float(sys.argv[2])*100:.0f}% (target >= 50%), answer $(wc -c < "$work/answer.json") bytes')" \
    "${rps[meshop]}" "${rps[noop]}"
fi
if [ -n "${rps[upstream]:-}" ]; then
  python3 - "${rps[meshop]}" "${rps[upstream]}" "${p50[meshop]}" "${p50[upstream]}" "${p99[meshop]}" "${p99[upstream]}" <<'PY'
import sys
rm, ru, p50m, p50u, p99m, p99u = map(float, sys.argv[1:])
print(f"throughput meshop/upstream: {rm/ru:.2f}x   p50 upstream/meshop: {p50u/p50m:.2f}x   p99 upstream/meshop: {p99u/p99m:.2f}x")
PY
fi
for t in "${targets[@]}"; do
  name=${t%% *}
  echo "RESULT webhook.$name.rps ${rps[$name]}"
  echo "RESULT webhook.$name.p50_ms ${p50[$name]}"
  echo "RESULT webhook.$name.p99_ms ${p99[$name]}"
done
echo "RESULT webhook.review_bytes $(wc -c < "$work/review.json")"
[ -f "$work/answer.json" ] && echo "RESULT webhook.answer_bytes $(wc -c < "$work/answer.json")"
[ -n "${rps[upstream]:-}" ] && echo "RESULT webhook.ratio.meshop_upstream_rps $(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "${rps[meshop]}" "${rps[upstream]}")"
[ -n "${rps[noop]:-}" ] && echo "RESULT webhook.ratio.meshop_noop_rps $(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.3f}')" "${rps[meshop]}" "${rps[noop]}")"

# The servers are stopped first: upstream's, hammered at saturation, works through its backlog
# for seconds after wrk ends, and the in-process figures were taken on a loaded machine.
cleanup
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()

if cmake --build "$build" --target meshop_inject_bench -j2 >/dev/null 2>&1 && [ -x "$build/test/bench/meshop_inject_bench" ]; then
  echo
  echo "In-process (Google Benchmark, median of 5 runs of 1 s each, settings: ${settings:-meshop built-in}):"
  MESHOP_ISTIO_DIR=$istio MESHOP_BENCH_SETTINGS=${settings:-} \
    "$build/test/bench/meshop_inject_bench" --benchmark_min_time=1 --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/inject-bench.json" --benchmark_out_format=json 2>/dev/null | grep -E '^(BM_|Benchmark|-)' | grep -v -E '_(mean|stddev|cv) '
  python3 - "$work/inject-bench.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    # Benchmarks with one iteration per run (BM_ServeReviewContainers) have no aggregates.
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    name = b.get("run_name", b["name"])
    t = b["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3}[b["time_unit"]]
    print(f"RESULT inproc.meshop.{name}.us {t:.2f}")
PY
  # Upstream's own benchmarks from the module (its default settings, the same ones as above):
  # BenchmarkInjection/many_env_vars is BM_InjectManyEnv's shape, BenchmarkInjectServePC0 is
  # BM_ServeReviewUpstreamTestPod's.
  if [ -n "$settings" ]; then
    echo
    echo "Upstream in-process (go test -bench in istio.io/istio/pkg/kube/inject, same machine):"
    if (cd "$root/hack/injectoracle" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go test -p 2 -run '^$' \
          -bench '^(BenchmarkInjection|BenchmarkInjectServePC0)$' -benchtime 2s istio.io/istio/pkg/kube/inject) \
          > "$work/go-bench.txt" 2>&1; then
      grep -E '^Benchmark' "$work/go-bench.txt"
      python3 - "$work/inject-bench.json" "$work/go-bench.txt" <<'PY'
import json, re, sys
ours = {b.get("run_name", b["name"]): b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") == "median"}
go = {}
for line in open(sys.argv[2]):
    m = re.match(r"^(Benchmark\S+?)(-\d+)?\s+\d+\s+([0-9.]+) ns/op", line)
    if m:
        go[m.group(1)] = float(m.group(3))
pairs = [("BenchmarkInjection/many_env_vars", "BM_InjectManyEnv"),
         ("BenchmarkInjectServePC0", "BM_ServeReviewUpstreamTestPod")]
for g, m in pairs:
    if g in go and m in ours:
        print(f"{g}: upstream {go[g]/1e3:.0f} us, meshop {m} {ours[m]/1e3:.0f} us -> meshop {go[g]/ours[m]:.1f}x faster")
for g, ns in go.items():
    print(f"RESULT inproc.upstream.{g}.us {ns/1e3:.2f}")
for g, m in pairs:
    if g in go and m in ours:
        print(f"RESULT inproc.ratio.{g} {go[g]/ours[m]:.2f}")
PY
    else
      echo "bench-webhook: upstream's go test -bench failed (see $work/go-bench.txt)" >&2
    fi
  fi
fi
