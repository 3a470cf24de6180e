// Program version and host identity, as recorded in every run and monitor session.
#pragma once

#include <string>

namespace kv {

// "0.1.0" (from CMake's project version).
const char* version();
// The git commit the build's tree was on ("1a2b3c4d5e6f", "-dirty" appended when tracked files
// differed), read at build time; "" when built outside a git checkout (a source tarball).
const char* git_revision();
// This host's name (gethostname), or "unknown".
std::string host_name();
// The command line as one string, each argument shell-quoted when needed.
std::string join_command_line(int argc, const char* const* argv);

}  // namespace kv
