#include "util/utf8.hpp"

#include <gtest/gtest.h>

namespace kv::drive {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  for (const char* s : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x98\x95", "\xf0\x9f\x98\x80",
                        "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"})
    EXPECT_EQ(invalid_utf8_at(s), std::string_view::npos) << s;
  EXPECT_EQ(utf8_problem("ok"), "");
}

TEST(Utf8, FindsTheFirstBadByte) {
  const std::pair<std::string, size_t> bad[] = {
      {"caf\xe9", 3},           // Latin-1
      {"\x80", 0},              // a lone continuation byte
      {"\xc0\xaf", 0},          // overlong '/'
      {"ab\xe0\x80\xaf", 2},    // overlong, three bytes
      {"\xed\xa0\x80", 0},      // a surrogate
      {"\xf4\x90\x80\x80", 0},  // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},  // no such lead byte
      {"\xe2\x98", 0},          // cut short
      {"x\xc3", 1},             // cut short at the end
      {"\xc3\xa9\xff", 2},
  };
  for (const auto& [text, at] : bad) EXPECT_EQ(invalid_utf8_at(text), at) << text;
  EXPECT_EQ(utf8_problem("caf\xe9"), "byte 0xe9 at offset 3 is not UTF-8");
}

}  // namespace
}  // namespace kv::drive
