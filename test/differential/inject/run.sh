#!/usr/bin/env bash
# Injection differential test: random pods through meshop's engine and upstream's injector.
#   test/differential/inject/run.sh RUNNER FIXTURES_DIR WORK_DIR [runner flags...]
# FIXTURES_DIR is the output of `hack/injectoracle.sh settings`. The same pods run in three
# configurations: upstream TestInjection's default settings with ENABLE_NATIVE_SIDECARS auto
# (fake nodes v1.33/v1.34, so native sidecars) and false, and the settings of golden case
# hello.cni (istio-cni enabled, global.network=network1). Environment:
#   MESHOP_INJECT_DIFF_SEED    seed of the generated pods (default 20261129)
#   MESHOP_INJECT_DIFF_COUNT   number of pods (default 400)
# A mismatch names its seed and pod index; the pod and both results are written to
# WORK_DIR/<config>/report.txt.d/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
runner=$1 fixtures=$2 work=$3
shift 3
mkdir -p "$work"
oracle=$(bash "$root/hack/injectoracle.sh" --build)
seed=${MESHOP_INJECT_DIFF_SEED:-20261129}
"$oracle" genpods --seed "$seed" --count "${MESHOP_INJECT_DIFF_COUNT:-400}" > "$work/pods.jsonl"
status=0
run() {  # run NAME ORACLE/RUNNER-FLAGS...
  local name=$1
  shift
  mkdir -p "$work/$name"
  "$oracle" inject "$@" < "$work/pods.jsonl" > "$work/$name/upstream.jsonl"
  "$runner" --fixtures "$fixtures" "$@" --pods "$work/pods.jsonl" \
    --upstream "$work/$name/upstream.jsonl" --oracle "$oracle" \
    --report "$work/$name/report.txt" "${extra[@]}" || status=1
}
extra=("$@")
run native-auto --settings "$fixtures/settings/default" --native auto
run native-off --settings "$fixtures/settings/default" --native false
run cni --fixtures "$fixtures" --case hello.cni
exit $status
