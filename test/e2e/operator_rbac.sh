#!/usr/bin/env bash
# config/rbac.yaml on the real apiserver, as the ServiceAccount's own token (issue 17):
#   - it cannot bind anything to cluster-admin, nor create a ClusterRole granting * on *
#     (server dry-run refused: meshop has neither escalate nor bind);
#   - it can create every Role, ClusterRole and binding the charts render (server dry-run of
#     `meshop manifest generate` with every optional component), because it holds what they grant;
#   - `meshop run` under it installs a minimal IstioOperator to HEALTHY and, on delete,
#     uninstalls it: the finalizer goes and no owned object is left (nothing forced by the test);
#   - with resourcequotas dropped from the ClusterRole, a delete is ERROR "uninstall blocked"
#     naming "list ... resourcequotas" (Event UninstallBlocked), retried on a slow backoff, and
#     the uninstall completes once the permission is back.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-rbac-$id
work=$(mktemp -d)
base=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
trap operator_cleanup EXIT
operator_setup "$cp"

refused() {  # WHAT CMD...: CMD as the ServiceAccount must be Forbidden
  local what=$1 out; shift
  if out=$("${MESHOP_SA_KUBECTL[@]}" "$@" --dry-run=server 2>&1); then
    fail "the ServiceAccount token could $what: $out"
  fi
  grep -q "forbidden" <<<"$out" || fail "$what: refused for another reason: $out"
  echo "refused: $what"
}
refused "bind itself to cluster-admin" create clusterrolebinding "e2e-evil-$id" \
  --clusterrole=cluster-admin --serviceaccount=istio-system:meshop
refused "bind anything to cluster-admin in a namespace" -n "$cp" create rolebinding "e2e-evil-$id" \
  --clusterrole=cluster-admin --user=someone
refused "create a ClusterRole granting * on *" create clusterrole "e2e-evil-$id" --verb='*' --resource='*.*'
refused "create a ClusterRole granting pods/exec" create clusterrole "e2e-evil2-$id" \
  --verb=create --resource=pods/exec

# What the charts grant, as meshop would create it (server dry-run as the ServiceAccount).
"$MESHOP_BIN" manifest generate --set "namespace=$cp" --set "values.global.istioNamespace=$cp" \
  --set components.cni.enabled=true --set components.ztunnel.enabled=true \
  --set values.cni.resourceQuotas.enabled=true --set values.global.istiod.enableAnalysis=true \
  -o "$work/all.yaml"
python3 - "$work/all.yaml" "$work" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pick = lambda kinds: [d for d in docs if d["kind"] in kinds]
roles, bindings = pick(("ClusterRole", "Role", "ResourceQuota")), pick(("ClusterRoleBinding", "RoleBinding"))
assert roles and bindings
for d in roles + bindings:  # kept apart from what meshop run installs below
    d["metadata"]["name"] = "e2e-rbac-" + d["metadata"]["name"]
    if "roleRef" in d: d["roleRef"]["name"] = "e2e-rbac-" + d["roleRef"]["name"]
open(sys.argv[2] + "/roles.yaml", "w").write(yaml.safe_dump_all(roles))
open(sys.argv[2] + "/bindings.yaml", "w").write(yaml.safe_dump_all(bindings))
PY
# Roles for real (a binding's escalation check reads the role it names), bindings dry-run.
"${MESHOP_SA_KUBECTL[@]}" apply --server-side --field-manager=e2e -f "$work/roles.yaml" >/dev/null ||
  fail "the ServiceAccount cannot create the roles the charts render"
"${MESHOP_SA_KUBECTL[@]}" apply --server-side --field-manager=e2e --dry-run=server \
  -f "$work/bindings.yaml" >/dev/null || fail "the ServiceAccount cannot bind the roles the charts render"
kubectl delete -f "$work/roles.yaml" >/dev/null
echo "accepted: $(grep -c '^kind:' "$work/roles.yaml") rendered roles/quotas and" \
  "$(grep -c '^kind:' "$work/bindings.yaml") bindings, created as the ServiceAccount"

# Install and uninstall under the ServiceAccount.
operator_start "$base"
kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: minimal, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: rbac$id
  values:
    global: {istioNamespace: $cp}
YAML
healthy() { [ "$(kubectl -n "$cp" get istiooperator minimal -o jsonpath='{.status.status}')" = HEALTHY ]; }
wait_for 120 "IstioOperator HEALTHY under the ServiceAccount" healthy
echo "installed: HEALTHY as the ServiceAccount"

# Forbidden is an error users see: without `resourcequotas` in the ClusterRole the uninstall's
# LIST of them is refused (passes read the informers' stores, which keep watching on the
# permission they started with; uninstall lists from the apiserver, reconcilers/install.hpp
# InstallConfig::uninstall_reader): the IstioOperator turns ERROR naming verb and resource, says
# "uninstall blocked", with a Warning Event, and the uninstall completes once the permission is
# back.
sed 's/, resourcequotas\]/]/' "$MESHOP_SOURCE_DIR/config/rbac.yaml" >"$work/rbac-no-quotas.yaml"
grep -q resourcequotas "$work/rbac-no-quotas.yaml" && fail "could not drop resourcequotas from the ClusterRole"
kubectl apply -f "$work/rbac-no-quotas.yaml" >/dev/null
t0=$(date +%s.%N)
kubectl -n "$cp" delete istiooperator minimal --wait=false >/dev/null
errored() {
  local m
  m=$(kubectl -n "$cp" get istiooperator minimal -o jsonpath='{.status.status} {.status.message}')
  [[ $m == ERROR* && $m == *"uninstall blocked"* && $m == *list* && $m == *resourcequotas* ]]
}
wait_for 30 "ERROR: uninstall blocked naming list resourcequotas" errored
t1=$(date +%s.%N)
echo "forbidden: ERROR after $(python3 -c "print(round($t1 - $t0, 2))") s:" \
  "$(kubectl -n "$cp" get istiooperator minimal -o jsonpath='{.status.message}' | cut -c1-160)"
ublocked() { kubectl -n "$cp" get events.events.k8s.io --field-selector "regarding.name=minimal,type=Warning" \
  -o jsonpath='{.items[*].reason}' | grep -q UninstallBlocked; }
wait_for 10 "Warning Event UninstallBlocked" ublocked
echo "uninstall blocked: $(kubectl -n "$cp" get istiooperator minimal -o jsonpath='{.status.message}' | cut -c1-120)"
# A Forbidden error backs off slowly per key: the retry delays double from 1 s (at most 5 min)
# and, once the events of the uninstall itself (objects deleted, their EndpointSlices and pods
# going) have passed, the install controller's retries come seconds apart. Passes that events
# start come in between, so the check waits (up to 120 s) for a gap of 4 s or more; a key
# retried at a fixed fast rate never shows one.
forbidden_backoff() {
  python3 - "$work/run.log" "$cp/minimal" "$1" <<'PY'
import json, sys
from datetime import datetime
ts = []
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("msg") == "reconcile forbidden by RBAC; retrying slowly" and e.get("object") == sys.argv[2] \
       and e.get("controller") == "install":
        ts.append((datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp(),
                   e.get("retry_in_seconds")))
delays = [d for _, d in ts]
gaps = [round(b[0] - a[0], 3) for a, b in zip(ts, ts[1:])]
if sys.argv[3] == "print":
    print(f"forbidden backoff: {len(ts)} failed passes, retry delays {delays} s, gaps {gaps} s")
ok = (len(ts) >= 6 and all(d is not None and d >= 1 for d in delays) and
      delays[-1] >= 8 * delays[0] and max(gaps) >= 4)
sys.exit(0 if ok else 1)
PY
}
if ! wait_for_quiet=$(wait_for 120 "Forbidden install passes backing off (a gap of 4 s or more)" forbidden_backoff check 2>&1); then
  forbidden_backoff print || true
  fail "install retries of a Forbidden key do not back off slowly ($wait_for_quiet)"
fi
forbidden_backoff print || true
kubectl apply -f "$MESHOP_SOURCE_DIR/config/rbac.yaml" >/dev/null

sel="install.operator.istio.io/owning-resource=minimal,install.operator.istio.io/owning-resource-namespace=$cp"
gone() { ! kubectl -n "$cp" get istiooperator minimal >/dev/null 2>&1; }
wait_for 180 "IstioOperator uninstalled (finalizer removed by meshop)" gone
left=$(kubectl get serviceaccounts,roles,rolebindings,deployments,configmaps,services -A -l "$sel" -o name; \
       kubectl get clusterroles,clusterrolebindings -l "$sel" -o name)
[ -z "$left" ] || fail "left behind after uninstall: $left"
echo "uninstalled: finalizer gone, no owned object left"
echo PASS
