#include "workload/key_chooser.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kvbench/usage_error.hpp"

namespace {
using namespace kv::drive;

TEST(ZipfSampler, FrequenciesFollowThePowerLaw) {
  std::mt19937_64 rng(3);
  for (double s : {0.8, 1.0, 1.3}) {
    ZipfSampler zipf(1000, s);
    std::vector<int> count(1001, 0);
    const int n = 400'000;
    for (int i = 0; i < n; ++i) {
      uint64_t k = zipf(rng);
      ASSERT_GE(k, 1u);
      ASSERT_LE(k, 1000u);
      ++count[k];
    }
    // P(1)/P(2) = 2^s and P(1)/P(10) = 10^s.
    EXPECT_NEAR(static_cast<double>(count[1]) / count[2], std::pow(2, s), 0.08 * std::pow(2, s))
        << s;
    EXPECT_NEAR(static_cast<double>(count[1]) / count[10], std::pow(10, s), 0.15 * std::pow(10, s))
        << s;
  }
}

TEST(ZipfSampler, HugeKeySpacesNeedNoTable) {
  std::mt19937_64 rng(5);
  ZipfSampler zipf(5'000'000'000ull, 0.99);
  for (int i = 0; i < 1000; ++i) {
    uint64_t k = zipf(rng);
    ASSERT_GE(k, 1u);
    ASSERT_LE(k, 5'000'000'000ull);
  }
}

TEST(KeyChooser, SequentialWrapsWithinTheShare) {
  KeyPattern p;
  KeyChooser c(p, 100, 10, 13, 1.0, 1);
  std::vector<uint64_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(c.next_get());
  EXPECT_EQ(got, (std::vector<uint64_t>{10, 11, 12, 10, 11, 12, 10}));
}

TEST(KeyChooser, UniformAndGaussianStayInRange) {
  for (auto kind : {KeyPattern::Kind::uniform, KeyPattern::Kind::gaussian}) {
    KeyPattern p;
    p.kind = kind;
    KeyChooser c(p, 1000, 0, 1000, 1.0, 2);
    double sum = 0;
    for (int i = 0; i < 100'000; ++i) {
      uint64_t k = c.next_get();
      ASSERT_LT(k, 1000u);
      sum += static_cast<double>(k);
    }
    EXPECT_NEAR(sum / 100'000, 500, 10);
  }
}

TEST(KeyChooser, HitRateSendsTheRestToUnwrittenKeys) {
  KeyPattern p;
  p.kind = KeyPattern::Kind::zipf;
  KeyChooser c(p, 1000, 0, 1000, 0.8, 9);
  int hits = 0;
  for (int i = 0; i < 100'000; ++i) {
    uint64_t k = c.next_get();
    ASSERT_LT(k & ~kMissKey, 1000u);  // a miss keeps the popularity shape of the key space
    hits += (k & kMissKey) == 0;
    ASSERT_LT(c.next_set(), 1000u);  // sets always go to the written key space
  }
  EXPECT_NEAR(hits / 1e5, 0.8, 0.01);
}

// Miss keys are a key space of their own: no index of any run's written keys (whatever
// --keys) formats to one of them.
TEST(KeyFormatter, MissKeysAreOutsideEveryWrittenKeySpace) {
  KeyFormatter f("kv:");
  EXPECT_EQ(f.format(42), "kv:42");
  EXPECT_EQ(f.format(42 | kMissKey), "kv:~miss:42");
  EXPECT_EQ(f.format(0 | kMissKey), "kv:~miss:0");
  EXPECT_EQ(f.format(4'294'967'295ull | kMissKey), "kv:~miss:4294967295");
  EXPECT_EQ(f.format(7), "kv:7");  // the buffer is reused
}

// hotset:0.01:0.9: 90 % of the requests to the first 1 % of the keys, uniform within each part;
// the name round-trips through the parser.
TEST(KeyChooser, AHotSetTakesItsShareOfTheRequests) {
  const KeyPattern p = parse_key_pattern("hotset:0.01:0.9");
  EXPECT_EQ(key_pattern_name(p), "hotset:0.01:0.9");
  EXPECT_EQ(key_pattern_name(parse_key_pattern(key_pattern_name(p))), "hotset:0.01:0.9");
  KeyChooser c(p, 10'000, 0, 10'000, 1.0, 7);
  const int n = 200'000;
  int hot = 0;
  std::vector<int> cold_half(2, 0);
  for (int i = 0; i < n; ++i) {
    const uint64_t k = c.next_get();
    ASSERT_LT(k, 10'000u);
    if (k < 100)
      ++hot;
    else
      ++cold_half[k < 5'050 ? 0 : 1];
  }
  EXPECT_NEAR(hot / static_cast<double>(n), 0.9, 0.005);
  EXPECT_NEAR(cold_half[0] / static_cast<double>(cold_half[0] + cold_half[1]), 0.5, 0.02);
  for (const char* bad : {"hotset", "hotset:0.01", "hotset:0:0.9", "hotset:1:0.9", "hotset:0.1:1.5",
                          "hotset:x:0.5", "hotset:0.1:"})
    EXPECT_THROW(parse_key_pattern(bad), kv::UsageError) << bad;
}

}  // namespace
