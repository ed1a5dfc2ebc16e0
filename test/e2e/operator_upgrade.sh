#!/usr/bin/env bash
# A canary upgrade to a new Istio version under `meshop run` (issue 12), as config/'s
# ServiceAccount, on the bundled chart sets:
#   1. IstioOperator `default` with `version: "1.30"` becomes HEALTHY: istiod runs 1.30's
#      image, Istio's CRDs are Established, a VirtualService and a DestinationRule are accepted
#      by the apiserver, and pods of an injected namespace get 1.30's istio-proxy.
#   2. IstioOperator `canary` with `version: "1.31"` and restarts Auto becomes HEALTHY beside it
#      (istiod-canary on 1.31's image).
#   3. The namespace moved to istio.io/rev=canary has its pods restarted by meshop on its own;
#      every new pod's istio-proxy image is 1.31's.
#   4. Deleting the 1.30 IstioOperator removes its revision's objects (istiod, its injector
#      ConfigMap and webhook configuration) and keeps the CRDs and the Istio objects stored in
#      them; the canary stays HEALTHY and takes over the shared objects.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-upg-$id
ns=e2e-upg-app-$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
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
image_of() {  # DEPLOYMENT CONTAINER
  kubectl -n "$cp" get deployment "$1" -o jsonpath="{.spec.template.spec.containers[?(@.name=='$2')].image}"
}
# The istio-proxy images of the pods of Deployment app in $ns, sorted unique, space separated.
proxy_images() {
  kubectl -n "$ns" get pods -l app=app -o json | python3 -c 'import json, sys
imgs = {c["image"] for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")
        for c in p["spec"].get("containers", []) + p["spec"].get("initContainers", [])
        if c["name"] == "istio-proxy"}
print(" ".join(sorted(imgs)) or "none")'
}
proxies_are() { [ "$(proxy_images)" = "$1" ]; }

# 1. Istio 1.30 as the default revision.
t0=$SECONDS
iop default 1.30 "" "{mode: DryRun}"
wait_for 180 "IstioOperator default (1.30) HEALTHY" is_healthy default
echo "default (1.30) HEALTHY after $((SECONDS - t0)) s"
[[ "$(image_of istiod discovery)" == *":$tag30" ]] || fail "istiod image '$(image_of istiod discovery)', want tag $tag30"
crds=$(kubectl get crd -o name | grep -c '\.istio\.io$' || true)
[ "$crds" -ge 10 ] || fail "only $crds Istio CRDs installed"
kubectl wait --for=condition=Established crd -l "install.operator.istio.io/owning-resource=default" --timeout=30s >/dev/null ||
  fail "Istio CRDs not Established"
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" istio-injection=enabled >/dev/null
kubectl -n "$ns" apply -f - >/dev/null <<YAML || fail "a VirtualService and a DestinationRule were refused"
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: app}
spec:
  hosts: [app]
  http: [{route: [{destination: {host: app, subset: v1}}]}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: app}
spec:
  host: app
  subsets: [{name: v1, labels: {version: v1}}]
YAML
echo "$crds Istio CRDs Established; a VirtualService and a DestinationRule stored"

probe() {
  local out
  out=$(kubectl -n "$ns" run probe --image=registry.invalid/probe:1 --restart=Never \
    --dry-run=server -o jsonpath='{.spec.containers[*].name} {.spec.initContainers[*].name}')
  [[ "$out" == *istio-proxy* ]]
}
wait_for 60 "meshop injects in $ns" probe
kubectl -n "$ns" create deployment app --image=registry.invalid/app:1 --replicas=2 >/dev/null
kubectl -n "$ns" rollout status deployment/app --timeout=120s >/dev/null
wait_for 30 "pods on 1.30's proxy" proxies_are "registry.istio.io/testing/proxyv2:$tag30"
echo "pods of $ns run $(proxy_images)"

# 2. Istio 1.31 as revision canary, restarts Auto.
t0=$SECONDS
iop canary 1.31 "revision: canary" "{mode: Auto, maxConcurrent: 1, rolloutTimeout: 2m, minInterval: 0s}"
wait_for 180 "IstioOperator canary (1.31) HEALTHY" is_healthy canary
echo "canary (1.31) HEALTHY after $((SECONDS - t0)) s"
[[ "$(image_of istiod-canary discovery)" == *":$tag31" ]] ||
  fail "istiod-canary image '$(image_of istiod-canary discovery)', want tag $tag31"
is_healthy default || fail "default is not HEALTHY beside canary"

# 3. The namespace moves; meshop restarts its pods onto 1.31.
t0=$SECONDS
kubectl label namespace "$ns" istio-injection- istio.io/rev=canary >/dev/null
wait_for 180 "pods of $ns restarted onto 1.31's proxy" proxies_are "registry.istio.io/testing/proxyv2:$tag31"
cause=$(kubectl -n "$ns" get deployment app -o jsonpath='{.spec.template.metadata.annotations.meshop\.io/restart-cause}')
[ "$cause" = RevisionChanged/canary ] || fail "restart cause '$cause', want RevisionChanged/canary"
for p in $(pod_names "$ns" app=app); do
  [ "$(pod_revision "$ns" "$p")" = canary ] || fail "$ns/$p is not on canary"
done
echo "$ns restarted by meshop onto $(proxy_images) after $((SECONDS - t0)) s"

# 4. The 1.30 install goes; CRDs and the objects in them stay.
kubectl -n "$cp" delete istiooperator default --wait=false >/dev/null
gone() { ! kubectl get "$@" >/dev/null 2>&1; }
wait_for 60 "IstioOperator default uninstalled" gone -n "$cp" istiooperator default
wait_for 30 "istiod (1.30) removed" gone -n "$cp" deployment istiod
gone -n "$cp" configmap istio-sidecar-injector || fail "1.30's injector ConfigMap is left"
gone mutatingwebhookconfiguration "istio-sidecar-injector-$cp" || fail "1.30's webhook configuration is left"
left=$(kubectl get crd -o name | grep -c '\.istio\.io$' || true)
[ "$left" = "$crds" ] || fail "$left Istio CRDs left of $crds"
kubectl -n "$ns" get virtualservice app >/dev/null || fail "the VirtualService is gone"
kubectl -n "$ns" get destinationrule app >/dev/null || fail "the DestinationRule is gone"
takes_over() {
  [ -z "$(kubectl get crd -l install.operator.istio.io/owning-resource=default -o name)" ] &&
    [ -n "$(kubectl get crd -l install.operator.istio.io/owning-resource=canary -o name)" ]
}
wait_for 60 "canary owns the CRDs" takes_over
is_healthy canary || fail "canary is not HEALTHY after default left"
echo "default (1.30) uninstalled: $left CRDs, the VirtualService and DestinationRule kept; canary owns the shared objects"
echo PASS
