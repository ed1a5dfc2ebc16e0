#!/usr/bin/env bash
# The build refuses a chart set whose files are not the ones manifests/versions.yaml names:
# hack/chart-sets.sh fails naming the version and both sums, and writes no blob. A module
# version the proxy does not have fails naming it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

sed 's/sha256: 5b708fc3/sha256: 00000000/' "$root/manifests/versions.yaml" > "$work/bad-sum.yaml"
cmp -s "$work/bad-sum.yaml" "$root/manifests/versions.yaml" && fail "could not tamper with the 1.30 sum"
if MESHOP_VERSIONS_FILE=$work/bad-sum.yaml bash "$root/hack/chart-sets.sh" "$work/b.bin" "$work/b.h" 2>"$work/err"; then
  fail "a wrong sha256 was accepted"
fi
grep -q "version 1.30 (istio.io/istio@v0.0.0-20260826214018-9739e10eb9d7): the chart files" "$work/err" \
  || fail "the error does not name the version: $(cat "$work/err")"
grep -q "manifests/versions.yaml says 00000000" "$work/err" || fail "the error does not give the table's sum"
[ ! -e "$work/b.bin" ] || fail "a blob was written"

sed 's/module: v0.0.0-20260826214018-9739e10eb9d7/module: v0.0.0-20200101000000-000000000000/' \
  "$root/manifests/versions.yaml" > "$work/bad-module.yaml"
if MESHOP_VERSIONS_FILE=$work/bad-module.yaml bash "$root/hack/chart-sets.sh" "$work/c.bin" "$work/c.h" 2>"$work/err2"; then
  fail "an unknown module version was accepted"
fi
grep -q "istio.io/istio@v0.0.0-20200101000000-000000000000" "$work/err2" \
  || fail "the error does not name the module: $(cat "$work/err2")"

# The real table passes, and --sum agrees with it for the pinned module.
bash "$root/hack/chart-sets.sh" "$work/ok.bin" "$work/ok.h"
dir=$(bash "$root/hack/chart-sets.sh" --dir 1.31)
sum=$(bash "$root/hack/chart-sets.sh" --sum "$dir/manifests")
grep -q "sha256: $sum" "$root/manifests/versions.yaml" || fail "--sum $sum is not the table's 1.31 sum"
echo "PASS: wrong sum and unknown module refused, naming them"
