#!/usr/bin/env bash
# Configures and builds kvbench into build/ (or $KV_BUILD_DIR). Extra arguments go to cmake.
# Usage: scripts/build.sh [cmake -D options...] [-- ninja targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KV_BUILD_DIR:-$root/build}
cmake_args=()
targets=()
while (($#)); do
  if [[ "$1" == "--" ]]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" "${cmake_args[@]}" >/dev/null
elif ((${#cmake_args[@]})); then
  cmake -S "$root" -B "$build" "${cmake_args[@]}" >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
