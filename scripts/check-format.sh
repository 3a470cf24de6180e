#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (.clang-format at the top: Google
# based, 100 columns) makes of it; CI runs it first (.ci/run). To fix: scripts/check-format.sh --fix
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/install-deps.sh" --with-format
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/kv-format.$$; then
  n=$(grep -c "error:" /tmp/kv-format.$$ || true)
  grep "error:" /tmp/kv-format.$$ | cut -d: -f1 | sort -u | head -20 >&2
  rm -f /tmp/kv-format.$$
  echo "check-format: $n line(s) differ from clang-format in the files above; run scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/kv-format.$$
echo "check-format: ${#files[@]} files formatted"
