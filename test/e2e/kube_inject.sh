#!/usr/bin/env bash
# `meshop kube-inject` end to end: offline with the built-in defaults (kinds, pass-through,
# stdin, directories, warnings, bad YAML, -o only on success), then against the real control
# plane: the injector ConfigMaps are created in the cluster, `meshop kube-inject
# --injectConfigMapName ... | kubectl apply -f -` deploys, and the pods kube-controller-manager
# creates carry istio-proxy with the image the cluster's values name.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"
meshop() { "$MESHOP_BIN" "$@"; }
work=$(mktemp -d)
ns=e2e-kubeinject-$RANDOM
cleanup() { on_exit "$ns"; rm -rf "$work"; }
trap cleanup EXIT

cat > "$work/deploy.yaml" <<'EOF'
# the front door
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.invalid/web:1
        ports:
        - containerPort: 8080
EOF

# --- offline, built-in defaults ------------------------------------------------------------
meshop kube-inject -f "$work/deploy.yaml" > "$work/out.yaml" 2> "$work/err.txt"
grep -q 'name: istio-proxy' "$work/out.yaml" || fail "no istio-proxy in the injected Deployment"
grep -q 'name: istio-init' "$work/out.yaml" || fail "no istio-init in the injected Deployment"
# The Service is copied byte for byte (comment and flow style kept), and comes first.
head -n 7 "$work/out.yaml" | diff - <(head -n 7 "$work/deploy.yaml") ||
  fail "the Service was not passed through unchanged"
[ "$(grep -c '^---$' "$work/out.yaml")" = 2 ] || fail "expected two documents each followed by ---"

# stdin gives the same output
meshop kube-inject -f - < "$work/deploy.yaml" | cmp - "$work/out.yaml" || fail "stdin output differs"

# directories: recursive, *.yaml *.yml *.json only
mkdir -p "$work/dir/sub"
cp "$work/deploy.yaml" "$work/dir/a.yaml"
cp "$work/deploy.yaml" "$work/dir/sub/b.yml"
echo 'not: yaml: [' > "$work/dir/notes.txt"
n=$(meshop kube-inject -f "$work/dir" | grep -c '^kind: Deployment$')
[ "$n" = 2 ] || fail "directory input: expected 2 Deployments, got $n"

# hostNetwork: passed through with upstream's warning on stderr
sed 's/    spec:/    spec:\n      hostNetwork: true/' "$work/deploy.yaml" > "$work/host.yaml"
meshop kube-inject -f "$work/host.yaml" > "$work/host.out" 2> "$work/host.err"
grep -q 'Skipping injection because Deployment "web" has host networking enabled' "$work/host.err" ||
  fail "no hostNetwork warning: $(cat "$work/host.err")"
grep -q istio-proxy "$work/host.out" && fail "hostNetwork workload was injected"

# bad YAML: exit 1, document number and position, and -o is not written (an old file stays)
printf 'apiVersion: v1\nkind: Service\n---\nkind: [Pod\n' > "$work/bad.yaml"
echo previous > "$work/result.yaml"
if meshop kube-inject -f "$work/bad.yaml" -o "$work/result.yaml" 2> "$work/bad.err"; then
  fail "bad YAML was accepted"
fi
grep -q 'document 2' "$work/bad.err" && grep -q 'line' "$work/bad.err" ||
  fail "bad YAML message lacks document/line: $(cat "$work/bad.err")"
[ "$(cat "$work/result.yaml")" = previous ] || fail "-o was written although the input was bad"
ls "$work" | grep -q 'result.yaml.tmp' && fail "temporary output file left behind"
# -o on success
meshop kube-inject -f "$work/deploy.yaml" -o "$work/result.yaml"
cmp "$work/result.yaml" "$work/out.yaml" || fail "-o output differs from stdout output"

# --- against the cluster -------------------------------------------------------------------
kubectl create namespace "$ns"
# The injector config: meshop's sidecar template in a `config` key; values that name a
# registry only this test uses, so the pods prove the ConfigMaps were read.
{
  echo "policy: enabled"
  echo "templates:"
  echo "  sidecar: |"
  sed 's/^/    /' "$MESHOP_SOURCE_DIR/manifests/inject/sidecar.yaml"
} > "$work/config.yaml"
sed 's|^  hub: .*|  hub: registry.e2e.invalid/mesh|; s|^  tag: .*|  tag: e2e|' \
  "$MESHOP_SOURCE_DIR/manifests/inject/values.yaml" > "$work/values.yaml"
grep -q 'registry.e2e.invalid' "$work/values.yaml" || fail "could not set the hub in values"
kubectl -n "$ns" create configmap e2e-injector \
  --from-file=config="$work/config.yaml" --from-file=values="$work/values.yaml"
kubectl -n "$ns" create configmap e2e-mesh \
  --from-file=mesh="$MESHOP_SOURCE_DIR/manifests/inject/mesh.yaml"

meshop kube-inject --kubeconfig "$KUBECONFIG" -i "$ns" --injectConfigMapName e2e-injector \
  --meshConfigMapName e2e-mesh -f "$work/deploy.yaml" | kubectl -n "$ns" apply -f -
wait_for 120 "2 web pods" bash -c \
  "[ \$(kubectl -n $ns get pods -l app=web -o name | wc -l) -ge 2 ]"
for p in $(pod_names "$ns" app=web); do
  names=$(kubectl -n "$ns" get pod "$p" \
    -o jsonpath='{.spec.initContainers[*].name} {.spec.containers[*].name}')
  case " $names " in *" istio-proxy "*) ;; *) fail "pod $p has no istio-proxy: $names" ;; esac
  images=$(kubectl -n "$ns" get pod "$p" \
    -o jsonpath='{.spec.initContainers[*].image} {.spec.containers[*].image}')
  case "$images" in
    *registry.e2e.invalid/mesh/proxyv2:e2e*) ;;
    *) fail "pod $p does not use the cluster's values: $images" ;;
  esac
done

# --revision picks istio-sidecar-injector-<rev> and istio-<rev>
kubectl -n "$ns" create configmap istio-sidecar-injector-canary \
  --from-file=config="$work/config.yaml" --from-file=values="$work/values.yaml"
kubectl -n "$ns" create configmap istio-canary \
  --from-file=mesh="$MESHOP_SOURCE_DIR/manifests/inject/mesh.yaml"
meshop kube-inject --kubeconfig "$KUBECONFIG" -i "$ns" --revision canary \
  -f "$work/deploy.yaml" > "$work/canary.yaml"
grep -q 'istio.io/rev: canary' "$work/canary.yaml" || fail "revision not rendered"
grep -q 'registry.e2e.invalid/mesh/proxyv2:e2e' "$work/canary.yaml" ||
  fail "revision ConfigMaps not used"

# a missing ConfigMap is an error naming it, and nothing is printed
if meshop kube-inject --kubeconfig "$KUBECONFIG" -i "$ns" --injectConfigMapName nope \
  -f "$work/deploy.yaml" > "$work/none.out" 2> "$work/none.err"; then
  fail "a missing ConfigMap was accepted"
fi
grep -q 'nope' "$work/none.err" || fail "missing ConfigMap not named: $(cat "$work/none.err")"
[ ! -s "$work/none.out" ] || fail "output printed although the configuration was missing"

echo "PASS kube_inject"
