#!/usr/bin/env bash
# Builds the kvmon and kvdrive Debian packages, and their kvmon-dbgsym and kvdrive-dbgsym
# (.ddeb), from this checkout into packaging/out/ (or $1).
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
# Debian's flags (dpkg-buildflags, as debian/rules would get them) with all the hardening:
# stack protector, _FORTIFY_SOURCE, format-security, full RELRO (-z relro -z now); gcc makes PIE
# by default. Their -g gives the -dbgsym packages something to hold; their -O2 yields to
# Release's -O3, which comes later on the command line. The file-path mapping is ours: the
# source and build trees, not the current directory dpkg-buildflags would map.
export DEB_BUILD_MAINT_OPTIONS="hardening=+all reproducible=-fixfilepath,-fixdebugpath"
# KV_PKG_EXTRA_CXXFLAGS: appended (the package test's -g1: see tests/packaging/package_test.sh).
cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS) ${KV_PKG_EXTRA_CXXFLAGS:-}"
ldflags=$(dpkg-buildflags --get LDFLAGS)
# ccache's base_dir (if set) would hand the compiler relative source paths, which
# -ffile-prefix-map cannot map: the debug info would name the checkout.
export CCACHE_BASEDIR=
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX=/usr -DKV_BUILD_TESTS=OFF \
  "-DCMAKE_CXX_FLAGS=$cxxflags -ffile-prefix-map=$root=. -ffile-prefix-map=$build=." \
  "-DCMAKE_EXE_LINKER_FLAGS=$ldflags" "-DCMAKE_SHARED_LINKER_FLAGS=$ldflags" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb "$out"/*.ddeb
