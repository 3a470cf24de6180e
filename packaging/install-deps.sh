#!/usr/bin/env bash
# Installs what kvbench needs to build, test and run its demo on Debian 12, with apt-get, but
# only if something is missing (so it is quick and needs no root when all is there).
# Usage: packaging/install-deps.sh [--with-extras] [--with-fuzz] [--with-format] [--with-tidy]
#   extras: peers for benchmark scripts; fuzz: clang for the libFuzzer targets
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache
  libboost-dev libhiredis-dev libmemcached-dev libproc2-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libssl-dev  # TLS targets
  libzstd-dev  # zstd-compressed cache traces (driver/workload/trace.cpp)
  liburing-dev  # --io uring (driver/engine/loop/uring_transport.cpp)
  libgtest-dev
  redis-server memcached sqlite3
  redis-tools openssl  # the Cluster tests (redis-cli --cluster create) and the TLS tests' certificates
  help2man man-db dpkg-dev fakeroot  # man-db: the man page tests render the pages
  lintian  # the package test lints the .debs (tests/packaging/package_test.sh)
  # Large (~100 MB with its libraries), but CI needs it: the HTML report's test renders the
  # page in headless Chromium (tests/driver/integration/html_report_integration_test.cpp).
  chromium
  # kvmon's /metrics test scrapes with curl and lints the page with promtool (package
  # prometheus; --no-install-recommends: the server is installed but not needed).
  curl prometheus
  # The multi-host example's Job manifest is checked against the Kubernetes API models
  # (packaging/examples/multi-host/check-k8s-manifest; no cluster needed).
  python3-kubernetes
)
for arg in "$@"; do
  case "$arg" in
    --with-extras) packages+=(redis-tools libmemcached-tools sysstat libbenchmark-dev) ;;
    --with-fuzz) packages+=(clang) ;;  # libFuzzer targets (docs/protocol.md, "Fuzzing")
    --with-format) packages+=(clang-format) ;;  # scripts/check-format.sh
    --with-tidy) packages+=(clang-tidy) ;;  # scripts/tidy.sh (Debian 12: clang-tidy 14)
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
