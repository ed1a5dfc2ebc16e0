#!/usr/bin/env bash
# crd/istiooperator.yaml against the real apiserver: the CRD is accepted and becomes
# Established; every IstioOperator document in upstream Istio's module (profiles, operator
# test inputs, samples) is accepted by a server-side dry run; wrong types are rejected with
# the field path; meshop's spec.restarts defaults apply; printer columns are served.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
src=${MESHOP_SOURCE_DIR:?}

kubectl apply -f "$src/crd/istiooperator.yaml"
crd_established
# Discovery lags Established by a moment; wait until kubectl can resolve the kind.
wait_for 30 "iop in discovery" kubectl get iop -A

ns=e2e-iop-$RANDOM
kubectl create namespace "$ns" >/dev/null
trap 'on_exit "$ns"' EXIT

# 1. Upstream's own IstioOperator files, read from the Go module cache (never committed).
istio=$(bash "$src/hack/istio-module.sh")
mapfile -t files < <(cd "$istio" && grep -rl --include='*.yaml' '^kind: IstioOperator' . | sort)
[ "${#files[@]}" -ge 50 ] || fail "expected at least 50 upstream IstioOperator files, found ${#files[@]}"
accepted=0; rejected=()
for f in "${files[@]}"; do
  # Upstream files often have no metadata.name; give each one (and our namespace) first.
  if kubectl patch --local -f "$istio/$f" --type merge -p "{\"metadata\":{\"name\":\"upstream\",\"namespace\":\"$ns\"}}" -o json \
      | kubectl create --dry-run=server -n "$ns" -f - >/dev/null 2>"$ns.err"; then
    accepted=$((accepted + 1))
  else
    rejected+=("$f: $(head -c 300 "$ns.err")")
  fi
done
rm -f "$ns.err"
echo "upstream IstioOperator files: ${#files[@]}, accepted $accepted"
if [ ${#rejected[@]} -gt 0 ]; then printf '  rejected %s\n' "${rejected[@]}"; fail "upstream files rejected"; fi

# 2. The seed document applies for real, and meshop's restart policy defaults are filled in.
kubectl -n "$ns" apply -f "$src/test/e2e/testdata/cni-annotations.yaml"
mode=$(kubectl -n "$ns" get iop cni-annotations -o jsonpath='{.spec.restarts.mode}')
[ -z "$mode" ] || fail "restarts defaults must not appear without spec.restarts, got mode=$mode"
kubectl -n "$ns" patch iop cni-annotations --type merge -p '{"spec":{"restarts":{}}}'
got=$(kubectl -n "$ns" get iop cni-annotations -o jsonpath='{.spec.restarts.mode}/{.spec.restarts.maxConcurrent}/{.spec.restarts.failurePolicy}/{.spec.restarts.rolloutTimeout}')
[ "$got" = "DryRun/1/Pause/10m" ] || fail "restart defaults: got $got"
ann=$(kubectl -n "$ns" get iop cni-annotations -o jsonpath='{.spec.values.sidecarInjectorWebhook.injectedAnnotations.k8s\.v1\.cni\.cncf\.io/networks}')
[ "$ann" = istio-cni ] || fail "values must be preserved, got '$ann'"

# 3. Printer columns.
kubectl -n "$ns" patch iop cni-annotations --type merge -p '{"spec":{"revision":"canary"}}'
# No pipes into head/grep -q here: with pipefail, kubectl killed by SIGPIPE fails the script.
table=$(kubectl -n "$ns" get iop cni-annotations)
cols=${table%%$'\n'*}
for c in NAME REVISION STATUS AGE; do
  echo "$cols" | grep -qw "$c" || fail "printer column $c missing in: $cols"
done
rows=$(kubectl -n "$ns" get iop cni-annotations --no-headers)
[[ "$rows" == *canary* ]] || fail "REVISION column does not show canary"

# 4. Wrong types and values are rejected, naming the field.
reject() {
  local patch=$1 field=$2 out
  if out=$(kubectl -n "$ns" patch iop cni-annotations --type merge -p "$patch" 2>&1); then
    fail "accepted invalid patch $patch"
  fi
  echo "$out" | grep -qF "$field" || fail "error for $patch does not name $field: $out"
  echo "rejected as expected: $field"
}
reject '{"spec":{"components":{"pilot":{"enabled":"maybe"}}}}' 'spec.components.pilot.enabled'
reject '{"spec":{"components":{"pilot":{"k8s":{"replicaCount":"two"}}}}}' 'spec.components.pilot.k8s.replicaCount'
reject '{"spec":{"components":{"ingressGateways":[{"name":"gw","k8s":{"nodeSelector":{"a":1}}}]}}}' 'spec.components.ingressGateways[0].k8s.nodeSelector.a'
reject '{"spec":{"revision":"Canary_1"}}' 'spec.revision'
# 57 characters: istiod-<revision> would exceed a Service name's 63 (api/istio_operator.hpp).
reject "{\"spec\":{\"revision\":\"$(printf 'a%.0s' {1..57})\"}}" 'spec.revision'
reject '{"spec":{"restarts":{"mode":"Sometimes"}}}' 'spec.restarts.mode'
reject '{"spec":{"restarts":{"maxConcurrent":0}}}' 'spec.restarts.maxConcurrent'
reject '{"spec":{"restarts":{"maintenanceWindow":{"start":"25:00","end":"03:00"}}}}' 'spec.restarts.maintenanceWindow.start'
reject '{"spec":{"restarts":{"rolloutTimeout":"ten minutes"}}}' 'spec.restarts.rolloutTimeout'
reject '{"spec":{"restarts":{"minInterval":"ten minutes"}}}' 'spec.restarts.minInterval'
reject '{"spec":{"restarts":{"maxVersionSkew":"patch"}}}' 'spec.restarts.maxVersionSkew'
reject '{"spec":{"restarts":{"maxStaleness":"3 days"}}}' 'spec.restarts.maxStaleness'
reject '{"spec":{"restarts":{"restartAfterDeadline":"yes"}}}' 'spec.restarts.restartAfterDeadline'
echo "PASS crd_istiooperator"
