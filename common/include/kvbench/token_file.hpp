// The shared secret of kvmon's TCP server (docs/protocol.md, docs/threat-model.md): read from
// the first line of a file by kvmon (--token-file) and kvdrive (--monitor-token-file) alike, so
// both refuse the same tokens and warn about the same file modes.
#pragma once

#include <cstddef>
#include <string>

namespace kv {

// A shorter token is refused: 16 bytes of a random string (e.g. `openssl rand -hex 16` gives
// 32) cannot be guessed online, and kvmon rate-limits failed attempts on top of that.
inline constexpr size_t kMinTokenBytes = 16;

struct TokenFile {
  std::string token;
  // Non-empty when the file is readable by its group or by anyone ("chmod 600 FILE"): one
  // line for the caller to log as a warning.
  std::string warning;
};

// Reads the token on the first line of `path` (trailing blanks and '\r' removed). `option`
// names the option in messages ("--token-file"). Throws UsageError, one line naming
// the option and the file, if the file cannot be read, its first line is empty, or the token
// is shorter than kMinTokenBytes or longer than the protocol allows.
TokenFile read_token_file(const std::string& path, const std::string& option);

}  // namespace kv
