#!/usr/bin/env bash
# config/ (how meshop deploys itself) is accepted by the real apiserver: kustomize build, then
# a server-side dry run of every object (schema, defaulting, RBAC rule validation). Nothing is
# persisted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
src=${MESHOP_SOURCE_DIR:?}
kubectl create namespace istio-system >/dev/null 2>&1 || true
out=$(kubectl kustomize "$src/config")
count=$(grep -c '^kind: ' <<<"$out" || true)
[ "$count" -eq 6 ] || fail "config/ renders $count objects, want 6"
if ! err=$(kubectl apply --dry-run=server -f - <<<"$out" 2>&1 >/dev/null); then
  fail "config/ rejected by the apiserver: $err"
fi
args=$(kubectl apply --dry-run=server -o jsonpath='{.spec.template.spec.containers[0].args}' \
  -f - <<<"$(kubectl kustomize "$src/config" | awk 'BEGIN{RS="---\n"} /kind: Deployment/ {print}')")
[[ "$args" == *--leader-elect* ]] || fail "Deployment does not run with leader election: $args"
echo "ok: config/ ($count objects accepted)"
