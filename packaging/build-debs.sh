#!/usr/bin/env bash
# Builds the kvmon and kvdrive Debian packages, and their kvmon-dbgsym and kvdrive-dbgsym
# (.ddeb), from this checkout into packaging/out/ (or $1).
# Usage: [KV_PKG_BUILD_DIR=DIR] packaging/build-debs.sh [OUT_DIR]
# A Release build of its own, installed under /usr, with source paths stripped from the
# binaries, in $KV_PKG_BUILD_DIR: by default outside the checkout,
# ${TMPDIR:-/tmp}/kvbench-build-pkg-UID-HASH (HASH of the checkout's path, so two checkouts do
# not share one), kept between calls so a second build is incremental.
# KV_PKG_PREBUILT=1: $KV_PKG_BUILD_DIR is already configured with packaging/deb-flags.sh's
# arguments and built (CI's test build: scripts/test.sh); it is only packaged.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/packaging/out}
build=${KV_PKG_BUILD_DIR:-${TMPDIR:-/tmp}/kvbench-build-pkg-$(id -u)-$(printf %s "$root" | md5sum | cut -c1-8)}
"$root/packaging/install-deps.sh"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# KV_PKG_EXTRA_CXXFLAGS: appended (the package test's -g1: see tests/packaging/package_test.sh).
# ccache's base_dir (if set) would hand the compiler relative source paths, which
# -ffile-prefix-map cannot map: the debug info would name the checkout.
export CCACHE_BASEDIR=
if [[ "${KV_PKG_PREBUILT:-}" == 1 ]]; then
  cache=$build/CMakeCache.txt
  grep -q '^CMAKE_INSTALL_PREFIX:PATH=/usr$' "$cache" 2>/dev/null &&
    grep -q -e "-ffile-prefix-map=$root=\." "$cache" ||
    { echo "build-debs: KV_PKG_PREBUILT: $build is not configured with packaging/deb-flags.sh's arguments" >&2; exit 1; }
else
  source "$root/packaging/deb-flags.sh"
  kv_deb_cmake_args "$root" "$build" "${KV_PKG_EXTRA_CXXFLAGS:-}"
  cmake -S "$root" -B "$build" "${generator[@]}" "${kv_deb_args[@]}" -DKV_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" --parallel "$(nproc)"
fi
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb "$out"/*.ddeb
