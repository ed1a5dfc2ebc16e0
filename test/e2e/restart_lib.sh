# Shared setup of the restart e2e scripts (sourced after lib.sh). The caller sets `id` (unique
# suffix), `work` (a temporary directory) and `namespaces` (the test's namespaces: the webhook
# entries only select these, so other tests' pods never reach this webhook).
cp=istio-system
webhook_pid=
mwcs=()
iops=()

# Injector ConfigMaps istio-sidecar-injector[-REV] and istio[-REV] in istio-system, rendered by
# `meshop manifest generate` with proxy image tag TAG.
rl_configmaps() {  # REV TAG
  local rev_flag=()
  [ "$1" = default ] || rev_flag=(--revision "$1")
  "$MESHOP_BIN" manifest generate "${rev_flag[@]}" --set profile=minimal --set tag="$2" \
    --set hub=registry.invalid/istio > "$work/manifest-$1.yaml"
  kubectl create --dry-run=client -o json -f "$work/manifest-$1.yaml" | python3 -c '
import json, sys
text, items, dec, i = sys.stdin.read(), [], json.JSONDecoder(), 0
while i < len(text):  # kubectl prints one JSON object per rendered object
    if text[i].isspace(): i += 1; continue
    obj, i = dec.raw_decode(text, i)
    items += obj.get("items", [obj]) if obj.get("kind") == "List" else [obj]
keep = [o for o in items if o.get("kind") == "ConfigMap"
        and o["metadata"]["name"].startswith(("istio-sidecar-injector", "istio"))]
for o in keep: o["metadata"]["namespace"] = sys.argv[1]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": keep}))' "$cp" > "$work/cm-$1.json"
  kubectl apply -f "$work/cm-$1.json" >/dev/null
}

# The CRD, the namespace, both revisions' ConfigMaps and stand-in control planes (istiod and
# istiod-canary Deployments, made available by kwok): what the plan's health gate reads when
# IstioOperators have no status (no install reconciler runs in these tests).
rl_control_planes() {
  kubectl create namespace "$cp" >/dev/null 2>&1 || true
  kubectl apply -f "$MESHOP_SOURCE_DIR/crd/istiooperator.yaml" >/dev/null
  crd_established
  rl_configmaps default 1.0.0
  rl_configmaps canary 1.1.0
  local d
  for d in istiod istiod-canary; do
    kubectl -n "$cp" get deployment "$d" >/dev/null 2>&1 ||
      kubectl -n "$cp" create deployment "$d" --image=registry.invalid/pilot:1 >/dev/null
  done
  kubectl -n "$cp" rollout status deployment/istiod --timeout=60s >/dev/null
  kubectl -n "$cp" rollout status deployment/istiod-canary --timeout=60s >/dev/null
}

rl_iop() {  # NAME REVISION RESTARTS-FLOW-MAPPING
  local rev=""
  [ "$2" = default ] || rev="revision: $2"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: $cp}
spec:
  profile: minimal
  $rev
  restarts: $3
YAML
  iops+=("$1")
}

# `meshop webhook` in cluster mode (every revision of the ConfigMaps, /inject/rev/<r>) with a
# throwaway CA; sets port, mport, ca_bundle.
rl_webhook() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj "/CN=meshop-e2e-ca" -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=meshop-webhook" \
    -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$work/ext.cnf"
  openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
    -days 1 -extfile "$work/ext.cnf" -out "$work/tls.crt" 2>/dev/null
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  port=$(free_port)
  mport=$(free_port)
  "$MESHOP_BIN" webhook --cert "$work/tls.crt" --key "$work/tls.key" --kubeconfig "$KUBECONFIG" \
    --namespace "$cp" --addr "127.0.0.1:$port" --metrics-addr "127.0.0.1:$mport" \
    --native-sidecars false > "$work/webhook.log" 2>&1 &
  webhook_pid=$!
  wait_for 30 "webhook ready" curl -fsS "http://127.0.0.1:$mport/readyz"
  ca_bundle=$(base64 -w0 < "$work/ca.crt")
}

_rl_entry() {  # NAME REV NS_EXPRS OBJ_EXPRS
  local list
  list=$(printf '%s, ' "${namespaces[@]}")
  cat <<YAML
- name: $1
  clientConfig: {url: "https://127.0.0.1:$port/inject/rev/$2", caBundle: $ca_bundle}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector:
    matchExpressions:
    - {key: kubernetes.io/metadata.name, operator: In, values: [${list%, }]}
$3
  objectSelector:
    matchExpressions:
$4
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
YAML
}

# Istio's webhook entries (reference §2.1) for revision REV in configuration NAME; with
# DEFAULT=yes also the default revision's namespace. entry; with TAG, a tag's configuration
# (istio.io/tag label, selecting istio.io/rev=TAG).
rl_mwc() {  # NAME REV DEFAULT [TAG]
  local name=$1 rev=$2 default=$3 tag=${4:-} match=${4:-$2}
  local not_false='    - {key: sidecar.istio.io/inject, operator: NotIn, values: ["false"]}'
  {
    echo "apiVersion: admissionregistration.k8s.io/v1"
    echo "kind: MutatingWebhookConfiguration"
    if [ -n "$tag" ]; then
      echo "metadata: {name: $name, labels: {istio.io/rev: $rev, istio.io/tag: $tag}}"
    else
      echo "metadata: {name: $name, labels: {istio.io/rev: $rev}}"
    fi
    echo "webhooks:"
    _rl_entry rev.namespace.sidecar-injector.istio.io "$rev" \
      "    - {key: istio.io/rev, operator: In, values: [$match]}
    - {key: istio-injection, operator: DoesNotExist}" "$not_false"
    _rl_entry rev.object.sidecar-injector.istio.io "$rev" \
      "    - {key: istio.io/rev, operator: DoesNotExist}
    - {key: istio-injection, operator: DoesNotExist}" "$not_false
    - {key: istio.io/rev, operator: In, values: [$match]}"
    if [ "$default" = yes ]; then
      _rl_entry namespace.sidecar-injector.istio.io "$rev" \
        "    - {key: istio-injection, operator: In, values: [enabled]}" "$not_false"
    fi
  } > "$work/mwc-$name.yaml"
  kubectl apply -f "$work/mwc-$name.yaml" >/dev/null
  mwcs+=("$name")
}

# Waits until the apiserver calls the webhook for namespace NS (server-side dry runs).
rl_wait_injecting() {  # NS
  _probe() {
    kubectl -n "$1" run probe --image=registry.invalid/probe:1 --restart=Never --dry-run=server \
      -o jsonpath='{.spec.containers[*].name}' | grep -qw istio-proxy
  }
  wait_for 60 "webhook configuration active for $1" _probe "$1"
}

rl_proxy_image_of() {  # NS POD
  kubectl -n "$1" get pod "$2" -o jsonpath='{range .spec.containers[?(@.name=="istio-proxy")]}{.image}{end}{range .spec.initContainers[?(@.name=="istio-proxy")]}{.image}{end}'
}

rl_cleanup() {
  local rc=$1
  if [ "${#mwcs[@]}" -gt 0 ]; then
    kubectl delete mutatingwebhookconfiguration "${mwcs[@]}" --ignore-not-found >/dev/null 2>&1 || true
  fi
  if [ -n "$webhook_pid" ] && kill -0 "$webhook_pid" 2>/dev/null; then kill "$webhook_pid" || true; fi
  if [ "$rc" != 0 ]; then
    echo "--- debug: webhook log" >&2; tail -n 30 "$work/webhook.log" >&2 || true
  fi
  if [ "${#iops[@]}" -gt 0 ]; then
    kubectl -n "$cp" delete istiooperator "${iops[@]}" --ignore-not-found >/dev/null 2>&1 || true
  fi
  kubectl -n "$cp" delete deployment istiod istiod-canary --ignore-not-found >/dev/null 2>&1 || true
  kubectl -n "$cp" delete configmap istio-sidecar-injector istio-sidecar-injector-canary istio \
    istio-canary --ignore-not-found >/dev/null 2>&1 || true
  local ns
  for ns in "${namespaces[@]}"; do kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; done
}
