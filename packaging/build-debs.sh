#!/usr/bin/env bash
# Builds the kvmon and kvdrive Debian packages from this checkout into packaging/out/ (or $1).
# Usage: [KV_PKG_BUILD_DIR=DIR] packaging/build-debs.sh [OUT_DIR]
# A Release build of its own, installed under /usr, with source paths stripped from the
# binaries, in $KV_PKG_BUILD_DIR: by default outside the checkout,
# ${TMPDIR:-/tmp}/kvbench-build-pkg-UID-HASH (HASH of the checkout's path, so two checkouts do
# not share one), kept between calls so a second build is incremental.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/packaging/out}
build=${KV_PKG_BUILD_DIR:-${TMPDIR:-/tmp}/kvbench-build-pkg-$(id -u)-$(printf %s "$root" | md5sum | cut -c1-8)}
"$root/packaging/install-deps.sh"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX=/usr -DKV_BUILD_TESTS=OFF \
  "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=$root=. -ffile-prefix-map=$build=." >/dev/null
cmake --build "$build" --parallel "$(nproc)"
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb
