#!/usr/bin/env bash
# Latency of the injection webhook at fixed offered rates, meshop beside upstream (a benchmark,
# not a test): what an apiserver sees, rather than wrk's saturation (hack/bench-webhook.sh).
# Both servers get the same settings (upstream's default injector texts rendered by the oracle,
# hack/injectoracle.sh settings; non-native sidecars) and the same AdmissionReview of upstream's
# hello pod over HTTPS/1.1 with keep-alive.
#
# The load generator (--tool):
#   vegeta  (default) vegeta v12.13.0 from the Go module proxy, built once into
#           ~/.cache/meshop/vegeta-v12.13.0: an open model with a constant pacer, one request
#           every 1/RATE s, a new connection/worker whenever the others are busy, so a slow
#           answer never delays the next arrival. Latency is vegeta's per-request log.
#   h2load  Debian's nghttp2-client in its --rps mode. Its pacing timer fires at most every
#           100 ms per connection (h2load.cc: rps_watcher.repeat = max(0.1, 1/rps)), and the
#           -c connections start together, so RATE/s arrives as bursts of RATE/10 requests
#           every 100 ms: the p99 it reports is the time to drain such a burst on these two
#           cores (a no-op server measures ~2 ms at 1,000/s), not the latency of a review at an
#           even rate. Kept to compare with earlier reports.
# Percentiles are computed from every request of the measured run (after a 2 s warm-up).
#
#   hack/bench-webhook-rate.sh [BUILD_DIR] [-d 15s] [--tool vegeta|h2load] [-c 50]
#                              [--rates "250 500 1000 2000"] [--memo on|off|both]
#                              [--noop on|off] [--meshop-threads N]
#
# Every review is the same (the generator posts one body), as in a rollout. --memo on: meshop
# as it runs, answering repeated reviews from memory (injection_cache.hpp); off: meshop with
# --memoize-entries 0, so every review runs the engine (the cost of pods it has not seen);
# both (default) runs meshop both ways. Upstream has no memoization. -c: h2load's connections.
# Also measures the first answer on 20 fresh connections (curl: total minus TLS connect
# time), where delayed ACKs show up when TCP_NODELAY is not set.
# --noop on (default) also offers the same rates to meshop_noop_https (test/bench/noop_https.cpp:
# an HTTPS server built like meshop's, answering meshop's own answer to the review): the
# latency this machine and load generator give a server that does no work.
# Prints one table (server, offered/s, achieved/s, p50/p99/p99.9/max ms, errors) and the
# lowest offered rate at which upstream's p99 passes 10 ms; every number also as a
# `RESULT key value` line (for hack/bench.sh). Runs everything back to back on
# this machine: the load generator shares its cores with the servers.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/lib/bench.sh
source "$root/hack/lib/bench.sh"
build=$root/build/relwithdebinfo
duration=15s clients=50 tool=vegeta rates="250 500 1000 2000" memo=both meshop_threads=0 with_noop=on
while [ $# -gt 0 ]; do
  case "$1" in
    -d) duration=$2; shift 2 ;;
    -c) clients=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --memo) memo=$2; shift 2 ;;
    --noop) with_noop=$2; shift 2 ;;
    --meshop-threads) meshop_threads=$2; shift 2 ;;
    --tool) tool=$2; shift 2 ;;
    -*) echo "unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
case "$memo" in on|off|both) ;; *) echo "--memo: on, off or both" >&2; exit 2 ;; esac
case "$tool" in
  vegeta)
    vegeta=$HOME/.cache/meshop/vegeta-v12.13.0/vegeta
    if [ ! -x "$vegeta" ]; then
      echo "bench-webhook-rate: building vegeta v12.13.0 (Go module proxy) into ${vegeta%/vegeta}" >&2
      GOBIN=${vegeta%/vegeta} GOTOOLCHAIN=local GOFLAGS=-mod=mod \
        go install github.com/tsenart/vegeta/v12@v12.13.0 >&2 ||
        { echo "bench-webhook-rate: could not build vegeta (try --tool h2load)" >&2; exit 1; }
    fi ;;
  h2load)
    if ! command -v h2load >/dev/null; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bench-webhook-rate: installing h2load (nghttp2-client)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y nghttp2-client >/dev/null
      else
        echo "bench-webhook-rate: h2load is not installed (apt-get install nghttp2-client)" >&2; exit 1
      fi
    fi
    for r in $rates; do
      if [ $((r % clients)) -ne 0 ]; then
        echo "bench-webhook-rate: rate $r is not a multiple of -c $clients (h2load's --rps is per connection)" >&2
        exit 2
      fi
    done ;;
  *) echo "--tool: vegeta or h2load" >&2; exit 2 ;;
esac
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target meshop -j2 >/dev/null
noop=
if [ "$with_noop" = on ]; then
  if cmake --build "$build" --target meshop_noop_https -j2 >/dev/null 2>&1 && [ -x "$build/test/bench/meshop_noop_https" ]; then
    noop=$build/test/bench/meshop_noop_https
  else
    echo "bench-webhook-rate: meshop_noop_https not built (MESHOP_BUILD_BENCHMARKS=OFF?); no no-op server" >&2
  fi
fi
meshop=$build/operator/meshop
work=$build/bench-webhook-rate
rm -rf "$work"; mkdir -p "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

settings= oracle=
if command -v go >/dev/null && bash "$root/hack/injectoracle.sh" settings --out "$work/oracle" >"$work/oracle-settings.log" 2>&1 \
   && [ -f "$work/oracle/settings/default/config" ]; then
  settings=$work/oracle/settings/default
  oracle=$(bash "$root/hack/injectoracle.sh" --build)
else
  echo "bench-webhook-rate: oracle unavailable (see $work/oracle-settings.log); measuring meshop alone" >&2
fi

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=bench" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null

istio=$(bash "$root/hack/istio-module.sh")
python3 - "$istio/pkg/kube/inject/testdata/inject/hello.yaml" > "$work/review.json" <<'PY'
import json, sys
try:
    import yaml
except ImportError:
    sys.exit("bench-webhook-rate: python3-yaml is needed to read hello.yaml")
d = yaml.safe_load(open(sys.argv[1]))
t = d["spec"]["template"]
meta = dict(t["metadata"]); meta["name"] = "hello-abc"; meta["namespace"] = "default"
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": t["spec"]}
print(json.dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
  "request": {"uid": "0df28fbd-5f5f-11e8-bc74-36e6bb280816",
              "kind": {"group": "", "version": "v1", "kind": "Pod"},
              "resource": {"group": "", "version": "v1", "resource": "pods"},
              "namespace": "default", "operation": "CREATE", "object": pod}}))
PY

start_meshop() {  # NAME MEMOIZE_ENTRIES
  local mport port
  mport=$(free_port); port=$(free_port)
  local args=(--log-level warn webhook --cert "$work/tls.crt" --key "$work/tls.key" --addr "127.0.0.1:$port"
              --metrics-addr "127.0.0.1:$mport" --native-sidecars false --threads "$meshop_threads"
              --memoize-entries "$2")
  [ -n "$settings" ] && args+=(--config-dir "$settings")
  "$meshop" "${args[@]}" 2>"$work/$1.log" &
  pids+=($!)
  wait_https "https://127.0.0.1:$port/inject"
  base[$1]="https://127.0.0.1:$port"
  servers+=("$1")
}
declare -A base
servers=()
case "$memo" in
  on) start_meshop meshop 1024 ;;
  off) start_meshop meshop-nomemo 0 ;;
  both) start_meshop meshop 1024; start_meshop meshop-nomemo 0 ;;
esac
if [ -n "$noop" ]; then
  start_noop "$noop" "${base[${servers[0]}]}/inject" "$meshop_threads"
  base[noop]="${noop_url%/inject}"
  servers+=(noop)
fi
if [ -n "$oracle" ]; then
  oport=$(free_port)
  "$oracle" serve --settings "$settings" --native false --cert "$work/tls.crt" --key "$work/tls.key" \
    --addr "127.0.0.1:$oport" 2>"$work/oracle.log" &
  pids+=($!)
  wait_https "https://127.0.0.1:$oport/inject"
  base[upstream]="https://127.0.0.1:$oport"
  servers+=(upstream)
fi
seconds=$(python3 -c "import re,sys; m=re.fullmatch(r'([0-9.]+)(ms|s|m)?', sys.argv[1]); print(max(1, int(float(m.group(1))*{'ms':1e-3,'s':1,'m':60,None:1}[m.group(2)])))" "$duration")

# First answers on fresh connections: request time after the TLS handshake.
first_answers() {  # URL -> "median max" ms over 20 connections
  for _ in $(seq 1 20); do
    curl -sS -k -o /dev/null -H 'Content-Type: application/json' --data-binary @"$work/review.json" \
      -w '%{time_appconnect} %{time_total}\n' "$1"
  done | python3 -c "
import sys, statistics
v = sorted((float(b) - float(a)) * 1e3 for a, b in (l.split() for l in sys.stdin if l.strip()))
print(f'{statistics.median(v):.2f} {v[-1]:.2f}')"
}

run_h2load() {  # SERVER RATE -> a result line
  local server=$1 rate=$2
  local url=${base[$server]}/inject
  local log=$work/h2load-$server-$rate.tsv out=$work/h2load-$server-$rate.txt
  local rps=$((rate / clients))
  # Warm-up (connections, Go's GC pacing), then the measured run.
  h2load --h1 -c "$clients" -t 1 --rps="$rps" -D 2 -d "$work/review.json" \
    -H 'Content-Type: application/json' "$url" >/dev/null 2>&1 || true
  h2load --h1 -c "$clients" -t 1 --rps="$rps" -D "$seconds" -d "$work/review.json" \
    -H 'Content-Type: application/json' --log-file "$log" "$url" > "$out" 2>&1 || true
  python3 - "$log" "$out" "$server" "$rate" "$seconds" <<'PY'
import re, sys
log, out, server, rate, seconds = sys.argv[1:]
lat, errors = [], 0
for line in open(log):
    f = line.split("\t")
    if len(f) < 3:
        continue
    status = int(f[1])
    if status < 200 or status >= 300:
        errors += 1
    else:
        lat.append(int(f[2]) / 1e3)
text = open(out).read()
m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", text)
if m:
    errors = max(errors, int(m.group(5)) + int(m.group(6)) + int(m.group(7)))
lat.sort()
def pct(p):
    if not lat:
        return float("nan")
    return lat[min(len(lat) - 1, int(p / 100 * len(lat)))]
achieved = (len(lat) + errors) / float(seconds)
print(f"{server}\t{rate}\t{achieved:.0f}\t{pct(50):.3f}\t{pct(99):.3f}\t{pct(99.9):.3f}\t{(lat[-1] if lat else float('nan')):.3f}\t{errors}")
PY
}

# vegeta: targets file, a warm-up, the measured attack, every request's latency from its CSV.
run_vegeta() {  # SERVER RATE -> a result line
  local server=$1 rate=$2
  local targets=$work/vegeta-$server.targets bin=$work/vegeta-$server-$rate.bin
  printf 'POST %s\nContent-Type: application/json\n@%s\n' "${base[$server]}/inject" "$work/review.json" > "$targets"
  local args=(attack -targets="$targets" -root-certs="$work/tls.crt" -keepalive=true -http2=false
              -timeout=30s -rate="$rate/1s")
  "$vegeta" "${args[@]}" -duration=2s > /dev/null 2>&1 || true
  "$vegeta" "${args[@]}" -duration="${seconds}s" > "$bin" 2>"$work/vegeta-$server-$rate.err" || true
  "$vegeta" encode --to=csv "$bin" | python3 -c '
import csv, sys
server, rate, seconds = sys.argv[1:]
lat, errors = [], 0
for row in csv.reader(sys.stdin):
    # timestamp (ns), code, latency (ns), bytes out, bytes in, error, body, attack, seq, ...
    if len(row) < 6:
        continue
    if row[1] != "200" or row[5]:
        errors += 1
    else:
        lat.append(int(row[2]) / 1e6)
lat.sort()
NAN = float("nan")
def pct(p):
    return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] if lat else NAN
achieved = (len(lat) + errors) / float(seconds)
print(f"{server}\t{rate}\t{achieved:.0f}\t{pct(50):.3f}\t{pct(99):.3f}\t{pct(99.9):.3f}\t{(lat[-1] if lat else NAN):.3f}\t{errors}")' "$server" "$rate" "$seconds"
}
run() { "run_$tool" "$@"; }

results=$work/results.tsv
: > "$results"
for server in "${servers[@]}"; do
  for rate in $rates; do
    echo "bench-webhook-rate: $server, $rate reviews/s for ${seconds}s ..." >&2
    run "$server" "$rate" >> "$results"
  done
done

case "$tool" in
  vegeta) how="vegeta attack -rate=RATE/1s -duration=${seconds}s (constant pacing, keep-alive, HTTP/1.1)" ;;
  h2load) how="h2load --h1 -c $clients --rps=RATE/$clients -D ${seconds}s (bursts of RATE/10 every 100 ms)" ;;
esac
echo "RESULT rate.tool_$tool 1"
echo "Fixed-rate latency: $how, AdmissionReview v1 of upstream's hello pod ($(wc -c < "$work/review.json") bytes), $(nproc) cores, load generator on the same machine"
printf '%-14s %9s %9s %9s %9s %9s %9s %7s\n' server "offered/s" "achieved" "p50 ms" "p99 ms" "p99.9 ms" "max ms" errors
while IFS=$'\t' read -r s r a p50 p99 p999 mx e; do
  printf '%-14s %9s %9s %9s %9s %9s %9s %7s\n' "$s" "$r" "$a" "$p50" "$p99" "$p999" "$mx" "$e"
done < "$results"
while IFS=$'\t' read -r s r a p50 p99 p999 mx e; do
  for kv in "achieved:$a" "p50_ms:$p50" "p99_ms:$p99" "p999_ms:$p999" "max_ms:$mx" "errors:$e"; do
    echo "RESULT rate.$s.$r.${kv%%:*} ${kv#*:}"
  done
done < "$results"
if [ -n "$oracle" ]; then
  awk -F'\t' '$1 == "upstream" && $5 > 10 { print "upstream p99 passes 10 ms at " $2 " reviews/s"; found=1; exit }
              END { if (!found) print "upstream p99 stays under 10 ms up to the highest rate offered" }' "$results"
fi
echo
echo "First answer on a fresh connection (20 connections, after the TLS handshake): median / max ms"
for server in "${servers[@]}"; do
  read -r med mx < <(first_answers "${base[$server]}/inject")
  printf '%-14s %8s %8s\n' "$server" "$med" "$mx"
  echo "RESULT first_answer.$server.median_ms $med"
  echo "RESULT first_answer.$server.max_ms $mx"
done
