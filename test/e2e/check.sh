#!/usr/bin/env bash
# `meshop check` (issue 15, item 7) on the real control plane, with the revisions, webhook and
# Istio webhook entries of the restart tests (restart_lib.sh):
#   - an injected namespace (istio-injection=enabled, a Deployment on the default revision):
#     injected by the default revision's namespace. entry, nothing wrong, exit 0; its pod too;
#   - an uninjected namespace (no label): not injected, IST0102 at level Info only, exit 0;
#   - a conflicting namespace (istio-injection=enabled and istio.io/rev=canary): IST0123, exit 1,
#     still injected by the default revision (istio-injection wins);
#   - a stale namespace: after the default revision's injector ConfigMap moves to proxy tag
#     1.0.1, its Deployment's pod runs 1.0.0: IST0158 naming the pod, the restart action of
#     `meshop restart plan` (WouldRestart: the default policy is DryRun), exit 1; the pod check too;
#   - a tag configuration that injects istio-injection=enabled namespaces a second time: IST0139;
#   - an unknown namespace or pod: a clear error and exit 3; a bad flag: exit 2;
#   - no injector webhook configuration left: NoInjectionWebhooks, exit 1;
#   - upstream's own webhook configurations (the chart, as `meshop manifest generate` renders
#     it) and a tag's (`meshop tag generate`): istio-injection=enabled, istio.io/rev=<tag>,
#     istio-injection=disabled and both labels give Istio's verdicts, and never IST0139.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

. "$(dirname "$0")/restart_lib.sh"

id=$RANDOM
ns_inj=e2e-check-inj-$id
ns_plain=e2e-check-plain-$id
ns_conflict=e2e-check-conflict-$id
ns_stale=e2e-check-stale-$id
namespaces=("$ns_inj" "$ns_plain" "$ns_conflict" "$ns_stale")
work=$(mktemp -d)
cleanup() {
  local rc=$?
  rl_cleanup "$rc"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

# meshop check ARGS...: the JSON report in $work/out.json, the exit code in $rc.
check() {
  rc=0
  "$MESHOP_BIN" check -o json "$@" > "$work/out.json" 2> "$work/err.txt" || rc=$?
}
# The value of a Python expression over the report `r`.
field() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$work/out.json" "$1"
}
codes() {  # the findings as "Severity:CODE-or-name", sorted
  field '" ".join(sorted(f["severity"] + ":" + (f["code"] or f["name"]) for f in r["findings"]))'
}
expect_rc() {  # WANT WHAT
  [ "$rc" = "$1" ] || { cat "$work/out.json" "$work/err.txt" >&2; fail "$2: exit $rc, want $1"; }
}

rl_control_planes
rl_webhook
rl_mwc "e2e-check-injector-$id" default yes
rl_mwc "e2e-check-injector-canary-$id" canary no

for ns in "${namespaces[@]}"; do kubectl create namespace "$ns" >/dev/null; done
kubectl label namespace "$ns_inj" istio-injection=enabled >/dev/null
kubectl label namespace "$ns_conflict" istio-injection=enabled istio.io/rev=canary >/dev/null
kubectl label namespace "$ns_stale" istio-injection=enabled >/dev/null
rl_wait_injecting "$ns_inj"
for ns in "${namespaces[@]}"; do
  kubectl -n "$ns" create deployment web --image=registry.invalid/web:1 >/dev/null
done
for ns in "${namespaces[@]}"; do
  kubectl -n "$ns" rollout status deployment/web --timeout=120s >/dev/null
done
stale_pod=$(pod_names "$ns_stale" app=web)
inj_pod=$(pod_names "$ns_inj" app=web)
[ "$(pod_revision "$ns_stale" "$stale_pod")" = default ] || fail "pod $stale_pod is not injected"

# Injected.
check -n "$ns_inj"
expect_rc 0 "injected namespace"
[ "$(field 'r["injected"], r["revision"], r["webhookEntry"]')" = \
  "(True, 'default', 'namespace.sidecar-injector.istio.io')" ] ||
  fail "injected namespace: $(field 'r["injected"], r["revision"], r["webhookEntry"]')"
field 'r["reason"]' | grep -q "Namespace label istio-injection=enabled matches" ||
  fail "reason: $(field 'r["reason"]')"
[ "$(codes)" = "" ] || fail "injected namespace has findings: $(codes)"
[ "$(field '[(w["name"], w["verdict"], w["sidecars"]) for w in r["workloads"]]')" = \
  "[('web', 'UpToDate', ['default'])]" ] || fail "workloads: $(field 'r["workloads"]')"
check -n "$ns_inj" "$inj_pod"
expect_rc 0 "injected pod"
[ "$(field 'r["sidecar"]["injected"], r["sidecar"]["revision"]')" = "(True, 'default')" ] ||
  fail "pod sidecar: $(field 'r["sidecar"]')"
"$MESHOP_BIN" check -n "$ns_inj" > "$work/table.txt"
echo "--- meshop check -n $ns_inj"; cat "$work/table.txt"
grep -q "^Namespace $ns_inj: injected by revision default" "$work/table.txt" ||
  fail "table headline"
grep -q "^OK: nothing is wrong." "$work/table.txt" || fail "table verdict"

# Uninjected: informational only.
check -n "$ns_plain"
expect_rc 0 "uninjected namespace"
[ "$(field 'r["injected"]')" = False ] || fail "uninjected namespace reported injected"
[ "$(codes)" = "Info:IST0102" ] || fail "uninjected namespace findings: $(codes)"
[ "$(field '[(w["name"], w["verdict"], w["sidecars"]) for w in r["workloads"]]')" = \
  "[('web', 'UpToDate', ['none'])]" ] || fail "workloads: $(field 'r["workloads"]')"

# Conflicting labels.
check -n "$ns_conflict"
expect_rc 1 "conflicting namespace"
[ "$(codes)" = "Warning:IST0123" ] || fail "conflicting namespace findings: $(codes)"
[ "$(field 'r["revision"]')" = default ] || fail "istio-injection should win"
"$MESHOP_BIN" check -n "$ns_conflict" > "$work/table.txt" && fail "table exit 0 on a conflict"
echo "--- meshop check -n $ns_conflict"; cat "$work/table.txt"
grep -q "^Warning .*IST0123 NamespaceMultipleInjectionLabels" "$work/table.txt" ||
  fail "table lacks IST0123"

# Stale: the default revision now injects proxy 1.0.1.
rl_configmaps default 1.0.1
check -n "$ns_stale"
expect_rc 1 "stale namespace"
[ "$(codes)" = "Warning:IST0158" ] || fail "stale namespace findings: $(codes)"
[ "$(field '[(w["verdict"], w["reason"], w["action"], w["stalePods"]) for w in r["workloads"]]')" = \
  "[('Stale', 'ProxyImageChanged', 'WouldRestart', ['$stale_pod'])]" ] ||
  fail "stale workload: $(field 'r["workloads"]')"
field 'r["findings"][0]["message"]' | grep -q "1.0.1" || fail "IST0158 does not name the new image"
"$MESHOP_BIN" restart plan -n "$ns_stale" | grep -E "Deployment +web +ProxyImageChanged .*WouldRestart" \
  >/dev/null || fail "meshop restart plan disagrees"
check -n "$ns_stale" "$stale_pod"
expect_rc 1 "stale pod"
[ "$(field '[(f["code"], f["object"]) for f in r["findings"]]')" = \
  "[('IST0158', 'Pod/$ns_stale/$stale_pod')]" ] || fail "stale pod findings: $(codes)"
"$MESHOP_BIN" check -n "$ns_stale" > "$work/table.txt" || true
echo "--- meshop check -n $ns_stale"; cat "$work/table.txt"

# Overlapping webhooks: a tag configuration with the default entries, next to the default
# revision's own.
rl_mwc "e2e-check-tag-$id" canary yes default
check -n "$ns_inj"
expect_rc 1 "overlapping webhooks"
codes | grep -q "Error:IST0139" || fail "no IST0139: $(codes)"
field '[f["message"] for f in r["findings"] if f["code"] == "IST0139"][0]' |
  grep -q "e2e-check-tag-$id/namespace.sidecar-injector.istio.io" || fail "IST0139 names the tag's entry"
kubectl delete mutatingwebhookconfiguration "e2e-check-tag-$id" >/dev/null

# Bad input.
check -n "e2e-check-missing-$id"
expect_rc 3 "unknown namespace"
grep -q "namespace \"e2e-check-missing-$id\" not found" "$work/err.txt" || fail "unknown namespace message"
check -n "$ns_inj" no-such-pod
expect_rc 3 "unknown pod"
grep -q "pod \"no-such-pod\" not found in namespace \"$ns_inj\"" "$work/err.txt" || fail "unknown pod message"
check -n "$ns_inj" --output yaml
expect_rc 2 "bad flag"

# No injector webhook at all (when no other test left one behind): an Error finding, exit 1.
kubectl delete mutatingwebhookconfiguration "${mwcs[@]}" --ignore-not-found >/dev/null
mwcs=()
if [ -z "$(kubectl get mutatingwebhookconfigurations -l istio.io/rev -o name)" ]; then
  check -n "$ns_plain"
  expect_rc 1 "no webhooks"
  [ "$(codes)" = "Error:NoInjectionWebhooks" ] || fail "no webhooks findings: $(codes)"
  echo "--- no injector webhook: NoInjectionWebhooks, exit 1"
else
  echo "--- skipped the no-webhook check: other injector configurations exist"
fi

# Istio's own webhook configurations: upstream's chart rendered by `meshop manifest generate`
# (the rl_configmaps renders above) and a tag's from `meshop tag generate`, the selectors
# real users have. Nothing creates pods meanwhile (their service istiod does not exist).
for rev in default canary; do
  kubectl create --dry-run=client -o json -f "$work/manifest-$rev.yaml" | python3 -c '
import json, sys
text, items, dec, i = sys.stdin.read(), [], json.JSONDecoder(), 0
while i < len(text):
    if text[i].isspace(): i += 1; continue
    obj, i = dec.raw_decode(text, i)
    items += obj.get("items", [obj]) if obj.get("kind") == "List" else [obj]
mwc = [o for o in items if o.get("kind") == "MutatingWebhookConfiguration"]
assert len(mwc) == 1, len(mwc)
mwc[0]["metadata"]["name"] += "-" + sys.argv[1]
print(json.dumps(mwc[0]))' "e2e-$id" > "$work/upstream-$rev.json"
  kubectl apply -f "$work/upstream-$rev.json" >/dev/null
  mwcs+=("$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["metadata"]["name"])' "$work/upstream-$rev.json")")
done
"$MESHOP_BIN" tag generate prod --revision canary > "$work/tag-prod.yaml"
kubectl apply -f "$work/tag-prod.yaml" >/dev/null
mwcs+=("$(kubectl create --dry-run=client -f "$work/tag-prod.yaml" -o jsonpath='{.metadata.name}')")
kubectl label namespace "$ns_plain" istio.io/rev=prod >/dev/null
kubectl label namespace "$ns_stale" --overwrite istio-injection=disabled >/dev/null

check -n "$ns_inj"
[ "$(field 'r["injected"], r["revision"], r["webhookEntry"]')" = \
  "(True, 'default', 'namespace.sidecar-injector.istio.io')" ] ||
  fail "upstream webhooks, istio-injection=enabled: $(field 'r["revision"], r["webhookEntry"]')"
check -n "$ns_plain"
[ "$(field 'r["injected"], r["revision"], r["tag"], r["webhookEntry"]')" = \
  "(True, 'canary', 'prod', 'rev.namespace.sidecar-injector.istio.io')" ] ||
  fail "tag prod: $(field 'r["revision"], r["tag"], r["webhookEntry"]')"
check -n "$ns_stale"
[ "$(field 'r["injected"], r["reason"]')" = \
  "(False, 'Namespace has istio-injection=disabled label, preventing injection')" ] ||
  fail "istio-injection=disabled: $(field 'r["reason"]')"
[ "$(field '[(w["reason"], w["action"]) for w in r["workloads"]]')" = \
  "[('InjectionDisabled', 'WouldRestart')]" ] || fail "disabled namespace: $(field 'r["workloads"]')"
check -n "$ns_conflict"
[ "$(field 'r["revision"]')" = default ] || fail "istio-injection should win over istio.io/rev"
# Istio's selectors make at most one entry match, whatever the labels: no IST0139 anywhere.
for ns in "${namespaces[@]}"; do
  check -n "$ns"
  if codes | grep -q IST0139; then fail "$ns: upstream webhooks overlap: $(codes)"; fi
done
"$MESHOP_BIN" check -n "$ns_plain" > "$work/table.txt" || true
echo "--- meshop check -n $ns_plain (upstream webhooks, tag prod)"; cat "$work/table.txt"

echo "PASS: meshop check"
