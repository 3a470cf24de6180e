# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): makes each -dbgsym package what dh_strip
# would make. CPack (3.25) writes its md5sums with absolute build paths, leaves the .debug files
# executable and gives the package no /usr/share/doc; Debian's dbgsym packages link
# /usr/share/doc/PKG-dbgsym to PKG's (the copyright file), which they depend on exactly.
foreach(ddeb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT ddeb MATCHES "/([^/_]+)-dbgsym_[^/]*\\.ddeb$")
    continue()
  endif()
  set(pkg ${CMAKE_MATCH_1})
  set(root ${ddeb}.d)
  file(REMOVE_RECURSE ${root})
  execute_process(COMMAND dpkg-deb --raw-extract ${ddeb} ${root} COMMAND_ERROR_IS_FATAL ANY)

  file(GLOB_RECURSE debug_files LIST_DIRECTORIES false ${root}/usr/lib/debug/*)
  file(CHMOD ${debug_files} FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  file(MAKE_DIRECTORY ${root}/usr/share/doc)
  file(CREATE_LINK ${pkg} ${root}/usr/share/doc/${pkg}-dbgsym SYMBOLIC)

  set(md5sums "")
  foreach(f IN LISTS debug_files)
    file(MD5 ${f} sum)
    file(RELATIVE_PATH rel ${root} ${f})
    string(APPEND md5sums "${sum}  ${rel}\n")
  endforeach()
  file(WRITE ${root}/DEBIAN/md5sums "${md5sums}")

  execute_process(COMMAND dpkg-deb --root-owner-group -Zxz --build ${root} ${ddeb}
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE ${root})
endforeach()
