#!/usr/bin/env bash
# `meshop manifest generate` against the real apiserver: every object rendered for each
# profile, for a canary revision and for the seed cni-annotations.yaml is accepted by a
# server-side dry run (schema, defaulting and admission of the real Kubernetes version).
# Nothing is persisted; the test namespace is deleted at the end.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
src=${MESHOP_SOURCE_DIR:?}
meshop=${MESHOP_BIN:?}

ns=e2e-manifest-$RANDOM
kubectl create namespace "$ns" >/dev/null
trap 'on_exit "$ns"' EXIT

dry_run() {
  local what=$1; shift
  local out count
  out=$("$meshop" manifest generate "$@") || fail "$what: manifest generate failed"
  count=$(grep -c '^kind: ' <<<"$out" || true)
  if [ "$count" -eq 0 ]; then
    [ "$what" = "profile empty" ] || fail "$what: nothing rendered"
    echo "ok: $what (renders nothing)"
    return
  fi
  # Multus's NetworkAttachmentDefinition (the seed's OpenShift CNI set-up) is not served by this
  # cluster: those objects are left out of the dry run, and said so.
  if ! kubectl api-resources --api-group=k8s.cni.cncf.io -o name | grep -q .; then
    local nads
    nads=$(grep -c '^kind: NetworkAttachmentDefinition$' <<<"$out" || true)
    if [ "$nads" -gt 0 ]; then
      out=$(python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] != "NetworkAttachmentDefinition"]
print(yaml.safe_dump_all(docs), end="")' <<<"$out")
      count=$((count - nads))
      echo "note: $what: $nads NetworkAttachmentDefinition(s) left out (k8s.cni.cncf.io not served)"
    fi
  fi
  if ! err=$(kubectl apply --dry-run=server -f - <<<"$out" 2>&1 >/dev/null); then
    fail "$what: rejected by the apiserver: $err"
  fi
  echo "ok: $what ($count objects accepted)"
}

for p in $("$meshop" profile list | tail -n +2); do
  dry_run "profile $p" --set profile="$p" --set values.global.istioNamespace="$ns"
done
dry_run "revision canary" --set values.global.istioNamespace="$ns" --revision canary
dry_run "seed cni-annotations.yaml" -f "$src/test/e2e/testdata/cni-annotations.yaml" --set values.global.istioNamespace="$ns"
dry_run "k8s settings and overlays" --set values.global.istioNamespace="$ns" \
  --set components.pilot.k8s.replicaCount=2 \
  --set values.pilot.autoscaleEnabled=false \
  --set 'components.pilot.k8s.nodeSelector.disk=ssd' \
  --set values.sidecarInjectorWebhook.enableNamespacesByDefault=true
