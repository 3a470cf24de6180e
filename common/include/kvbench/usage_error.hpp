// UsageError: bad input — an option's value, an unknown option, a config or scenario file line,
// a target URI, a token or results file that is not one. Its message is one line that names the
// option (or file, line, URI) and the value as typed. Thrown before anything is written; each
// main catches it once, prints the line and exits kExitUsage (2) (kvbench/exit_codes.hpp).
// Derives from std::invalid_argument, so a caller may catch either.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace kv {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `message` fit for one terminal line: control characters (a newline, ESC, BEL, DEL ...) as C
// escapes (\n, \t, \x1b), so a value typed with them can neither break the line nor drive the
// terminal. Every main prints its error through it.
inline std::string one_printable_line(std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace kv
