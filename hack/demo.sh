#!/usr/bin/env bash
# The demo: installs what is missing, builds meshop and the local control plane, brings
# the control plane up (left running; stop it with `hack/cluster.sh down`) and shows
# meshop beside it: the CRD and the seed's IstioOperator, the template engine, manifest
# generation, kube-inject and the restart planner. Later milestones extend this into the full
# install / canary / restart walk-through under `meshop run`.
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

say "meshop manifest generate: what the seed's IstioOperator installs (objects by kind)"
"$meshop" manifest generate -f test/e2e/testdata/cni-annotations.yaml | grep '^kind:' | sort | uniq -c

say "meshop kube-inject: a Deployment gets its sidecar (meshop's built-in templates)"
cat > "$tmp/app.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, ports: [{containerPort: 8080}]}
YAML
"$meshop" kube-inject -f "$tmp/app.yaml" > "$tmp/app-injected.yaml"
kubectl create --dry-run=client --validate=false -f "$tmp/app-injected.yaml" \
  -o jsonpath='{"init containers: "}{.spec.template.spec.initContainers[*].name}{"\ncontainers: "}{.spec.template.spec.containers[*].name}{"\n"}'

say "meshop restart plan: workloads whose sidecar is stale (none on a fresh cluster)"
"$meshop" restart plan
rm -rf "$tmp"

say "The cluster is still running"
echo "  export KUBECONFIG=$kubeconfig"
echo "  hack/cluster.sh status | down"
