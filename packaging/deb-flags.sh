# Sourced by packaging/build-debs.sh and, in CI, by scripts/test.sh: the CMake arguments of a
# build the Debian packages are made from.
# kv_deb_cmake_args ROOT BUILD [EXTRA_CXXFLAGS]: sets the array kv_deb_args.
# Debian's flags (dpkg-buildflags, as debian/rules would get them) with all the hardening:
# stack protector, _FORTIFY_SOURCE, format-security, full RELRO (-z relro -z now); gcc makes PIE
# by default. Their -g gives the -dbgsym packages something to hold (EXTRA_CXXFLAGS, later on
# the line, may narrow it to -g1); their -O2 yields to Release's -O3, which comes later still.
# The file-path mapping is ours: the source and build trees, not the current directory
# dpkg-buildflags would map.
kv_deb_cmake_args() {
  local root=$1 build=$2 extra=${3:-} cxxflags ldflags
  local -x DEB_BUILD_MAINT_OPTIONS="hardening=+all reproducible=-fixfilepath,-fixdebugpath"
  cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS) $extra"
  ldflags=$(dpkg-buildflags --get LDFLAGS)
  kv_deb_args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr
    "-DCMAKE_CXX_FLAGS=$cxxflags -ffile-prefix-map=$root=. -ffile-prefix-map=$build=."
    "-DCMAKE_EXE_LINKER_FLAGS=$ldflags" "-DCMAKE_SHARED_LINKER_FLAGS=$ldflags")
}
