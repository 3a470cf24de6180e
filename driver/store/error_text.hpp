// A store's error reply as kvdrive shows it: the whole message, since the store says why
// ("ERR AUTH <password> called without any password configured for the default user. Are you
// sure your configuration is correct?"), never just its first word, but with every occurrence
// of a secret kvdrive sent replaced by "***", so a store (or a proxy) that echoes its input
// cannot put a password into a log, a report or the results file. Bytes outside printable
// ASCII become '?', and the text is cut to 300 bytes ("..." after).
#pragma once

#include <string>
#include <string_view>

namespace kv::drive::store {

inline std::string shown_error(std::string_view text, std::string_view secret) {
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n' || text.back() == ' '))
    text.remove_suffix(1);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!secret.empty() && text.substr(i, secret.size()) == secret) {
      out += "***";
      i += secret.size();
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i++]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  constexpr size_t kMax = 300;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

}  // namespace kv::drive::store
