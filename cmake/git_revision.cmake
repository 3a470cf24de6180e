# Writes OUT (a header defining KV_GIT_REVISION: the commit the tree at SRC is on, "-dirty" when
# tracked files differ from it, "" outside a git checkout), rewriting it only when it changes, so
# a build recompiles version.cpp alone and only after a commit or an edit.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  set(rev "")
endif()
if(NOT rev STREQUAL "")
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty STREQUAL "")
    set(rev "${rev}-dirty")
  endif()
endif()
set(text "#define KV_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
