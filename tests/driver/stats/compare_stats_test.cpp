// The statistics of `kvdrive compare` against values worked out apart from it (by hand, from
// published tables, or by enumeration in Python), and its error rates on synthetic rounds of
// known distributions.
#include "stats/compare_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {
using namespace kv::drive::compare;

TEST(CompareStats, TheExactDistributionOfUForThreeAndThree) {
  // The 20 ways to place 3 A's among 6 values, by U: 1 1 2 3 3 3 3 2 1 1.
  const std::vector<double> p = mann_whitney_distribution(3, 3);
  const double ways[] = {1, 1, 2, 3, 3, 3, 3, 2, 1, 1};
  ASSERT_EQ(p.size(), 10u);
  for (size_t u = 0; u < p.size(); ++u) EXPECT_NEAR(p[u] * 20, ways[u], 1e-12) << "U = " << u;
  // Five and five, by enumerating the 252 arrangements: 1, 1, 2, 3 ways for U = 0..3.
  const std::vector<double> q = mann_whitney_distribution(5, 5);
  EXPECT_NEAR(q[0] * 252, 1, 1e-9);
  EXPECT_NEAR(q[3] * 252, 3, 1e-9);
  double sum = 0;
  for (double x : mann_whitney_distribution(7, 4)) sum += x;
  EXPECT_NEAR(sum, 1, 1e-12);
}

TEST(CompareStats, TheIntervalsRankMatchesTheTablesCriticalValues) {
  // Two-sided 5 % critical values of U (Mann-Whitney tables): n = 5: 2, 6: 5, 7: 8, 8: 13,
  // 10: 23; the interval's rank is one more. With 3 a side there is none.
  EXPECT_EQ(interval_rank(3, 3, 0.95), 0);
  EXPECT_EQ(interval_rank(2, 7, 0.95), 0);  // 1/36 a tail
  EXPECT_EQ(interval_rank(2, 9, 0.95), 1);  // 1/55
  EXPECT_EQ(interval_rank(4, 4, 0.95), 1);
  EXPECT_EQ(interval_rank(5, 5, 0.95), 3);
  EXPECT_EQ(interval_rank(6, 6, 0.95), 6);
  EXPECT_EQ(interval_rank(7, 7, 0.95), 9);
  EXPECT_EQ(interval_rank(8, 8, 0.95), 14);
  EXPECT_EQ(interval_rank(10, 10, 0.95), 24);
  // Beyond the exact sizes, the normal approximation: 5000 - 1.96 * sqrt(10000 * 201 / 12).
  EXPECT_EQ(interval_rank(100, 100, 0.95), 4197);
  // where it meets the exact one, they agree within a rank or two (1800 - 373.4 for 60, 60).
  EXPECT_NEAR(interval_rank(60, 60, 0.95), 1427, 2);
}

TEST(CompareStats, HodgesLehmannRatioAndIntervalOnFixedRounds) {
  // Four rounds a side: the estimate is the median of the 16 pairwise ratios and the 95 %
  // interval (rank 1) their whole range: 0.85679, 0.72727 (80/110), 1.05556 (95/90).
  const RatioInterval r = ratio_interval({100, 110, 90, 105}, {80, 85, 95, 88});
  EXPECT_NEAR(r.ratio, 0.8567910533, 1e-9);
  ASSERT_TRUE(r.low && r.high);
  EXPECT_NEAR(*r.low, 80.0 / 110, 1e-12);
  EXPECT_NEAR(*r.high, 95.0 / 90, 1e-12);
  EXPECT_NEAR(r.coverage, 1 - 2.0 / 70, 1e-12);
  // Five a side: the 13th of 25 ratios, and the 3rd and 23rd.
  const RatioInterval s = ratio_interval({10, 12, 11, 13, 9}, {14, 15, 13, 16, 12});
  EXPECT_NEAR(s.ratio, 14.0 / 11, 1e-12);
  EXPECT_NEAR(*s.low, 1.0, 1e-12);
  EXPECT_NEAR(*s.high, 1.6, 1e-12);
  // Two a side: an estimate, no interval.
  const RatioInterval t = ratio_interval({1, 2}, {3, 4});
  EXPECT_FALSE(t.low);
  EXPECT_EQ(verdict(t, true, 0.05), Verdict::indeterminate);
  EXPECT_THROW(ratio_interval({}, {1}), std::invalid_argument);
  EXPECT_THROW(ratio_interval({1, 0}, {1}), std::invalid_argument);
}

TEST(CompareStats, VerdictsByWhereTheIntervalLies) {
  const auto at = [](double lo, double hi) { return RatioInterval{(lo + hi) / 2, lo, hi, 0.95}; };
  EXPECT_EQ(verdict(at(1.02, 1.30), true, 0.05), Verdict::faster);
  EXPECT_EQ(verdict(at(1.02, 1.30), false, 0.05), Verdict::slower);  // latency up
  EXPECT_EQ(verdict(at(0.70, 0.90), true, 0.05), Verdict::slower);
  EXPECT_EQ(verdict(at(0.70, 0.90), false, 0.05), Verdict::faster);
  EXPECT_EQ(verdict(at(0.97, 1.04), true, 0.05), Verdict::no_difference);
  EXPECT_EQ(verdict(at(1.01, 1.04), true, 0.05), Verdict::no_difference);  // smaller than 5 %
  EXPECT_EQ(verdict(at(1.01, 1.04), true, 0.01), Verdict::faster);
  EXPECT_EQ(verdict(at(0.90, 1.10), true, 0.05), Verdict::indeterminate);
  EXPECT_EQ(verdict_name(Verdict::no_difference), "no detectable difference");
  EXPECT_NEAR(relative_spread({10, 12, 11}), 2.0 / 11, 1e-12);
  EXPECT_EQ(relative_spread({5}), 0);
}

TEST(CompareStats, ACheckFailsOnlyWhenTheWholeIntervalIsWorseThanAllowed) {
  const auto at = [](double lo, double hi) { return RatioInterval{(lo + hi) / 2, lo, hi, 0.95}; };
  using CV = CheckVerdict;
  // Throughput, 5 % allowed: the bound is 0.95.
  EXPECT_EQ(check_verdict(at(0.80, 0.94), true, 0.05), CV::regression);
  EXPECT_EQ(check_verdict(at(0.95, 1.10), true, 0.05), CV::pass);
  EXPECT_EQ(check_verdict(at(0.90, 1.02), true, 0.05), CV::indeterminate);
  // p99, 10 % allowed: the bound is 1.10.
  EXPECT_EQ(check_verdict(at(1.11, 1.40), false, 0.10), CV::regression);
  EXPECT_EQ(check_verdict(at(0.70, 1.10), false, 0.10), CV::pass);
  EXPECT_EQ(check_verdict(at(1.00, 1.20), false, 0.10), CV::indeterminate);
  EXPECT_EQ(check_verdict(ratio_interval({1, 2}, {3, 4}), true, 0.05), CV::indeterminate);
  EXPECT_EQ(check_verdict_name(CV::regression), "regression");
}

// Draws `n` rounds around `level` with a lognormal spread of `sigma`.
std::vector<double> rounds(std::mt19937_64& rng, int n, double level, double sigma) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(level * std::exp(noise(rng)));
  return v;
}

// A against A: "faster" or "slower" at most 5 % of the time at 95 % (the stated rate), for
// several round counts, spreads and heavy tails.
TEST(CompareStats, AAgainstItselfIsFasterOrSlowerAtMostFivePercentOfTheTime) {
  std::mt19937_64 rng(20261205);
  struct Case {
    int m, n;
    double sigma;
  };
  for (const Case c :
       {Case{4, 4, 0.1}, Case{5, 5, 0.3}, Case{8, 8, 0.05}, Case{4, 7, 0.2}, Case{12, 12, 0.1}}) {
    const int trials = 2000;
    int shown = 0, outside = 0;
    for (int i = 0; i < trials; ++i) {
      const RatioInterval r =
          ratio_interval(rounds(rng, c.m, 1000, c.sigma), rounds(rng, c.n, 1000, c.sigma));
      const Verdict v = verdict(r, true, 0.0);  // no effect too small: the harshest case
      if (v == Verdict::faster || v == Verdict::slower) ++shown;
      if (*r.low > 1 || *r.high < 1) ++outside;
    }
    EXPECT_LE(shown, trials * 5 / 100) << c.m << " vs " << c.n << ", sigma " << c.sigma;
    EXPECT_EQ(shown, outside);
  }
  // Heavy tails (a round now and then three times slower): still at most 5 %.
  int shown = 0;
  std::bernoulli_distribution hiccup(0.1);
  for (int i = 0; i < 2000; ++i) {
    auto a = rounds(rng, 6, 1000, 0.05), b = rounds(rng, 6, 1000, 0.05);
    for (double& x : a) x *= hiccup(rng) ? 3 : 1;
    for (double& x : b) x *= hiccup(rng) ? 3 : 1;
    const Verdict v = verdict(ratio_interval(a, b), false, 0.0);
    shown += v == Verdict::faster || v == Verdict::slower;
  }
  EXPECT_LE(shown, 100);
}

// A clearly slower B (20 % less throughput, 5 % noise) is "slower" nearly always with 5 rounds;
// with a 1 % difference and 10 % noise it is mostly indeterminate, not a guess.
TEST(CompareStats, AClearDifferenceIsFoundAndASmallOneInNoiseIsNotGuessed) {
  std::mt19937_64 rng(7);
  int slower = 0, indeterminate = 0;
  for (int i = 0; i < 1000; ++i) {
    slower += verdict(ratio_interval(rounds(rng, 5, 1000, 0.05), rounds(rng, 5, 800, 0.05)), true,
                      0.05) == Verdict::slower;
    indeterminate += verdict(ratio_interval(rounds(rng, 5, 1000, 0.1), rounds(rng, 5, 990, 0.1)),
                             true, 0.05) == Verdict::indeterminate;
  }
  EXPECT_GE(slower, 950);
  EXPECT_GE(indeterminate, 800);
}

}  // namespace
