#!/usr/bin/env bash
# Memory of `meshop run` as pods grow (issue 13, "Measure"; a measurement, not a test).
#
#   hack/bench-run-memory.sh [N...]        # default: 0 1000 2000 4000 10000
#
# On a local control plane of its own (hack/cluster.sh, --dir $MESHOP_CLUSTER_DIR, default
# .cluster-bench/ in the repository; left running for the next call, `hack/cluster.sh down
# --dir .cluster-bench` removes it):
#   1. `meshop run --local --namespace istio-system` (admin kubeconfig) with the seeds' CNI
#      IstioOperator (test/e2e/testdata/cni-annotations.yaml) installed and HEALTHY;
#   2. for each N, ascending: Deployments of 20 kwok replicas (5 per namespace, namespaces
#      bench-mem-K labelled istio-injection=enabled, so every pod goes through meshop's webhook)
#      until N pods are Ready; the pods are pinned to kwok-node-0 (spec.nodeName), so the
#      scheduler is not the bottleneck;
#   3. then, per N, two readings:
#        live   the meshop that served the webhook for this step's pods (for the first N, the
#               one that installed the IstioOperator; then the previous step's fresh one):
#               VmRSS after two restarts passes (65 s), VmHWM (peak since it started);
#        fresh  a new meshop on the same cluster: seconds to /readyz (informers synced), VmRSS
#               after two restarts passes, VmHWM, and the mean time of the restarts
#               controller's reconciles so far (its controller_runtime_reconcile_time_seconds);
#      and the LISTs and GETs the apiserver counted (apiserver_request_total, by resource) during
#      60 quiet seconds of the fresh process: on this cluster the other clients (controllers,
#      kwok) watch, so what is counted besides their lease GETs is meshop's.
# Output: one line per N and reading, `key=value` pairs, each numeric value also as a line
# `RESULT memory.N.READING.key value` (for hack/bench.sh). Environment: MESHOP_BIN (the binary;
# default $MESHOP_BUILD_DIR/operator/meshop, MESHOP_BUILD_DIR default build/relwithdebinfo),
# MESHOP_BENCH_SETTLE (seconds before the RSS reading, default 65).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${MESHOP_BUILD_DIR:-$repo/build/relwithdebinfo}
meshop=${MESHOP_BIN:-$build/operator/meshop}
[ -x "$meshop" ] || meshop=$(find "$build" -maxdepth 3 -name meshop -type f -perm -u+x | head -n1)
[ -x "$meshop" ] || { echo "bench: no meshop binary under $build" >&2; exit 1; }
export MESHOP_CLUSTER_DIR=${MESHOP_CLUSTER_DIR:-$repo/.cluster-bench}
settle=${MESHOP_BENCH_SETTLE:-65}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(0 1000 2000 4000 10000)

bash "$here/cluster.sh" up >&2
. "$MESHOP_CLUSTER_DIR/env"

. "$here/lib/run-bench.sh"
work=$(mktemp -d)
trap 'stop_meshop; rm -rf "$work"' EXIT

# The webhook port must stay the same across restarts: the webhook configuration names it.
wport=$(free_port)
hport=$(free_port)

# "VERB/resource count" for every LIST and GET the apiserver counted (apiserver_request_total).
api_reads() {
  kubectl get --raw /metrics | python3 -c '
import re, sys, collections
n = collections.Counter()
for line in sys.stdin:
    if not line.startswith("apiserver_request_total{"): continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", line.split("}")[0]))
    if labels.get("verb") in ("LIST", "GET") and labels.get("resource"):
        n[labels["verb"] + "/" + labels["resource"]] += float(line.split()[-1])
for k, v in sorted(n.items()): print(k, int(v))'
}
# The reads between two api_reads outputs, "VERB/resource:count,..." ("none" when none).
read_delta() {  # BEFORE AFTER
  python3 - "$1" "$2" <<'PY'
import sys
def load(p): return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
a, b = load(sys.argv[1]), load(sys.argv[2])
d = {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0) > 0}
print(",".join(f"{k}:{v}" for k, v in sorted(d.items())) or "none")
PY
}
ready_pods() {
  kubectl get deployments -A -l meshop-bench=memory -o jsonpath='{range .items[*]}{.status.readyReplicas}{"\n"}{end}' |
    awk '{n += $1} END {printf "%d\n", n}'
}

kubectl apply -f "$repo/crd/istiooperator.yaml" >/dev/null
kubectl wait --for=condition=Established crd/istiooperators.install.istio.io --timeout=60s >/dev/null
kubectl create namespace istio-system >/dev/null 2>&1 || true
start_meshop "$work/live.log"
kubectl -n istio-system apply -f "$repo/test/e2e/testdata/cni-annotations.yaml" >/dev/null
healthy() {
  [ "$(kubectl -n istio-system get istiooperator cni-annotations -o jsonpath='{.status.status}')" = HEALTHY ]
}
for _ in $(seq 1 240); do healthy && break; sleep 0.5; done
healthy || { tail -n 30 "$work/live.log" >&2; echo "bench: IstioOperator not HEALTHY" >&2; exit 1; }
echo "meshop=$meshop commit=$(git -C "$repo" rev-parse --short HEAD) rss_at_healthy_kib=$(status_kib "$pid" VmRSS)"

deployment() {  # NS NAME
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $2, namespace: $1, labels: {meshop-bench: memory}}
spec:
  replicas: 20
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $2}}
    spec:
      nodeName: kwok-node-0
      automountServiceAccountToken: false
      containers: [{name: app, image: registry.invalid/bench:1}]
---
YAML
}

have=$(kubectl get deployments -A -l meshop-bench=memory --no-headers 2>/dev/null | wc -l)
for n in "${counts[@]}"; do
  want=$(( (n + 19) / 20 ))
  t0=$(date +%s)
  if [ "$want" -gt "$have" ]; then
    for k in $(seq $((have / 5)) $(( (want - 1) / 5 ))); do
      kubectl create namespace "bench-mem-$k" >/dev/null 2>&1 || true
      kubectl label namespace "bench-mem-$k" istio-injection=enabled --overwrite >/dev/null
    done
    for d in $(seq "$have" $((want - 1))); do deployment "bench-mem-$((d / 5))" "app-$d"; done |
      kubectl apply -f - >/dev/null
    have=$want
  fi
  until [ "$(ready_pods)" -ge "$n" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "bench: meshop exited" >&2; exit 1; }
    sleep 2
  done
  created=$(( $(date +%s) - t0 ))
  pods=$(kubectl get pods -A --no-headers 2>/dev/null | wc -l)
  sleep "$settle"
  report memory "n=$n reading=live pods_in_cluster=$pods create_seconds=$created rss_kib=$(status_kib "$pid" VmRSS) peak_kib=$(status_kib "$pid" VmHWM)"

  live_pid=$pid
  pid=""
  # A fresh process on the same cluster (nothing is created while the webhook is away).
  kill "$live_pid"; wait "$live_pid" 2>/dev/null || true
  start_meshop "$work/fresh-$n.log"
  sleep "$settle"
  rss=$(status_kib "$pid" VmRSS)
  peak=$(status_kib "$pid" VmHWM)
  read -r passes pass_ms < <(restarts_passes || echo "0 0")
  api_reads >"$work/reads0"
  sleep 60
  api_reads >"$work/reads1"
  report memory "n=$n reading=fresh synced_seconds=$synced rss_kib=$rss peak_kib=$peak restarts_passes=$passes restarts_pass_mean_ms=$pass_ms rss_after_quiet_minute_kib=$(status_kib "$pid" VmRSS) peak_after_quiet_minute_kib=$(status_kib "$pid" VmHWM) quiet_minute_reads=$(read_delta "$work/reads0" "$work/reads1")"
  # This process serves the webhook for the next N.
done
