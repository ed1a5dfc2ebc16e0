#!/usr/bin/env bash
# The seeds' platform under `meshop run` (issue 12), as config/'s ServiceAccount, on the
# bundled chart set:
#   1. the seeds' cni-annotations.yaml (CNI in kube-system for Multus, an annotation injected
#      into every pod), as revision `seed`, becomes HEALTHY: istio-cni-node runs in kube-system
#      and a pod of a namespace on that revision gets the sidecar and the seed's annotation;
#   2. once it is deleted (its DaemonSet goes with it), upstream's `openshift` profile, as
#      revision `os`, becomes HEALTHY too (the cluster gets Multus's NetworkAttachmentDefinition
#      API, as OpenShift has): istiod runs without pinned user or group IDs (OpenShift's
#      restricted SCC assigns them) and the profile's NetworkAttachmentDefinition is applied.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-seed-$id
ns=e2e-seed-app-$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
nad_crd=
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    echo "--- debug: meshop run log (tail)" >&2
    tail -n 40 "$work/run.log" >&2
    kubectl -n "$cp" get istiooperators -o yaml >&2
  fi
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1
  operator_teardown "$cp" ${run_pid:+"$run_pid"}
  [ -n "$nad_crd" ] && kubectl delete crd network-attachment-definitions.k8s.cni.cncf.io --wait=false >/dev/null 2>&1
  kubectl -n kube-system delete daemonset,serviceaccount,configmap,resourcequota \
    -l "install.operator.istio.io/owning-resource-namespace=$cp" --ignore-not-found >/dev/null 2>&1
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

operator_setup "$cp"
operator_start "$port"

is_healthy() { [ "$(kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
gone() { ! kubectl get "$@" >/dev/null 2>&1; }
cni_ready() {
  local want ready
  want=$(kubectl -n kube-system get daemonset istio-cni-node -o jsonpath='{.status.desiredNumberScheduled}')
  ready=$(kubectl -n kube-system get daemonset istio-cni-node -o jsonpath='{.status.numberReady}')
  [ -n "$want" ] && [ "$want" -gt 0 ] && [ "$ready" = "$want" ]
}
# No runAsUser/runAsGroup/fsGroup anywhere in a workload's pod template.
no_pinned_ids() {  # NS KIND/NAME
  kubectl -n "$1" get "$2" -o json | python3 -c 'import json, sys
spec = json.load(sys.stdin)["spec"]["template"]["spec"]
found = []
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("runAsUser", "runAsGroup", "fsGroup"): found.append(path + "." + k)
            walk(x, path + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v): walk(x, f"{path}[{i}]")
walk(spec, "spec.template.spec")
sys.exit("pinned: " + ", ".join(found) if found else 0)'
}

# 1. The seed's IstioOperator, as the seeds wrote it, in the control-plane namespace.
python3 - "$MESHOP_SOURCE_DIR/test/e2e/testdata/cni-annotations.yaml" "$cp" >"$work/seed.yaml" <<'PY'
import sys, yaml
iop = yaml.safe_load(open(sys.argv[1]))
iop["metadata"]["namespace"] = sys.argv[2]
iop["spec"]["revision"] = "seed"
iop["spec"]["values"].setdefault("global", {})["istioNamespace"] = sys.argv[2]
print(yaml.safe_dump(iop))
PY
kubectl apply -f "$work/seed.yaml" >/dev/null
t0=$SECONDS
wait_for 180 "the seed's IstioOperator HEALTHY" is_healthy cni-annotations
wait_for 60 "istio-cni-node Ready in kube-system" cni_ready
echo "cni-annotations.yaml HEALTHY after $((SECONDS - t0)) s; istio-cni-node ready in kube-system"
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" istio.io/rev=seed >/dev/null
annotated() {
  local out
  out=$(kubectl -n "$ns" run probe --image=registry.invalid/probe:1 --restart=Never --dry-run=server \
    -o jsonpath='{.spec.containers[*].name} {.metadata.annotations.k8s\.v1\.cni\.cncf\.io/networks}')
  [[ "$out" == *istio-proxy*" istio-cni" ]]
}
wait_for 60 "a pod of $ns injected with the seed's annotation" annotated
echo "a pod of $ns gets istio-proxy and k8s.v1.cni.cncf.io/networks: istio-cni"

kubectl -n "$cp" delete istiooperator cni-annotations --wait=false >/dev/null
wait_for 60 "the seed's IstioOperator uninstalled" gone -n "$cp" istiooperator cni-annotations
wait_for 30 "istio-cni-node removed" gone -n kube-system daemonset istio-cni-node

# 2. Upstream's openshift profile. OpenShift's Multus serves NetworkAttachmentDefinitions, which
#    the profile's CNI renders; this cluster gets the API (a schema-less CRD of Multus's group).
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: network-attachment-definitions.k8s.cni.cncf.io}
spec:
  group: k8s.cni.cncf.io
  scope: Namespaced
  names: {plural: network-attachment-definitions, singular: network-attachment-definition,
          kind: NetworkAttachmentDefinition, shortNames: [net-attach-def]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
nad_crd=1
wait_for 60 "CRD network-attachment-definitions.k8s.cni.cncf.io Established" \
  kubectl wait --for=condition=Established crd/network-attachment-definitions.k8s.cni.cncf.io --timeout=10s
kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: openshift, namespace: $cp}
spec:
  profile: openshift
  revision: os
  values:
    global: {istioNamespace: $cp}
YAML
t0=$SECONDS
wait_for 180 "the openshift profile HEALTHY" is_healthy openshift
wait_for 60 "istio-cni-node Ready in kube-system" cni_ready
no_pinned_ids "$cp" deployment/istiod-os || fail "istiod-os pins user or group IDs"
nads=$(kubectl get network-attachment-definitions -A -l install.operator.istio.io/owning-resource=openshift -o name | wc -l)
[ "$nads" -ge 1 ] || fail "the openshift profile's NetworkAttachmentDefinition was not applied"
echo "profile openshift HEALTHY after $((SECONDS - t0)) s; istiod-os pins no user or group IDs; $nads NetworkAttachmentDefinition applied"
echo PASS
