#!/usr/bin/env bash
# Issue 15's flap limit (spec.restarts.minInterval, default 10m) on the real control plane,
# through `meshop restart plan|run`:
#   - two Deployments in a namespace on the default revision, both IstioOperators Auto with the
#     default minInterval;
#   - the namespace's routing flaps ten times between canary and default (istio.io/rev=canary,
#     then istio-injection=enabled again, ...), and after each change one `meshop restart run`
#     pass runs: each Deployment is restarted once (the first move), every later change that
#     is a new cause is Deferred "restarted at T for RevisionChanged/canary; next at T+10m";
#     each Deployment has exactly two ReplicaSets;
#   - with minInterval 1s the deferred cause goes: one more restart each, onto default.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
. "$(dirname "$0")/restart_lib.sh"

id=$RANDOM
ns=e2e-flap-$id
namespaces=("$ns")
work=$(mktemp -d)
cleanup() {
  local rc=$?
  [ "$rc" = 0 ] || { echo "--- debug: restart runs" >&2; cat "$work/runs.log" >&2 || true; }
  rl_cleanup "$rc"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

rl_control_planes
rl_iop "e2e-flap-default-$id" default '{mode: Auto, maxConcurrent: 2, rolloutTimeout: 2m}'
rl_iop "e2e-flap-canary-$id" canary '{mode: Auto, maxConcurrent: 2, rolloutTimeout: 2m}'
got=$(kubectl -n "$cp" get istiooperator "e2e-flap-canary-$id" -o jsonpath='{.spec.restarts.minInterval}')
[ "$got" = 10m ] || fail "the CRD's default minInterval is '$got', want 10m"
rl_webhook
rl_mwc "e2e-flap-injector-$id" default yes
rl_mwc "e2e-flap-injector-canary-$id" canary no

kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" istio-injection=enabled >/dev/null
rl_wait_injecting "$ns"
for app in alpha beta; do
  kubectl -n "$ns" create deployment "$app" --image=registry.invalid/$app:1 >/dev/null
done
for app in alpha beta; do kubectl -n "$ns" rollout status "deployment/$app" --timeout=120s >/dev/null; done
replica_sets() { kubectl -n "$ns" get rs -l "app=$1" -o name | wc -l; }
for app in alpha beta; do [ "$(replica_sets "$app")" = 1 ] || fail "$app has $(replica_sets "$app") ReplicaSets"; done

# Ten changes of the namespace's routing, one restart pass after each.
: > "$work/runs.log"
for i in 1 2 3 4 5 6 7 8 9 10; do
  if [ $((i % 2)) = 1 ]; then
    kubectl label namespace "$ns" istio-injection- istio.io/rev=canary >/dev/null
  else
    kubectl label namespace "$ns" istio.io/rev- istio-injection=enabled >/dev/null
  fi
  echo "--- change $i" >> "$work/runs.log"
  "$MESHOP_BIN" restart run -n "$ns" >> "$work/runs.log" 2>&1 || fail "restart run $i failed"
done
cat "$work/runs.log"
for app in alpha beta; do
  n=$(grep -c "^restarted  Deployment/$ns/$app$" "$work/runs.log" || true)
  [ "$n" = 1 ] || fail "$app restarted $n times during the flapping, want 1"
  [ "$(replica_sets "$app")" = 2 ] || fail "$app has $(replica_sets "$app") ReplicaSets, want 2 (one restart)"
done
grep -q "^deferred   Deployment/$ns/alpha: restarted at .* for RevisionChanged/canary; next at .* (minInterval 10m)" \
  "$work/runs.log" || fail "no Deferred line naming the last restart and the next time"

# The namespace ends on default: the plan defers the move back until the interval ends.
"$MESHOP_BIN" restart plan -n "$ns" | tee "$work/plan.txt"
for app in alpha beta; do
  grep -E "^$ns +Deployment +$app +RevisionChanged +canary -> default +Deferred +Rollout +restarted at [0-9T:Z-]+ for RevisionChanged/canary; next at [0-9T:Z-]+ \(minInterval 10m\)" \
    "$work/plan.txt" >/dev/null || fail "plan does not defer $app for minInterval"
done
"$MESHOP_BIN" restart plan -n "$ns" -o json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"]
assert len(w) == 2 and all(x["action"] == "Deferred" and x["minInterval"] == "10m" for x in w), w' \
  || fail "JSON plan is not as expected"

# A shorter interval lets the deferred cause go: one more restart each.
for r in default canary; do
  kubectl -n "$cp" patch istiooperator "e2e-flap-$r-$id" --type=merge \
    -p '{"spec":{"restarts":{"minInterval":"1s"}}}' >/dev/null
done
"$MESHOP_BIN" restart run -n "$ns" --wait --timeout 2m | tee "$work/last.txt"
for app in alpha beta; do
  grep -q "^restarted  Deployment/$ns/$app$" "$work/last.txt" || fail "$app was not restarted after the interval"
  [ "$(replica_sets "$app")" = 3 ] || fail "$app has $(replica_sets "$app") ReplicaSets, want 3"
  for p in $(pod_names "$ns" "app=$app"); do
    [ "$(pod_revision "$ns" "$p")" = default ] || fail "pod $p is not on the default revision"
  done
done
"$MESHOP_BIN" restart plan -n "$ns" > "$work/plan2.txt"
grep -q "No stale workloads" "$work/plan2.txt" || { cat "$work/plan2.txt"; fail "still stale"; }
echo PASS
