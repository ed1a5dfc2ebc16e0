#!/usr/bin/env bash
# Two `meshop run --leader-elect` replicas: both serve the injection webhook, only the Lease
# holder reconciles (one creates the webhook Secret, the other logs no controller start), and
# when the leader stops (SIGTERM releases the Lease) the other takes over and reconciles: an
# IstioOperator applied after the hand-over is installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-leader-$id
work=$(mktemp -d)
base=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
pids=()
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    for i in 0 1; do echo "--- debug: replica $i" >&2; tail -n 30 "$work/run$i.log" >&2; done
  fi
  operator_teardown "$cp" "${pids[@]}"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

operator_setup "$cp"

start() {  # INDEX
  local i=$1
  "${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run --local --leader-elect --namespace "$cp" --native-sidecars false \
    --webhook-addr "127.0.0.1:$((base + 2 * i))" --health-addr "127.0.0.1:$((base + 2 * i + 1))" \
    >"$work/run$i.log" 2>&1 &
  pids[$i]=$!
}
leads() { grep -q '"acquired the leader lease"' "$work/run$1.log"; }
serves() { grep -q '"webhook serving"' "$work/run$1.log"; }

start 0
wait_for 60 "replica 0 leads" leads 0
start 1
wait_for 60 "replica 1 ready" curl -sf "http://127.0.0.1:$((base + 3))/readyz"
# Both serve the webhook with the leader's certificate; only one leads.
wait_for 30 "replica 0 serves" serves 0
wait_for 30 "replica 1 serves" serves 1
sleep 2
leads 1 && fail "both replicas lead"

# Hand-over: the leader stops and releases the Lease; the other takes it and reconciles.
kill -TERM "${pids[0]}"
wait "${pids[0]}" || fail "replica 0 did not exit 0 on SIGTERM"
wait_for 30 "replica 1 leads" leads 1
kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: after-handover, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: lead$id
  values:
    global: {istioNamespace: $cp}
YAML
healthy() {
  [ "$(kubectl -n "$cp" get istiooperator after-handover -o jsonpath='{.status.status}')" = HEALTHY ]
}
wait_for 120 "IstioOperator installed by the new leader" healthy
echo PASS
