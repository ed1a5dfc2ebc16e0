#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in a separate build directory and runs
# each for a bounded time on its committed seed corpus.
#
#   hack/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS defaults to 60 per target. TARGET is a corpus name (yaml, template, ...): target
# fuzz_<name> runs on test/fuzz/corpus/<name>/. Without TARGETs, every corpus whose target is
# defined in test/fuzz/CMakeLists.txt runs. New inputs found go to $BUILD/corpus/<target>/ (not into the
# tree); crashes are written to $BUILD/artifacts/ and make the script exit non-zero.
# The build directory is $MESHOP_FUZZ_BUILD_DIR or build/fuzz.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
shift || true
build="${MESHOP_FUZZ_BUILD_DIR:-$root/build/fuzz}"

names=("$@")

# -Werror stays off: the warning gate is the g++ build; clang only has to build the targets.
# -fno-sanitize=function: Debian's clang 14 cannot assemble coroutines (the webhook server, the
# kube client) with UBSan's function-type check ("Cannot represent a difference across
# sections"); the other UBSan checks stay on.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMESHOP_FUZZ=ON -DMESHOP_WERROR=OFF -DMESHOP_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function -fno-sanitize-recover=undefined -fno-omit-frame-pointer -fsanitize-ignorelist=$root/test/fuzz/ubsan-ignorelist.txt" \
  >/dev/null
if [ ${#names[@]} -eq 0 ]; then
  defined="$(cmake --build "$build" --target help)"
  for dir in "$root"/test/fuzz/corpus/*/; do
    name="$(basename "$dir")"
    if grep -q "^fuzz_$name:" <<<"$defined"; then names+=("$name"); fi
  done
fi
if [ ${#names[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets defined" >&2
  exit 1
fi
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build "$build" --target "${targets[@]}" -j2

mkdir -p "$build/artifacts"
status=0
for n in "${names[@]}"; do
  t="fuzz_$n"
  mkdir -p "$build/corpus/$n"
  echo "fuzz: $t for ${seconds}s"
  # libFuzzer reports every new coverage point; keep that in a log and show its end.
  log="$build/$t.log"
  extra=()
  # MESHOP_FUZZ_SEED and MESHOP_FUZZ_RUNS make a run reproducible: the same seed explores the
  # same inputs, and a run cap makes that independent of machine speed (CI sets both, so a
  # submission's gate does not depend on luck; developers fuzz with a fresh seed each time).
  [ -n "${MESHOP_FUZZ_SEED:-}" ] && extra+=(-seed="$MESHOP_FUZZ_SEED")
  [ -n "${MESHOP_FUZZ_RUNS:-}" ] && extra+=(-runs="$MESHOP_FUZZ_RUNS")
  if ! "$build/test/fuzz/$t" "${extra[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
      "$build/corpus/$n" "$root/test/fuzz/corpus/$n" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $t FAILED (see $build/artifacts/ and $log)" >&2
    status=1
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done )" "$log" || tail -n 3 "$log"
  fi
done
exit $status
