#include "util/utf8.hpp"

#include <cstdio>

namespace kv::drive {

size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xbf;  // the allowed range of the second byte (RFC 3629 table)
    if (b >= 0xc2 && b <= 0xdf)
      len = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b == 0xe0)
        lo = 0xa0;  // overlong
      else if (b == 0xed)
        hi = 0x9f;  // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b == 0xf0)
        lo = 0x90;  // overlong
      else if (b == 0xf4)
        hi = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xbf)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::string utf8_problem(std::string_view s) {
  size_t at = invalid_utf8_at(s);
  if (at == std::string_view::npos) return {};
  char buf[80];
  std::snprintf(buf, sizeof buf, "byte 0x%02x at offset %zu is not UTF-8",
                static_cast<unsigned>(static_cast<unsigned char>(s[at])), at);
  return buf;
}

}  // namespace kv::drive
