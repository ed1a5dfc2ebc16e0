#!/usr/bin/env bash
# Zero failed admissions under faults (issue 17, item 5). Two `meshop run --leader-elect`
# replicas (as in production: each serves the webhook with the certificate the leader keeps in
# the Secret <cp>/meshop-webhook-certs, the leader writes the webhook configuration and its
# caBundle) listen on 127.0.0.2:P and 127.0.0.3:P behind a local HAProxy on 127.0.0.1:P (TCP
# mode, TLS passed through, health checks on each replica's /readyz). --local makes the webhook
# configuration call https://127.0.0.1:P, i.e. HAProxy; the chart's failurePolicy is Fail.
#
# Then, four times, 20 Deployments of FAULTS_REPLICAS pods each (default 50: 1,000 pods) are
# created at once in namespaces of revision f<id>, and while kube-controller-manager creates
# their pods:
#   a. the serving certificate is renewed (tls.crt in the Secret replaced by one that does not
#      match tls.key: the leader issues a new one, both replicas load it);
#   b. the CA is rotated (ca.key removed: a new CA, published in the caBundle before the
#      serving certificate it signs is loaded);
#   c. the injector ConfigMap changes ten times (the IstioOperator's proxy CPU request
#      101m..110m, re-rendered into istio-sidecar-injector-f<id>);
#   d. one replica is SIGKILLed, then started again;
#   e. one replica is SIGTERMed (a planned restart: /readyz turns 503 at once, HAProxy's check
#      takes it out within --drain-delay while it still answers, each answer closes its
#      connection, then its listener closes and its idle connections are closed), then started
#      again.
# Required for each: every pod created (20 x FAULTS_REPLICAS), 0 FailedCreate Events, 0
# rejections on the apiserver's side (apiserver_admission_webhook_rejection_count), 0 failures
# on meshop's side (sidecar_injection_failure_total), every pod with istio-proxy, and under c
# with a CPU request one of the configurations had (100m, 101m..110m); under d at most one
# failed admission per connection the killed replica had; under e none, HAProxy marking the
# replica down on its 503 (not on a refused connection), and the replica gone within its
# --drain-timeout plus the controllers' hand-over.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
command -v haproxy >/dev/null || fail "haproxy not installed (hack/install-deps.sh)"

replicas=${FAULTS_REPLICAS:-25}
deployments=20
want=$((deployments * replicas))
id=$RANDOM
cp=e2e-faults-$id
rev=f$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
pids=()
haproxy_pid=
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    for i in 0 1; do echo "--- debug: replica $i" >&2; tail -n 30 "$work/run$i.log" >&2; done
    echo "--- debug: haproxy" >&2; tail -n 20 "$work/haproxy.log" >&2
  fi
  [ -n "$haproxy_pid" ] && { kill "$haproxy_pid" 2>/dev/null; wait "$haproxy_pid" 2>/dev/null; }
  kubectl delete namespace -l "e2e-faults=$id" --wait=false >/dev/null 2>&1
  operator_teardown "$cp" "${pids[@]}"
  if [ "$rc" != 0 ] && [ -n "${FAULTS_KEEP_LOGS:-}" ]; then
    echo "--- debug: logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT

operator_setup "$cp"

start() {  # INDEX: replica INDEX on 127.0.0.(2+INDEX):port, health on 127.0.0.1:port+1+INDEX
  local i=$1
  "${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run --local --leader-elect --namespace "$cp" \
    --native-sidecars false --restarts=false --webhook-addr "127.0.0.$((2 + i)):$port" \
    --health-addr "127.0.0.1:$((port + 1 + i))" >>"$work/run$i.log" 2>&1 &
  pids[$i]=$!
}
ready() { curl -sf "http://127.0.0.1:$((port + 1 + $1))/readyz"; }
metric() {  # INDEX NAME: the value of NAME on replica INDEX's /metrics (0 when absent)
  curl -sf "http://127.0.0.1:$((port + 1 + $1))/metrics" |
    awk -v k="$2" '$1 == k || index($1, k "{") == 1 {v += $2} END {print v + 0}'
}

cat >"$work/haproxy.cfg" <<CFG
global
  maxconn 4096
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

start 0
wait_for 60 "replica 0 ready" ready 0
start 1
wait_for 60 "replica 1 ready" ready 1

kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: faults, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: $rev
  values:
    global: {istioNamespace: $cp}
YAML
healthy() { [ "$(kubectl -n "$cp" get istiooperator faults -o jsonpath='{.status.status}')" = HEALTHY ]; }
wait_for 120 "IstioOperator HEALTHY" healthy
mwc=istio-sidecar-injector-$rev-$cp
wait_for 30 "webhook configuration" kubectl get mutatingwebhookconfiguration "$mwc"
urls=$(kubectl get mutatingwebhookconfiguration "$mwc" -o jsonpath='{.webhooks[*].clientConfig.url}')
policies=$(kubectl get mutatingwebhookconfiguration "$mwc" -o jsonpath='{.webhooks[*].failurePolicy}')
echo "webhook configuration $mwc: urls [$urls], failurePolicy [$policies]"
for u in $urls; do [ "$u" = "https://127.0.0.1:$port/inject/rev/$rev" ] || fail "webhook url $u"; done
for p in $policies; do [ "$p" = Fail ] || fail "failurePolicy $p"; done
wait_for 30 "both replicas serve" grep -q '"webhook serving"' "$work/run1.log"

# The apiserver's view: webhook rejections (failurePolicy Fail turns a call error into one).
apiserver_rejections() {
  kubectl get --raw /metrics | awk '/^apiserver_admission_webhook_rejection_count\{/ && /sidecar-injector/ {s += $2; print > "/dev/stderr"} END {print s + 0}'
}
secret_key() { kubectl -n "$cp" get secret meshop-webhook-certs -o jsonpath="{.data.${1//./\\.}}"; }
# Both replicas serve the Secret's current serving certificate.
serves_secret_cert() {
  local want_pem i got
  want_pem=$(secret_key tls.crt | base64 -d | openssl x509 -outform PEM)
  for i in 2 3; do
    got=$(openssl s_client -connect "127.0.0.$i:$port" </dev/null 2>/dev/null | openssl x509 -outform PEM)
    [ "$got" = "$want_pem" ] || return 1
  done
}
cpu_values=(100m)
fault_a() {  # serving certificate renewed
  local old reloads0 reloads1
  old=$(secret_key tls.crt)
  reloads0=$(metric 0 meshop_webhook_certificate_reloads_total)
  reloads1=$(metric 1 meshop_webhook_certificate_reloads_total)
  # A Secret of type kubernetes.io/tls must keep tls.crt: it becomes the CA's certificate,
  # which does not match tls.key (the replicas keep serving the current one, the leader
  # issues a new one).
  kubectl -n "$cp" patch secret meshop-webhook-certs --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/data/tls.crt\",\"value\":\"$(secret_key ca.crt)\"}]" >/dev/null
  renewed() {
    local c
    c=$(secret_key tls.crt)
    [ -n "$c" ] && [ "$c" != "$old" ] && [ "$c" != "$(secret_key ca.crt)" ]
  }
  wait_for 30 "serving certificate renewed" renewed
  loaded() { [ "$(metric "$1" meshop_webhook_certificate_reloads_total)" -gt "$2" ]; }
  wait_for 30 "replica 0 loads the renewed certificate" loaded 0 "$reloads0"
  wait_for 30 "replica 1 loads the renewed certificate" loaded 1 "$reloads1"
  wait_for 30 "both replicas serve the renewed certificate" serves_secret_cert
}
fault_b() {  # CA rotated
  local old_ca old_tls
  old_ca=$(secret_key ca.crt)
  old_tls=$(secret_key tls.crt)
  kubectl -n "$cp" patch secret meshop-webhook-certs --type=json \
    -p '[{"op":"remove","path":"/data/ca.key"}]' >/dev/null
  rotated() {
    local c t
    c=$(secret_key ca.crt)
    t=$(secret_key tls.crt)
    [ -n "$c" ] && [ "$c" != "$old_ca" ] && [ -n "$t" ] && [ "$t" != "$old_tls" ]
  }
  wait_for 30 "CA rotated and serving certificate reissued" rotated
  wait_for 30 "both replicas serve the certificate of the new CA" serves_secret_cert
}
fault_c() {  # ten injector configuration changes
  local n
  for n in $(seq 1 10); do
    cpu_values+=("$((100 + n))m")
    echo "$(date -u +%T.%N | cut -c1-12) cpu $((100 + n))m" >>"$work/changes.log"
    kubectl -n "$cp" patch istiooperator faults --type=merge -p \
      "{\"spec\":{\"values\":{\"global\":{\"proxy\":{\"resources\":{\"requests\":{\"cpu\":\"$((100 + n))m\"}}}}}}}" >/dev/null
    sleep 0.5
  done
  rendered() { kubectl -n "$cp" get configmap "istio-sidecar-injector-$rev" -o jsonpath='{.data.values}' | grep -q '"110m"'; }
  wait_for 60 "the last configuration rendered" rendered
}
fault_e() {  # one replica SIGTERMed (a planned restart) and started again
  local downs ups t0 t1 code
  downs=$(grep -c 'Server meshop/r0 is DOWN' "$work/haproxy.log" || true)
  ups=$(grep -c 'Server meshop/r0 is UP' "$work/haproxy.log" || true)
  t0=$(date +%s%N)
  kill -TERM "${pids[0]}"
  local n
  for n in $(seq 1 20); do  # the signal is handled asynchronously: a few ms
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((port + 1))/readyz" || true)
    [ "$code" = 200 ] || break
    sleep 0.05
  done
  [ "$code" = 503 ] || fail "(e) /readyz of the draining replica answered $code, not 503"
  local rc=0
  wait "${pids[0]}" || rc=$?
  t1=$(date +%s%N)
  drain_exit="exit $rc after $(((t1 - t0) / 1000000)) ms"
  echo "(e) SIGTERMed replica: /readyz 503 at once, $drain_exit"
  [ "$rc" = 0 ] || fail "(e) the SIGTERMed replica exited $rc"
  # --drain-timeout 5s bounds the webhook; the controllers' drain and the lease release run
  # beside it (a replica that leads hands over).
  [ $(((t1 - t0) / 1000000)) -le 15000 ] || fail "(e) the SIGTERMed replica took over 15 s to exit"
  marked() { [ "$(grep -c "Server meshop/r0 is $1" "$work/haproxy.log")" -gt "$2" ]; }
  wait_for 10 "HAProxy marks replica 0 down" marked DOWN "$downs"
  grep 'Server meshop/r0 is DOWN' "$work/haproxy.log" | tail -n 1 | grep -q 'code: 503' ||
    fail "(e) HAProxy took replica 0 out on $(grep 'Server meshop/r0 is DOWN' "$work/haproxy.log" | tail -n 1), not on its 503"
  start 0
  wait_for 60 "replica 0 ready again" ready 0
  wait_for 30 "HAProxy marks replica 0 up again" marked UP "$ups"
}
fault_d() {  # one replica SIGKILLed and started again
  local downs ups
  downs=$(grep -c 'Server meshop/r0 is DOWN' "$work/haproxy.log" || true)
  ups=$(grep -c 'Server meshop/r0 is UP' "$work/haproxy.log" || true)
  # HAProxy passes each apiserver connection through to one replica; each carries at most one
  # request at a time, which SIGKILL loses (the apiserver does not retry an admission POST).
  in_flight_bound=$(ss -Htn state established "( sport = :$port )" src 127.0.0.2 | wc -l)
  kill -KILL "${pids[0]}"
  wait "${pids[0]}" 2>/dev/null || true
  marked() { [ "$(grep -c "Server meshop/r0 is $1" "$work/haproxy.log")" -gt "$2" ]; }
  wait_for 30 "HAProxy marks replica 0 down" marked DOWN "$downs"
  start 0
  wait_for 60 "replica 0 ready again" ready 0
  wait_for 30 "HAProxy marks replica 0 up again" marked UP "$ups"
}

total_failed=0
in_flight_bound=0
drain_exit=
summary=()
phase() {  # LETTER DESCRIPTION
  local letter=$1 what=$2 t0 i d ns req_before=0 fail_before=0 rej_before
  t0=$(date +%s)
  for i in 0 1; do
    req_before=$((req_before + $(metric "$i" sidecar_injection_requests_total)))
    fail_before=$((fail_before + $(metric "$i" sidecar_injection_failure_total)))
  done
  rej_before=$(apiserver_rejections)
  : >"$work/deploy-$letter.yaml"
  for i in 0 1 2 3; do
    ns=$cp-$letter$i
    kubectl create namespace "$ns" >/dev/null
    kubectl label namespace "$ns" "istio.io/rev=$rev" "e2e-faults=$id" >/dev/null
    for d in 0 1 2 3 4; do
      cat >>"$work/deploy-$letter.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: app$d, namespace: $ns}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: app$d}}
  template:
    metadata: {labels: {app: app$d, e2e-faults: "$id", e2e-faults-phase: $letter}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: app, image: registry.invalid/app:1}]
---
YAML
    done
  done
  probe() {
    kubectl -n "$cp-${letter}0" run probe --image=registry.invalid/probe:1 --restart=Never \
      --dry-run=server -o jsonpath='{.spec.containers[*].name}' | grep -qw istio-proxy
  }
  wait_for 60 "webhook answers in $cp-${letter}0" probe
  kubectl apply -f "$work/deploy-$letter.yaml" >/dev/null
  count() { kubectl get pods -A -l "e2e-faults=$id,e2e-faults-phase=$letter" --no-headers 2>/dev/null | wc -l; }
  some() { [ "$(count)" -ge $((want / 5)) ]; }
  # The configuration changes take seconds to reach the webhook (a re-render by the leader):
  # they start at once. The other faults start once a fifth of the pods exist.
  [ "$letter" = c ] || wait_for 60 "first pods of phase $letter" some
  case $letter in d | e) for i in 0 1; do  # replica 0's counters die with it
    req_before=$((req_before - $(metric "$i" sidecar_injection_requests_total)))
    fail_before=$((fail_before - $(metric "$i" sidecar_injection_failure_total)))
  done ;; esac
  "fault_$letter"
  all() { [ "$(count)" -ge "$want" ]; }
  wait_for 240 "$want pods of phase $letter" all
  local t1 requests=0 failures=0 rejections events
  t1=$(date +%s)
  for i in 0 1; do
    requests=$((requests + $(metric "$i" sidecar_injection_requests_total)))
    failures=$((failures + $(metric "$i" sidecar_injection_failure_total)))
  done
  requests=$((requests - req_before))
  failures=$((failures - fail_before))
  case $letter in d | e) requests=unknown ;; esac  # the stopped replica's share is lost with it
  rejections=$(($(apiserver_rejections) - rej_before))
  # Events of either API: a repeated Event has a count (core/v1) or a series.count.
  kubectl get events -A --field-selector reason=FailedCreate -o json >"$work/events-$letter.json"
  events=$(python3 - "$work/events-$letter.json" "$cp-$letter" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["items"]:
    if e["metadata"]["namespace"].startswith(sys.argv[2]):
        n = max(e.get("count") or 1, (e.get("series") or {}).get("count") or 1)
        print(n, e["metadata"]["namespace"], e["involvedObject"]["name"], e.get("message", "")[:300])
PY
)
  local failed_creates
  failed_creates=$(awk '{s += $1} END {print s + 0}' <<<"$events")
  kubectl get pods -A -l "e2e-faults=$id" -o json >"$work/pods-$letter.json"
  local uninjected
  uninjected=$(python3 - "$work/pods-$letter.json" "$cp-$letter" "${cpu_values[@]}" <<'PY'
import json, sys
pods, prefix, cpus = json.load(open(sys.argv[1]))["items"], sys.argv[2], set(sys.argv[3:])
bad = 0
for p in pods:
    if not p["metadata"]["namespace"].startswith(prefix):
        continue
    proxy = [c for c in p["spec"]["containers"] if c["name"] == "istio-proxy"]
    cpu = proxy[0].get("resources", {}).get("requests", {}).get("cpu") if proxy else None
    if not proxy or cpu not in cpus:
        bad += 1
        if bad <= 5:
            print(f"{p['metadata']['namespace']}/{p['metadata']['name']}: istio-proxy "
                  f"{'missing' if not proxy else 'cpu ' + str(cpu)}", file=sys.stderr)
seen = sorted({c.get("resources", {}).get("requests", {}).get("cpu", "")
               for p in pods if p["metadata"]["namespace"].startswith(prefix)
               for c in p["spec"]["containers"] if c["name"] == "istio-proxy"})
print(f"{bad} (istio-proxy CPU requests seen: {' '.join(seen)})")
PY
)
  local line="($letter) $what: $(count) pods in $((t1 - t0))s, webhook requests $requests,"
  line+=" meshop failures $failures, apiserver rejections $rejections, FailedCreate $failed_creates,"
  line+=" pods without the expected sidecar $uninjected"
  echo "$line"
  summary+=("$line")
  [ -n "$events" ] && head -n 5 <<<"$events" >&2
  if [ "$letter" = d ]; then
    # A SIGKILL loses the admissions in flight on the killed replica's connections (at most
    # one per connection): those calls fail and kube-controller-manager creates the pods
    # again; every other admission must succeed, and every pod must be created and injected.
    echo "(d) connections to the killed replica: $in_flight_bound"
    [ "$rejections" -le "$in_flight_bound" ] ||
      fail "(d) $rejections failed admissions, more than the $in_flight_bound connections to the killed replica"
    [ "$failed_creates" -le "$in_flight_bound" ] ||
      fail "(d) $failed_creates FailedCreate, more than the $in_flight_bound connections to the killed replica"
    total_failed=$((total_failed + failures + ${uninjected%% *}))
  else
    total_failed=$((total_failed + failures + rejections + failed_creates + ${uninjected%% *}))
  fi
  kubectl delete namespace -l "e2e-faults=$id" --wait=false >/dev/null
}

start_time=$(date +%s)
phase a "serving certificate renewed"
phase b "CA rotated"
phase c "injector ConfigMap changed ten times"
phase d "one replica SIGKILLed and restarted"
phase e "one replica SIGTERMed and restarted"
echo "--- $want pods per fault, $(($(date +%s) - start_time))s for the five; (e) $drain_exit"
printf '%s\n' "${summary[@]}"
[ "$total_failed" = 0 ] || fail "$total_failed failed or unexpectedly uninjected admissions"
echo PASS
