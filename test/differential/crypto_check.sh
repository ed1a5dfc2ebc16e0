#!/usr/bin/env bash
# Go reads what meshop's random sprig functions render (hack/cryptocheck): AES round trips
# both ways, bcrypt/htpasswd hashes verified by x/crypto/bcrypt.
#   test/differential/crypto_check.sh RUNNER WORK_DIR
# Exits 77 (ctest: skipped) when there is no Go toolchain.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
runner=$1
work=$2
command -v go >/dev/null || { echo "crypto_check: no Go toolchain on PATH; skipped" >&2; exit 77; }
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
mkdir -p "$work"
(cd "$root/hack/cryptocheck" && go build -trimpath -o "$work/cryptocheck" .)
"$work/cryptocheck" gen -out "$work/crypto-cases.jsonl"
"$runner" --render "$work/crypto-cases.jsonl" "$work/crypto-meshop.jsonl"
"$work/cryptocheck" check -cases "$work/crypto-cases.jsonl" -results "$work/crypto-meshop.jsonl"
