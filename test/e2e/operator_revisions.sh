#!/usr/bin/env bash
# Two revisions side by side under `meshop run` (the canary set-up), as config/'s ServiceAccount:
#   - what both render the same way (the Base component: the reader ServiceAccount, its
#     ClusterRole and binding) is applied by one IstioOperator only, the older one (neither is
#     the default revision), and keeps its owner labels;
#   - once both are HEALTHY and settled, 30 quiet seconds bring no write at all: every object
#     meshop manages, its webhook configurations and both IstioOperators keep their
#     resourceVersion (before the one-owner rule, the shared objects flipped owner labels
#     several times a second);
#   - deleting the owner leaves the shared objects in place and the other IstioOperator takes
#     them over (relabels them), while the owner's own revision objects go;
#   - an IstioOperator whose apply the apiserver refuses is retried with growing backoff,
#     not on each of its own status writes: few failed passes in its second half-minute.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-revs-$id
r1=one$id
r2=two$id
work=$(mktemp -d)
base=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
trap operator_cleanup EXIT

operator_setup "$cp"

operator_start "$base"

iop() {  # NAME [EXTRA-SPEC-YAML]
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: $1
  values:
    global: {istioNamespace: $cp}
${2:-}
YAML
}
healthy() { [ "$(kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
iop "$r1"
sleep 1.1  # creationTimestamp has one-second resolution: r1 is the older
iop "$r2"
wait_for 120 "IstioOperator $r1 HEALTHY" healthy "$r1"
wait_for 120 "IstioOperator $r2 HEALTHY" healthy "$r2"

kinds=deployments,daemonsets,services,serviceaccounts,configmaps,secrets,roles,rolebindings,clusterroles,clusterrolebindings,poddisruptionbudgets,horizontalpodautoscalers,resourcequotas,mutatingwebhookconfigurations
owners_of_base() {
  kubectl get "$kinds" -A -l "app.kubernetes.io/managed-by=meshop,operator.istio.io/component=Base" \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}={.metadata.labels.install\.operator\.istio\.io/owning-resource}{"\n"}{end}' |
    sort
}
shared=$(owners_of_base | grep -c . || true)
[ "$shared" -gt 0 ] || fail "no Base objects installed"

snapshot() {
  {
    kubectl get "$kinds" -A -l app.kubernetes.io/managed-by=meshop \
      -o jsonpath='{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}'
    kubectl get mutatingwebhookconfigurations \
      -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}'
    kubectl -n "$cp" get istiooperators \
      -o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}'
  } | sort -u
}
# Settled: a 5 s window without a change (at most 90 s; measured anyway after that, so a
# failure reports how many writes meshop makes).
settled() { local a; a=$(snapshot); sleep 5; [ "$a" = "$(snapshot)" ]; }
t_settle=$SECONDS
until settled; do [ $((SECONDS - t_settle)) -lt 90 ] || break; done
before=$(snapshot)
sleep 30
after=$(snapshot)
changed=$(diff <(echo "$before") <(echo "$after") | grep -c '^>' || true)
echo "quiet 30 s with two revisions: $changed objects written ($(echo "$before" | wc -l) watched)"
if [ "$changed" != 0 ]; then
  diff <(echo "$before") <(echo "$after") >&2 || true
  fail "$changed objects were written during 30 quiet seconds"
fi
owners_of_base | grep -v "=$r1\$" && fail "Base objects not owned by the older IstioOperator $r1"
echo "$shared shared (Base) objects, all owned by $r1"

# The owner goes: its revision's objects go, the shared ones stay and pass to r2.
kubectl -n "$cp" delete istiooperator "$r1" --wait=false >/dev/null
gone() { ! kubectl -n "$cp" get istiooperator "$r1" >/dev/null 2>&1; }
wait_for 60 "IstioOperator $r1 uninstalled" gone
taken_over() { [ -z "$(owners_of_base | grep -v "=$r2\$")" ] && [ "$(owners_of_base | grep -c .)" = "$shared" ]; }
wait_for 30 "shared objects relabelled for $r2" taken_over
[ -z "$(kubectl -n "$cp" get deployments -l "install.operator.istio.io/owning-resource=$r1" -o name)" ] ||
  fail "$r1's Deployments were not uninstalled"
healthy "$r2" || fail "$r2 is not HEALTHY after $r1 left"
echo "$r1 uninstalled; its $shared shared objects kept and owned by $r2"

# Backoff: the apiserver refuses this one's istiod Deployment (replicas is not a number).
bad=bad$id
iop "$bad" "  components:
    pilot:
      k8s:
        overlays:
        - kind: Deployment
          name: istiod-$bad
          patches:
          - {path: spec.replicas, value: many}"
failures() { grep -c "applying IstioOperator failed.*$cp/$bad\|$cp/$bad.*applying IstioOperator failed" "$work/run.log" || true; }
failed_once() { [ "$(failures)" -gt 0 ]; }
wait_for 30 "a failed apply of $bad" failed_once
sleep 25
f25=$(failures)
sleep 30
f55=$(failures)
echo "apply of $bad refused: $f25 failed passes in the first 25 s, $((f55 - f25)) in the next 30 s"
[ "$(kubectl -n "$cp" get istiooperator "$bad" -o jsonpath='{.status.status}')" = ERROR ] ||
  fail "$bad is not ERROR"
[ "$f25" -ge 4 ] || fail "only $f25 retries in 25 s: not retried"
[ $((f55 - f25)) -le 3 ] || fail "$((f55 - f25)) failed passes in 30 s: no growing backoff"
echo PASS
