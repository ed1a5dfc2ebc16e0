#!/usr/bin/env bash
# Issue 15's canary group and automatic halt (spec.restarts.canary) on the real control plane,
# through `meshop restart plan|run|pause|resume`:
#   - the CRD rejects a canary with count < 1, with both count and selector, or a bad soak;
#   - three Deployments alpha, beta, gamma on the default revision; their namespace moves to
#     canary, whose IstioOperator says Auto, maxConcurrent 2, canary {count: 1, soak: 30s};
#   - `meshop restart pause` holds the wave: the plan says Paused (alpha marked canary), a run
#     restarts nothing; `meshop restart resume` lets it go;
#   - `meshop restart run --wait` restarts alpha alone (the canary group); once its rollout is
#     complete the test makes alpha's new pod not Ready (the status subresource: kwok runs no
#     containers) during the soak: the run stops with "Halted", the IstioOperator has
#     RestartsHalted=True naming Deployment/<ns>/alpha and a Warning Event RestartsHalted, beta
#     and gamma are untouched and planned as Halted;
#   - the pod recovers, `meshop restart resume`, and a second run restarts beta and gamma: every
#     pod is on canary, RestartsHalted is False (Resumed) and the resume annotation is gone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
. "$(dirname "$0")/restart_lib.sh"

id=$RANDOM
ns=e2e-halt-$id
namespaces=("$ns")
work=$(mktemp -d)
iop=e2e-halt-canary-$id
run_pid=
cleanup() {
  local rc=$?
  [ -z "$run_pid" ] || kill "$run_pid" 2>/dev/null || true
  [ "$rc" = 0 ] || { echo "--- debug: restart runs" >&2; cat "$work"/run*.log >&2 || true; }
  rl_cleanup "$rc"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

rl_control_planes

# The CRD's schema checks the canary.
bad_canary() {  # FLOW-MAPPING EXPECTED-TEXT
  local out
  if out=$(kubectl apply --dry-run=server -f - 2>&1 <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: e2e-halt-bad-$id, namespace: $cp}
spec: {revision: canary, restarts: {canary: $1}}
YAML
  ); then fail "the CRD accepts canary $1"; fi
  echo "$out" | grep -q -- "$2" || fail "rejection of canary $1 does not say '$2': $out"
}
bad_canary '{count: 0}' 'spec.restarts.canary.count'
bad_canary '{count: 1, selector: {matchLabels: {a: b}}}' 'set either count or selector, not both'
bad_canary '{count: 1, soak: 5minutes}' 'spec.restarts.canary.soak'

rl_iop "e2e-halt-default-$id" default '{mode: DryRun}'
rl_iop "$iop" canary '{mode: Auto, maxConcurrent: 2, rolloutTimeout: 2m, canary: {count: 1, soak: 30s}}'
got=$(kubectl -n "$cp" get istiooperator "$iop" -o jsonpath='{.spec.restarts.canary.soak}')
[ "$got" = 30s ] || fail "canary.soak is '$got'"
rl_webhook
rl_mwc "e2e-halt-injector-$id" default yes
rl_mwc "e2e-halt-injector-canary-$id" canary no

kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" istio-injection=enabled >/dev/null
rl_wait_injecting "$ns"
for app in alpha beta gamma; do
  kubectl -n "$ns" create deployment "$app" --image=registry.invalid/$app:1 >/dev/null
done
for app in alpha beta gamma; do kubectl -n "$ns" rollout status "deployment/$app" --timeout=60s >/dev/null; done
replica_sets() { kubectl -n "$ns" get rs -l "app=$1" -o name | wc -l; }
kubectl label namespace "$ns" istio-injection- istio.io/rev=canary >/dev/null

# Paused by hand: nothing starts.
"$MESHOP_BIN" restart pause "$iop" --reason "e2e hold" | grep -q "^paused IstioOperator $cp/$iop" ||
  fail "restart pause did not report the IstioOperator"
"$MESHOP_BIN" restart plan -n "$ns" | tee "$work/plan-paused.txt"
grep -Eq "^$ns +Deployment +alpha +RevisionChanged +default -> canary +Paused \(canary\) +Rollout +restarts paused by hand \(meshop.io/restarts-paused: e2e hold\)" \
  "$work/plan-paused.txt" || fail "plan does not show alpha Paused and in the canary group"
grep -Eq "^$ns +Deployment +gamma +RevisionChanged +default -> canary +Paused +Rollout" "$work/plan-paused.txt" ||
  fail "plan does not show gamma Paused"
if "$MESHOP_BIN" restart run -n "$ns" > "$work/run0.log" 2>&1; then fail "a paused run succeeded"; fi
grep -q "^Paused: IstioOperator $cp/$iop" "$work/run0.log" || fail "the paused run does not say Paused"
for app in alpha beta gamma; do [ "$(replica_sets "$app")" = 1 ] || fail "$app was restarted while paused"; done
"$MESHOP_BIN" restart resume "$iop" | grep -q "^resumed IstioOperator $cp/$iop" || fail "restart resume failed"

# The canary goes first; its new pod is made not Ready during the soak.
"$MESHOP_BIN" restart run -n "$ns" --wait --timeout 2m > "$work/run1.log" 2>&1 &
run_pid=$!
alpha_new_pod() {
  local p
  for p in $(pod_names "$ns" app=alpha); do
    [ "$(pod_revision "$ns" "$p")" = canary ] || continue
    [ "$(kubectl -n "$ns" get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] || continue
    [ "$(pod_names "$ns" app=alpha | wc -w)" = 1 ] || continue  # the old pod is gone
    echo "$p"; return 0
  done
  return 1
}
wait_for 40 "alpha's new pod Ready (the canary rolled out)" alpha_new_pod
new_pod=$(alpha_new_pod)
grep -q "^completed  Deployment/$ns/alpha" "$work/run1.log" ||
  wait_for 10 "the run to see alpha complete" grep -q "^completed  Deployment/$ns/alpha" "$work/run1.log"
for app in beta gamma; do [ "$(replica_sets "$app")" = 1 ] || fail "$app started before the canary soaked"; done
kubectl -n "$ns" patch pod "$new_pod" --subresource=status --type=strategic \
  -p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"E2EBroken","message":"made not Ready by the test"}]}}' >/dev/null
rc=0
wait "$run_pid" || rc=$?
run_pid=
echo "--- meshop restart run (canary)"; cat "$work/run1.log"
[ "$rc" != 0 ] || fail "the run did not stop on the halt"
grep -q "^Halted: IstioOperator $cp/$iop: restarts halted: canary Deployment/$ns/alpha regressed: pod $new_pod is not Ready (E2EBroken: made not Ready by the test)" \
  "$work/run1.log" || fail "the run does not say what halted it"
[ "$(grep -c '^restarted ' "$work/run1.log")" = 1 ] || fail "more than the canary was restarted"
for app in beta gamma; do
  [ "$(replica_sets "$app")" = 1 ] || fail "$app was restarted despite the halt"
  for p in $(pod_names "$ns" "app=$app"); do [ "$(pod_revision "$ns" "$p")" = default ] || fail "$p moved"; done
done
kubectl -n "$cp" get istiooperator "$iop" -o json > "$work/iop.json"
python3 - "$work/iop.json" "Deployment/$ns/alpha" <<'PY' || fail "RestartsHalted condition not as expected"
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["status"]["conditions"] if c["type"] == "RestartsHalted"]
assert len(c) == 1 and c[0]["status"] == "True" and c[0]["reason"] == "CanaryNotReady", c
assert sys.argv[2] in c[0]["message"] and "not Ready" in c[0]["message"], c
r = o["status"]["restarts"]
assert r["halted"] and r["wave"]["phase"] == "Halted" and r["wave"]["canary"] == [sys.argv[2]], r
print("--- RestartsHalted:", c[0]["message"])
PY
halt_event() {
  kubectl -n "$cp" get events.events.k8s.io -o json | python3 -c '
import json, sys
want = sys.argv[1]
ev = [e for e in json.load(sys.stdin)["items"] if e["regarding"]["name"] == want
      and e["regarding"]["kind"] == "IstioOperator" and e["reason"] == "RestartsHalted"
      and e["type"] == "Warning" and sys.argv[2] in e.get("note", "")]
sys.exit(0 if ev else 1)' "$iop" "Deployment/$ns/alpha"
}
wait_for 10 "a Warning Event RestartsHalted on IstioOperator $iop" halt_event
"$MESHOP_BIN" restart plan -n "$ns" | tee "$work/plan-halted.txt"
for app in beta gamma; do
  grep -Eq "^$ns +Deployment +$app +RevisionChanged +default -> canary +Halted +Rollout +restarts halted: canary Deployment/$ns/alpha regressed" \
    "$work/plan-halted.txt" || fail "plan does not show $app Halted"
done
grep -q "^IstioOperator $cp/$iop: wave Halted, canary group: Deployment/$ns/alpha" "$work/plan-halted.txt" ||
  fail "plan does not show the halted wave and its canary group"

# The pod recovers; resume; the rest go.
kubectl -n "$ns" patch pod "$new_pod" --subresource=status --type=strategic \
  -p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"","message":""}]}}' >/dev/null
"$MESHOP_BIN" restart resume "$iop" >/dev/null
"$MESHOP_BIN" restart run -n "$ns" --wait --timeout 2m > "$work/run2.log" 2>&1 || { cat "$work/run2.log"; fail "the resumed run failed"; }
echo "--- meshop restart run (resumed)"; cat "$work/run2.log"
for app in beta gamma; do
  grep -q "^restarted  Deployment/$ns/$app$" "$work/run2.log" || fail "$app was not restarted after resume"
done
for p in $(kubectl -n "$ns" get pods -o jsonpath='{.items[*].metadata.name}'); do
  [ "$(pod_revision "$ns" "$p")" = canary ] || fail "pod $p is not on canary"
done
kubectl -n "$cp" get istiooperator "$iop" -o json > "$work/iop2.json"
python3 - "$work/iop2.json" <<'PY' || fail "the halt was not lifted as expected"
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["status"]["conditions"] if c["type"] == "RestartsHalted"]
assert len(c) == 1 and c[0]["status"] == "False" and c[0]["reason"] == "Resumed", c
ann = o["metadata"].get("annotations", {})
assert "meshop.io/restarts-resume" not in ann and "meshop.io/restarts-paused" not in ann, ann
assert not o["status"]["restarts"]["halted"], o["status"]["restarts"]
PY
"$MESHOP_BIN" restart plan -n "$ns" > "$work/plan-done.txt"
grep -q "No stale workloads" "$work/plan-done.txt" || { cat "$work/plan-done.txt"; fail "still stale"; }
echo PASS
