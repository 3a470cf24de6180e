#include "kvbench/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

TEST(LatencyHistogram, EmptyIsZero) {
  kv::LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile_ns(0.99), 0u);
  EXPECT_EQ(h.mean_ns(), 0.0);
}

TEST(LatencyHistogram, BucketsCoverEveryValueOnce) {
  // Each bucket's upper bound maps back to that bucket, and the next value to the next one.
  for (int i = 0; i < kv::LatencyHistogram::kBuckets - 1; ++i) {
    uint64_t upper = kv::LatencyHistogram::bucket_upper_ns(i);
    ASSERT_EQ(kv::LatencyHistogram::index_of(upper), i);
    ASSERT_EQ(kv::LatencyHistogram::index_of(upper + 1), i + 1);
  }
  EXPECT_EQ(kv::LatencyHistogram::bucket_upper_ns(kv::LatencyHistogram::kBuckets - 1),
            kv::LatencyHistogram::kMaxTrackableNs);
}

TEST(LatencyHistogram, PercentilesWithinOnePercentOfExact) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(200'000.0), 1.0);  // ~200 us median
  kv::LatencyHistogram h;
  std::vector<uint64_t> values;
  for (int i = 0; i < 100'000; ++i) {
    auto v = static_cast<uint64_t>(dist(rng)) + 1000;
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    auto exact = static_cast<double>(values[static_cast<size_t>(std::ceil(q * 100'000)) - 1]);
    auto got = static_cast<double>(h.percentile_ns(q));
    EXPECT_NEAR(got / exact, 1.0, 0.01) << "q=" << q;
  }
  EXPECT_EQ(h.max_ns(), values.back());
  EXPECT_EQ(h.percentile_ns(1.0), values.back());
  EXPECT_EQ(h.count(), 100'000u);
}

TEST(LatencyHistogram, MergeEqualsRecordingIntoOne) {
  kv::LatencyHistogram a, b, all;
  for (uint64_t v = 1; v < 5'000'000; v = v * 3 / 2 + 7) {
    (v % 2 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.max_ns(), all.max_ns());
  EXPECT_EQ(a.min_ns(), all.min_ns());
  EXPECT_DOUBLE_EQ(a.mean_ns(), all.mean_ns());
  for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(a.percentile_ns(q), all.percentile_ns(q));
}

TEST(LatencyHistogram, HugeValuesAreClampedNotLost) {
  kv::LatencyHistogram h;
  h.record(uint64_t{1} << 40);  // ~18 minutes
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.max_ns(), kv::LatencyHistogram::kMaxTrackableNs);
}

}  // namespace
