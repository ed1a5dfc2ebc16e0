#!/usr/bin/env bash
# Records the templates sprig v3.3.0's own test suite renders, as differential cases.
#   hack/sprig-test-cases.sh OUT.jsonl
# Copies sprig's module (the version hack/gotemplate pins, from the Go module cache) into a
# temporary directory, wraps its test helpers runtv/runRaw (every template test goes through
# them) with hack/gotemplate/sprigrecord/record_test.go.txt, which appends each template and
# its data as a JSON line {"name","template","data"}, and runs `go test`. Nothing of sprig is
# committed; its test dependencies come from the module proxy. Test failures inside sprig's
# suite (DNS, clock) do not matter: only the recorded templates do.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
command -v go >/dev/null || { echo "sprig-test-cases: no Go toolchain on PATH" >&2; exit 1; }
export GOTOOLCHAIN=local
ver=$(cd "$here/gotemplate" && go list -m -f '{{.Version}}' github.com/Masterminds/sprig/v3)
src=$(cd "$here/gotemplate" && go mod download -json "github.com/Masterminds/sprig/v3@$ver" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "sprig-test-cases: sprig $ver not in the module cache" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cp -r "$src/." "$tmp/"
chmod -R u+w "$tmp"
# Rename the helpers; the recorder defines runtv/runRaw in front of them.
sed -i -e 's/^func runtv(/func runtvOrig(/' -e 's/^func runRaw(/func runRawOrig(/' "$tmp/functions_test.go"
grep -q '^func runtvOrig(' "$tmp/functions_test.go" && grep -q '^func runRawOrig(' "$tmp/functions_test.go" ||
  { echo "sprig-test-cases: sprig's test helpers changed shape" >&2; exit 1; }
cp "$here/gotemplate/sprigrecord/record_test.go.txt" "$tmp/zz_meshop_record_test.go"
rec="$tmp/recorded.jsonl"
(cd "$tmp" && MESHOP_SPRIG_RECORD="$rec" GOFLAGS=-mod=mod go test -count=1 . >"$tmp/test.log" 2>&1) || true
[ -s "$rec" ] || tail -20 "$tmp/test.log" >&2
[ -s "$rec" ] || { echo "sprig-test-cases: sprig's test suite recorded nothing" >&2; exit 1; }
# One case per distinct name (a template rendered twice with the same data is one case).
awk '!seen[$0]++' "$rec" > "$out"
