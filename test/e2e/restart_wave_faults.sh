#!/usr/bin/env bash
# A restart wave under faults (issue 17, item 5): every workload restarted exactly once, none
# twice, none skipped, while the leader is SIGKILLed, the apiserver restarted and etcd compacted.
#
# Two `meshop run --leader-elect` replicas as config/'s ServiceAccount, each kept running by a
# supervisor loop (as a kubelet would restart a container that exits: losing the lease exits
# 1), serve the webhook on 127.0.0.2:P and 127.0.0.3:P behind HAProxy on 127.0.0.1:P (what
# --local makes the webhook configurations call, as in webhook_faults.sh). They install two
# revisions: IstioOperator `default` (restarts DryRun) and `canary` (restarts Auto,
# maxConcurrent WAVE_MAX_CONCURRENT (3), minInterval 0s, so only the restart-cause record can
# keep a workload from a second restart). 20 Deployments of WAVE_REPLICAS (2) pods
# (minReadySeconds WAVE_MIN_READY (2) paces their rollouts) in four namespaces labelled
# istio-injection=enabled get default's sidecar; the namespaces move to istio.io/rev=canary and
# the wave starts. While it runs (each fault lands when some
# Deployments are restarted and some are not, else the test fails):
#   1. the leading replica is SIGKILLed; the other takes the Lease over (the killed one comes
#      back as a follower);
#   2. the kube-apiserver is restarted (hack/cluster.sh restart kube-apiserver);
#   3. etcd is compacted to its current revision and defragmented while the apiserver is down
#      (hack/cluster.sh stop kube-apiserver; compact; start): every watch resumes from a
#      compacted resourceVersion, is answered 410 Gone and relists (counted in meshop's logs).
# Required: each Deployment restarted exactly once (two ReplicaSets, deployment revision 2, its
# template's cause RevisionChanged/canary, at most one "restarted workload" line in all the
# replicas' logs), every pod Ready on canary's sidecar, and the canary IstioOperator's
# status.restarts back to zero pending/in progress/failed/deferred/skipped, neither paused nor
# halted, with no RestartsHalted or RestartsOverdue condition True. Prints a trace per workload
# (restarts, time, who restarted it) and the wave's timeline with the faults.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
command -v haproxy >/dev/null || fail "haproxy not installed (hack/install-deps.sh)"

replicas=${WAVE_REPLICAS:-2}
max_concurrent=${WAVE_MAX_CONCURRENT:-3}
# kwok makes pods Ready at once: minReadySeconds paces each rollout (a pod counts as available
# WAVE_MIN_READY s after it is Ready), so the wave lasts long enough for three faults.
min_ready=${WAVE_MIN_READY:-2}
deployments=20
id=$RANDOM
cp=e2e-wave-$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
cluster_sh=("$MESHOP_SOURCE_DIR/hack/cluster.sh")
namespaces=()
for i in 0 1 2 3; do namespaces+=("e2e-wave-$id-$i"); done
supervisors=()
haproxy_pid=
sampler_pid=

stop_replicas() {
  touch "$work/stop"
  local i p
  for i in 0 1; do
    p=$(cat "$work/pid$i" 2>/dev/null) && kill -TERM "$p" 2>/dev/null
  done
  for p in "${supervisors[@]}"; do wait "$p" 2>/dev/null; done
  supervisors=()
}
cleanup() {
  local rc=$?
  set +e
  [ -n "$sampler_pid" ] && { kill "$sampler_pid" 2>/dev/null; wait "$sampler_pid" 2>/dev/null; }
  if [ "$rc" != 0 ]; then
    echo "--- debug: supervisor" >&2; cat "$work/supervisor.log" >&2
    for f in "$work"/run*.log; do echo "--- debug: $(basename "$f") (tail)" >&2; tail -n 25 "$f" >&2; done
    echo "--- debug: wave samples" >&2; tail -n 40 "$work/wave.log" >&2
    kubectl -n "$cp" get istiooperators -o yaml >&2
  fi
  # Uninstall while the replicas run, then stop them; operator_teardown removes what is left.
  kubectl -n "$cp" delete istiooperators --all --wait=false >/dev/null 2>&1
  sleep 2
  stop_replicas
  [ -n "$haproxy_pid" ] && { kill "$haproxy_pid" 2>/dev/null; wait "$haproxy_pid" 2>/dev/null; }
  for ns in "${namespaces[@]}"; do kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  operator_teardown "$cp"
  kubectl delete validatingwebhookconfigurations \
    -l "install.operator.istio.io/owning-resource-namespace=$cp" --ignore-not-found >/dev/null 2>&1
  if [ -n "${WAVE_KEEP_LOGS:-}" ]; then  # the replicas' logs, samples and objects
    echo "--- debug: logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT

operator_setup "$cp"

# Replica INDEX, started again a second after it exits (run<INDEX>.<N>.log per process), held
# back while $work/hold<INDEX> exists; its current pid in $work/pid<INDEX>.
supervise() {  # INDEX
  local i=$1 n=0 rc pid
  while [ ! -f "$work/stop" ]; do
    if [ -f "$work/hold$i" ]; then sleep 0.2; continue; fi
    n=$((n + 1))
    "${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run --local --leader-elect --namespace "$cp" \
      --native-sidecars false --webhook-addr "127.0.0.$((2 + i)):$port" \
      --health-addr "127.0.0.1:$((port + 1 + i))" >"$work/run$i.$n.log" 2>&1 &
    pid=$!
    echo "$pid" >"$work/pid$i"
    rc=0
    wait "$pid" || rc=$?
    rm -f "$work/pid$i"
    echo "$(date -u +%T) replica $i process $n exited $rc" >>"$work/supervisor.log"
    sleep 1
  done
}
ready() { curl -sf "http://127.0.0.1:$((port + 1 + $1))/readyz"; }
metric() {  # INDEX NAME: the value of NAME on replica INDEX's /metrics (0 when absent)
  curl -sf --max-time 2 "http://127.0.0.1:$((port + 1 + $1))/metrics" |
    awk -v k="$2" '$1 == k || index($1, k "{") == 1 {v += $2} END {print v + 0}'
}
leads() { [ "$(metric "$1" leader_election_master_status)" = 1 ]; }
leader() {  # the index of the replica leading now
  local i
  for i in 0 1; do leads "$i" && { echo "$i"; return 0; }; done
  return 1
}

cat >"$work/haproxy.cfg" <<CFG
global
  maxconn 1024
defaults
  mode tcp
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout check 2s
  retries 3
  option redispatch
frontend webhook
  bind 127.0.0.1:$port
  default_backend meshop
backend meshop
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 300ms fall 2 rise 2
  server r0 127.0.0.2:$port check addr 127.0.0.1 port $((port + 1))
  server r1 127.0.0.3:$port check addr 127.0.0.1 port $((port + 2))
CFG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
haproxy_pid=$!
: >"$work/supervisor.log"

t_start=$SECONDS
supervise 0 &
supervisors+=($!)
wait_for 60 "replica 0 ready" ready 0
wait_for 60 "replica 0 leads" leads 0
supervise 1 &
supervisors+=($!)
wait_for 60 "replica 1 ready" ready 1

iop() {  # NAME REVISION-LINE RESTARTS
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  $2
  values:
    global: {istioNamespace: $cp}
  restarts: $3
YAML
}
is_healthy() { [ "$(kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
iop default "" "{mode: DryRun}"
iop canary "revision: canary" \
  "{mode: Auto, maxConcurrent: $max_concurrent, minInterval: 0s, rolloutTimeout: 3m}"
wait_for 180 "IstioOperator default HEALTHY" is_healthy default
wait_for 180 "IstioOperator canary HEALTHY" is_healthy canary
wait_for 30 "both replicas serve" grep -q '"webhook serving"' "$work/run1.1.log"
echo "two replicas, both revisions HEALTHY after $((SECONDS - t_start)) s"

# The workloads, on the default revision.
: >"$work/deployments.yaml"
for ns in "${namespaces[@]}"; do
  kubectl create namespace "$ns" >/dev/null
  kubectl label namespace "$ns" istio-injection=enabled "e2e-wave=$id" >/dev/null
  for d in 0 1 2 3 4; do
    cat >>"$work/deployments.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: app$d, namespace: $ns, labels: {e2e-wave: "$id"}}
spec:
  replicas: $replicas
  minReadySeconds: $min_ready
  selector: {matchLabels: {app: app$d}}
  template:
    metadata: {labels: {app: app$d, e2e-wave: "$id"}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: app, image: registry.invalid/app:1}]
---
YAML
  done
done
probe() {
  kubectl -n "$1" run probe --image=registry.invalid/probe:1 --restart=Never --dry-run=server \
    -o jsonpath='{.spec.containers[*].name}' >"$work/probe.txt" && grep -qw istio-proxy "$work/probe.txt"
}
for ns in "${namespaces[@]}"; do wait_for 60 "meshop injects in $ns" probe "$ns"; done
kubectl apply -f "$work/deployments.yaml" >/dev/null
# The state of the wave: Deployments restarted (a restart cause on the template), and those
# rolled out with every pod Ready on canary's sidecar; "restarted done" (one line).
wave_state() {
  local f=$work/state.$BASHPID.json  # the sampler reads it too, in its own file
  kubectl get deployments,pods -A -l "e2e-wave=$id" -o json >"$f" 2>/dev/null &&
    python3 - "$f" "$replicas" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
want = int(sys.argv[2])
pods = {}
for p in items:
    if p["kind"] != "Pod" or p["metadata"].get("deletionTimestamp"):
        continue
    st = json.loads(p["metadata"].get("annotations", {}).get("sidecar.istio.io/status", "{}") or "{}")
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
    pods.setdefault((p["metadata"]["namespace"], p["metadata"]["labels"]["app"]), []).append(
        (st.get("revision", "none"), ready))
restarted = done = 0
for d in items:
    if d["kind"] != "Deployment":
        continue
    if not d["spec"]["template"]["metadata"].get("annotations", {}).get("meshop.io/restart-cause"):
        continue
    restarted += 1
    s, mine = d.get("status", {}), pods.get((d["metadata"]["namespace"], d["metadata"]["name"]), [])
    if (s.get("observedGeneration") == d["metadata"]["generation"] and s.get("updatedReplicas") == want
            and s.get("replicas") == want and s.get("availableReplicas") == want and len(mine) == want
            and all(rev == "canary" and ready for rev, ready in mine)):
        done += 1
print(restarted, done)
PY
}
all_on_default() {
  wave_state >/dev/null || return 1
  kubectl get pods -A -l "e2e-wave=$id" -o json >"$work/pods0.json"
  python3 - "$work/pods0.json" "$((deployments * replicas))" <<'PY'
import json, sys
pods = [p for p in json.load(open(sys.argv[1]))["items"] if not p["metadata"].get("deletionTimestamp")]
revs = [json.loads(p["metadata"].get("annotations", {}).get("sidecar.istio.io/status", "{}") or "{}").get("revision")
        for p in pods]
ready = [any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])) for p in pods]
sys.exit(0 if len(pods) == int(sys.argv[2]) and all(r == "default" for r in revs) and all(ready) else 1)
PY
}
wait_for 120 "$((deployments * replicas)) pods Ready on the default revision" all_on_default
echo "$deployments Deployments x $replicas pods on default after $((SECONDS - t_start)) s"

# The wave, sampled every second into wave.log ("seconds restarted done leader").
restarted_at_least() { local s; s=$(wave_state) && [ "${s% *}" -ge "$1" ]; }
sampler() {
  local s l
  while :; do
    s=$(wave_state 2>/dev/null) || s="? ?"
    l=$(leader 2>/dev/null) || l="-"
    echo "$((SECONDS - t_wave)) $s $l" >>"$work/wave.log"
    sleep 1
  done
}
timeline=()
mark() {  # WHAT: a timeline entry with the wave's state now
  local s
  s=$(wave_state 2>/dev/null) || s="? ?"
  timeline+=("t+$((SECONDS - t_wave))s  ${s% *}/$deployments restarted, ${s#* } rolled out: $1")
  echo "${timeline[-1]}"
}
mid_wave() {  # FAULT: fails unless some Deployments are restarted and some are not
  local s
  s=$(wave_state) || fail "cannot read the wave's state before fault $1"
  [ "${s% *}" -ge 1 ] && [ "${s% *}" -lt "$deployments" ] ||
    fail "fault $1 would land outside the wave (${s% *}/$deployments restarted): lower WAVE_MAX_CONCURRENT"
}
gone_relists() { cat "$work"/run*.log | grep '"informer error' | grep -c '"gone":true' || true; }

t_wave=$SECONDS
: >"$work/wave.log"
sampler &
sampler_pid=$!
for ns in "${namespaces[@]}"; do
  kubectl label namespace "$ns" istio-injection- istio.io/rev=canary >/dev/null
done
mark "namespaces moved to canary"

# 1. SIGKILL the leader; the other replica takes the Lease over.
wait_for 60 "the wave starts" restarted_at_least 2
mid_wave 1
old=$(leader) || fail "no replica leads"
new=$((1 - old))
touch "$work/hold$old"
kill -KILL "$(cat "$work/pid$old")"
mark "fault 1: replica $old (the leader) SIGKILLed"
wait_for 60 "replica $new takes the lease over" leads "$new"
mark "replica $new leads"
rm -f "$work/hold$old"
s=$(wave_state)
wait_for 60 "the new leader restarts a Deployment" restarted_at_least $((${s% *} + 1))
mark "the new leader restarted a Deployment"

# 2. Restart the kube-apiserver.
mid_wave 2
"${cluster_sh[@]}" restart kube-apiserver
mark "fault 2: kube-apiserver restarted"
wait_for 90 "kube-apiserver ready" kubectl get --raw /readyz
mark "kube-apiserver ready"

# 3. At once (the wave is still under way): compact etcd while the apiserver is down, so that
# every watch resumes from a compacted revision.
mid_wave 3
gone_before=$(gone_relists)
"${cluster_sh[@]}" stop kube-apiserver
rev=$("${cluster_sh[@]}" compact)
"${cluster_sh[@]}" start kube-apiserver
mark "fault 3: etcd compacted to revision $rev (apiserver down meanwhile) and defragmented"
wait_for 90 "kube-apiserver ready" kubectl get --raw /readyz
mark "kube-apiserver ready"

# The rest of the wave.
all_done() { [ "$(wave_state)" = "$deployments $deployments" ]; }
wait_for 180 "every Deployment restarted and rolled out onto canary" all_done
mark "wave complete"
gone_after=$(gone_relists)
echo "informer 410 Gone relists in meshop's logs: $gone_before before fault 3, $gone_after after"
[ "$gone_after" -gt "$gone_before" ] || fail "no informer was answered 410 Gone after the compaction"

# The canary IstioOperator's status settles: nothing pending, in progress, failed or held.
status_settled() {
  kubectl -n "$cp" get istiooperator canary -o json >"$work/canary.json" &&
    python3 - "$work/canary.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1])).get("status", {})
r = st.get("restarts") or {}
counts = {k: r.get(k) for k in ("pending", "inProgress", "failed", "deferred", "skipped", "manualRestartNeeded")}
bad = [c for c in st.get("conditions", []) if c["type"] in ("RestartsHalted", "RestartsOverdue") and c["status"] == "True"]
ok = (all(v == 0 for v in counts.values()) and r.get("paused") is False and r.get("halted") is False
      and not r.get("workloads") and not bad and st.get("status") == "HEALTHY")
print(json.dumps({"status": st.get("status"), "restarts": counts, "paused": r.get("paused"),
                  "halted": r.get("halted"), "workloads": len(r.get("workloads") or []),
                  "conditions": [(c["type"], c["status"]) for c in st.get("conditions", [])]}))
sys.exit(0 if ok else 1)
PY
}
wait_for 90 "the canary IstioOperator's status.restarts settled" status_settled
echo "canary status: $(status_settled)"
is_healthy default || fail "IstioOperator default is not HEALTHY"
kill "$sampler_pid" 2>/dev/null
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=

echo "--- timeline (restarted/rolled out when each step was seen)"
printf '%s\n' "${timeline[@]}"
echo "--- wave samples (seconds since the move, restarted, rolled out, leading replica)"
awk '{k = $2 " " $3 " " $4} k != last {print; last = k}' "$work/wave.log"
cat "$work/supervisor.log"

# Per workload: the ReplicaSets (one per template: a second restart makes a third), the
# Deployment's revision, the cause and time on its template, and who logged the restart.
kubectl get deployments,replicasets -A -l "e2e-wave=$id" -o json >"$work/final.json"
kubectl get events -A --field-selector reason=Restarted -o json >"$work/events.json"
python3 - "$work/final.json" "$work/events.json" "$work"/run*.log <<'PY' || fail "not every Deployment was restarted exactly once"
import json, os, re, sys
items = json.load(open(sys.argv[1]))["items"]
events = json.load(open(sys.argv[2]))["items"]
logged = {}
for path in sys.argv[3:]:
    replica = re.sub(r"^run(\d+)\.(\d+)\.log$", r"r\1.\2", os.path.basename(path))
    for line in open(path, errors="replace"):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("msg") == "restarted workload":
            logged.setdefault(o["workload"], []).append(f"{o['ts'][11:19]} by {replica}")
deps = sorted((d for d in items if d["kind"] == "Deployment"),
              key=lambda d: d["spec"]["template"]["metadata"].get("annotations", {}).get("kubectl.kubernetes.io/restartedAt", ""))
bad = 0
print(f"{'workload':30} {'restarts':>8} {'rev':>3}  {'restartedAt':20} {'cause':24} {'events':>6}  logged")
for d in deps:
    ns, name, uid = d["metadata"]["namespace"], d["metadata"]["name"], d["metadata"]["uid"]
    ann = d["spec"]["template"]["metadata"].get("annotations", {})
    rss = [r for r in items if r["kind"] == "ReplicaSet" and any(o["uid"] == uid for o in r["metadata"].get("ownerReferences", []))]
    revision = d["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision", "?")
    key = f"Deployment/{ns}/{name}"
    evs = sum(max(e.get("count") or 1, (e.get("series") or {}).get("count") or 1) for e in events
              if e["involvedObject"].get("uid") == uid or (e["involvedObject"].get("name") == name
                  and e["metadata"]["namespace"] == ns and e["involvedObject"].get("kind") == "Deployment"))
    lines = logged.get(key, [])
    restarts = len(rss) - 1
    ok = (restarts == 1 and revision == "2" and ann.get("meshop.io/restart-cause") == "RevisionChanged/canary"
          and len(lines) <= 1)
    bad += not ok
    print(f"{ns + '/' + name:30} {restarts:>8} {revision:>3}  {ann.get('kubectl.kubernetes.io/restartedAt', '-'):20} "
          f"{ann.get('meshop.io/restart-cause', '-'):24} {evs:>6}  {', '.join(lines) or '-'}{'' if ok else '   <-- NOT EXACTLY ONCE'}")
print(f"{len(deps)} Deployments, {sum(len(v) for v in logged.values())} restarts logged, {bad} not restarted exactly once")
sys.exit(0 if len(deps) == 20 and bad == 0 else 1)
PY
echo "total $((SECONDS - t_start)) s (wave $((SECONDS - t_wave)) s)"
echo PASS
