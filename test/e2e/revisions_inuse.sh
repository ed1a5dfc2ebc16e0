#!/usr/bin/env bash
# Revisions in use (issue 15 item 6) under `meshop run`, as config/'s ServiceAccount: a default
# revision and a canary, both annotated meshop.io/uninstall-when-unused-after: 20s.
#   - a namespace labelled istio.io/rev=canary keeps canary InUse=True;
#   - the namespace moves to the default revision; a pod still carrying canary keeps it in use
#     (status.revisions runningPods 1), a Completed Job pod injected by canary does not;
#   - once that pod is deleted: InUse=False with a Normal Event RevisionUnused; at half the grace
#     the canary IstioOperator is still there; after the grace it is deleted (Event
#     UninstallUnused, its finalizer uninstalls: its webhook configuration goes), not before;
#   - the default revision, unused for longer than its grace, stays.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-inuse-$id
app=e2e-inuse-app-$id
old=e2e-inuse-old-$id
grace=20
work=$(mktemp -d)
base=$((20000 + id % 12000))
run_pid=
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    echo "--- debug: IstioOperator status" >&2
    kubectl -n "$cp" get istiooperators -o jsonpath='{range .items[*]}{.metadata.name}: {.status.revisions} {.status.conditions}{"\n"}{end}' >&2
    kubectl get pods -n "$app" -o wide >&2
    kubectl get pods -n "$old" -o wide >&2
    tail -n 30 "$work/run.log" >&2
  fi
  kubectl delete namespace "$app" "$old" --wait=false >/dev/null 2>&1 || true
  (exit "$rc")
  operator_cleanup
}
trap cleanup EXIT

operator_setup "$cp"
operator_start "$base"

iop() {  # NAME REVISION
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: $1
  namespace: $cp
  annotations: {meshop.io/uninstall-when-unused-after: ${grace}s}
spec:
  profile: minimal
  namespace: $cp
  revision: "$2"
  values:
    global: {istioNamespace: $cp}
YAML
}
healthy() { [ "$(kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
in_use() {  # IOP → True | False | ""
  kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.conditions[?(@.type=="InUse")].status}'
}
in_use_is() { [ "$(in_use "$1")" = "$2" ]; }
revisions_field() {  # IOP FIELD
  kubectl -n "$cp" get istiooperator "$1" -o jsonpath="{.status.revisions[0].$2}"
}
field_is() { [ "$(revisions_field "$1" "$2")" = "$3" ]; }
has_event() {  # IOP REASON: a Normal Event REASON on IstioOperator IOP
  kubectl -n "$cp" get events.events.k8s.io -o json | python3 -c '
import json, sys
ev = [e for e in json.load(sys.stdin)["items"] if e["regarding"]["name"] == sys.argv[1]
      and e["regarding"]["kind"] == "IstioOperator" and e["reason"] == sys.argv[2]
      and e["type"] == "Normal"]
sys.exit(0 if ev else 1)' "$1" "$2"
}
gone() { ! kubectl -n "$cp" get istiooperator "$1" >/dev/null 2>&1; }

iop main ""
sleep 1.1
iop canary canary
wait_for 120 "IstioOperator main HEALTHY" healthy main
wait_for 120 "IstioOperator canary HEALTHY" healthy canary

# 1. A namespace routed to canary.
kubectl create namespace "$app" >/dev/null
kubectl create namespace "$old" >/dev/null
kubectl label namespace "$app" istio.io/rev=canary >/dev/null
wait_for 30 "canary InUse=True" in_use_is canary True
echo "canary: InUse=True, namespaces $(revisions_field canary namespaces)"

# 2. A Job injected by canary (kwok completes its pod), and a running pod carrying canary in a
#    namespace nobody routes (its own istio.io/rev label: injected through the object entry).
kubectl -n "$app" create job done --image=registry.invalid/done:1 -- true >/dev/null
job_pod_done() {
  [ "$(kubectl -n "$app" get pods -l job-name=done -o jsonpath='{.items[0].status.phase}')" = Succeeded ]
}
wait_for 60 "Job pod Succeeded" job_pod_done
job_pod=$(pod_names "$app" job-name=done)
[ "$(pod_revision "$app" "$job_pod")" = canary ] || fail "Job pod $job_pod not injected by canary"
kubectl -n "$old" run runner --image=registry.invalid/runner:1 --restart=Never \
  --labels=istio.io/rev=canary >/dev/null
[ "$(pod_revision "$old" runner)" = canary ] || fail "pod $old/runner not injected by canary"

# The namespace moves to the default revision.
kubectl label namespace "$app" istio.io/rev- istio-injection=enabled >/dev/null
wait_for 30 "canary routed by no namespace" field_is canary namespaces "[]"
wait_for 30 "canary runningPods 1 (the Job pod not counted)" field_is canary runningPods 1
in_use_is canary True || fail "canary not InUse with a running pod carrying it"
echo "canary: namespace moved away; runningPods 1 (runner), the Succeeded Job pod $job_pod ignored"

# 3. The running pod goes: only the Completed Job pod is left carrying canary.
kubectl -n "$old" delete pod runner --wait=true >/dev/null
wait_for 30 "canary InUse=False" in_use_is canary False
since=$(kubectl -n "$cp" get istiooperator canary \
  -o jsonpath='{.status.conditions[?(@.type=="InUse")].lastTransitionTime}')
since_s=$(date -d "$since" +%s)
wait_for 15 "Event RevisionUnused" has_event canary RevisionUnused
echo "canary: InUse=False since $since: $(kubectl -n "$cp" get istiooperator canary \
  -o jsonpath='{.status.conditions[?(@.type=="InUse")].message}')"
kubectl -n "$app" get pod "$job_pod" >/dev/null || fail "the Job pod is gone: the test proves nothing"

# Half the grace: still installed.
sleep $((since_s + grace / 2 - $(date +%s)))
gone canary && fail "canary uninstalled at half its grace ($(( $(date +%s) - since_s ))s unused)"
echo "canary: still installed $(( $(date +%s) - since_s ))s after it became unused"

# After the grace: deleted, with the Event saying why, its webhook configuration uninstalled.
wait_for $((grace + 30)) "canary IstioOperator deleted" gone canary
gone_s=$(date +%s)
[ "$gone_s" -ge $((since_s + grace)) ] || fail "canary deleted $((gone_s - since_s))s after unused, grace ${grace}s"
has_event canary UninstallUnused || fail "no Event UninstallUnused for canary"
wait_for 30 "canary webhook configuration uninstalled" \
  bash -c "! kubectl get mutatingwebhookconfiguration istio-sidecar-injector-canary-$cp"
echo "canary: uninstalled $((gone_s - since_s))s after it became unused (grace ${grace}s)"

# 4. The default revision: unused for longer than its grace, still installed.
kubectl label namespace "$app" istio-injection- >/dev/null
kubectl delete namespace "$app" --wait=true >/dev/null
wait_for 60 "main InUse=False" in_use_is main False
main_since=$(date -d "$(kubectl -n "$cp" get istiooperator main \
  -o jsonpath='{.status.conditions[?(@.type=="InUse")].lastTransitionTime}')" +%s)
sleep $((main_since + grace + 12 - $(date +%s)))
gone main && fail "the default revision was uninstalled"
msg=$(kubectl -n "$cp" get istiooperator main -o jsonpath='{.status.conditions[?(@.type=="InUse")].message}')
case $msg in *"never uninstalled"*) ;; *) fail "main's InUse message does not say why: $msg" ;; esac
echo "main (default revision): unused $(( $(date +%s) - main_since ))s, grace ${grace}s, still installed"
echo "PASS"
