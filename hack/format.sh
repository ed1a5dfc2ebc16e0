#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format.
#   hack/format.sh          rewrite files in place
#   hack/format.sh --check  list unformatted files and fail (CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cpp' '*.hpp' '*.h' '*.cc')
[ ${#files[@]} -gt 0 ] || exit 0
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: not clang-formatted (run hack/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files clang-formatted"
else
  clang-format -i "${files[@]}"
fi
