#!/usr/bin/env bash
# Two (then three) meshop runtime processes compete for one Lease on the real control plane:
# exactly one leads; SIGKILL of the leader -> another leads within 20 s (lease 15 s);
# SIGTERM of the leader -> it exits 0 after releasing, and another leads within 3 s.
# Finally another holder overwrites the lease: the leader must notice at its next renewal,
# stop, and exit 1 (never keep reconciling without the lease).
# Usage: leader_election.sh CANDIDATE_BINARY   (env: KUBECONFIG, MESHOP_CLUSTER_DIR, MESHOP_SOURCE_DIR)
set -euo pipefail
bin=$1
eval "$(bash "$MESHOP_SOURCE_DIR/hack/cluster.sh" env --dir "$MESHOP_CLUSTER_DIR")"
ns=default
lease=h5-e2e-leader-$$
work=$(mktemp -d)
declare -A pids

fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f"; tail -5 "$f"; done >&2; exit 1; }
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  kubectl -n "$ns" delete lease "$lease" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

start() { "$bin" "$ns" "$lease" "$1" 2>"$work/$1.log" & pids[$1]=$!; }
leads() { grep -q '"msg":"acquired the leader lease"' "$work/$1.log" 2>/dev/null; }
holder() { kubectl -n "$ns" get lease "$lease" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }
# Waits up to $2 seconds (0.1 s steps) for candidate $1 to lead; prints the time it took.
wait_leads() {
  local start_ns=$(date +%s%N)
  for _ in $(seq 1 $(( $2 * 10 ))); do
    if leads "$1"; then echo $(( ($(date +%s%N) - start_ns) / 1000000 )); return 0; fi
    sleep 0.1
  done
  return 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

start a
start b
leader=""
for _ in $(seq 1 300); do
  if leads a; then leader=a; break; fi
  if leads b; then leader=b; break; fi
  sleep 0.1
done
[ -n "$leader" ] || fail "nobody acquired the lease within 30 s"
other=$([ "$leader" = a ] && echo b || echo a)
sleep 5  # two retry periods: the standby must stay a standby
leads "$other" && fail "both candidates lead"
[ "$(holder)" = "$leader" ] || fail "lease holder is '$(holder)', expected $leader"
echo "ok: exactly one leader ($leader)"

# SIGKILL: no release; the standby waits out the 15 s lease from its own observation.
t0=$(now_ms)
kill -KILL "${pids[$leader]}"; unset "pids[$leader]"
wait_leads "$other" 25 >/dev/null || fail "$other did not take over after SIGKILL of $leader"
elapsed=$(( $(now_ms) - t0 ))
echo "ok: $other leads ${elapsed} ms after SIGKILL of $leader"
[ "$elapsed" -le 20000 ] || fail "failover after SIGKILL took ${elapsed} ms (> 20 s)"
leader=$other

# Graceful exit: the leader drains, releases the lease and exits 0; the standby takes over.
start c
sleep 3
leads c && fail "c leads while $leader holds the lease"
kill -TERM "${pids[$leader]}"
t0=$(now_ms)
rc=0; wait "${pids[$leader]}" || rc=$?
unset "pids[$leader]"
[ "$rc" = 0 ] || fail "$leader exited $rc after SIGTERM (want 0)"
grep -q '"msg":"released the leader lease"' "$work/$leader.log" || fail "$leader did not release"
wait_leads c 10 >/dev/null || fail "c did not take over after graceful exit of $leader"
elapsed=$(( $(now_ms) - t0 ))
echo "ok: c leads ${elapsed} ms after $leader exited gracefully"
[ "$elapsed" -le 3000 ] || fail "failover after graceful exit took ${elapsed} ms (> 3 s)"

# Lost lease: someone else takes the Lease behind c's back.
kubectl -n "$ns" patch lease "$lease" --type merge \
  -p '{"spec":{"holderIdentity":"intruder","leaseDurationSeconds":15}}' >/dev/null
rc=0
for _ in $(seq 1 150); do kill -0 "${pids[c]}" 2>/dev/null || break; sleep 0.1; done
kill -0 "${pids[c]}" 2>/dev/null && fail "c still runs 15 s after losing the lease"
wait "${pids[c]}" || rc=$?
unset "pids[c]"
[ "$rc" = 1 ] || fail "c exited $rc after losing the lease (want 1)"
grep -q '"msg":"lost the leader lease"' "$work/c.log" || fail "c did not log the loss"
echo "ok: c exited 1 after another holder took the lease"
echo PASS
