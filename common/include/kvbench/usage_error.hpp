// UsageError: bad input — an option's value, an unknown option, a config or scenario file line,
// a target URI, a token or results file that is not one. Its message is one line that names the
// option (or file, line, URI) and the value as typed. Thrown before anything is written; each
// main catches it once, prints the line and exits kExitUsage (2) (kvbench/exit_codes.hpp).
// Derives from std::invalid_argument, so a caller may catch either.
#pragma once

#include <stdexcept>

namespace kv {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace kv
