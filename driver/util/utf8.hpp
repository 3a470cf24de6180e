// UTF-8 checks for text that ends up in JSON or in the results file: kvdrive refuses text
// options that are not valid UTF-8 instead of writing JSON no parser accepts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kv::drive {

// The offset of the first byte that does not start a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF are not well formed), or npos if `s` is
// valid UTF-8 throughout.
size_t invalid_utf8_at(std::string_view s);
// "" if `s` is valid UTF-8, else what is wrong in words: "byte 0xe9 at offset 3 is not UTF-8".
std::string utf8_problem(std::string_view s);

}  // namespace kv::drive
