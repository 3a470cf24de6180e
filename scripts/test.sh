#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors, then ctest.
# Integration tests start real redis-server and memcached on free loopback ports; here a
# missing server is a failure, not a skip (KV_REQUIRE_SERVERS=1).
# Usage: scripts/test.sh [ctest arguments, e.g. -L unit or -R Kvdrive]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/install-deps.sh"
"$root/scripts/build.sh" -DKV_WERROR=ON
export KV_REQUIRE_SERVERS=1
# In CI (a throwaway machine) also build, install, run and purge the Debian packages.
[[ "${CI:-}" == "true" ]] && export KV_PACKAGE_TEST=1
cd "${KV_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
