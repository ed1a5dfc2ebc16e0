# Helpers shared by the `meshop run` benchmarks (hack/bench-run-memory.sh,
# hack/bench-run-scale.sh). They expect $meshop (the binary), $wport and $hport (the webhook
# and health ports) and set $pid (the running meshop) and $synced (seconds to /readyz).

. "$(dirname "${BASH_SOURCE[0]}")/bench.sh"  # free_port

pid=""
synced=""
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

start_meshop() {  # LOG
  local t0
  t0=$(date +%s.%N)
  "$meshop" run --local --namespace istio-system --webhook-addr "127.0.0.1:$wport" \
    --health-addr "127.0.0.1:$hport" --native-sidecars false >"$1" 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$1" >&2; echo "bench: meshop exited" >&2; exit 1; }
    sleep 0.1
  done
  synced=$(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")
}
stop_meshop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}

# "count sum_seconds" of the restarts controller's reconciles (its passes) so far, from
# meshop's own controller_runtime_reconcile_time_seconds histogram.
restarts_pass_sum() {
  curl -sf "http://127.0.0.1:$hport/metrics" | awk '
    /^controller_runtime_reconcile_time_seconds_sum\{.*controller="restarts"/ { s = $NF }
    /^controller_runtime_reconcile_time_seconds_count\{.*controller="restarts"/ { c = $NF }
    END { printf "%d %s\n", c, (s == "" ? 0 : s) }'
}
# "count mean_ms" of the same.
restarts_passes() {
  restarts_pass_sum | awk '{ if ($1 > 0) printf "%d %.1f\n", $1, $2 / $1 * 1000; else print "0 0" }'
}

# "VERB count" for every verb of meshop's own requests (its meshop_kube_requests_total).
meshop_requests() {
  curl -sf "http://127.0.0.1:$hport/metrics" | python3 -c '
import re, sys, collections
n = collections.Counter()
for line in sys.stdin:
    if not line.startswith("meshop_kube_requests_total{"): continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", line.split("}")[0]))
    n[labels.get("verb", "?")] += float(line.split()[-1])
for k, v in sorted(n.items()): print(k, int(v))'
}
# "VERB/RESOURCE count" for the GET and LIST requests meshop made (which reads remain).
meshop_reads_by_resource() {
  curl -sf "http://127.0.0.1:$hport/metrics" | python3 -c '
import re, sys, collections
n = collections.Counter()
for line in sys.stdin:
    if not line.startswith("meshop_kube_requests_total{"): continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", line.split("}")[0]))
    if labels.get("verb", "").lower() not in ("get", "list"): continue
    n[labels.get("verb") + "/" + labels.get("resource", "?")] += float(line.split()[-1])
for k, v in sorted(n.items()): print(k, int(v))'
}
# The requests between two meshop_requests outputs, "VERB:count,..." ("none" when none), for
# the verbs named (all when none is), or per minute over SECONDS with --per-minute SECONDS.
request_delta() {  # BEFORE AFTER [VERB...] [--per-minute SECONDS]
  python3 - "$@" <<'PY'
import sys
before, after, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
per_minute = None
if "--per-minute" in rest:
    i = rest.index("--per-minute")
    per_minute = float(rest[i + 1])
    rest = rest[:i] + rest[i + 2:]
def load(p): return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
a, b = load(before), load(after)
d = {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0) > 0 and (not rest or k in rest)}
if per_minute:
    d = {k: round(v * 60 / per_minute, 1) for k, v in d.items()}
print(",".join(f"{k}:{v}" for k, v in sorted(d.items())) or "none")
PY
}

# Prints a `key=value ...` reading line, then its numeric values as RESULT lines named
# PREFIX[.n].reading.key.
report() {  # PREFIX LINE
  echo "$2"
  awk -v p="$1" '{ n = ""; r = ""
         for (i = 1; i <= NF; i++) { split($i, kv, "="); v[i] = kv[2]; k[i] = kv[1]
           if (kv[1] == "n") n = kv[2] "."; if (kv[1] == "reading") r = kv[2] }
         for (i = 1; i <= NF; i++) if (k[i] != "n" && k[i] != "reading" && v[i] ~ /^[0-9.]+$/)
           print "RESULT " p "." n r "." k[i] " " v[i] }' <<<"$2"
}
