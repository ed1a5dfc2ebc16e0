#!/usr/bin/env bash
# The local control plane works through the real kubectl: a namespace and a 2-replica
# Deployment whose pods become Ready (scheduled by kube-scheduler, made Ready by kwok),
# then `kubectl rollout restart` replaces them with new pods that become Ready.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ns=e2e-smoke-$RANDOM
kubectl create namespace "$ns"
trap 'on_exit "$ns"' EXIT

kubectl -n "$ns" create deployment web --image=registry.invalid/web:1 --replicas=2
kubectl -n "$ns" rollout status deployment/web --timeout=120s
ready=$(kubectl -n "$ns" get deployment web -o jsonpath='{.status.readyReplicas}')
[ "$ready" = 2 ] || fail "expected 2 ready replicas, got '$ready'"
before=$(pod_names "$ns" app=web)
[ "$(echo "$before" | wc -w)" = 2 ] || fail "expected 2 pods, got: $before"
for p in $before; do
  [ "$(kubectl -n "$ns" get pod "$p" -o jsonpath='{.status.phase}')" = Running ] || fail "pod $p not Running"
done

kubectl -n "$ns" rollout restart deployment/web
kubectl -n "$ns" rollout status deployment/web --timeout=120s
# Old pods are deleted by the ReplicaSet controller; wait for them to disappear.
wait_for 60 "old pods gone" bash -c "[ -z \"\$(comm -12 <(echo '$before' | tr ' ' '\n' | sort) <(kubectl -n $ns get pods -l app=web -o name | sed 's|pod/||' | sort))\" ]"
after=$(pod_names "$ns" app=web)
[ "$(echo "$after" | wc -w)" = 2 ] || fail "expected 2 pods after restart, got: $after"
for p in $after; do
  case " $before " in *" $p "*) fail "pod $p survived the restart" ;; esac
  cond=$(kubectl -n "$ns" get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
  [ "$cond" = True ] || fail "new pod $p is not Ready"
done
annot=$(kubectl -n "$ns" get deployment web -o jsonpath='{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}')
[ -n "$annot" ] || fail "restartedAt annotation missing"
echo "PASS cluster_smoke: pods $before -> $after"
