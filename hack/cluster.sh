#!/usr/bin/env bash
# A real local Kubernetes control plane for development and tests, from binaries built
# out of Go modules by hack/build-cluster.sh: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, and kwok as a fake kubelet (nodes and pods become Ready).
#
# Usage: hack/cluster.sh up|down|status|kubeconfig|env|compact|restart COMPONENT [--dir DIR]
#
#   up          build the binaries if needed, start everything, wait until a Node is Ready
#               and the default ServiceAccount exists. Idempotent when already up.
#   down        stop every process `up` started (by pid) and remove DIR.
#   status      print each component's state; exit 0 only when all run and the apiserver is ready.
#   kubeconfig  print the path of the admin kubeconfig.
#   env         print shell exports (KUBECONFIG, PATH with the cluster's kubectl first).
#   restart C   stop and start one component (etcd, kube-apiserver, kube-controller-manager,
#               kube-scheduler, kwok) with the same flags; for failure tests.
#   stop C / start C   the two halves of restart.
#   compact     compact etcd's history up to its current revision and defragment it (what the
#               apiserver does every 5 minutes, at once): a watch or a paged list that resumes
#               from an older resourceVersion is answered 410 Gone. Prints the revision. etcd's
#               own HTTP gateway (/v3/kv/compaction) is used, so no etcdctl is needed.
#
# Everything (certificates, etcd data, logs, pids, kubeconfig) lives under one directory:
# --dir DIR, else $MESHOP_CLUSTER_DIR, else .cluster/ in the repository. Ports are picked
# free on 127.0.0.1, so clusters in different directories run side by side.
# Environment: MESHOP_CLUSTER_NODES (default 1) kwok Nodes to create. For clusters of 100k pods
# (hack/bench-run-scale.sh): MESHOP_CLUSTER_SYNCS (default 5, kube-controller-manager's) workers
# of the Deployment and ReplicaSet controllers; MESHOP_CLUSTER_KWOK_PARALLELISM (default 4,
# kwok's) pods kwok moves to Running at once; MESHOP_CLUSTER_POD_CIDR (default 10.244.0.0/16:
# 65,536 pod IPs; kwok cannot make more pods Ready); MESHOP_CLUSTER_REQUEST_TIMEOUT (default
# 1m0s, kube-apiserver's: kwok's and kube-controller-manager's unpaged lists of 100k pods take
# longer on a busy machine and are cut, so they relist forever); MESHOP_CLUSTER_CONTROLLERS (default: the list
# below) kube-controller-manager's controllers (its garbage collector alone holds GiBs at 100k
# pods; keep serviceaccount-controller: `up` waits for default/default, and pods need their
# namespace's ServiceAccount); GOGC is passed to every component as to any Go program.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib/versions.sh"

cmd=${1:-}
[ $# -gt 0 ] && shift
component=""
dir=${MESHOP_CLUSTER_DIR:-$repo/.cluster}
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    -*) echo "cluster.sh: unknown flag $1" >&2; exit 2 ;;
    *) component=$1; shift ;;
  esac
done
mkdir -p "$(dirname "$dir")"
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")
bin=$(meshop_cluster_bin)
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

log() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pid_of() { cat "$dir/pids/$1.pid" 2>/dev/null || true; }

# True when the pid file names a live process that is still our binary (pids get reused).
running() {
  local pid
  pid=$(pid_of "$1")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$1"
}

start() {
  local name=$1
  [ -f "$dir/cmd/$name" ] || die "no recorded command for $name (is the cluster up?)"
  # setsid + closed stdin + redirected output: the process outlives this script and never
  # holds the caller's pipes open (ctest waits for those).
  local -a argv
  mapfile -t argv < "$dir/cmd/$name"
  setsid "${argv[@]}" </dev/null >>"$dir/logs/$name.log" 2>&1 &
  echo $! > "$dir/pids/$name.pid"
}

stop() {
  local name=$1 pid
  pid=$(pid_of "$name")
  if running "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do running "$name" || break; sleep 0.1; done
    if running "$name"; then
      log "$name (pid $pid) did not stop on SIGTERM; killing"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do running "$name" || break; sleep 0.1; done
    fi
  fi
  rm -f "$dir/pids/$name.pid"
}

# wait_until SECONDS WHAT CMD...
wait_until() {
  local secs=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "timed out after ${secs}s waiting for $what"
      return 1
    fi
    sleep 0.2
  done
}

api_ready() {
  curl -sf --max-time 2 --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" \
    --key "$dir/pki/admin.key" "https://127.0.0.1:$(cat "$dir/ports/apiserver")/readyz" >/dev/null
}

kc() { "$bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }

gen_pki() {
  local p=$dir/pki
  mkdir -p "$p"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$p/ca.key" -out "$p/ca.crt" -days 365 \
    -subj "/CN=meshop-local-ca" 2>/dev/null
  # leaf NAME SUBJECT EXT: a certificate signed by the CA.
  leaf() {
    openssl req "${ec[@]}" -keyout "$p/$1.key" -out "$p/$1.csr" -subj "$2" 2>/dev/null
    printf '%s\n' "$3" > "$p/$1.ext"
    openssl x509 -req -in "$p/$1.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
      -days 365 -out "$p/$1.crt" -extfile "$p/$1.ext" 2>/dev/null
    rm -f "$p/$1.csr" "$p/$1.ext"
  }
  leaf apiserver "/CN=kube-apiserver" "$(printf '%s\n' \
    "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")"
  leaf admin "/O=system:masters/CN=meshop-admin" "$(printf '%s\n' \
    "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth")"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$p/sa.key" 2>/dev/null
  openssl pkey -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  chmod 600 "$p"/*.key
}

write_kubeconfig() {
  local b64
  b64() { base64 -w0 < "$1"; }
  cat > "$dir/admin.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: meshop-local
  cluster:
    server: https://127.0.0.1:$(cat "$dir/ports/apiserver")
    certificate-authority-data: $(b64 "$dir/pki/ca.crt")
users:
- name: meshop-admin
  user:
    client-certificate-data: $(b64 "$dir/pki/admin.crt")
    client-key-data: $(b64 "$dir/pki/admin.key")
contexts:
- name: meshop-local
  context: {cluster: meshop-local, user: meshop-admin}
current-context: meshop-local
EOF
  chmod 600 "$dir/admin.kubeconfig"
}

# record NAME ARGS...: the exact command line of a component, one argument per line.
record() {
  local name=$1; shift
  printf '%s\n' "$@" > "$dir/cmd/$name"
}

cmd_up() {
  # A cluster whose etcd and apiserver run keeps its data: components stopped on purpose (e.g.
  # the scheduler by bench-run-scale.sh) are started again.
  if [ -f "$dir/admin.kubeconfig" ] && running etcd && running kube-apiserver; then
    local c
    for c in "${components[@]}"; do
      running "$c" || { log "starting $c again"; start "$c"; }
    done
    wait_until 60 "kube-apiserver /readyz" api_ready
  fi
  if [ -f "$dir/admin.kubeconfig" ] && cmd_status >/dev/null 2>&1; then
    log "already up in $dir"
    echo "$dir/admin.kubeconfig"
    return 0
  fi
  [ -d "$dir" ] && { log "cleaning up a previous cluster in $dir"; cmd_down; }
  bin=$(bash "$here/build-cluster.sh")
  local t0
  t0=$(date +%s%N)
  mkdir -p "$dir"/{pids,logs,cmd,ports,data}
  trap 'rc=$?; if [ $rc != 0 ]; then log "up failed; logs follow and everything started is stopped";
        for f in "$dir"/logs/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done; cmd_down; fi' EXIT

  for n in etcd-client etcd-peer apiserver kcm scheduler kwok; do free_port > "$dir/ports/$n"; done
  local ec ep ap
  ec=$(cat "$dir/ports/etcd-client"); ep=$(cat "$dir/ports/etcd-peer"); ap=$(cat "$dir/ports/apiserver")
  gen_pki

  record etcd "$bin/etcd" --name=meshop --data-dir="$dir/data/etcd" \
    --listen-client-urls="http://127.0.0.1:$ec" --advertise-client-urls="http://127.0.0.1:$ec" \
    --listen-peer-urls="http://127.0.0.1:$ep" --initial-advertise-peer-urls="http://127.0.0.1:$ep" \
    --initial-cluster="meshop=http://127.0.0.1:$ep" --unsafe-no-fsync=true \
    --quota-backend-bytes=8589934592 --log-level=warn
  start etcd
  wait_until 30 "etcd health" curl -sf --max-time 1 "http://127.0.0.1:$ec/health"

  record kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ec" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$ap" \
    --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$dir/pki/sa.pub" \
    --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=RBAC --allow-privileged=true \
    --endpoint-reconciler-type=none \
    --cert-dir="$dir/pki" --profiling=false \
    --max-requests-inflight=1000 --max-mutating-requests-inflight=500 \
    --request-timeout="${MESHOP_CLUSTER_REQUEST_TIMEOUT:-1m0s}"
  start kube-apiserver
  wait_until 60 "kube-apiserver /readyz" api_ready
  write_kubeconfig

  record kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig="$dir/admin.kubeconfig" \
    --authentication-kubeconfig="$dir/admin.kubeconfig" \
    --authorization-kubeconfig="$dir/admin.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(cat "$dir/ports/kcm")" \
    --controllers="${MESHOP_CLUSTER_CONTROLLERS:-deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,replicationcontroller-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,node-lifecycle-controller,pod-garbage-collector-controller,disruption-controller,endpointslice-controller,ttl-after-finished-controller}" \
    --service-account-private-key-file="$dir/pki/sa.key" --root-ca-file="$dir/pki/ca.crt" \
    --kube-api-qps=200 --kube-api-burst=400 --profiling=false \
    --concurrent-deployment-syncs="${MESHOP_CLUSTER_SYNCS:-5}" \
    --concurrent-replicaset-syncs="${MESHOP_CLUSTER_SYNCS:-5}"
  start kube-controller-manager

  record kube-scheduler "$bin/kube-scheduler" \
    --kubeconfig="$dir/admin.kubeconfig" \
    --authentication-kubeconfig="$dir/admin.kubeconfig" \
    --authorization-kubeconfig="$dir/admin.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(cat "$dir/ports/scheduler")" \
    --profiling=false
  start kube-scheduler

  # kwok's options document replaces its defaults: every parallelism is given.
  cat > "$dir/kwok-options.yaml" <<EOF
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: ${MESHOP_CLUSTER_KWOK_PARALLELISM:-4}
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 4
EOF
  record kwok "$bin/kwok" --kubeconfig="$dir/admin.kubeconfig" --config="$bin/kwok-stages.yaml" \
    --config="$dir/kwok-options.yaml" \
    --manage-all-nodes=true --node-lease-duration-seconds=40 \
    --cidr="${MESHOP_CLUSTER_POD_CIDR:-10.244.0.0/16}" --node-ip=10.0.0.1
  start kwok

  local nodes=${MESHOP_CLUSTER_NODES:-1} i
  for i in $(seq 0 $((nodes - 1))); do
    cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
---
EOF
  done | kc apply -f - >/dev/null
  wait_until 60 "Node kwok-node-0 Ready" kc wait --for=condition=Ready node/kwok-node-0 --timeout=2s
  wait_until 60 "ServiceAccount default/default" kc -n default get serviceaccount default
  for c in "${components[@]}"; do running "$c" || die "$c exited during start-up (see $dir/logs/$c.log)"; done

  cat > "$dir/env" <<EOF
export KUBECONFIG=$dir/admin.kubeconfig
export PATH=$bin:\$PATH
EOF
  trap - EXIT
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  log "up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s: Kubernetes $K8S_VERSION at https://127.0.0.1:$ap, $nodes kwok node(s) Ready"
  log "kubeconfig: $dir/admin.kubeconfig   (eval \"\$(hack/cluster.sh env)\" to use it)"
  echo "$dir/admin.kubeconfig"
}

cmd_down() {
  [ -d "$dir" ] || { log "nothing to stop in $dir"; return 0; }
  local i
  # Reverse start order: clients first, etcd last.
  for (( i=${#components[@]}-1; i>=0; i-- )); do stop "${components[$i]}"; done
  # Anything still running from this directory's binaries is a leak; say so loudly.
  local left=""
  for c in "${components[@]}"; do running "$c" && left="$left $c"; done
  [ -z "$left" ] || die "still running:$left"
  rm -rf "$dir"
  log "down: stopped and removed $dir"
}

cmd_status() {
  local ok=0 c
  for c in "${components[@]}"; do
    if running "$c"; then echo "$c: running (pid $(pid_of "$c"))"; else echo "$c: stopped"; ok=1; fi
  done
  if [ -f "$dir/ports/apiserver" ] && api_ready; then
    echo "kube-apiserver: ready at https://127.0.0.1:$(cat "$dir/ports/apiserver")"
  else
    echo "kube-apiserver: not ready"; ok=1
  fi
  return $ok
}

cmd_compact() {
  running etcd || die "etcd is not running in $dir"
  local url rev
  url=http://127.0.0.1:$(cat "$dir/ports/etcd-client")
  # Any range request answers with the store's current revision in its header.
  rev=$(curl -sf --max-time 5 -X POST "$url/v3/kv/range" -d '{"key":"AA=="}' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["header"]["revision"])') ||
    die "cannot read etcd's revision at $url"
  curl -sf --max-time 30 -X POST "$url/v3/kv/compaction" \
    -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null || die "compaction to $rev failed"
  curl -sf --max-time 60 -X POST "$url/v3/maintenance/defragment" -d '{}' >/dev/null ||
    die "defragmentation failed"
  log "etcd compacted to revision $rev and defragmented"
  echo "$rev"
}

case "$cmd" in
  up) cmd_up ;;
  compact) cmd_compact ;;
  down) cmd_down ;;
  status) cmd_status ;;
  kubeconfig)
    [ -f "$dir/admin.kubeconfig" ] || die "no cluster in $dir (run: hack/cluster.sh up)"
    echo "$dir/admin.kubeconfig" ;;
  env)
    [ -f "$dir/env" ] || die "no cluster in $dir (run: hack/cluster.sh up)"
    cat "$dir/env" ;;
  stop|start|restart)
    [ -n "$component" ] || die "$cmd needs a component: ${components[*]}"
    case " ${components[*]} " in *" $component "*) ;; *) die "unknown component $component" ;; esac
    [ "$cmd" = start ] || stop "$component"
    [ "$cmd" = stop ] || start "$component"
    ;;
  *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
