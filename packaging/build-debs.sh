#!/usr/bin/env bash
# Builds the kvmon and kvdrive Debian packages from this checkout into packaging/out/ (or $1).
# A Release build of its own (build-pkg/), installed under /usr, with source paths stripped from
# the binaries.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/packaging/out}
build=${KV_PKG_BUILD_DIR:-$root/build-pkg}
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
