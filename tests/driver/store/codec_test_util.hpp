// Helpers of the codec tests: feed a byte stream in pieces and describe every reply as a string,
// so that two ways of feeding the same bytes can be compared whole.
#pragma once

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
