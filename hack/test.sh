#!/usr/bin/env bash
# Runs every test meshop has, on a fresh machine too: installs the Debian packages it
# needs, builds the local control plane from Go modules (cached outside the work tree),
# builds meshop with warnings as errors, checks formatting, then runs ctest: unit tests
# and end-to-end tests against a real local control plane (started and torn down by ctest).
# The libFuzzer targets (YAML reader, template engine, injection, renderer, webhook HTTP) run
# for MESHOP_FUZZ_SECONDS each
# (default 60) in a separate clang build before ctest; in that build, hack/sanitize.sh runs the
# unit tests of the webhook, injection, YAML/JSON, kube client and Helm code under
# ASan, LSan and UBSan.
#   hack/test.sh            everything
#   hack/test.sh -L unit    only the unit tests (any ctest arguments are passed on; fuzzing
#                           then runs only if MESHOP_FUZZ_SECONDS is set)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t0=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - t0 ))s)"; }

step "dependencies"
bash hack/install-deps.sh
step "control plane binaries"
bash hack/build-cluster.sh >/dev/null
step "upstream Istio module (oracle data for the golden, differential and unit tests)"
# Before configuring: CMake registers the golden and injection differential tests only when
# the pinned module is in the module cache, and unit tests read upstream files from it.
bash hack/istio-module.sh >/dev/null
step "build"
bash hack/build.sh relwithdebinfo
step "format"
bash hack/format.sh --check
if [ $# -eq 0 ] || [ -n "${MESHOP_FUZZ_SECONDS:-}" ]; then
  step "fuzz (${MESHOP_FUZZ_SECONDS:-60}s per target)"
  # Reproducible by default here (fixed seed, at most 100k inputs per target within the time
  # budget); exploratory fuzzing is `hack/fuzz.sh SECONDS` without these.
  MESHOP_FUZZ_SEED=${MESHOP_FUZZ_SEED:-1} MESHOP_FUZZ_RUNS=${MESHOP_FUZZ_RUNS:-100000} \
    bash hack/fuzz.sh "${MESHOP_FUZZ_SECONDS:-60}"
  step "sanitizers (ASan, LSan, UBSan over the unit tests of the input-facing code; TSan over the webhook under load)"
  bash hack/sanitize.sh
fi
step "ctest"
# e2e tests share one cluster (RESOURCE_LOCK); unit tests run two at a time.
ctest --test-dir build/relwithdebinfo --output-on-failure -j 2 "$@"
step "done"
