#include "kvbench/units.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

TEST(ParseSize, PlainAndSuffixed) {
  EXPECT_EQ(kv::parse_size("100"), 100u);
  EXPECT_EQ(kv::parse_size("100B"), 100u);
  EXPECT_EQ(kv::parse_size("20KB"), 20u * 1024);
  EXPECT_EQ(kv::parse_size("20k"), 20u * 1024);
  EXPECT_EQ(kv::parse_size("20KiB"), 20u * 1024);
  EXPECT_EQ(kv::parse_size("1.5M"), 1536u * 1024);
  EXPECT_EQ(kv::parse_size("2 MB"), 2u * 1024 * 1024);
  EXPECT_EQ(kv::parse_size("1G"), 1024ull * 1024 * 1024);
}

TEST(ParseSize, RejectsBadInputNamingIt) {
  for (const char* bad : {"", "-1", "abc", "10XB", "1.2.3", "5 K B", "0x10", "1e3", "nan", "1.5"}) {
    try {
      kv::parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ParseCount, DecimalSuffixes) {
  EXPECT_EQ(kv::parse_count("5000000"), 5'000'000u);
  EXPECT_EQ(kv::parse_count("5M"), 5'000'000u);
  EXPECT_EQ(kv::parse_count("100k"), 100'000u);
  EXPECT_EQ(kv::parse_count("1.5m"), 1'500'000u);
  EXPECT_THROW(kv::parse_count("1.5"), std::invalid_argument);
  EXPECT_THROW(kv::parse_count("10 apples"), std::invalid_argument);
  EXPECT_THROW(kv::parse_count("99999999999999999999999"), std::invalid_argument);
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(kv::parse_duration_us("500ms"), 500'000);
  EXPECT_EQ(kv::parse_duration_us("2m"), 120'000'000);
  EXPECT_EQ(kv::parse_duration_us("10"), 10'000'000);
  EXPECT_EQ(kv::parse_duration_us("10s"), 10'000'000);
  EXPECT_EQ(kv::parse_duration_us("1h"), 3'600'000'000);
  EXPECT_EQ(kv::parse_duration_us("250us"), 250);
  EXPECT_EQ(kv::parse_duration_us("1.5s"), 1'500'000);
  EXPECT_THROW(kv::parse_duration_us("5 parsecs"), std::invalid_argument);
  EXPECT_THROW(kv::parse_duration_us("-1s"), std::invalid_argument);
  EXPECT_THROW(kv::parse_duration_us("ms"), std::invalid_argument);
}

TEST(Format, RoundTripsReadableValues) {
  EXPECT_EQ(kv::format_size(100), "100 B");
  EXPECT_EQ(kv::format_size(20 * 1024), "20 KiB");
  EXPECT_EQ(kv::format_size(1536 * 1024), "1.5 MiB");
  EXPECT_EQ(kv::format_duration_us(500'000), "500 ms");
  EXPECT_EQ(kv::format_duration_us(120'000'000), "2 min");
}

}  // namespace
