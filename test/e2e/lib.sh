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
