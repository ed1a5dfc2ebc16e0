#!/usr/bin/env bash
# Installs what building and testing meshop needs, from Debian's packages (and Go
# modules, fetched later by the Go tools themselves). Idempotent: skips what is
# present and prints nothing when nothing is missing.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl openssl
  libboost1.81-dev libssl-dev rapidjson-dev libyaml-dev libre2-dev
  prometheus-cpp-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  clang clang-format clang-tidy libclang-rt-14-dev libfuzzer-14-dev
  wrk ccache mmdebstrap umoci python3 python3-yaml haproxy
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
