#!/usr/bin/env bash
# Configures and builds meshop with a CMake preset (default: relwithdebinfo) into
# build/<preset>. Other presets: debug, release, asan, tsan. Extra arguments go to
# `cmake --build` (e.g. --target meshop).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset=${1:-relwithdebinfo}
[ $# -gt 0 ] && shift
if [ ! -f "build/$preset/build.ninja" ]; then
  cmake --preset "$preset" >/dev/null
fi
cmake --build --preset "$preset" -j 2 "$@"
