#!/usr/bin/env bash
# Issue 7's canary scenario on the real control plane, driven by `meshop restart`:
#   - two revisions, default (proxy tag 1.0.0) and canary (tag 1.1.0): their injector ConfigMaps
#     rendered by `meshop manifest generate`, served by one `meshop webhook` (cluster mode,
#     /inject/rev/<r>), and Istio's webhook entries per revision (restricted to this test's
#     namespaces so other tests' pods are left alone);
#   - six Deployments in two namespaces labelled istio-injection=enabled run default sidecars;
#   - the canary IstioOperator says restarts mode Auto, maxConcurrent 1;
#   - relabelling one namespace to istio.io/rev=canary makes `meshop restart plan` list its
#     three Deployments as RevisionChanged default -> canary, action Restart;
#   - `meshop restart run --wait` restarts them one at a time: each restart starts only after
#     the previous rollout completed (restartedAt vs the previous new pods' Ready time), every
#     new pod there carries the canary sidecar, and the other namespace is untouched;
#   - a second plan is empty for that namespace (the cause record prevents a second restart).
# The control planes themselves are stand-in Deployments istiod / istiod-canary (kwok makes
# them available), which is what the plan's control-plane health gate reads when the
# IstioOperators have no status (no install reconciler runs here).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

. "$(dirname "$0")/restart_lib.sh"

id=$RANDOM
ns_a=e2e-canary-a-$id
ns_b=e2e-canary-b-$id
namespaces=("$ns_a" "$ns_b")
work=$(mktemp -d)
cleanup() {
  local rc=$?
  [ "$rc" = 0 ] || { echo "--- debug: restart run" >&2; cat "$work/run.log" >&2 || true; }
  rl_cleanup "$rc"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

# 1.-4. Both revisions (ConfigMaps, stand-in control planes), the restart policies, the webhook
# and Istio's webhook entries for both revisions.
rl_control_planes
rl_iop "e2e-default-$id" default '{mode: DryRun}'
rl_iop "e2e-canary-$id" canary '{mode: Auto, maxConcurrent: 1, rolloutTimeout: 2m}'
rl_webhook
rl_mwc "e2e-injector-$id" default yes
rl_mwc "e2e-injector-canary-$id" canary no

# 5. Six Deployments on the default revision.
for ns in "$ns_a" "$ns_b"; do
  kubectl create namespace "$ns" >/dev/null
  kubectl label namespace "$ns" istio-injection=enabled >/dev/null
done
rl_wait_injecting "$ns_a"
for ns in "$ns_a" "$ns_b"; do
  for app in alpha beta gamma; do
    kubectl -n "$ns" create deployment "$app" --image=registry.invalid/$app:1 >/dev/null
  done
done
for ns in "$ns_a" "$ns_b"; do
  for app in alpha beta gamma; do
    kubectl -n "$ns" rollout status "deployment/$app" --timeout=120s >/dev/null
  done
done
for p in $(pod_names "$ns_a" app); do
  [ "$(pod_revision "$ns_a" "$p")" = default ] || fail "pod $p is not on the default revision"
done
before_b=$(kubectl -n "$ns_b" get pods -o jsonpath='{.items[*].metadata.name}')
[ "$(echo "$before_b" | wc -w)" = 3 ] || fail "expected 3 pods in $ns_b, got: $before_b"

# Nothing is stale yet.
"$MESHOP_BIN" restart plan -n "$ns_a" > "$work/plan0.txt"
grep -q "No stale workloads" "$work/plan0.txt" || { cat "$work/plan0.txt"; fail "plan not empty before the relabel"; }

# 6. Relabel: namespace A moves to canary.
kubectl label namespace "$ns_a" istio-injection- istio.io/rev=canary >/dev/null
"$MESHOP_BIN" restart plan > "$work/plan.txt"
echo "--- meshop restart plan (after the relabel)"; cat "$work/plan.txt"
for app in alpha beta gamma; do
  grep -E "^$ns_a +Deployment +$app +RevisionChanged +default -> canary +Restart" "$work/plan.txt" \
    >/dev/null || fail "plan does not list $ns_a/$app as RevisionChanged default -> canary, Restart"
done
! grep -q "$ns_b" "$work/plan.txt" || fail "plan lists the untouched namespace $ns_b"
"$MESHOP_BIN" restart plan -n "$ns_a" -o json | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["workloads"]
assert len(w) == 3, w
assert all(x["reason"] == "RevisionChanged" and x["targetRevision"] == "canary"
           and x["action"] == "Restart" and x["mode"] == "Auto" for x in w), w' \
  || fail "JSON plan is not as expected"

# 7. Restart, one at a time.
"$MESHOP_BIN" restart run --wait --timeout 5m > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "restart run failed"; }
echo "--- meshop restart run"; cat "$work/run.log"
[ "$(grep -c '^restarted ' "$work/run.log")" = 3 ] || fail "expected 3 restarts"

# Each restart began after the previous rollout completed: restartedAt(next) >= the time the
# previous Deployment's last new pod became Ready.
assert_paced_restarts "$ns_a" RevisionChanged/canary

# 8. Every pod in namespace A runs the canary sidecar; namespace B is untouched.
pods_a=$(kubectl -n "$ns_a" get pods -o jsonpath='{.items[*].metadata.name}')
[ "$(echo "$pods_a" | wc -w)" = 3 ] || fail "expected 3 pods in $ns_a, got: $pods_a"
for p in $pods_a; do
  [ "$(pod_revision "$ns_a" "$p")" = canary ] || fail "pod $p is not on the canary revision"
  case "$(rl_proxy_image_of "$ns_a" "$p")" in
    *:1.1.0) ;; *) fail "pod $p does not run the canary proxy: $(rl_proxy_image_of "$ns_a" "$p")" ;;
  esac
done
after_b=$(kubectl -n "$ns_b" get pods -o jsonpath='{.items[*].metadata.name}')
[ "$after_b" = "$before_b" ] || fail "pods in $ns_b changed: $before_b -> $after_b"

# 9. Done means done: the same cause does not restart again.
"$MESHOP_BIN" restart plan -n "$ns_a" > "$work/plan2.txt"
grep -q "No stale workloads" "$work/plan2.txt" || { cat "$work/plan2.txt"; fail "still stale after the restarts"; }
kubectl -n "$cp" get istiooperator "e2e-canary-$id" -o jsonpath='{.status.restarts}' > "$work/status.json"
echo "--- IstioOperator status.restarts: $(cat "$work/status.json")"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["inProgress"] == 0 and s["pending"] == 0 and s["failed"] == 0 and not s["paused"], s' \
  "$work/status.json" || fail "IstioOperator status.restarts does not show the restarts as done"
echo PASS
