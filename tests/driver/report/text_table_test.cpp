// TextTable fitted to a terminal's width: headers wrapped, columns left out in the given order,
// notes wrapped at spaces.
#include "report/text_table.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {
using kv::drive::TextTable;
using kv::drive::wrap_words;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TextTable sample() {
  TextTable t({"store", "offered req/s", "achieved req/s", "p50 ms", "p99 ms", "client-bound"});
  t.add_row({"redis", "1,000", "999", "0.040", "0.522", "no"});
  t.add_row({"memcached", "2,000", "1,999", "0.049", "0.664", "yes"});
  return t;
}

TEST(TextTable, WithoutAWidthEveryColumnKeepsItsOneLineHeader) {
  std::ostringstream out;
  EXPECT_TRUE(sample().print(out).empty());
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "store      offered req/s  achieved req/s  p50 ms  p99 ms  client-bound");
  EXPECT_EQ(lines[2], "memcached          2,000           1,999   0.049   0.664  yes");
}

TEST(TextTable, ANarrowWidthWrapsHeadersBottomAlignedBeforeLeavingAnythingOut) {
  const TextTable t = sample();
  EXPECT_EQ(t.narrowest(), 9u + 2 + 7 + 2 + 8 + 2 + 5 + 2 + 5 + 2 + 12);
  std::ostringstream out;
  EXPECT_TRUE(t.print(out, 60, {3}).empty());
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0], "           offered  achieved    p50    p99");
  EXPECT_EQ(lines[1], "store        req/s     req/s     ms     ms  client-bound");
  EXPECT_EQ(lines[3], "memcached    2,000     1,999  0.049  0.664  yes");
  for (const auto& l : lines) EXPECT_LE(l.size(), 60u) << l;
}

TEST(TextTable, ColumnsAreLeftOutInTheGivenOrderOnlyUntilItFits) {
  const TextTable t = sample();
  std::ostringstream out;
  const auto left_out = t.print(out, 45, {3, 2, 1});
  EXPECT_EQ(left_out, (std::vector<std::string>{"p50 ms", "achieved req/s"}));
  for (const auto& l : lines_of(out.str())) {
    EXPECT_LE(l.size(), 45u) << l;
    EXPECT_EQ(l.find("0.040"), std::string::npos) << l;
  }
  EXPECT_NE(out.str().find("0.664"), std::string::npos);
  // The first column is never left out, even when nothing else fits.
  std::ostringstream tiny;
  const auto all = t.print(tiny, 5, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(all.size(), 5u);
  EXPECT_EQ(lines_of(tiny.str())[1], "redis");
}

TEST(TextTable, WrappedWordsKeepEachLineAndIndentTheRest) {
  EXPECT_EQ(wrap_words("short", 80), "short");
  EXPECT_EQ(wrap_words("a b c", 0), "a b c");
  EXPECT_EQ(wrap_words("hint: one two three four", 12, "      "),
            "hint: one\n      two\n      three\n      four");
  EXPECT_EQ(wrap_words("first line\nsecond line here", 11), "first line\nsecond line\nhere");
  // A word longer than the width stays whole, on its own line.
  EXPECT_EQ(wrap_words("see kvdrive-report-run-seven now", 10),
            "see\nkvdrive-report-run-seven\nnow");
}

}  // namespace
