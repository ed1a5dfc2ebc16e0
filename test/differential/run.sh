#!/usr/bin/env bash
# Runs the template differential suite: meshop's engine against Go's text/template + sprig.
#   test/differential/run.sh RUNNER WORK_DIR [--verbose]
# Environment:
#   MESHOP_DIFF_SEED   seed of the generated cases (default 20261129)
#   MESHOP_DIFF_GEN    number of generated cases (default 600)
#   MESHOP_DIFF_SKIP_UPSTREAM=1  do not render upstream's templates (no module download)
#   MESHOP_DIFF_SKIP_SPRIG_TESTS=1  do not record sprig's own test templates
# Besides the cases, every name of Go's FuncMap must be defined by meshop, apart from those
# listed in known-missing-functions.txt (not yet implemented; the list may only shrink). Both
# engines run with a fixed clock (MESHOP_TEMPLATE_TEST_NOW) and the same local time zone (TZ).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
runner=$1
work=$2
shift 2
mkdir -p "$work"
oracle=$(bash "$root/hack/gotemplate.sh" "$work/bin")

"$oracle" collect -out "$work/hand.jsonl" "$here"/cases/*.cases
"$oracle" gen -seed "${MESHOP_DIFF_SEED:-20261129}" -n "${MESHOP_DIFF_GEN:-600}" -out "$work/gen.jsonl"
cat "$work/hand.jsonl" "$work/gen.jsonl" > "$work/all.jsonl"
"$oracle" funcnames > "$work/funcnames.txt"
# The templates sprig v3.3.0's own test suite renders (hack/sprig-test-cases.sh).
if [ "${MESHOP_DIFF_SKIP_SPRIG_TESTS:-0}" != 1 ]; then
  bash "$root/hack/sprig-test-cases.sh" "$work/sprigtest.jsonl"
  cat "$work/sprigtest.jsonl" >> "$work/all.jsonl"
fi

if [ "${MESHOP_DIFF_SKIP_UPSTREAM:-0}" != 1 ]; then
  istio=$(bash "$root/hack/gotemplate.sh" --istio-dir)
  files="$istio/manifests/charts/istio-control/istio-discovery/files"
  for fixture in "$here"/data/sidecar-*.json; do
    variant=$(basename "$fixture" .json)
    "$oracle" sidecar-data -values "$files/../values.yaml" -fixture "$fixture" -out "$work/$variant.data.json"
    "$oracle" filecases -data "$work/$variant.data.json" -prefix "upstream/$variant/" -tname inject \
      "$files/injection-template.yaml" "$files/gateway-injection-template.yaml" \
      "$files/grpc-agent.yaml" "$files/grpc-simple.yaml" >> "$work/all.jsonl"
  done
fi

# `env` reads the process environment: give both engines the same. The clock is fixed one
# day after a daylight-saving change of the local zone (hack/gotemplate/clock.go).
export MESHOP_TEMPLATE_TEST_ENV=from-env
unset MESHOP_TEMPLATE_TEST_UNSET || true
export MESHOP_TEMPLATE_TEST_NOW=${MESHOP_TEMPLATE_TEST_NOW:-2026-03-09T14:03:07.123456789Z}
export TZ=${MESHOP_DIFF_TZ:-America/New_York}
"$oracle" render -in "$work/all.jsonl" -out "$work/go.jsonl"
# The regex and complex-constant cases must also fail with Go's error texts (regexp/syntax's and
# strconv's or fmt's messages).
"$runner" "$work/all.jsonl" "$work/go.jsonl" --report "$work/report.txt" --strict-errors regex/ --strict-errors complex/ \
  --require-functions "$work/funcnames.txt" --known-missing "$here/known-missing-functions.txt" "$@"
