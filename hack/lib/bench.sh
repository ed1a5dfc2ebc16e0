# Helpers shared by the webhook benchmarks (hack/bench-webhook.sh, hack/bench-webhook-rate.sh).
# They expect the caller's $work (a scratch directory holding review.json) and pids (an array
# of processes the caller kills on exit).

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_https() {  # URL: until the server answers the review with a patch
  for _ in $(seq 1 200); do
    if curl -fsS -k -H 'Content-Type: application/json' --data-binary @"$work/review.json" "$1" 2>/dev/null | grep -q '"patch"'; then
      return 0
    fi
    sleep 0.1
  done
  echo "$(basename "$0"): $1 does not answer with a patch" >&2; return 1
}

# start_noop NOOP_BINARY MESHOP_URL THREADS: starts the no-op HTTPS server (test/bench/
# noop_https.cpp) answering every request with meshop's own answer to the review (fetched from
# MESHOP_URL), so that it writes as many bytes; sets noop_url to its /inject URL.
start_noop() {
  curl -fsS -k -H 'Content-Type: application/json' --data-binary @"$work/review.json" \
    "$2" > "$work/answer.json"
  "$1" --cert "$work/tls.crt" --key "$work/tls.key" --body "$work/answer.json" \
    --addr 127.0.0.1:0 --threads "$3" > "$work/noop.out" 2>"$work/noop.log" &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q '^listening on' "$work/noop.out" && break; sleep 0.05; done
  local port
  port=$(awk '/^listening on/ {print $3}' "$work/noop.out")
  [ -n "$port" ] || { echo "$(basename "$0"): the no-op server did not start: $(cat "$work/noop.log")" >&2; return 1; }
  noop_url="https://127.0.0.1:$port/inject"
  wait_https "$noop_url"
}
