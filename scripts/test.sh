#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors, then ctest.
# Integration tests start real redis-server and memcached on free loopback ports; here a
# missing server is a failure, not a skip (KV_REQUIRE_SERVERS=1).
# Usage: scripts/test.sh [ctest arguments, e.g. -L unit or -R Kvdrive]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/install-deps.sh"
build_args=(-DKV_WERROR=ON)
build=${KV_BUILD_DIR:-$root/build}
if [[ "${CI:-}" == "true" ]]; then
  # In CI (a throwaway machine) also install, run and purge the Debian packages, made from this
  # very build: it is configured as the packages' build (packaging/deb-flags.sh: Debian's
  # hardening flags, Release -O3, -g1 for the -dbgsym packages, prefix /usr), so the suite tests
  # the code the packages ship, and CI compiles it once, not twice (a package build of its own
  # took ~330 s of CI's test stage). The tests' own code builds at -O2 (tests/CMakeLists.txt).
  # CCACHE_BASEDIR empty: relative source paths would escape -ffile-prefix-map.
  export KV_PACKAGE_TEST=1 KV_PKG_PREBUILT=1 KV_PKG_BUILD_DIR=$build CCACHE_BASEDIR=
  source "$root/packaging/deb-flags.sh"
  kv_deb_cmake_args "$root" "$build" -g1
  build_args+=("${kv_deb_args[@]}")
  # What the build printed, for the package test's "no warnings" check.
  mkdir -p "$build"
  "$root/scripts/build.sh" "${build_args[@]}" 2>&1 | tee "$build/build-output.log"
else
  "$root/scripts/build.sh" "${build_args[@]}"
fi
export KV_REQUIRE_SERVERS=1
cd "$build"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
