# Helpers for e2e scripts. Expects KUBECONFIG and MESHOP_CLUSTER_DIR from ctest.
fail() { echo "FAIL: $*" >&2; exit 1; }

# wait_for SECONDS WHAT CMD...: polls CMD every half second until it succeeds.
wait_for() {
  local secs=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.5
  done
}

pod_names() { kubectl -n "$1" get pods -l "$2" -o jsonpath='{.items[*].metadata.name}'; }

# on_exit NS: on failure, print what helps to debug; always delete the namespace.
on_exit() {
  local rc=$? ns=$1
  if [ "$rc" != 0 ]; then
    echo "--- debug: objects in $ns" >&2
    kubectl -n "$ns" get all,events -o wide >&2 || true
    for f in "$MESHOP_CLUSTER_DIR"/logs/*.log; do
      echo "--- debug: tail of $f" >&2; tail -n 15 "$f" >&2 || true
    done
  fi
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}

# The cluster's kubectl (built from the same Kubernetes version) comes first on PATH.
if [ -n "${MESHOP_CLUSTER_DIR:-}" ] && [ -f "$MESHOP_CLUSTER_DIR/env" ]; then
  . "$MESHOP_CLUSTER_DIR/env"
fi

# The revision in a pod's sidecar.istio.io/status annotation, or "none" when not injected.
pod_revision() {  # NS POD
  kubectl -n "$1" get pod "$2" -o jsonpath='{.metadata.annotations.sidecar\.istio\.io/status}' |
    python3 -c 'import json,sys; t=sys.stdin.read(); print(json.loads(t)["revision"] if t else "none")'
}

# The Deployments of NS were restarted one at a time for CAUSE (meshop.io/restart-cause): each
# restartedAt is at or after the time the previously restarted Deployment's last pod became
# Ready. Prints one line per Deployment.
assert_paced_restarts() {  # NS CAUSE
  python3 - "$1" "$2" <<'PY' || fail "restarts in $1 overlapped"
import json, subprocess, sys
from datetime import datetime
ns, cause = sys.argv[1], sys.argv[2]
def get(*args):
    return json.loads(subprocess.check_output(["kubectl", "-n", ns, "get", *args, "-o", "json"]))
ts = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
deps = get("deployments")["items"]
pods = get("pods")["items"]
rows = []
for d in deps:
    ann = d["spec"]["template"]["metadata"].get("annotations", {})
    started = ts(ann["kubectl.kubernetes.io/restartedAt"])
    assert ann.get("meshop.io/restart-cause") == cause, ann
    app = d["metadata"]["name"]
    ready = [ts(c["lastTransitionTime"]) for p in pods if p["metadata"]["labels"].get("app") == app
             for c in p["status"].get("conditions", []) if c["type"] == "Ready" and c["status"] == "True"]
    rows.append((started, max(ready), app))
rows.sort()
for (s0, done0, a0), (s1, _, a1) in zip(rows, rows[1:]):
    print(f"{a0}: restarted {s0}, ready {done0}; next {a1} restarted {s1}")
    assert s1 >= done0, f"{a1} restarted at {s1} before {a0} completed at {done0}"
PY
}

# operator_teardown NS PID...: the end of a `meshop run` e2e test. Its IstioOperators are
# deleted (meshop gets 2 s to uninstall), the meshop processes PID... stopped, finalizers left
# over dropped, the cluster-scoped objects the installs made deleted, then namespace NS.
operator_teardown() {
  local ns=$1 p iop kind
  shift
  kubectl -n "$ns" delete istiooperators --all --wait=false >/dev/null 2>&1
  sleep 2
  for p in "$@"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for iop in $(kubectl -n "$ns" get istiooperators -o name 2>/dev/null); do
    kubectl -n "$ns" patch "$iop" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  for kind in mutatingwebhookconfigurations clusterroles clusterrolebindings; do
    kubectl delete "$kind" -l "install.operator.istio.io/owning-resource-namespace=$ns" \
      --ignore-not-found >/dev/null 2>&1
  done
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1
  [ -n "${MESHOP_SA_DIR:-}" ] && rm -rf "$MESHOP_SA_DIR"
  return 0
}

# operator_cleanup: the EXIT trap of a single-`meshop run` test (globals cp, work, run_pid): on
# failure the run log's tail, then operator_teardown and the work directory removed.
operator_cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then echo "--- debug: meshop run log (tail)" >&2; tail -n 40 "$work/run.log" >&2; fi
  operator_teardown "$cp" ${run_pid:+"$run_pid"}
  rm -rf "$work"
  exit "$rc"
}

# operator_start BASE [restarts]: `meshop run --local` as the ServiceAccount (operator_identity)
# for namespace $cp, no native sidecars, no restarts (unless `restarts` is given), webhook on
# port BASE and health on BASE+1, logging to $work/run.log; sets run_pid and waits until /readyz
# answers.
operator_start() {
  local no_restarts=(--restarts=false)
  [ "${2:-}" = restarts ] && no_restarts=()
  "${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run --local --namespace "$cp" --native-sidecars false \
    "${no_restarts[@]}" --webhook-addr "127.0.0.1:$1" --health-addr "127.0.0.1:$(($1 + 1))" \
    >"$work/run.log" 2>&1 &
  run_pid=$!
  wait_for 60 "meshop run ready" curl -sf "http://127.0.0.1:$(($1 + 1))/readyz"
}

# bundled_tag VERSION: the image tag a bundled Istio version installs (manifests/versions.yaml,
# via `meshop version -o json`).
bundled_tag() {
  "$MESHOP_BIN" version -o json | python3 -c 'import json, sys
print(next(v["tag"] for v in json.load(sys.stdin)["istioVersions"] if v["version"] == sys.argv[1]))' "$1"
}

# crd_established: the IstioOperator CRD (just applied) is Established. `kubectl wait` fails at
# once, not waits, while a new CRD has no status.conditions yet (".status.conditions accessor
# error: <nil> is of the type <nil>"), as on a control plane just brought up: asked again.
crd_established() {
  wait_for 60 "CRD istiooperators.install.istio.io Established" \
    kubectl wait --for=condition=Established crd/istiooperators.install.istio.io --timeout=10s
}

# operator_setup NS: the IstioOperator CRD, Established, the test's namespace NS, and
# meshop's own identity (operator_identity).
operator_setup() {
  kubectl apply -f "$MESHOP_SOURCE_DIR/crd/istiooperator.yaml" >/dev/null
  crd_established
  kubectl create namespace "$1" >/dev/null
  operator_identity
}

# operator_identity: config/rbac.yaml applied as shipped (ServiceAccount istio-system/meshop,
# its ClusterRole and binding), a token minted for that ServiceAccount, and MESHOP_AS_SA, the
# command prefix that runs meshop with in-cluster configuration as a pod gets it: no
# kubeconfig, KUBERNETES_SERVICE_HOST/PORT, and token + ca.crt + namespace in the directory
# MESHOP_SERVICE_ACCOUNT_DIR names (operator/kube/config.hpp). Run `meshop run` as
#   "${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run ...
# and kubectl as the ServiceAccount with "${MESHOP_SA_KUBECTL[@]}". MESHOP_SA_DIR is removed
# by operator_teardown.
operator_identity() {
  kubectl create namespace istio-system >/dev/null 2>&1 || true
  kubectl apply -f "$MESHOP_SOURCE_DIR/config/rbac.yaml" >/dev/null
  MESHOP_SA_DIR=$(mktemp -d)
  kubectl -n istio-system create token meshop --duration=2h >"$MESHOP_SA_DIR/token"
  kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$MESHOP_SA_DIR/ca.crt"
  [ -s "$MESHOP_SA_DIR/ca.crt" ] || cp "$MESHOP_CLUSTER_DIR/pki/ca.crt" "$MESHOP_SA_DIR/ca.crt"
  echo istio-system >"$MESHOP_SA_DIR/namespace"
  local server hostport
  server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  hostport=${server#https://}
  MESHOP_AS_SA=(env -u KUBECONFIG "KUBERNETES_SERVICE_HOST=${hostport%:*}"
                "KUBERNETES_SERVICE_PORT=${hostport##*:}" "MESHOP_SERVICE_ACCOUNT_DIR=$MESHOP_SA_DIR")
  # No kubeconfig: the admin's client certificate would win over the token.
  MESHOP_SA_KUBECTL=(env -u KUBECONFIG kubectl --kubeconfig=/dev/null "--server=$server"
                     "--certificate-authority=$MESHOP_SA_DIR/ca.crt"
                     "--token=$(cat "$MESHOP_SA_DIR/token")")
}
