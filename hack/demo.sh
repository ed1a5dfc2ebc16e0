#!/usr/bin/env bash
# The demo: installs what is missing, builds meshop and the local control plane, brings
# the control plane up (left running; stop it with `hack/cluster.sh down`) and shows
# meshop beside it. Later milestones extend this into the full install / canary /
# restart walk-through.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing dependencies (Debian packages)"
bash hack/install-deps.sh
say "Building the control plane from Go modules (cached after the first run)"
bash hack/build-cluster.sh
say "Building meshop"
bash hack/build.sh release --target meshop >/dev/null
meshop=build/release/operator/meshop

say "Starting the local control plane"
kubeconfig=$(bash hack/cluster.sh up)
eval "$(bash hack/cluster.sh env)"
kubectl get nodes -o wide
kubectl get namespaces

say "meshop"
"$meshop" version
"$meshop" --help

say "The IstioOperator CRD, and the seed's CNI IstioOperator applied to the cluster"
kubectl apply -f crd/istiooperator.yaml
kubectl wait --for=condition=Established crd/istiooperators.install.istio.io --timeout=60s
kubectl create namespace istio-system --dry-run=client -o yaml | kubectl apply -f -
until kubectl get iop -n istio-system >/dev/null 2>&1; do sleep 0.5; done
kubectl -n istio-system apply -f test/e2e/testdata/cni-annotations.yaml
kubectl -n istio-system get iop

say "meshop's Go text/template engine (sprig and Istio functions), as the injector uses it"
tmp=$(mktemp -d)
cat > "$tmp/values.yaml" <<'YAML'
global: {hub: docker.io/istio, tag: "1.24.0", proxy: {image: proxyv2}}
sidecarInjectorWebhook: {injectedAnnotations: {"k8s.v1.cni.cncf.io/networks": istio-cni}}
YAML
cat > "$tmp/demo.tmpl" <<'TMPL'
image: {{ printf "%s/%s:%s" .global.hub .global.proxy.image .global.tag | quote }}
annotations:
{{- range $k, $v := .sidecarInjectorWebhook.injectedAnnotations }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
ports: {{ list 15001 15006 15020 15021 15090 | toJson }}
TMPL
"$meshop" template render -t "$tmp/demo.tmpl" -d "$tmp/values.yaml"
rm -rf "$tmp"

say "The cluster is still running"
echo "  export KUBECONFIG=$kubeconfig"
echo "  hack/cluster.sh status | down"
