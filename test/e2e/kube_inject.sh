#!/usr/bin/env bash
# `meshop kube-inject` end to end: offline with the chart set's defaults (the ConfigMaps of
# `meshop manifest generate`, --version; kinds, pass-through, stdin, directories, warnings, bad
# YAML, -o only on success), then against the real control plane: the injector ConfigMaps are created in the cluster, `meshop kube-inject
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

# --- offline, the chart set's defaults --------------------------------------------------------
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

# The offline defaults are exactly the ConfigMaps an install of the bundled chart set renders:
# the same output from those ConfigMaps' keys given as files.
# extract OUT_PREFIX [manifest generate flags...]: OUT_PREFIX.{config,values,mesh}
extract() {
  local out=$1
  shift
  meshop manifest generate "$@" > "$out.manifest.yaml"
  python3 - "$out" <<'PY'
import sys, yaml
out = sys.argv[1]
found = {}
for d in yaml.safe_load_all(open(out + ".manifest.yaml")):
    if not d or d.get("kind") != "ConfigMap":
        continue
    name = d["metadata"]["name"]
    if name.startswith("istio-sidecar-injector"):
        found["config"], found["values"] = d["data"]["config"], d["data"]["values"]
    elif name == "istio" or name.startswith("istio-") and "mesh" in d.get("data", {}):
        found["mesh"] = d["data"]["mesh"]
assert set(found) == {"config", "values", "mesh"}, sorted(found)
for k, v in found.items():
    open(f"{out}.{k}", "w").write(v)
PY
}
extract "$work/default"
meshop kube-inject -f "$work/deploy.yaml" --injectConfigFile "$work/default.config" \
  --valuesFile "$work/default.values" --meshConfigFile "$work/default.mesh" |
  cmp - "$work/out.yaml" || fail "offline defaults differ from the chart set's ConfigMaps"
# Istio's proxy image of the default chart set; --version picks another bundled set.
for v in $(meshop version | sed -n 's/^Istio versions: //p' | tr -d '()' | sed 's/default//'); do
  tag=$(python3 -c 'import sys, json; print(json.load(open(sys.argv[1]))["global"]["tag"])' \
    <(meshop manifest generate --version "$v" | python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"] == "istio-sidecar-injector":
        print(d["data"]["values"])'))
  # (to a file first: `| grep -q` would close the pipe early and pipefail fail the writer)
  meshop kube-inject --version "$v" -f "$work/deploy.yaml" > "$work/version-$v.yaml"
  grep -q "/proxyv2:$tag\$" "$work/version-$v.yaml" ||
    fail "kube-inject --version $v does not inject version $v's proxy ($tag)"
done
if meshop kube-inject --version 0.9 -f "$work/deploy.yaml" > /dev/null 2> "$work/v.err"; then
  fail "an unbundled --version was accepted"
fi
grep -q '"0.9" is not bundled' "$work/v.err" || fail "bad --version not named: $(cat "$work/v.err")"

# --- against the cluster -------------------------------------------------------------------
kubectl create namespace "$ns"
# The chart set's injector ConfigMaps, with values that name a registry only this test uses,
# so the pods prove the ConfigMaps were read.
set_hub() {
  python3 - "$1" <<'PY'
import sys, json
p = sys.argv[1]
v = json.load(open(p))
v["global"]["hub"], v["global"]["tag"] = "registry.e2e.invalid/mesh", "e2e"
json.dump(v, open(p, "w"), indent=2)
PY
}
set_hub "$work/default.values"
kubectl -n "$ns" create configmap e2e-injector \
  --from-file=config="$work/default.config" --from-file=values="$work/default.values"
kubectl -n "$ns" create configmap e2e-mesh --from-file=mesh="$work/default.mesh"

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
extract "$work/canary" --revision canary
set_hub "$work/canary.values"
kubectl -n "$ns" create configmap istio-sidecar-injector-canary \
  --from-file=config="$work/canary.config" --from-file=values="$work/canary.values"
kubectl -n "$ns" create configmap istio-canary --from-file=mesh="$work/canary.mesh"
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
