#include "stats/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kv::drive::compare {

std::vector<double> mann_whitney_distribution(int m, int n) {
  if (m < 0 || n < 0) throw std::invalid_argument("mann_whitney_distribution: negative size");
  // f(i, j): the distribution for i values of A and j of B. The largest of the i + j values is
  // an A with probability i / (i + j), and then lies above all j B's (U grows by j), or a B,
  // above nothing of A's. One row of i at a time.
  std::vector<std::vector<double>> prev(static_cast<size_t>(n) + 1, std::vector<double>{1.0});
  for (int i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> row(static_cast<size_t>(n) + 1);
    row[0] = {1.0};
    for (int j = 1; j <= n; ++j) {
      std::vector<double>& f = row[static_cast<size_t>(j)];
      f.assign(static_cast<size_t>(i) * static_cast<size_t>(j) + 1, 0.0);
      const double pa = static_cast<double>(i) / (i + j), pb = 1 - pa;
      const std::vector<double>& with_a = prev[static_cast<size_t>(j)];     // (i - 1, j)
      const std::vector<double>& with_b = row[static_cast<size_t>(j - 1)];  // (i, j - 1)
      for (size_t u = 0; u < with_a.size(); ++u) f[u + static_cast<size_t>(j)] += pa * with_a[u];
      for (size_t u = 0; u < with_b.size(); ++u) f[u] += pb * with_b[u];
    }
    prev = std::move(row);
  }
  return prev[static_cast<size_t>(n)];
}

namespace {

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// z with P(Z > z) = p, 0 < p < 0.5, by bisection (exact enough for a rank).
double normal_quantile_upper(double p) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (normal_upper_tail(mid) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct Rank {
  int k = 0;
  double coverage = 0;
};

Rank rank_and_coverage(int m, int n, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("confidence must lie between 0 and 1");
  if (m < 1 || n < 1) return {};
  const double tail = (1 - confidence) / 2;
  if (m <= kExactRounds && n <= kExactRounds) {
    const std::vector<double> p = mann_whitney_distribution(m, n);
    Rank r;
    double below = 0;  // P(U <= k - 1)
    for (int k = 1; k <= m * n; ++k) {
      const double next = below + p[static_cast<size_t>(k - 1)];
      if (next > tail * (1 + 1e-12)) break;
      below = next;
      r = {k, 1 - 2 * below};
    }
    return r;
  }
  const double mn = static_cast<double>(m) * n;
  const double sigma = std::sqrt(mn * (m + n + 1) / 12.0);
  const int k = static_cast<int>(std::floor(mn / 2 - normal_quantile_upper(tail) * sigma));
  if (k < 1) return {};
  return {k, 1 - 2 * (1 - normal_upper_tail((k - 0.5 - mn / 2) / sigma))};
}

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int interval_rank(int m, int n, double confidence) { return rank_and_coverage(m, n, confidence).k; }

RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double confidence) {
  if (a.empty() || b.empty()) throw std::invalid_argument("ratio_interval: a side has no rounds");
  std::vector<double> d;
  d.reserve(a.size() * b.size());
  for (double x : a)
    for (double y : b) {
      if (!(x > 0) || !(y > 0) || !std::isfinite(x) || !std::isfinite(y))
        throw std::invalid_argument("ratio_interval: a value is not above 0");
      d.push_back(std::log(y) - std::log(x));
    }
  std::sort(d.begin(), d.end());
  RatioInterval r;
  r.ratio = std::exp(median_of_sorted(d));
  const Rank k =
      rank_and_coverage(static_cast<int>(a.size()), static_cast<int>(b.size()), confidence);
  if (k.k == 0) return r;
  r.low = std::exp(d[static_cast<size_t>(k.k - 1)]);
  r.high = std::exp(d[d.size() - static_cast<size_t>(k.k)]);
  r.coverage = k.coverage;
  return r;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::no_difference:
      return "no detectable difference";
    case Verdict::indeterminate:
      return "indeterminate";
  }
  return "indeterminate";
}

Verdict verdict(const RatioInterval& r, bool higher_is_better, double min_effect) {
  if (!r.low || !r.high) return Verdict::indeterminate;
  if (*r.low >= 1 / (1 + min_effect) && *r.high <= 1 + min_effect) return Verdict::no_difference;
  if (*r.low > 1) return higher_is_better ? Verdict::faster : Verdict::slower;
  if (*r.high < 1) return higher_is_better ? Verdict::slower : Verdict::faster;
  return Verdict::indeterminate;
}

CheckVerdict check_verdict(const RatioInterval& r, bool higher_is_better, double max_regression) {
  if (!r.low || !r.high) return CheckVerdict::indeterminate;
  if (higher_is_better) {
    const double bound = 1 - max_regression;
    if (*r.high < bound) return CheckVerdict::regression;
    if (*r.low >= bound) return CheckVerdict::pass;
  } else {
    const double bound = 1 + max_regression;
    if (*r.low > bound) return CheckVerdict::regression;
    if (*r.high <= bound) return CheckVerdict::pass;
  }
  return CheckVerdict::indeterminate;
}

std::string check_verdict_name(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::pass:
      return "pass";
    case CheckVerdict::regression:
      return "regression";
    case CheckVerdict::indeterminate:
      return "indeterminate";
  }
  return "indeterminate";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

double relative_spread(std::vector<double> values) {
  if (values.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double range = *hi - *lo, mid = median(std::move(values));
  return mid > 0 ? range / mid : 0;
}

}  // namespace kv::drive::compare
