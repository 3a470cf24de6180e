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
ctest_args=()
if [[ "${CI:-}" == "true" ]]; then
  # Left out of CI, said here and in NOTES.md ("State of the issues (end of session 10)"): the
  # knee search needs a store whose capacity holds from step to step, and a Redis held to 2 %
  # of a core by a CPU quota does not always: now and then it serves 40-100 req/s for seconds
  # while using its whole quota (its own GET + SET count agrees with kvdrive's). 4 ms per
  # 200 ms periods make that rarer than 1 ms per 50 ms, not rare enough
  # (bench/results/quota_period-2026-12-02T0832.md: 5 of 18 steps vs 16 of 18).
  # Run it by hand: ctest -R FindsAKnee.
  echo "test: leaving out KvdriveSearch.FindsAKneeThatFixedRateStepsConfirm in CI (a store under a CPU quota is not steady enough, NOTES.md)" >&2
  ctest_args+=(-E '^KvdriveSearch\.FindsAKneeThatFixedRateStepsConfirm$')
fi
cd "${KV_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 300 -j "$(nproc)" ${ctest_args[@]+"${ctest_args[@]}"} "$@"
