#!/usr/bin/env bash
# Issue 15's version gate and restart deadline under `meshop run`, as config/'s ServiceAccount,
# on the bundled chart sets (IstioOperator default on Istio 1.30, canary on 1.31):
#   1. canary's policy is {mode: Auto, maxVersionSkew: Patch}. Namespace A moves from default to
#      canary: `meshop restart plan` says ApprovalNeeded with both versions (1.30 -> 1.31), the
#      reconciler reports it (status.restarts, a Warning Event RestartApprovalNeeded) and
#      restarts nothing (the Deployment's generation and template stay); `meshop restart
#      approve Deployment/web -n A` and the Deployment is restarted once, onto 1.31's proxy,
#      while Deployment api of A still waits. `approve --all` refuses what single approve
#      refuses (a malformed argument, an unknown IstioOperator, one that holds nothing), then
#      approves on the IstioOperator (canary@1.31) and api is restarted.
#   2. canary's policy becomes a closed maintenance window with maxStaleness 20s and
#      restartAfterDeadline (maxVersionSkew Any). Namespace B moves to canary: the workload gets
#      meshop.io/stale-since, nothing is restarted ~8 s later (plan: Deferred), and after the
#      deadline it is restarted outside the window, with the condition RestartsOverdue=True
#      naming it and a Warning Event RestartOverdue on it; once its pods are on canary the
#      condition turns False (NoneOverdue) and meshop.io/stale-since is removed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-gates-$id
ns_a=e2e-gates-a-$id
ns_b=e2e-gates-b-$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
watch_pid=
cleanup() {
  local rc=$?
  set +e
  [ -z "$watch_pid" ] || kill "$watch_pid" 2>/dev/null
  if [ "$rc" != 0 ]; then
    echo "--- debug: meshop run log (tail)" >&2
    tail -n 40 "$work/run.log" >&2
    kubectl -n "$cp" get istiooperators -o yaml >&2
    echo "--- debug: last plans" >&2
    cat "$work"/plan-*.txt >&2
  fi
  kubectl delete namespace "$ns_a" "$ns_b" --wait=false >/dev/null 2>&1
  operator_teardown "$cp" ${run_pid:+"$run_pid"}
  kubectl delete validatingwebhookconfigurations \
    -l "install.operator.istio.io/owning-resource-namespace=$cp" --ignore-not-found >/dev/null 2>&1
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

tag30=$(bundled_tag 1.30)
tag31=$(bundled_tag 1.31)
[ -n "$tag30" ] && [ -n "$tag31" ] && [ "$tag30" != "$tag31" ] ||
  fail "bundled versions' tags: 1.30 '$tag30', 1.31 '$tag31'"

operator_setup "$cp"
operator_start "$port" restarts

iop() {  # NAME VERSION REVISION-LINE RESTARTS
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: $cp}
spec:
  version: "$2"
  profile: minimal
  $3
  values:
    global: {istioNamespace: $cp}
  restarts: $4
YAML
}
is_healthy() { [ "$(kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
proxy_images() {  # NS [APP]: the istio-proxy images of Deployment APP's (web) pods, sorted unique
  kubectl -n "$1" get pods -l "app=${2:-web}" -o json | python3 -c 'import json, sys
imgs = {c["image"] for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")
        for c in p["spec"].get("containers", []) + p["spec"].get("initContainers", [])
        if c["name"] == "istio-proxy"}
print(" ".join(sorted(imgs)) or "none")'
}
proxies_are() { [ "$(proxy_images "$1" "${3:-web}")" = "registry.istio.io/testing/proxyv2:$2" ]; }
replica_sets() { kubectl -n "$1" get rs -l "app=${2:-web}" -o name | wc -l; }
generation() { kubectl -n "$1" get deployment "${2:-web}" -o jsonpath='{.metadata.generation}'; }
cause_of() {  # NS [NAME]
  kubectl -n "$1" get deployment "${2:-web}" -o jsonpath='{.spec.template.metadata.annotations.meshop\.io/restart-cause}'
}
# A Warning Event REASON whose regarding object is KIND NAME (in namespace NS) and note has TEXT.
event_seen() {  # NS KIND NAME REASON TEXT
  kubectl -n "$1" get events.events.k8s.io -o json | python3 -c '
import json, sys
kind, name, reason, text = sys.argv[1:5]
ev = [e for e in json.load(sys.stdin)["items"] if e["regarding"].get("kind") == kind
      and e["regarding"].get("name") == name and e["reason"] == reason
      and e["type"] == "Warning" and text in e.get("note", "")]
sys.exit(0 if ev else 1)' "$2" "$3" "$4" "$5"
}

t_start=$SECONDS
iop default 1.30 "" "{mode: DryRun}"
iop canary 1.31 "revision: canary" "{mode: Auto, minInterval: 0s, rolloutTimeout: 2m, maxVersionSkew: Patch}"
[ "$(kubectl -n "$cp" get istiooperator canary -o jsonpath='{.spec.restarts.maxVersionSkew}')" = Patch ] ||
  fail "spec.restarts.maxVersionSkew not stored"
wait_for 180 "IstioOperator default (1.30) HEALTHY" is_healthy default
wait_for 180 "IstioOperator canary (1.31) HEALTHY" is_healthy canary
echo "both revisions HEALTHY after $((SECONDS - t_start)) s"

for n in "$ns_a" "$ns_b"; do
  kubectl create namespace "$n" >/dev/null
  kubectl label namespace "$n" istio-injection=enabled >/dev/null
done
probe() {
  local out
  out=$(kubectl -n "$1" run probe --image=registry.invalid/probe:1 --restart=Never \
    --dry-run=server -o jsonpath='{.spec.containers[*].name} {.spec.initContainers[*].name}')
  [[ "$out" == *istio-proxy* ]]
}
for n in "$ns_a" "$ns_b"; do
  wait_for 60 "meshop injects in $n" probe "$n"
  kubectl -n "$n" create deployment web --image=registry.invalid/web:1 >/dev/null
done
kubectl -n "$ns_a" create deployment api --image=registry.invalid/api:1 >/dev/null
for n in "$ns_a" "$ns_b"; do
  kubectl -n "$n" rollout status deployment/web --timeout=120s >/dev/null
  wait_for 30 "pods of $n on 1.30's proxy" proxies_are "$n" "$tag30"
done
kubectl -n "$ns_a" rollout status deployment/api --timeout=120s >/dev/null
wait_for 30 "pods of api in $ns_a on 1.30's proxy" proxies_are "$ns_a" "$tag30" api

# 1. The version gate: a move 1.30 -> 1.31 under maxVersionSkew Patch waits for an approval.
gen_a=$(generation "$ns_a")
gen_api=$(generation "$ns_a" api)
kubectl label namespace "$ns_a" istio-injection- istio.io/rev=canary >/dev/null
plan_needs_approval() {
  "$MESHOP_BIN" restart plan --control-plane-namespace "$cp" -n "$ns_a" > "$work/plan-a.txt" 2>&1 &&
    grep -Eq "^$ns_a +Deployment +web +RevisionChanged +default -> canary \(1\.30 -> 1\.31\) +ApprovalNeeded +Rollout +Istio 1\.30 -> 1\.31 exceeds maxVersionSkew Patch; approve with meshop restart approve Deployment/web -n $ns_a" \
      "$work/plan-a.txt"
}
wait_for 30 "plan says ApprovalNeeded (1.30 -> 1.31)" plan_needs_approval
cat "$work/plan-a.txt"
"$MESHOP_BIN" restart plan --control-plane-namespace "$cp" -n "$ns_a" -o json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"]
assert sorted(e["name"] for e in w) == ["api", "web"], w
for e in w:
    assert e["action"] == "ApprovalNeeded", w
    assert e["currentVersion"] == "1.30" and e["targetVersion"] == "1.31", w
    assert e["maxVersionSkew"] == "Patch", w' || fail "JSON plan is not ApprovalNeeded 1.30 -> 1.31 for web and api"
# The reconciler saw it too (its Event), and a few passes later nothing was restarted.
wait_for 30 "a Warning Event RestartApprovalNeeded on Deployment web" \
  event_seen "$ns_a" Deployment web RestartApprovalNeeded "1.31"
sleep 6
[ "$(generation "$ns_a")" = "$gen_a" ] || fail "Deployment web in $ns_a changed while ApprovalNeeded"
[ -z "$(cause_of "$ns_a")" ] || fail "Deployment web in $ns_a restarted while ApprovalNeeded"
[ "$(replica_sets "$ns_a")" = 1 ] || fail "Deployment web in $ns_a has a new ReplicaSet while ApprovalNeeded"
proxies_are "$ns_a" "$tag30" || fail "pods of $ns_a left 1.30 before the approval"
kubectl -n "$cp" get istiooperator canary -o json | python3 -c '
import json, sys
print("--- status.restarts:", json.dumps(json.load(sys.stdin).get("status", {}).get("restarts")))'

"$MESHOP_BIN" restart approve --control-plane-namespace "$cp" Deployment/web -n "$ns_a" | tee "$work/approve.txt"
grep -q "^approved Deployment/web -n $ns_a for canary@1.31" "$work/approve.txt" ||
  fail "approve did not report canary@1.31"
[ "$(kubectl -n "$ns_a" get deployment web -o jsonpath='{.metadata.annotations.meshop\.io/restart-approved}')" = canary@1.31 ] ||
  fail "meshop.io/restart-approved is not canary@1.31"
wait_for 60 "pods of $ns_a restarted onto 1.31's proxy" proxies_are "$ns_a" "$tag31"
[ "$(cause_of "$ns_a")" = RevisionChanged/canary ] || fail "restart cause '$(cause_of "$ns_a")'"
[ "$(replica_sets "$ns_a")" = 2 ] || fail "Deployment web in $ns_a restarted more than once"
# The approval was web's alone: api still waits.
[ "$(generation "$ns_a" api)" = "$gen_api" ] && [ -z "$(cause_of "$ns_a" api)" ] ||
  fail "Deployment api in $ns_a restarted by web's approval"
proxies_are "$ns_a" "$tag30" api || fail "pods of api in $ns_a left 1.30 before an approval"

# approve --all: the same checks as one workload's approve, then the IstioOperator's approval.
approve_fails() {  # RC TEXT ARGS...: exits RC, says TEXT on stderr, writes nothing
  local want=$1 text=$2 rc=0; shift 2
  "$MESHOP_BIN" restart approve --control-plane-namespace "$cp" "$@" \
    > "$work/approve-bad.out" 2> "$work/approve-bad.err" || rc=$?
  [ "$rc" = "$want" ] || fail "approve $* exited $rc, not $want: $(cat "$work/approve-bad.err")"
  grep -qF -e "$text" "$work/approve-bad.err" || fail "approve $*: '$(cat "$work/approve-bad.err")' does not say '$text'"
}
approve_fails 2 "with --all the argument is an IstioOperator name" --all Deployment/api
approve_fails 2 "-n does not apply" --all -n "$ns_a"
approve_fails 2 "approve takes KIND/NAME and -n NAMESPACE" Deployment/ -n "$ns_a"
approve_fails 1 "no IstioOperator nosuch in the cluster" --all nosuch
approve_fails 1 "IstioOperator default holds no move for approval" --all default
approve_fails 1 "needs no approval (plan: " Deployment/web -n "$ns_a"
[ -z "$(kubectl -n "$cp" get istiooperator canary -o jsonpath='{.metadata.annotations.meshop\.io/restart-approved}')" ] ||
  fail "a refused approve --all wrote on IstioOperator canary"
"$MESHOP_BIN" restart approve --control-plane-namespace "$cp" --all > "$work/approve-all.txt"
cat "$work/approve-all.txt"
[ "$(cat "$work/approve-all.txt")" = "approved IstioOperator/canary -n $cp for canary@1.31" ] ||
  fail "approve --all did not approve IstioOperator canary alone for canary@1.31"
[ "$(kubectl -n "$cp" get istiooperator canary -o jsonpath='{.metadata.annotations.meshop\.io/restart-approved}')" = canary@1.31 ] ||
  fail "meshop.io/restart-approved on IstioOperator canary is not canary@1.31"
[ -z "$(kubectl -n "$ns_a" get deployment api -o jsonpath='{.metadata.annotations.meshop\.io/restart-approved}')" ] ||
  fail "approve --all wrote on Deployment api"
wait_for 60 "pods of api in $ns_a restarted onto 1.31's proxy" proxies_are "$ns_a" "$tag31" api
[ "$(cause_of "$ns_a" api)" = RevisionChanged/canary ] || fail "api's restart cause '$(cause_of "$ns_a" api)'"
[ "$(replica_sets "$ns_a" api)" = 2 ] || fail "Deployment api in $ns_a restarted more than once"
"$MESHOP_BIN" restart approve --control-plane-namespace "$cp" --all > "$work/approve-none.txt"
grep -qx "Nothing waits for approval." "$work/approve-none.txt" || fail "approve --all with nothing held: $(cat "$work/approve-none.txt")"
echo "approvals done after $((SECONDS - t_start)) s"

# 2. The deadline: a closed window, maxStaleness 20s, restartAfterDeadline.
start=$(date -u -d '+2 hours' +%H:%M)
end=$(date -u -d '+3 hours' +%H:%M)
kubectl -n "$cp" patch istiooperator canary --type=merge -p "{\"spec\":{\"restarts\":{
  \"maxVersionSkew\":\"Any\",\"maintenanceWindow\":{\"start\":\"$start\",\"end\":\"$end\"},
  \"maxStaleness\":\"20s\",\"restartAfterDeadline\":true}}}" >/dev/null
gen_b=$(generation "$ns_b")
# Every version of IstioOperator canary from now on: RestartsOverdue is True from the deadline
# until the restarted pods are on canary, a second or two with kwok, which a poll under load
# misses (it did: "RestartsOverdue=True ... never seen", the watch showing True for 2 s). A
# watch misses no version.
kubectl -n "$cp" get istiooperator canary -w -o json > "$work/canary-watch.json" 2>&1 &
watch_pid=$!
kubectl label namespace "$ns_b" istio-injection- istio.io/rev=canary >/dev/null
t_move=$SECONDS
stale_since() {
  kubectl -n "$ns_b" get deployment web -o jsonpath='{.metadata.annotations.meshop\.io/stale-since}'
}
has_stale_since() { [[ "$(stale_since)" == *" RevisionChanged/canary" ]]; }
wait_for 8 "meshop.io/stale-since on Deployment web in $ns_b" has_stale_since
echo "stale-since: $(stale_since)"
sleep $((t_move + 8 - SECONDS > 0 ? t_move + 8 - SECONDS : 0))
echo "generation of web in $ns_b: $gen_b before the move, $(generation "$ns_b") at ~8 s"
[ -z "$(cause_of "$ns_b")" ] || fail "Deployment web in $ns_b restarted before the deadline ($(cause_of "$ns_b"))"
[ "$(replica_sets "$ns_b")" = 1 ] || fail "Deployment web in $ns_b restarted before the deadline"
"$MESHOP_BIN" restart plan --control-plane-namespace "$cp" -n "$ns_b" | tee "$work/plan-b.txt"
grep -Eq "^$ns_b +Deployment +web +RevisionChanged +default -> canary.* +Deferred +Rollout" "$work/plan-b.txt" ||
  fail "plan does not defer web in $ns_b (maintenance window)"

# After the deadline: restarted outside the window; RestartsOverdue names it while it is overdue.
wait_for 60 "pods of $ns_b restarted onto 1.31's proxy after the deadline" proxies_are "$ns_b" "$tag31"
elapsed=$((SECONDS - t_move))
echo "web in $ns_b restarted $elapsed s after the move (maxStaleness 20s)"
[ "$elapsed" -ge 18 ] || fail "restarted after $elapsed s, before maxStaleness 20s"
[ "$(replica_sets "$ns_b")" = 2 ] || fail "Deployment web in $ns_b restarted more than once"
[ "$(cause_of "$ns_b")" = RevisionChanged/canary ] || fail "restart cause '$(cause_of "$ns_b")'"
wait_for 10 "a Warning Event RestartOverdue on Deployment web in $ns_b" \
  event_seen "$ns_b" Deployment web RestartOverdue ""
# The versions the watch delivered: RestartsOverdue=True naming web in one of them.
overdue_versions() {  # prints "status reason: message" of each version's RestartsOverdue
  python3 - "$work/canary-watch.json" <<'PY'
import json, sys
text, dec, i = open(sys.argv[1]).read(), json.JSONDecoder(), 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    try:
        o, i = dec.raw_decode(text, i)
    except ValueError:
        break  # the end, or a version still being written
    for c in o.get("status", {}).get("conditions", []):
        if c.get("type") == "RestartsOverdue":
            print(c.get("status"), str(c.get("reason")) + ":", c.get("message"))
PY
}
# (grep reads all: with -q, pipefail would take python's broken pipe for a failure)
overdue_named() { overdue_versions | grep "^True StalePastMaxStaleness:.* Deployment/$ns_b/web" >/dev/null; }
wait_for 10 "RestartsOverdue=True naming Deployment/$ns_b/web in a version of IstioOperator canary" overdue_named
echo "--- RestartsOverdue, version by version:"
overdue_versions | uniq

# Up to date again: RestartsOverdue False, the stale-since record removed.
overdue_lifted() {
  [ "$(kubectl -n "$cp" get istiooperator canary -o jsonpath='{range .status.conditions[?(@.type=="RestartsOverdue")]}{.status} {.reason}: {.message}{end}')" = \
    "False NoneOverdue: no workload is stale past maxStaleness" ] && [ -z "$(stale_since)" ]
}
t_done=$SECONDS
wait_for 30 "RestartsOverdue False and meshop.io/stale-since removed" overdue_lifted
echo "RestartsOverdue False and stale-since removed $((SECONDS - t_done)) s after the restart was seen; generation of web in $ns_b: $(generation "$ns_b")"
echo "total $((SECONDS - t_start)) s"
echo PASS
