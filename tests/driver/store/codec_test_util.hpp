// Helpers of the codec tests: feed a byte stream in pieces and describe every reply as a string,
// so that two ways of feeding the same bytes can be compared whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kv::test {

// A string literal with its NUL bytes.
template <size_t N>
std::string bytes_of(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// `v` as `n` big-endian bytes.
inline std::string be(uint64_t v, size_t n) {
  std::string s;
  for (size_t i = n; i-- > 0;) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// A memcached binary response: its 24-byte header, then extras, key and value.
inline std::string response(uint8_t opcode, uint16_t status, uint32_t opaque,
                            std::string_view extras, std::string_view key, std::string_view value,
                            uint64_t cas = 0) {
  return std::string(1, static_cast<char>(0x81)) + static_cast<char>(opcode) + be(key.size(), 2) +
         static_cast<char>(extras.size()) + '\0' + be(status, 2) +
         be(extras.size() + key.size() + value.size(), 4) + be(opaque, 4) + be(cas, 8) +
         std::string(extras) + std::string(key) + std::string(value);
}

// Splits `bytes` at the given offsets (ascending), calls feed(piece) for each piece and, after
// each, drain() (which decodes what it can and appends descriptions to its output).
inline void feed_split(std::string_view bytes, const std::vector<size_t>& cuts,
                       const std::function<void(std::string_view)>& feed,
                       const std::function<void()>& drain) {
  size_t at = 0;
  for (size_t cut : cuts) {
    feed(bytes.substr(at, cut - at));
    drain();
    at = cut;
  }
  feed(bytes.substr(at));
  drain();
}

}  // namespace kv::test
