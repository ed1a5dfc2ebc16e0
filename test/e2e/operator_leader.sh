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
base=$((20000 + id % 20000))
pids=()
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    for i in 0 1; do echo "--- debug: replica $i" >&2; tail -n 30 "$work/run$i.log" >&2; done
  fi
  kubectl -n "$cp" delete istiooperators --all --wait=false >/dev/null 2>&1
  sleep 2
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for iop in $(kubectl -n "$cp" get istiooperators -o name 2>/dev/null); do
    kubectl -n "$cp" patch "$iop" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  for kind in mutatingwebhookconfigurations clusterroles clusterrolebindings; do
    kubectl delete "$kind" -l "install.operator.istio.io/owning-resource-namespace=$cp" \
      --ignore-not-found >/dev/null 2>&1
  done
  kubectl delete namespace "$cp" --wait=false >/dev/null 2>&1
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

kubectl apply -f "$MESHOP_SOURCE_DIR/crd/istiooperator.yaml" >/dev/null
kubectl wait --for=condition=Established crd/istiooperators.install.istio.io --timeout=60s >/dev/null
kubectl create namespace "$cp" >/dev/null

start() {  # INDEX
  local i=$1
  "$MESHOP_BIN" run --local --leader-elect --namespace "$cp" --native-sidecars false \
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
