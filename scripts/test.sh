#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors, then ctest.
# Integration tests start real redis-server and memcached on free loopback ports; here a
# missing server is a failure, not a skip (KV_REQUIRE_SERVERS=1).
# Usage: scripts/test.sh [ctest arguments, e.g. -L unit or -R Kvdrive]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/install-deps.sh"
build_args=(-DKV_WERROR=ON)
if [[ "${CI:-}" == "true" ]]; then
  # In CI (a throwaway machine) also build, install, run and purge the Debian packages, and
  # build -O2 without debug info: -g was ~40 % of each unit's compile time at -O2, and CI
  # builds cold. Not -O3: in the tests' code GCC 12 then reports false -Wstringop-overflow in
  # libstdc++'s operator+ (the package build, -O3, builds no tests).
  export KV_PACKAGE_TEST=1
  build_args+=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
fi
"$root/scripts/build.sh" "${build_args[@]}"
export KV_REQUIRE_SERVERS=1
cd "${KV_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
