// SparseHistogram (stats/second_report.hpp): a second's histogram as its non-empty buckets, and
// back, with the same counts, percentiles and maximum.
#include "stats/second_report.hpp"

#include <gtest/gtest.h>

namespace {
using kv::LatencyHistogram;
using kv::drive::SparseHistogram;

TEST(SparseHistogram, KeepsEveryNonEmptyBucketAndRebuildsTheSamePercentiles) {
  LatencyHistogram h;
  for (uint64_t v = 1; v < 2'000'000; v = v * 3 / 2 + 7) h.record(v);
  h.record(5'000'000'000);  // one slow request
  const SparseHistogram s = SparseHistogram::of(h);
  EXPECT_EQ(s.count(), h.count());
  EXPECT_EQ(s.max_ns, h.max_ns());
  int non_empty = 0;
  for (int i = 0; i < LatencyHistogram::kBuckets; ++i) non_empty += h.bucket_count(i) != 0;
  EXPECT_EQ(static_cast<int>(s.buckets.size()), non_empty);
  for (size_t i = 1; i < s.buckets.size(); ++i)
    EXPECT_LT(s.buckets[i - 1].first, s.buckets[i].first) << "not ascending";

  const LatencyHistogram back = s.dense();
  EXPECT_EQ(back.count(), h.count());
  EXPECT_EQ(back.max_ns(), h.max_ns());
  for (int i = 0; i < LatencyHistogram::kBuckets; ++i)
    ASSERT_EQ(back.bucket_count(i), h.bucket_count(i)) << "bucket " << i;
  for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0})
    EXPECT_EQ(back.percentile_ns(q), h.percentile_ns(q)) << q;
}

TEST(SparseHistogram, AnEmptyHistogramHasNoBuckets) {
  const SparseHistogram s = SparseHistogram::of(LatencyHistogram());
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0U);
  EXPECT_EQ(s.dense().count(), 0U);
}

}  // namespace
