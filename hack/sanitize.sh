#!/usr/bin/env bash
# Runs the unit tests of the code that meets hostile input (the webhook server and its engine,
# injection, YAML/JSON, the kube client's transport, Helm charts; the template engine's tests
# link the whole CLI and are left to fuzz_template, which runs the engine under the same
# sanitizers) under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer, in the
# clang build the fuzzers use (hack/fuzz.sh: same flags, same directory, so its libraries are built once).
# Then ThreadSanitizer over the webhook under load (below; MESHOP_SANITIZE_TSAN=0 skips it).
# Any report fails the run.
#   hack/sanitize.sh [TEST-BINARY-NAME...]     default: all of them
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MESHOP_FUZZ_BUILD_DIR:-$root/build/fuzz}"

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(meshop_webhook_tests meshop_webhook_engine_tests meshop_inject_tests
  meshop_api_tests meshop_kube_tests meshop_helm_tests)

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMESHOP_FUZZ=ON -DMESHOP_WERROR=OFF -DMESHOP_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function -fno-sanitize-recover=undefined -fno-omit-frame-pointer -fsanitize-ignorelist=$root/test/fuzz/ubsan-ignorelist.txt" \
  >/dev/null
cmake --build "$build" --target "${tests[@]}" -j2

# ASan's redzones make frames several times larger: the tests that check a bounded nesting
# depth stays on the stack (JSON, Helm include recursion) get the room they have unsanitized.
ulimit -s 65536
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
run() {  # NAME BINARY [GTEST ARGS...]
  local name=$1 bin=$2 log
  shift 2
  log="$build/sanitize-$name.log"
  if (cd "$(dirname "$bin")" && "$bin" "$@") >"$log" 2>&1; then
    echo "sanitize: $name: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    tail -n 80 "$log" >&2
    echo "sanitize: $name FAILED (see $log)" >&2
    status=1
  fi
}
for t in "${tests[@]}"; do
  bin=$(find "$build/test/unit" -type f -name "$t" -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "sanitize: $t not built" >&2; status=1; continue; }
  if [ "$t" = meshop_webhook_tests ]; then
    # This test abandons a thread stuck in a request on purpose, and with it the coroutine
    # frames that thread owns (WebhookServer::stop documents that leak): leaks are not checked
    # in its process; everything else is.
    stuck=ServerTest.StopReturnsWithinItsBoundEvenWithARequestStuck
    run "$t" "$bin" --gtest_filter="-$stuck"
    ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} run "$t-stuck" "$bin" --gtest_filter="$stuck"
  else
    run "$t" "$bin"
  fi
done

# ThreadSanitizer (its own clang build: it cannot share a process with ASan): the webhook server
# under concurrent load with the real engine while configurations and the certificate change
# (meshop_webhook_load_tests), and the server's own tests. Excluded: the test that abandons a
# stuck thread on purpose, and the RSS measurement of 5,000 idle connections (TSan's shadow
# memory is not the server's). Any race report fails the run.
if [ "${MESHOP_SANITIZE_TSAN:-1}" = 1 ]; then
  tsan_build="${MESHOP_TSAN_BUILD_DIR:-$root/build/tsan}"
  CC=clang CXX=clang++ cmake -S "$root" -B "$tsan_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMESHOP_WERROR=OFF -DMESHOP_BUILD_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" >/dev/null
  cmake --build "$tsan_build" --target meshop_webhook_load_tests meshop_webhook_tests -j2
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  build=$tsan_build
  run tsan-meshop_webhook_load_tests "$tsan_build/test/unit/webhook/meshop_webhook_load_tests"
  run tsan-meshop_webhook_tests "$tsan_build/test/unit/webhook/meshop_webhook_tests" \
    --gtest_filter="-ServerTest.StopReturnsWithinItsBoundEvenWithARequestStuck:ServerTest.FiveThousandIdleConnectionsAreBoundedInMemory"
fi
exit $status
