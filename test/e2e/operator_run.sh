#!/usr/bin/env bash
# `meshop run` end to end on the real control plane (issues 6 and 7): the operator installs
# IstioOperators, keeps their webhook configurations and certificate, serves injection itself,
# repairs drift, moves a namespace to a canary revision with paced automatic restarts, and
# uninstalls on delete.
#   1. `meshop run --local` (webhooks call https://127.0.0.1:<port>) in its own control-plane
#      namespace; it creates the webhook Secret and starts serving.
#   2. IstioOperator `default` (profile minimal): istiod, the injector ConfigMaps and the
#      MutatingWebhookConfiguration (url + caBundle) appear with meshop's owner labels, and
#      status becomes HEALTHY (kwok makes istiod available).
#   3. A namespace labelled istio-injection=enabled gets sidecars from meshop's webhook for
#      three Deployments; a second, unlabelled namespace runs one Deployment without.
#   4. IstioOperator `canary` (revision canary, restarts mode Auto, maxConcurrent 1) installs
#      istiod-canary and istio-sidecar-injector-canary.
#   5. Relabelling the first namespace to istio.io/rev=canary restarts its Deployments on their
#      own (no CLI), one at a time: every new pod carries the canary sidecar; the other namespace is untouched;
#      the canary IstioOperator's status lists the namespace.
#      Restarted Events and meshop_restarts_total show it. An injector change of the canary
#      revision (values edited in the IstioOperator) restarts them again, as TemplateChanged,
#      once the policy includes template changes.
#      `meshop tag set prod --revision canary` routes a namespace labelled istio.io/rev=prod to
#      canary; a caBundle corrupted by hand is repaired within seconds; an invalid
#      IstioOperator is ERROR with the field path and disturbs nothing else.
#   6. Drift: the istiod-canary Deployment, ServiceAccount and Service and the canary webhook
#      configuration, deleted, come back; a namespaceSelector edited by hand is restored.
#      Install passed over unchanged objects meanwhile (meshop_install_unchanged_objects_total).
#   7. Deleting the canary IstioOperator uninstalls it (Deployment, ConfigMaps, webhook gone) and
#      the finalizer lets the object go.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-meshop-$id
ns_a=e2e-op-a-$id
ns_b=e2e-op-b-$id
ns_c=e2e-op-c-$id
work=$(mktemp -d)
port=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
hport=$((port + 1))
run_pid=""
# Upstream's names: the revision, then the namespace when it is not istio-system.
mwc_default=istio-sidecar-injector-$cp
mwc_canary=istio-sidecar-injector-canary-$cp

cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    echo "--- debug: meshop run log (tail)" >&2
    tail -n 60 "$work/run.log" >&2
    kubectl -n "$cp" get istiooperators -o yaml >&2
    kubectl get mutatingwebhookconfigurations -l app.kubernetes.io/managed-by=meshop >&2
  fi
  # Uninstall through the operator while it runs, then remove whatever is left.
  kubectl -n "$cp" delete istiooperators --all --wait=false >/dev/null 2>&1
  for _ in $(seq 1 40); do
    [ -z "$(kubectl -n "$cp" get istiooperators -o name 2>/dev/null)" ] && break
    sleep 0.5
  done
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
  for iop in $(kubectl -n "$cp" get istiooperators -o name 2>/dev/null); do
    kubectl -n "$cp" patch "$iop" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  kubectl delete mutatingwebhookconfigurations -l "install.operator.istio.io/owning-resource-namespace=$cp" \
    --ignore-not-found >/dev/null 2>&1
  for kind in clusterroles clusterrolebindings validatingwebhookconfigurations; do
    kubectl delete "$kind" -l "install.operator.istio.io/owning-resource-namespace=$cp" \
      --ignore-not-found >/dev/null 2>&1
  done
  kubectl delete mutatingwebhookconfiguration "istio-revision-tag-prod-$cp" --ignore-not-found >/dev/null 2>&1
  for ns in "$ns_a" "$ns_b" "$ns_c" "$cp"; do kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

iop() {  # NAME REVISION RESTARTS-FLOW-MAPPING
  local rev=""
  [ "$2" = default ] || rev="revision: $2"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $1, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  $rev
  values:
    global: {istioNamespace: $cp}
  restarts: $3
YAML
}
iop_status() { kubectl -n "$cp" get istiooperator "$1" -o jsonpath='{.status.status}'; }
is_healthy() { [ "$(iop_status "$1")" = HEALTHY ]; }
# Revisions of the running pods of Deployment $2 in $1, space separated, sorted unique.
deployment_revisions() {
  local pods out=""
  pods=$(pod_names "$1" "app=$2")
  for p in $pods; do out+="$(pod_revision "$1" "$p")"$'\n'; done
  printf '%s' "$out" | sort -u | tr '\n' ' '
}
all_pods_on() {  # NS DEPLOYMENT REVISION
  [ "$(deployment_revisions "$1" "$2")" = "$3 " ]
}
exists() { kubectl get "$@" >/dev/null 2>&1; }
gone() { ! kubectl get "$@" >/dev/null 2>&1; }

operator_setup "$cp"

# 1. The operator.
"${MESHOP_AS_SA[@]}" "$MESHOP_BIN" run --local --namespace "$cp" --webhook-addr "127.0.0.1:$port" \
  --health-addr "127.0.0.1:$hport" --native-sidecars false >"$work/run.log" 2>&1 &
run_pid=$!
wait_for 60 "meshop run ready" curl -sf "http://127.0.0.1:$hport/readyz"
wait_for 60 "webhook Secret" kubectl -n "$cp" get secret meshop-webhook-certs
wait_for 30 "webhook serving" grep -q '"webhook serving"' "$work/run.log"

# 2. The default revision.
iop default default '{mode: DryRun}'
wait_for 120 "IstioOperator default HEALTHY" is_healthy default
exists -n "$cp" deployment istiod || fail "istiod not installed"
labels=$(kubectl -n "$cp" get deployment istiod -o jsonpath='{.metadata.labels}')
for want in '"app.kubernetes.io/managed-by":"meshop"' '"install.operator.istio.io/owning-resource":"default"'; do
  [[ "$labels" == *"$want"* ]] || fail "istiod lacks owner label $want: $labels"
done
exists -n "$cp" configmap istio-sidecar-injector || fail "injector ConfigMap not installed"
has_ca_bundle() {
  local b
  b=$(kubectl get mutatingwebhookconfiguration "$1" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
  [ -n "$b" ]
}
wait_for 30 "webhook configuration with caBundle" has_ca_bundle "$mwc_default"
url=$(kubectl get mutatingwebhookconfiguration "$mwc_default" -o jsonpath='{.webhooks[0].clientConfig.url}')
[ "$url" = "https://127.0.0.1:$port/inject" ] || fail "default webhook url is '$url'"

# A chart set that does not exist is a RenderFailed Warning Event naming it, and the last
# good install stays; removing it renders the bundled version again.
kubectl -n "$cp" patch istiooperator default --type=merge -p '{"spec":{"installPackagePath":"/nonexistent/charts"}}' >/dev/null
render_failed() {
  local ev
  ev=$(kubectl -n "$cp" get events --field-selector involvedObject.name=default,reason=RenderFailed -o jsonpath='{.items[*].message}')
  [[ "$ev" == */nonexistent/charts* ]]
}
wait_for 30 "RenderFailed Event naming the missing chart directory" render_failed
kubectl get deployment -n "$cp" istiod >/dev/null || fail "istiod was removed by a render failure"
kubectl -n "$cp" patch istiooperator default --type=json -p '[{"op":"remove","path":"/spec/installPackagePath"}]' >/dev/null
wait_for 60 "default HEALTHY again" is_healthy default

# 3. Injection by meshop's own webhook.
kubectl create namespace "$ns_a" >/dev/null
kubectl create namespace "$ns_b" >/dev/null
kubectl label namespace "$ns_a" istio-injection=enabled >/dev/null
probe() {
  local out
  out=$(kubectl -n "$ns_a" run probe --image=registry.invalid/probe:1 --restart=Never \
    --dry-run=server -o jsonpath='{.spec.containers[*].name} {.spec.initContainers[*].name}')
  [[ "$out" == *istio-proxy* ]]
}
wait_for 60 "meshop injects in $ns_a" probe
for app in alpha beta epsilon; do
  kubectl -n "$ns_a" create deployment "$app" --image=registry.invalid/$app:1 >/dev/null
done
kubectl -n "$ns_b" create deployment gamma --image=registry.invalid/gamma:1 >/dev/null
for app in alpha beta epsilon; do kubectl -n "$ns_a" rollout status "deployment/$app" --timeout=120s >/dev/null; done
kubectl -n "$ns_b" rollout status deployment/gamma --timeout=120s >/dev/null
for app in alpha beta epsilon; do
  all_pods_on "$ns_a" "$app" default || fail "$ns_a/$app pods: $(deployment_revisions "$ns_a" "$app")"
done
all_pods_on "$ns_b" gamma none || fail "$ns_b/gamma was injected"
gamma_pods=$(pod_names "$ns_b" app=gamma)

# 4. The canary revision, with automatic paced restarts.
iop canary canary '{mode: Auto, maxConcurrent: 1, rolloutTimeout: 2m, minInterval: 0s}'
wait_for 120 "IstioOperator canary HEALTHY" is_healthy canary
wait_for 30 "canary webhook configuration" exists mutatingwebhookconfiguration "$mwc_canary"
url=$(kubectl get mutatingwebhookconfiguration "$mwc_canary" -o jsonpath='{.webhooks[0].clientConfig.url}')
[ "$url" = "https://127.0.0.1:$port/inject/rev/canary" ] || fail "canary webhook url is '$url'"

# 5. Move the namespace; the operator restarts its Deployments by itself.
kubectl label namespace "$ns_a" istio-injection- istio.io/rev=canary >/dev/null
echo "--- meshop restart plan right after the relabel (the operator is already at work)"
"$MESHOP_BIN" restart plan --control-plane-namespace "$cp" || fail "meshop restart plan failed"
for app in alpha beta epsilon; do
  wait_for 240 "$ns_a/$app restarted onto canary" all_pods_on "$ns_a" "$app" canary
done
# maxConcurrent 1: each restart began after the previous rollout completed.
assert_paced_restarts "$ns_a" RevisionChanged/canary
for app in alpha beta epsilon; do
  cause=$(kubectl -n "$ns_a" get deployment "$app" -o jsonpath='{.spec.template.metadata.annotations.meshop\.io/restart-cause}')
  [ "$cause" = RevisionChanged/canary ] || fail "$ns_a/$app restart cause '$cause'"
done
[ "$(pod_names "$ns_b" app=gamma)" = "$gamma_pods" ] || fail "$ns_b/gamma was restarted"
for p in $(pod_names "$ns_a" app=alpha); do
  rev=$(kubectl -n "$ns_a" get pod "$p" -o jsonpath='{.metadata.annotations.istio\.io/rev}')
  [ "$rev" = canary ] || fail "$ns_a/$p has istio.io/rev annotation '$rev', want canary"
done
served() {
  kubectl -n "$cp" get istiooperator canary -o jsonpath='{.status.revisions}' | grep -q "$ns_a"
}
wait_for 60 "canary status lists $ns_a" served

# Visible: a Restarted Event on each Deployment and the restart counter on /metrics.
for app in alpha beta epsilon; do
  ev=$(kubectl -n "$ns_a" get events --field-selector "involvedObject.name=$app,reason=Restarted" -o name)
  [ -n "$ev" ] || fail "no Restarted Event on $ns_a/$app"
done
started=$(curl -sf "http://127.0.0.1:$hport/metrics" |
  awk '/^meshop_restarts_total\{reason="RevisionChanged",result="started"\}/ {print $2}')
[ "${started%.*}" = 3 ] || fail "meshop_restarts_total RevisionChanged/started is '$started', want 3"

# 5b. An injector change of the canary revision (a values edit re-rendered into its ConfigMap)
# restarts the same Deployments again when the policy includes template changes: their pods
# carry the injector fingerprint, which no longer matches.
fingerprints() {  # NS DEPLOYMENT -> sorted unique fingerprints of its pods
  local p out=""
  for p in $(pod_names "$1" "app=$2"); do
    out+="$(kubectl -n "$1" get pod "$p" -o jsonpath='{.metadata.annotations.meshop\.io/injector-fingerprint}')"$'\n'
  done
  printf '%s' "$out" | sort -u | tr '\n' ' '
}
old_fp=$(fingerprints "$ns_a" alpha)
[ -n "${old_fp// /}" ] || fail "injected pods carry no injector fingerprint"
kubectl -n "$cp" patch istiooperator canary --type=merge -p \
  '{"spec":{"restarts":{"includeTemplateChanges":true},"values":{"global":{"logging":{"level":"default:debug"}}}}}' >/dev/null
on_new_template() {
  local fp
  fp=$(fingerprints "$ns_a" "$1")
  [ -n "${fp// /}" ] && [ "$fp" != "$old_fp" ] && [ "$(wc -w <<<"$fp")" = 1 ]
}
for app in alpha beta epsilon; do
  wait_for 240 "$ns_a/$app restarted for the template change" on_new_template "$app"
  cause=$(kubectl -n "$ns_a" get deployment "$app" -o jsonpath='{.spec.template.metadata.annotations.meshop\.io/restart-cause}')
  [[ "$cause" == TemplateChanged/canary* ]] || fail "$ns_a/$app restart cause '$cause'"
done
[ "$(pod_names "$ns_b" app=gamma)" = "$gamma_pods" ] || fail "$ns_b/gamma was restarted"

# 5c. A revision tag: `meshop tag set prod --revision canary`; a namespace labelled
# istio.io/rev=prod gets canary sidecars (the operator leaves the CLI's tag alone).
"$MESHOP_BIN" tag set prod --revision canary >/dev/null
kubectl create namespace "$ns_c" >/dev/null
kubectl label namespace "$ns_c" istio.io/rev=prod >/dev/null
kubectl -n "$ns_c" create deployment delta --image=registry.invalid/delta:1 >/dev/null
kubectl -n "$ns_c" rollout status deployment/delta --timeout=120s >/dev/null
all_pods_on "$ns_c" delta canary || fail "$ns_c/delta pods: $(deployment_revisions "$ns_c" delta)"
exists mutatingwebhookconfiguration "istio-revision-tag-prod-$cp" || fail "the operator pruned the CLI's tag"

# 5d. A corrupted caBundle is repaired within seconds.
good_bundle=$(kubectl get mutatingwebhookconfiguration "$mwc_canary" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
kubectl patch mutatingwebhookconfiguration "$mwc_canary" --type=json \
  -p '[{"op":"replace","path":"/webhooks/0/clientConfig/caBundle","value":"Y29ycnVwdGVk"}]' >/dev/null
bundle_repaired() {
  [ "$(kubectl get mutatingwebhookconfiguration "$mwc_canary" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" = "$good_bundle" ]
}
wait_for 20 "caBundle repaired" bundle_repaired

# 5e. An invalid IstioOperator is ERROR with the field path; the others stay HEALTHY.
kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: broken, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: broken
  values:
    pilot: {tolerations: "not a list"}
YAML
# The message is read with the status: an ERROR of a transient API failure first is printed,
# and the field path must follow. A 422 there was install's finalizer patch losing its
# resourceVersion test to another reconciler's status write: a conflict, retried quietly.
first_error=""
is_error_with_path() {
  [ "$(iop_status broken)" = ERROR ] || return 1
  msg=$(kubectl -n "$cp" get istiooperator broken -o jsonpath='{.status.message}')
  [ -n "$first_error" ] || first_error=$msg
  [[ "$msg" == *spec.values.pilot.tolerations* ]]
}
wait_for 30 "IstioOperator broken is ERROR naming spec.values.pilot.tolerations" is_error_with_path
if [[ "$first_error" != *spec.values.pilot.tolerations* ]]; then
  echo "note: a transient ERROR came first: $first_error"
  [[ "$first_error" != *422* ]] || fail "a lost resourceVersion race was reported as ERROR: $first_error"
fi
# No install pass failed with a 422 of meshop's own writes (each IstioOperator's first pass
# used to: its finalizer patch raced the restarts and revisions status writes).
if invalid=$(grep '"msg":"reconcile failed; retrying with backoff","controller":"install".*(Invalid, 422)' "$work/run.log"); then
  fail "install passes failed with 422 Invalid: $invalid"
fi
gone -n "$cp" deployment istiod-broken || fail "an invalid IstioOperator was installed"
is_healthy default && is_healthy canary || fail "an invalid IstioOperator disturbed the others"
kubectl -n "$cp" delete istiooperator broken >/dev/null

# 6. Drift repair.
kubectl -n "$cp" delete deployment istiod-canary >/dev/null
wait_for 60 "istiod-canary recreated" exists -n "$cp" deployment istiod-canary
kubectl -n "$cp" delete serviceaccount istiod-canary >/dev/null
wait_for 60 "ServiceAccount istiod-canary recreated" exists -n "$cp" serviceaccount istiod-canary
kubectl -n "$cp" delete service istiod-canary >/dev/null
wait_for 60 "Service istiod-canary recreated" exists -n "$cp" service istiod-canary
kubectl delete mutatingwebhookconfiguration "$mwc_canary" >/dev/null
wait_for 60 "canary webhook configuration recreated" exists mutatingwebhookconfiguration "$mwc_canary"
kubectl patch mutatingwebhookconfiguration "$mwc_canary" --type=json \
  -p '[{"op":"replace","path":"/webhooks/0/namespaceSelector","value":{"matchLabels":{"edited":"by-hand"}}}]' >/dev/null
restored() {
  local sel
  sel=$(kubectl get mutatingwebhookconfiguration "$mwc_canary" -o jsonpath='{.webhooks[0].namespaceSelector}')
  [[ "$sel" != *by-hand* ]]
}
wait_for 60 "edited namespaceSelector restored" restored

# 6b. Install does not re-apply what nobody changed (the informers' resourceVersions), and
# the deletions above were still repaired: both counters moved.
install_counts() {
  curl -sf "http://127.0.0.1:$hport/metrics" | awk '
    /^meshop_install_applied_objects_total\{/ {a += $2}
    /^meshop_install_unchanged_objects_total\{/ {u += $2}
    END {printf "%d %d\n", a, u}'
}
read -r applied unchanged < <(install_counts)
echo "install: $applied objects applied, $unchanged passed over as unchanged"
[ "$unchanged" -gt 0 ] || fail "install passed over no unchanged object (meshop_install_unchanged_objects_total)"
[ "$applied" -gt 0 ] || fail "install applied nothing (meshop_install_applied_objects_total)"

# 7. Uninstall on delete.
kubectl -n "$cp" delete istiooperator canary --wait=false >/dev/null
wait_for 90 "canary IstioOperator gone" gone -n "$cp" istiooperator canary
gone -n "$cp" deployment istiod-canary || fail "istiod-canary left after uninstall"
gone -n "$cp" configmap istio-sidecar-injector-canary || fail "injector ConfigMap left after uninstall"
wait_for 30 "canary webhook configuration pruned" gone mutatingwebhookconfiguration "$mwc_canary"
exists -n "$cp" deployment istiod || fail "uninstalling canary removed the default revision"
echo "PASS"
