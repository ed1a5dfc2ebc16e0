#!/usr/bin/env bash
# `meshop run` at rest, and drift repaired by its watches rather than by its periodic pass:
#   - once its IstioOperator is HEALTHY (next periodic install pass in 300 s) and the rollout's
#     last events settled, 30 quiet seconds bring no apply, at most one install pass (nothing
#     meshop writes wakes it up again) and no GET or LIST at all (meshop_kube_requests_total:
#     the reconcilers read the informers' stores);
#   - an installed Service, ServiceAccount and HorizontalPodAutoscaler, each deleted by hand,
#     are back within 10 s: only their watch events can explain that;
#   - each repair applies only what changed and passes over the rest
#     (meshop_install_unchanged_objects_total).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${MESHOP_BIN:?}" "${MESHOP_SOURCE_DIR:?}"

id=$RANDOM
cp=e2e-idle-$id
rev=idle$id
work=$(mktemp -d)
base=$((20000 + id % 12000))  # below the ephemeral range (32768-) where clients bind
run_pid=
trap operator_cleanup EXIT

operator_setup "$cp"

operator_start "$base"
kubectl apply -f - >/dev/null <<YAML
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: $rev, namespace: $cp}
spec:
  profile: minimal
  namespace: $cp
  revision: $rev
  values:
    global: {istioNamespace: $cp}
YAML
healthy() { [ "$(kubectl -n "$cp" get istiooperator "$rev" -o jsonpath='{.status.status}')" = HEALTHY ]; }
wait_for 120 "IstioOperator HEALTHY" healthy

# "ADDS APPLIED UNCHANGED": install queue adds and install's object counters.
counts() {
  curl -sf "http://127.0.0.1:$((base + 1))/metrics" | awk '
    /^workqueue_adds_total\{name="install"\}/ {q = $2}
    /^meshop_install_applied_objects_total\{/ {a += $2}
    /^meshop_install_unchanged_objects_total\{/ {u += $2}
    END {printf "%d %d %d\n", q, a, u}'
}
# Let the last events of the rollout settle (the Deployment's final status update wakes
# install once more): until the queue saw no add for 5 s.
settled() {
  local a b
  read -r a _ _ < <(counts)
  sleep 5
  read -r b _ _ < <(counts)
  [ "$a" = "$b" ]
}
wait_for 60 "install queue quiet for 5 s" settled
# Reads meshop made, from its own request counter: "verb resource count" per line.
reads() {
  curl -sf "http://127.0.0.1:$((base + 1))/metrics" | awk '
    /^meshop_kube_requests_total\{/ {
      if (match($0, /verb="[^"]*"/)) v = substr($0, RSTART + 6, RLENGTH - 7)
      if (match($0, /resource="[^"]*"/)) r = substr($0, RSTART + 10, RLENGTH - 11)
      if (v == "get" || v == "list") n[v " " r] += $2
    }
    END {for (k in n) print k, n[k]}' | sort
}
# (The body first: `curl | grep -q` under pipefail fails when grep stops reading early.)
metrics=$(curl -sf "http://127.0.0.1:$((base + 1))/metrics")
grep -q '^meshop_kube_requests_total{' <<<"$metrics" ||
  fail "meshop exposes no meshop_kube_requests_total"
read -r adds0 applied0 unchanged0 < <(counts)
reads0=$(reads)
# The informers' initial LISTs are counted: without them the counter or this parser is broken.
grep -q '^list ' <<<"$reads0" || fail "no LIST counted since meshop started: $reads0"
sleep 30
reads1=$(reads)
read -r adds1 applied1 unchanged1 < <(counts)
echo "at rest for 30 s: $((adds1 - adds0)) install queue adds, $((applied1 - applied0)) applies"
made=$(join -a 2 -e 0 -o 0,1.2,2.2 <(printf '%s\n' "$reads0" | sed 's/ /:/') \
  <(printf '%s\n' "$reads1" | sed 's/ /:/') | awk '$3 != $2 {print $1, $3 - $2}')
echo "GET/LIST requests in the quiet 30 s: ${made:-none}"
[ -z "$made" ] || fail "meshop read from the apiserver while nothing changed: $made"
[ "$applied1" = "$applied0" ] || fail "install applied $((applied1 - applied0)) objects while nothing changed"
[ $((adds1 - adds0)) -le 1 ] || fail "install was woken $((adds1 - adds0)) times in 30 quiet seconds"

exists() { kubectl get "$@" >/dev/null 2>&1; }
repaired() {  # KIND NAME
  kubectl -n "$cp" delete "$1" "$2" >/dev/null
  local t0=$SECONDS
  wait_for 10 "$1 $2 re-created from its watch event" exists -n "$cp" "$1" "$2"
  echo "$1 $2: back after $((SECONDS - t0)) s or less"
}
exists -n "$cp" horizontalpodautoscaler "istiod-$rev" || fail "the minimal profile rendered no HPA"
repaired service "istiod-$rev"
repaired serviceaccount "istiod-$rev"
repaired horizontalpodautoscaler "istiod-$rev"
read -r adds2 applied2 unchanged2 < <(counts)
echo "repairs: $((applied2 - applied1)) applies, $((unchanged2 - unchanged1)) passed over"
[ $((applied2 - applied1)) -lt $((unchanged2 - unchanged1)) ] ||
  fail "repairs re-applied $((applied2 - applied1)) objects and passed over only $((unchanged2 - unchanged1))"
echo PASS
