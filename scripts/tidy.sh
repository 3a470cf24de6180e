#!/usr/bin/env bash
# clang-tidy (14, Debian 12's) over the sources of driver/, common/ and monitor/ with the checks
# kept in .clang-tidy (the file says why each is kept or left out). Prints every finding once
# and fails on any. Needs a configured build directory (compile_commands.json: scripts/build.sh
# writes it; generated sources must exist, so build first).
# Usage: scripts/tidy.sh [FILE...]   (default: every tracked .cpp of those folders but
#   driver/cli/ and driver/report/: option parsing and output formatting, 21 of the 109
#   units and the heaviest (CLI11); the whole stage took 289 s of a CI run's time.
#   `scripts/tidy.sh driver/cli/*.cpp driver/report/*.cpp` checks them: run it before a
#   change there is committed)
# Environment: KV_BUILD_DIR (default build/), KV_TIDY_JOBS (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/install-deps.sh" --with-tidy
cd "$root"
build=${KV_BUILD_DIR:-$root/build}
if [[ ! -f $build/compile_commands.json ]]; then
  echo "tidy: no $build/compile_commands.json (run scripts/build.sh first)" >&2
  exit 2
fi
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [[ -z $tidy ]]; then
  echo "tidy: clang-tidy not found (packaging/install-deps.sh --with-tidy)" >&2
  exit 2
fi
if (($# > 0)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'driver/*.cpp' 'common/*.cpp' 'monitor/*.cpp' |
    grep -v -e '^driver/cli/' -e '^driver/report/')
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# GCC's flags in compile_commands.json: clang does not know some (-Wno-error=restrict), and the
# build's -Werror must not turn clang's own warnings into errors here (GCC is the compiler).
printf '%s\n' "${files[@]}" |
  xargs -P "${KV_TIDY_JOBS:-2}" -I{} sh -c \
    '"$0" -p "$1" --quiet --use-color=false --extra-arg=-Wno-unknown-warning-option \
       --extra-arg=-Wno-error "$2" >"$3/$(printf %s "$2" | tr / _).log" 2>&1 || true' \
    "$tidy" "$build" {} "$out"
# A header's finding is reported by every file that includes it: once is enough.
findings=$(cat "$out"/*.log | grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' | sort -u || true)
if [[ -n $findings ]]; then
  printf '%s\n' "$findings"
  echo "tidy: $(printf '%s\n' "$findings" | wc -l) finding(s) in ${#files[@]} files" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files, no findings"
