#!/usr/bin/env bash
# The demo: installs what is missing, builds meshop and the local control plane, brings
# the control plane up (left running; stop it with `hack/cluster.sh down`) and shows
# meshop beside it: the CRD and the seed's IstioOperator, the template engine, manifest
# generation, kube-inject, the restart planner, and `meshop run`: the operator installs the
# seed's IstioOperator, injects a Deployment through its webhook, installs a canary revision,
# restarts the Deployment onto it after a relabel, and uninstalls everything.
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

say "meshop run: the operator installs the seed's IstioOperator and serves injection"
# Local mode: the webhook configurations call https://127.0.0.1:15017. Stopped at the end of
# the demo after it has uninstalled what it installed (a configuration left pointing at a
# stopped webhook would reject pod creation in labelled namespaces).
"$meshop" run --local --webhook-addr 127.0.0.1:15017 --health-addr 127.0.0.1:18081 \
  --native-sidecars false > "$tmp/run.log" 2>&1 &
run_pid=$!
stop_operator() {
  kubectl delete namespace demo --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl -n istio-system delete iop --all --wait=false >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do
    [ -z "$(kubectl -n istio-system get iop -o name 2>/dev/null)" ] && break
    sleep 0.5
  done
  kill "$run_pid" 2>/dev/null || true
  wait "$run_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap stop_operator EXIT
wait_until() {  # SECONDS WHAT CMD...
  local secs=$1 what=$2; shift 2
  for _ in $(seq 1 $((secs * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting for $what; meshop's log:" >&2; tail -n 20 "$tmp/run.log" >&2; exit 1
}
healthy() { [ "$(kubectl -n istio-system get iop "$1" -o jsonpath='{.status.status}')" = HEALTHY ]; }
wait_until 60 "meshop run" curl -sf http://127.0.0.1:18081/readyz
wait_until 120 "the seed's IstioOperator" healthy cni-annotations
kubectl -n istio-system get iop
kubectl -n istio-system get deployments,configmaps -l app.kubernetes.io/managed-by=meshop
kubectl -n kube-system get daemonsets -l app.kubernetes.io/managed-by=meshop
kubectl get mutatingwebhookconfigurations -l app.kubernetes.io/managed-by=meshop

say "Injection by meshop's webhook: a Deployment in a namespace labelled istio-injection=enabled"
kubectl create namespace demo
kubectl label namespace demo istio-injection=enabled
injecting() {
  kubectl -n demo run probe --image=registry.invalid/probe:1 --restart=Never --dry-run=server \
    -o jsonpath='{.spec.containers[*].name}' | grep -qw istio-proxy
}
wait_until 60 "the webhook" injecting
kubectl -n demo create deployment web --image=nginx:1.27
kubectl -n demo rollout status deployment/web --timeout=120s
kubectl -n demo get pods -o jsonpath='{range .items[*]}{.metadata.name}{": init "}{.spec.initContainers[*].name}{", containers "}{.spec.containers[*].name}{", revision "}{.metadata.annotations.istio\.io/rev}{", networks "}{.metadata.annotations.k8s\.v1\.cni\.cncf\.io/networks}{"\n"}{end}'

say "Canary upgrade: revision canary, restarts mode Auto; relabel the namespace and watch"
kubectl apply -f - <<'YAML'
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: canary, namespace: istio-system}
spec:
  profile: minimal
  revision: canary
  restarts: {mode: Auto, maxConcurrent: 1}
YAML
wait_until 120 "the canary IstioOperator" healthy canary
kubectl -n istio-system get iop
kubectl label namespace demo istio-injection- istio.io/rev=canary
"$meshop" restart plan -n demo
on_canary() {
  local revs
  revs=$(kubectl -n demo get pods -l app=web -o jsonpath='{.items[*].metadata.annotations.istio\.io/rev}')
  [ "$revs" = canary ]
}
wait_until 120 "the restart onto canary" on_canary
echo "restarted by the operator:"
kubectl -n demo get deployment web -o jsonpath='{"  restartedAt "}{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}{", cause "}{.spec.template.metadata.annotations.meshop\.io/restart-cause}{"\n"}'
kubectl -n demo get pods -o jsonpath='{range .items[*]}{"  "}{.metadata.name}{": revision "}{.metadata.annotations.istio\.io/rev}{"\n"}{end}'
kubectl -n demo get events --field-selector reason=Restarted -o custom-columns=OBJECT:.involvedObject.name,REASON:.reason,MESSAGE:.message

say "Uninstall: deleting the IstioOperators removes what meshop installed"
stop_operator
trap - EXIT
kubectl get mutatingwebhookconfigurations
kubectl -n istio-system get deployments

say "The cluster is still running"
echo "  export KUBECONFIG=$kubeconfig"
echo "  hack/cluster.sh status | down"
