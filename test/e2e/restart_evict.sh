#!/usr/bin/env bash
# Issue 15, strategy Evict, on the real control plane, driven by `meshop restart`:
#   1. a Deployment of 4 replicas with a PodDisruptionBudget minAvailable 3, on the default
#      revision; its namespace moves to canary, whose IstioOperator says
#      restarts {mode: Auto, strategy: Evict}. `meshop restart plan` lists it as Restart, strategy
#      Evict; `meshop restart run --wait` replaces its pods one at a time through the Eviction
#      API. While it runs the PDB's status is sampled: disruptionsAllowed never below 0 and
#      currentHealthy never below desiredHealthy. Afterwards the Deployment's
#      metadata.generation and pod template are unchanged (no new ReplicaSet), every pod is new
#      and on canary, and each replacement was Ready before the next pod was evicted;
#   2. a Deployment whose PDB says maxUnavailable 0: the plan (a dry-run eviction) and the run
#      (the apiserver's 429) show it Deferred naming the PDB, nothing is evicted; once the PDB
#      is relaxed the same `restart run --wait` proceeds and completes;
#   3. a StatefulSet (pods recreated under the same names) and a DaemonSet move the same way,
#      their generation unchanged.
# The PDB trace of part 1 is printed (and kept in $MESHOP_EVICT_TRACE when set).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
. "$(dirname "$0")/restart_lib.sh"

id=$RANDOM
ns=e2e-evict-$id
locked_ns=e2e-evict-locked-$id
kinds_ns=e2e-evict-kinds-$id
namespaces=("$ns" "$locked_ns" "$kinds_ns")
work=$(mktemp -d)
sampler_pid=
run_pid=
cleanup() {
  local rc=$?
  set +e
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null
  if [ "$rc" != 0 ]; then
    for f in run.log run2.log run3.log; do
      [ -f "$work/$f" ] && { echo "--- debug: $f" >&2; cat "$work/$f" >&2; }
    done
    kubectl -n "$ns" get pods,pdb -o wide >&2
    kubectl -n "$locked_ns" get pods,pdb -o wide >&2
    kubectl -n "$kinds_ns" get pods -o wide >&2
  fi
  rl_cleanup "$rc"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

rl_control_planes
rl_iop "e2e-evict-default-$id" default '{mode: DryRun}'
rl_iop "e2e-evict-canary-$id" canary '{mode: Auto, strategy: Evict, maxConcurrent: 1, rolloutTimeout: 2m}'
rl_webhook
rl_mwc "e2e-evict-injector-$id" default yes
rl_mwc "e2e-evict-injector-canary-$id" canary no

for n in "${namespaces[@]}"; do
  kubectl create namespace "$n" >/dev/null
  kubectl label namespace "$n" istio-injection=enabled >/dev/null
done
rl_wait_injecting "$ns"
kubectl -n "$ns" create deployment web --image=registry.invalid/web:1 --replicas=4 >/dev/null
kubectl -n "$ns" create poddisruptionbudget web-pdb --selector=app=web --min-available=3 >/dev/null
kubectl -n "$locked_ns" create deployment locked --image=registry.invalid/locked:1 --replicas=2 >/dev/null
# 25% of 2 rounds down to 0 unavailable; the Evict strategy needs one.
kubectl -n "$locked_ns" patch deployment locked --type=merge \
  -p '{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":1}}}}' >/dev/null
kubectl -n "$locked_ns" create poddisruptionbudget locked-pdb --selector=app=locked --max-unavailable=0 >/dev/null
kubectl -n "$kinds_ns" apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: registry.invalid/db:1}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: registry.invalid/agent:1}]}
YAML
kubectl -n "$ns" rollout status deployment/web --timeout=120s >/dev/null
kubectl -n "$locked_ns" rollout status deployment/locked --timeout=120s >/dev/null
kubectl -n "$kinds_ns" rollout status statefulset/db --timeout=120s >/dev/null
kubectl -n "$kinds_ns" rollout status daemonset/agent --timeout=120s >/dev/null
pdb_allows() {  # NS PDB N
  [ "$(kubectl -n "$1" get pdb "$2" -o jsonpath='{.status.disruptionsAllowed}')" = "$3" ]
}
wait_for 60 "web-pdb allows 1" pdb_allows "$ns" web-pdb 1
wait_for 60 "locked-pdb allows 0" pdb_allows "$locked_ns" locked-pdb 0

before_pods=$(pod_names "$ns" app=web)
for p in $before_pods; do
  [ "$(pod_revision "$ns" "$p")" = default ] || fail "pod $p is not on the default revision"
done
generation=$(kubectl -n "$ns" get deployment web -o jsonpath='{.metadata.generation}')
kubectl -n "$ns" get deployment web -o jsonpath='{.spec.template}' > "$work/template-before.json"
replicasets=$(kubectl -n "$ns" get replicasets -o jsonpath='{.items[*].metadata.name}')

# --- 1. The wave.
kubectl label namespace "$ns" istio-injection- istio.io/rev=canary >/dev/null
"$MESHOP_BIN" restart plan -n "$ns" | tee "$work/plan.txt"
grep -E "^$ns +Deployment +web +RevisionChanged +default -> canary +Restart +Evict +.*evicting pod web-" \
  "$work/plan.txt" >/dev/null || fail "plan does not list web as Restart by Evict"
"$MESHOP_BIN" restart plan -n "$ns" -o json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"]
assert len(w) == 1 and w[0]["strategy"] == "Evict" and w[0]["action"] == "Restart", w' \
  || fail "JSON plan does not show strategy Evict"

# The PDB's status while the wave runs: a watch, so every status the disruption controller and
# the eviction API write is seen (one line each, stamped when it arrived).
: > "$work/pdb-trace.txt"
kubectl -n "$ns" get pdb web-pdb -w \
  -o jsonpath='{.status.disruptionsAllowed} {.status.currentHealthy} {.status.desiredHealthy} {.status.expectedPods} rv={.metadata.resourceVersion}{"\n"}' \
  > >(while read -r line; do echo "$(date -u +%H:%M:%S.%N | cut -c1-12) $line"; done >> "$work/pdb-trace.txt") &
sampler_pid=$!  # kubectl's: when it ends, the stamping loop ends too
wait_for 10 "the PDB watch" test -s "$work/pdb-trace.txt"
"$MESHOP_BIN" restart run -n "$ns" --wait --timeout 4m > "$work/run.log" 2>&1 || fail "restart run failed"
kubectl -n "$ns" rollout status deployment/web --timeout=60s >/dev/null
wait_for 30 "web-pdb allows 1 again" pdb_allows "$ns" web-pdb 1
sleep 1  # the watch's last lines
kill "$sampler_pid" 2>/dev/null || true
sampler_pid=
echo "--- meshop restart run"; cat "$work/run.log"
echo "--- PDB web-pdb during the wave: time disruptionsAllowed currentHealthy desiredHealthy expectedPods resourceVersion"
cat "$work/pdb-trace.txt"
[ -n "${MESHOP_EVICT_TRACE:-}" ] && cp "$work/pdb-trace.txt" "$MESHOP_EVICT_TRACE"
[ "$(grep -c '^evicted    pod ' "$work/run.log")" = 4 ] || fail "expected 4 evictions"
grep -q "^restarted  Deployment/$ns/web" "$work/run.log" || fail "no restart line"
grep -q "^completed  Deployment/$ns/web" "$work/run.log" || fail "no completion line"
python3 - "$work/pdb-trace.txt" <<'PY' || fail "the PDB was violated during the wave"
import sys
rows = [l.split()[:5] for l in open(sys.argv[1]) if len(l.split()) == 6]
assert rows, "no samples"
allowed = [int(r[1]) for r in rows]
assert min(allowed) >= 0, f"disruptionsAllowed went to {min(allowed)}"
for t, a, cur, want, exp in rows:
    assert int(cur) >= int(want), f"{t}: currentHealthy {cur} < desiredHealthy {want}"
print(f"{len(rows)} PDB states, disruptionsAllowed min {min(allowed)} max {max(allowed)}, "
      f"{sum(1 for a in allowed if a == 0)} at 0 (an eviction in flight)")
PY

[ "$(kubectl -n "$ns" get deployment web -o jsonpath='{.metadata.generation}')" = "$generation" ] ||
  fail "the Deployment's generation changed"
kubectl -n "$ns" get deployment web -o jsonpath='{.spec.template}' > "$work/template-after.json"
cmp -s "$work/template-before.json" "$work/template-after.json" || fail "the pod template changed"
[ "$(kubectl -n "$ns" get replicasets -o jsonpath='{.items[*].metadata.name}')" = "$replicasets" ] ||
  fail "a new ReplicaSet appeared"
after_pods=$(pod_names "$ns" app=web)
[ "$(echo "$after_pods" | wc -w)" = 4 ] || fail "expected 4 pods, got: $after_pods"
for p in $after_pods; do
  [[ " $before_pods " != *" $p "* ]] || fail "pod $p was not replaced"
  [ "$(pod_revision "$ns" "$p")" = canary ] || fail "pod $p is not on canary"
  case "$(rl_proxy_image_of "$ns" "$p")" in
    *:1.1.0) ;; *) fail "pod $p does not run the canary proxy" ;;
  esac
done
# One at a time: each new pod was created at or after the previous new pod became Ready.
kubectl -n "$ns" get pods -l app=web -o json | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
rows = sorted((p["metadata"]["creationTimestamp"],
               [c["lastTransitionTime"] for c in p["status"]["conditions"] if c["type"] == "Ready"][0],
               p["metadata"]["name"]) for p in pods)
for (c0, r0, n0), (c1, _, n1) in zip(rows, rows[1:]):
    print(f"{n0}: created {c0}, Ready {r0}; next {n1} created {c1}")
    assert c1 >= r0, f"{n1} was created before {n0} was Ready"' || fail "evictions overlapped"
"$MESHOP_BIN" restart plan -n "$ns" | grep -q "No stale workloads" || fail "still stale after the wave"

# --- 2. A PDB that allows no disruption: Deferred naming it, then proceeds once relaxed.
locked_before=$(pod_names "$locked_ns" app=locked)
kubectl label namespace "$locked_ns" istio-injection- istio.io/rev=canary >/dev/null
"$MESHOP_BIN" restart plan -n "$locked_ns" | tee "$work/plan2.txt"
grep -E "^$locked_ns +Deployment +locked +RevisionChanged +default -> canary +Deferred +Evict +PodDisruptionBudget locked-pdb refuses" \
  "$work/plan2.txt" >/dev/null || fail "plan does not show locked Deferred by locked-pdb"
"$MESHOP_BIN" restart run -n "$locked_ns" --wait --timeout 3m > "$work/run2.log" 2>&1 &
run_pid=$!
wait_for 30 "the run reports the deferral" grep -q "^deferred   Deployment/$locked_ns/locked: PodDisruptionBudget locked-pdb" "$work/run2.log"
status=$(kubectl -n "$cp" get istiooperator "e2e-evict-canary-$id" -o jsonpath='{.status.restarts}')
echo "status.restarts while deferred: $status"
echo "$status" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["deferred"] >= 1, s
assert any(w["state"] == "Deferred" and "locked-pdb" in w["message"] for w in s["workloads"]), s' \
  || fail "IstioOperator status does not show the deferral by locked-pdb"
[ "$(pod_names "$locked_ns" app=locked)" = "$locked_before" ] || fail "a pod was evicted despite maxUnavailable 0"
grep -q '^evicted ' "$work/run2.log" && fail "an eviction went through despite maxUnavailable 0"
kill -0 "$run_pid" || fail "restart run gave up instead of waiting"

kubectl -n "$locked_ns" patch pdb locked-pdb --type=merge -p '{"spec":{"maxUnavailable":1}}' >/dev/null
wait "$run_pid" || fail "restart run did not complete after the PDB was relaxed"
run_pid=
echo "--- meshop restart run (locked)"; cat "$work/run2.log"
[ "$(grep -c '^evicted    pod ' "$work/run2.log")" = 2 ] || fail "expected 2 evictions of locked"
kubectl -n "$locked_ns" rollout status deployment/locked --timeout=60s >/dev/null
for p in $(pod_names "$locked_ns" app=locked); do
  [ "$(pod_revision "$locked_ns" "$p")" = canary ] || fail "locked pod $p is not on canary"
done
# --- 3. StatefulSet and DaemonSet.
uids_before=$(kubectl -n "$kinds_ns" get pods -o jsonpath='{.items[*].metadata.uid}')
gen_db=$(kubectl -n "$kinds_ns" get statefulset db -o jsonpath='{.metadata.generation}')
gen_agent=$(kubectl -n "$kinds_ns" get daemonset agent -o jsonpath='{.metadata.generation}')
kubectl label namespace "$kinds_ns" istio-injection- istio.io/rev=canary >/dev/null
"$MESHOP_BIN" restart plan -n "$kinds_ns" | tee "$work/plan3.txt"
for w in "StatefulSet +db" "DaemonSet +agent"; do
  grep -E "^$kinds_ns +$w +RevisionChanged +default -> canary +Restart +Evict" "$work/plan3.txt" \
    >/dev/null || fail "plan does not list $w as Restart by Evict"
done
"$MESHOP_BIN" restart run -n "$kinds_ns" --wait --timeout 4m > "$work/run3.log" 2>&1 ||
  { cat "$work/run3.log"; fail "restart run of the StatefulSet and DaemonSet failed"; }
echo "--- meshop restart run (StatefulSet, DaemonSet)"; cat "$work/run3.log"
[ "$(grep -c '^evicted    pod ' "$work/run3.log")" = 4 ] || fail "expected 4 evictions (3 db, 1 agent)"
kubectl -n "$kinds_ns" rollout status statefulset/db --timeout=60s >/dev/null
kubectl -n "$kinds_ns" rollout status daemonset/agent --timeout=60s >/dev/null
[ "$(kubectl -n "$kinds_ns" get statefulset db -o jsonpath='{.metadata.generation}')" = "$gen_db" ] ||
  fail "the StatefulSet's generation changed"
[ "$(kubectl -n "$kinds_ns" get daemonset agent -o jsonpath='{.metadata.generation}')" = "$gen_agent" ] ||
  fail "the DaemonSet's generation changed"
[ "$(pod_names "$kinds_ns" app=db)" = "db-0 db-1 db-2" ] || fail "StatefulSet pods: $(pod_names "$kinds_ns" app=db)"
for p in $(pod_names "$kinds_ns" app=db) $(pod_names "$kinds_ns" app=agent); do
  [[ " $uids_before " != *" $(kubectl -n "$kinds_ns" get pod "$p" -o jsonpath='{.metadata.uid}') "* ]] ||
    fail "pod $p was not replaced"
  [ "$(pod_revision "$kinds_ns" "$p")" = canary ] || fail "pod $p is not on canary"
done
echo PASS
