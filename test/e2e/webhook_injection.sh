#!/usr/bin/env bash
# The real kube-apiserver calls `meshop webhook` over HTTPS: meshop runs on 127.0.0.1 with a
# serving certificate from a throwaway CA (IP SAN 127.0.0.1), a MutatingWebhookConfiguration
# with `url: https://127.0.0.1:PORT/inject` and that CA as caBundle selects a namespace labelled
# istio-injection=enabled (the upstream chart's selectors), and then:
#   - the pods kube-controller-manager creates for a Deployment carry istio-proxy (and
#     upstream's sidecar.istio.io/status annotation) and still become Ready;
#   - a pod labelled sidecar.istio.io/inject: "false" gets no sidecar;
#   - a namespace without the label is left alone;
#   - the webhook's metrics count what happened, and SIGTERM stops it with exit code 0.
# The injector configuration is meshop webhook's default: the default bundled chart set's
# injector ConfigMaps (operator/manifest/injector_defaults.hpp).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}"

ns=e2e-webhook-$RANDOM
other=$ns-off
mwc=meshop-e2e-$ns
work=$(mktemp -d)
webhook_pid=
cleanup() {
  local rc=$?
  kubectl delete mutatingwebhookconfiguration "$mwc" --ignore-not-found >/dev/null 2>&1 || true
  if [ -n "$webhook_pid" ] && kill -0 "$webhook_pid" 2>/dev/null; then kill "$webhook_pid" || true; fi
  if [ "$rc" != 0 ]; then echo "--- debug: webhook log" >&2; tail -n 40 "$work/webhook.log" >&2 || true; fi
  kubectl delete namespace "$other" --wait=false >/dev/null 2>&1 || true
  (exit "$rc"); on_exit "$ns"
  rm -rf "$work"
}
trap cleanup EXIT

# 1. A CA and a serving certificate for 127.0.0.1, as the apiserver will verify it.
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

# 2. meshop webhook, standalone.
"$MESHOP_BIN" webhook --cert "$work/tls.crt" --key "$work/tls.key" \
  --addr "127.0.0.1:$port" --metrics-addr "127.0.0.1:$mport" --native-sidecars false \
  > "$work/webhook.log" 2>&1 &
webhook_pid=$!
wait_for 30 "webhook ready" curl -fsS "http://127.0.0.1:$mport/readyz"
curl -fsS --cacert "$work/ca.crt" "https://127.0.0.1:$port/ready" >/dev/null \
  || fail "HTTPS /ready with the CA failed"

# 3. The MutatingWebhookConfiguration, shaped like the upstream chart's namespace.* webhook and
#    restricted to this test's namespaces.
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" istio-injection=enabled >/dev/null
kubectl create namespace "$other" >/dev/null
ca_bundle=$(base64 -w0 < "$work/ca.crt")
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $mwc
webhooks:
- name: namespace.sidecar-injector.istio.io
  clientConfig:
    url: https://127.0.0.1:$port/inject
    caBundle: $ca_bundle
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
  namespaceSelector:
    matchExpressions:
    - {key: istio-injection, operator: In, values: [enabled]}
    - {key: kubernetes.io/metadata.name, operator: In, values: [$ns, $other]}
  objectSelector:
    matchExpressions:
    - {key: sidecar.istio.io/inject, operator: NotIn, values: ["false"]}
  admissionReviewVersions: [v1beta1, v1]
  sideEffects: None
  failurePolicy: Fail
  reinvocationPolicy: Never
  timeoutSeconds: 10
YAML

containers_of() { kubectl -n "$1" get pod "$2" -o jsonpath='{.spec.containers[*].name}'; }

# The apiserver picks up a new webhook configuration asynchronously: probe with server-side
# dry runs (webhooks with sideEffects None are called for them) until the sidecar appears.
probe() {
  kubectl -n "$ns" run probe --image=registry.invalid/probe:1 --restart=Never --dry-run=server \
    -o jsonpath='{.spec.containers[*].name}' | grep -qw istio-proxy
}
wait_for 60 "webhook configuration active" probe

# 4. A Deployment: its pods are created by kube-controller-manager and pass through meshop.
kubectl -n "$ns" create deployment web --image=registry.invalid/web:1 --replicas=2 >/dev/null
kubectl -n "$ns" rollout status deployment/web --timeout=120s
pods=$(pod_names "$ns" app=web)
[ "$(echo "$pods" | wc -w)" = 2 ] || fail "expected 2 pods, got: $pods"
for p in $pods; do
  names=$(containers_of "$ns" "$p")
  case " $names " in *" istio-proxy "*) ;; *) fail "pod $p has no istio-proxy: $names" ;; esac
  inits=$(kubectl -n "$ns" get pod "$p" -o jsonpath='{.spec.initContainers[*].name}')
  case " $inits " in *" istio-init "*) ;; *) fail "pod $p has no istio-init init container: $inits" ;; esac
  status=$(kubectl -n "$ns" get pod "$p" -o jsonpath='{.metadata.annotations.sidecar\.istio\.io/status}')
  [ -n "$status" ] || fail "pod $p has no sidecar.istio.io/status annotation"
  echo "pod $p: containers [$names], init [$inits]"
done

# 5. Opt-out by label: the objectSelector keeps it from meshop, and meshop would skip it too.
kubectl -n "$ns" run optout --image=registry.invalid/app:1 --restart=Never \
  --labels=sidecar.istio.io/inject=false >/dev/null
names=$(containers_of "$ns" optout)
[ "$names" = optout ] || fail "opt-out pod got containers: $names"
# The same opt-out as an annotation reaches meshop, which skips it (policy decision).
kubectl -n "$ns" run optout-annotation --image=registry.invalid/app:1 --restart=Never \
  --annotations=sidecar.istio.io/inject=false >/dev/null
names=$(containers_of "$ns" optout-annotation)
[ "$names" = optout-annotation ] || fail "annotated opt-out pod got containers: $names"

# 6. A namespace without istio-injection=enabled is not selected.
kubectl -n "$other" run plain --image=registry.invalid/app:1 --restart=Never >/dev/null
names=$(containers_of "$other" plain)
[ "$names" = plain ] || fail "pod in an unlabelled namespace got containers: $names"

# 7. Metrics of what the webhook saw.
metrics=$(curl -fsS "http://127.0.0.1:$mport/metrics")
value() { echo "$metrics" | awk -v k="$1" '$1 == k {print $2}'; }
requests=$(value sidecar_injection_requests_total)
skips=$(value 'sidecar_injection_skip_total{reason="annotation_false"}')
echo "sidecar_injection_requests_total=$requests skip{annotation_false}=$skips"
awk -v r="${requests:-0}" 'BEGIN { exit !(r >= 3) }' || fail "expected at least 3 requests, got '$requests'"
[ "${skips:-0}" = 1 ] || fail "expected 1 annotation skip, got '$skips'"

# 8. SIGTERM: clean exit.
kill -TERM "$webhook_pid"
rc=0; wait "$webhook_pid" || rc=$?
webhook_pid=
[ "$rc" = 0 ] || fail "meshop webhook exited with $rc after SIGTERM"
echo "PASS"
