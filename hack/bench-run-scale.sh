#!/usr/bin/env bash
# `meshop run` at scale, and during a canary wave (issue 13, "Measure"; a measurement, not a
# test).
#
#   hack/bench-run-scale.sh [NAMESPACES [PODS [WAVE]]]     # default: 10000 100000 100
#
# WAVE 0 skips the wave (e.g. to compare two binaries on the same cluster first).
#
# On a local control plane of its own (hack/cluster.sh --dir $MESHOP_CLUSTER_DIR, default
# .cluster-scale/ in the repository; left running for the next call, `hack/cluster.sh down
# --dir .cluster-scale` removes it; a second call reuses the workloads it finds):
#   1. `meshop run --local` (admin kubeconfig) installs two revisions: IstioOperator `default`
#      (minimal profile, restarts DryRun) and `canary` (restarts Auto, maxConcurrent
#      $MESHOP_SCALE_MAX_CONCURRENT (20), minInterval 0s);
#   2. NAMESPACES namespaces labelled istio-injection=enabled, one Deployment each, PODS pods in
#      all (pinned to kwok-node-0, so the scheduler is not the bottleneck); every pod goes
#      through meshop's webhook and gets default's sidecar;
#   3. readings of the process that served them (RSS, peak), then of a fresh process: seconds
#      to /readyz (informers synced), RSS after two restarts passes, peak, the restarts
#      controller's mean pass time, and meshop's own GET/LIST requests (its
#      meshop_kube_requests_total) during a quiet minute;
#   4. the wave: WAVE namespaces move to istio.io/rev=canary and the canary IstioOperator's
#      policy restarts their Deployments. Sampled every 10 s until all are rolled out on canary:
#      meshop's requests per minute by verb, the restarts passes (count, mean, and the largest
#      mean of a 10 s window), RSS and peak.
# Output: `key=value` lines, and each numeric value as `RESULT scale.<reading>.<key> <value>`.
# A cluster of 100k pods fits in 24 GiB, and its pods are created in ≈ 20 minutes on two cores
# (kwok takes longer to make them all Ready: MESHOP_SCALE_WAIT=created), with
#   GOGC=40 MESHOP_CLUSTER_SYNCS=20 MESHOP_CLUSTER_KWOK_PARALLELISM=32 \
#   MESHOP_CLUSTER_POD_CIDR=10.128.0.0/10 MESHOP_CLUSTER_REQUEST_TIMEOUT=10m \
#   MESHOP_CLUSTER_CONTROLLERS=deployment-controller,replicaset-controller,serviceaccount-controller
# (the ServiceAccount controller too: `up` waits for default/default, and the apiserver refuses a
# pod whose namespace has no ServiceAccount "default" yet)
# (hack/cluster.sh; the pods are pinned to a node, so the scheduler is stopped too), measured on
# 2026-12-06: kube-apiserver ≈ 9.5 GiB at 100k injected pods.
# Environment: MESHOP_SCALE_WAIT=created (wait for the pods to exist, not to be Ready),
# MESHOP_BIN / MESHOP_BUILD_DIR as hack/bench-run-memory.sh, MESHOP_BENCH_SETTLE
# (seconds before the RSS reading, default 65), MESHOP_SCALE_MAX_CONCURRENT (20),
# MESHOP_SCALE_WAVE_FROM (0: the wave moves namespaces scale-FROM.. ; another call on the same
# cluster moves namespaces no earlier wave moved).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${MESHOP_BUILD_DIR:-$repo/build/relwithdebinfo}
meshop=${MESHOP_BIN:-$build/operator/meshop}
[ -x "$meshop" ] || { echo "bench: no meshop binary at $meshop" >&2; exit 1; }
export MESHOP_CLUSTER_DIR=${MESHOP_CLUSTER_DIR:-$repo/.cluster-scale}
settle=${MESHOP_BENCH_SETTLE:-65}
max_concurrent=${MESHOP_SCALE_MAX_CONCURRENT:-20}
wave_from=${MESHOP_SCALE_WAVE_FROM:-0}
namespaces=${1:-10000}
pods=${2:-100000}
wave=${3:-100}
[ $((wave_from + wave)) -le "$namespaces" ] ||
  { echo "bench: MESHOP_SCALE_WAVE_FROM + WAVE must not exceed NAMESPACES" >&2; exit 2; }
replicas=$(( (pods + namespaces - 1) / namespaces ))

. "$here/lib/run-bench.sh"

bash "$here/cluster.sh" up >&2
. "$MESHOP_CLUSTER_DIR/env"
work=$(mktemp -d)
trap 'stop_meshop; rm -rf "$work"' EXIT
wport=$(free_port)
hport=$(free_port)

# Without kube-controller-manager's node-lifecycle-controller (MESHOP_CLUSTER_CONTROLLERS above)
# nothing lifts the not-ready taint the apiserver puts on a new node, and istiod's pods would
# never be scheduled.
kubectl taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
kubectl apply -f "$repo/crd/istiooperator.yaml" >/dev/null
kubectl wait --for=condition=Established crd/istiooperators.install.istio.io --timeout=60s >/dev/null
kubectl create namespace istio-system >/dev/null 2>&1 || true
start_meshop "$work/live.log"
iop() {  # NAME REVISION-LINE RESTARTS
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: istio-system}
spec:
  profile: minimal
  $2
  restarts: $3
YAML
}
healthy() {
  [ "$(kubectl -n istio-system get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]
}
iop default "" "{mode: DryRun}"
iop canary "revision: canary" \
  "{mode: Auto, maxConcurrent: $max_concurrent, minInterval: 0s, rolloutTimeout: 10m}"
for r in default canary; do
  for _ in $(seq 1 240); do healthy "$r" && break; sleep 0.5; done
  healthy "$r" || { tail -n 30 "$work/live.log" >&2; echo "bench: IstioOperator $r not HEALTHY" >&2; exit 1; }
done
# Every bench pod names its node: once istiod's pods are placed, the scheduler has nothing to do
# but hold a copy of every pod.
bash "$here/cluster.sh" stop kube-scheduler >&2
echo "meshop=$meshop version=\"$("$meshop" version | head -n1)\" namespaces=$namespaces pods=$pods replicas=$replicas wave=$wave rss_at_healthy_kib=$(status_kib "$pid" VmRSS)"

# 2. Namespaces and Deployments (those that exist are kept; kubectl apply is idempotent).
apply_parallel() {  # YAML documents on stdin, separated by "---" lines
  local parts
  parts=$(mktemp -d)
  awk -v dir="$parts" '{ print > (dir "/" int(n / 500)) } /^---$/ { n++ }'
  find "$parts" -type f | xargs -P 8 -I{} kubectl apply --server-side -f {} >/dev/null
  rm -rf "$parts"
}
t0=$(date +%s)
have=$(kubectl get deployments -A -l meshop-bench=scale --no-headers 2>/dev/null | wc -l)
if [ "$have" -lt "$namespaces" ]; then
  # In 8 parallel streams of 500 objects: one kubectl applies its documents one at a time.
  for k in $(seq "$have" $((namespaces - 1))); do
    cat <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: scale-$k, labels: {istio-injection: enabled, meshop-bench: scale}}
---
YAML
  done | apply_parallel
  for k in $(seq "$have" $((namespaces - 1))); do
    cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: scale-$k, labels: {meshop-bench: scale}}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      nodeName: kwok-node-0
      automountServiceAccountToken: false
      containers: [{name: app, image: registry.invalid/bench:1}]
---
YAML
  done | apply_parallel
fi
# Pods counted from the Deployments' status: readyReplicas, or replicas (pods created, Running or
# not) with MESHOP_SCALE_WAIT=created — kwok moves ≈ 20 pods/s to Running on two busy cores, and
# a pod's projected status is shared with its siblings' whether it runs or not.
wait_field=readyReplicas
[ "${MESHOP_SCALE_WAIT:-ready}" = created ] && wait_field=replicas
count_pods() {  # FIELD
  kubectl get deployments -A -l meshop-bench=scale -o jsonpath="{range .items[*]}{.status.$1}{\"\\n\"}{end}" |
    awk '{n += $1} END {printf "%d\n", n}'
}
last=0
until [ "$(count_pods $wait_field)" -ge "$pods" ]; do
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "$work/live.log" >&2; echo "bench: meshop exited" >&2; exit 1; }
  if [ $(( $(date +%s) - last )) -ge 60 ]; then
    echo "bench: $(count_pods $wait_field)/$pods pods ($wait_field) after $(( $(date +%s) - t0 ))s" >&2
    last=$(date +%s)
  fi
  sleep 20  # each check lists every Deployment
done
created=$(( $(date +%s) - t0 ))
echo "bench: $(count_pods replicas) pods created, $(count_pods readyReplicas) ready" >&2
sleep "$settle"
report scale "reading=live pods=$pods create_seconds=$created rss_kib=$(status_kib "$pid" VmRSS) peak_kib=$(status_kib "$pid" VmHWM)"

# 3. A fresh process on the same cluster.
stop_meshop
start_meshop "$work/fresh.log"
sleep "$settle"
rss=$(status_kib "$pid" VmRSS)
peak=$(status_kib "$pid" VmHWM)
read -r passes pass_ms < <(restarts_passes)
meshop_requests >"$work/q0"
sleep 60
meshop_requests >"$work/q1"
report scale "reading=fresh synced_seconds=$synced rss_kib=$rss peak_kib=$peak restarts_passes=$passes restarts_pass_mean_ms=$pass_ms rss_after_quiet_minute_kib=$(status_kib "$pid" VmRSS) quiet_minute_get_list=$(request_delta "$work/q0" "$work/q1" get list) quiet_minute_all=$(request_delta "$work/q0" "$work/q1")"

# 4. The wave (WAVE 0: none).
[ "$wave" -gt 0 ] || exit 0
moved=()
for k in $(seq "$wave_from" $((wave_from + wave - 1))); do moved+=("scale-$k"); done
rolled_out() {  # the moved Deployments whose rollout to a restarted template is complete
  for ns in "${moved[@]}"; do
    kubectl -n "$ns" get deployment app -o json
  done | python3 -c '
import json, sys
dec = json.JSONDecoder()
text = sys.stdin.read()
i, n = 0, 0
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    d, i = dec.raw_decode(text, i)
    ann = d["spec"]["template"]["metadata"].get("annotations", {})
    s = d.get("status", {})
    want = d["spec"]["replicas"]
    if ("kubectl.kubernetes.io/restartedAt" in ann and s.get("observedGeneration") == d["metadata"]["generation"]
            and s.get("updatedReplicas") == want and s.get("availableReplicas") == want
            and s.get("replicas") == want):
        n += 1
print(n)'
}
meshop_requests >"$work/w0"
meshop_reads_by_resource >"$work/r0"
read -r passes0 sum0 < <(restarts_pass_sum)
tw=$(date +%s)
for ns in "${moved[@]}"; do echo "$ns"; done |
  xargs -P 8 -I{} kubectl label namespace {} istio-injection- istio.io/rev=canary --overwrite >/dev/null
worst=0
prev_passes=$passes0
prev_sum=$sum0
done_n=0
while :; do
  sleep 10
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "$work/fresh.log" >&2; echo "bench: meshop exited" >&2; exit 1; }
  read -r p s < <(restarts_pass_sum)
  if [ "$p" -gt "$prev_passes" ]; then
    worst=$(python3 -c "print(max($worst, round(($s - $prev_sum) / ($p - $prev_passes) * 1000, 1)))")
  fi
  prev_passes=$p
  prev_sum=$s
  done_n=$(rolled_out)
  echo "bench: wave $(( $(date +%s) - tw ))s: $done_n/$wave rolled out, rss $(status_kib "$pid" VmRSS) KiB" >&2
  [ "$done_n" -ge "$wave" ] && break
  [ $(( $(date +%s) - tw )) -lt 1800 ] || { echo "bench: the wave did not finish in 30 min" >&2; break; }
done
wave_seconds=$(( $(date +%s) - tw ))
meshop_requests >"$work/w1"
meshop_reads_by_resource >"$work/r1"
echo "bench: wave GET/LIST by resource: $(request_delta "$work/r0" "$work/r1")" >&2
read -r passes1 sum1 < <(restarts_pass_sum)
wave_passes=$((passes1 - passes0))
wave_mean=$(python3 -c "print(round(($sum1 - $sum0) / max($wave_passes, 1) * 1000, 1))")
per_minute=$(request_delta "$work/w0" "$work/w1" --per-minute "$wave_seconds")
report scale "reading=wave workloads=$wave rolled_out=$done_n wave_seconds=$wave_seconds restarts_passes=$wave_passes restarts_pass_mean_ms=$wave_mean restarts_pass_worst_window_ms=$worst rss_kib=$(status_kib "$pid" VmRSS) peak_kib=$(status_kib "$pid" VmHWM) requests_per_minute=$per_minute"
