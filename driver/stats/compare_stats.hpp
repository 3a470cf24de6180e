// Is B faster than A? A distribution-free interval for the ratio of two sets of rounds, and the
// verdict it supports.
//
// Each side is a handful of rounds (a run's throughput, or a percentile of its merged
// histograms). The ratio B/A is the Hodges-Lehmann estimate of the shift between their
// logarithms (the median of all pairwise log(b) - log(a)), exponentiated; its interval is the
// exact Mann-Whitney one (Lehmann 1963; Hollander & Wolfe, "Nonparametric Statistical Methods",
// 4.3): the pairwise differences of ranks k and m*n+1-k, k from the exact distribution of U.
// It assumes only that the rounds of a side are independent and that B's differ from A's by a
// factor (a shift of the logarithms); not normality. Its coverage is at least the confidence
// asked for (the distribution is discrete), so A against A says "faster" or "slower" at most
// 5 % of the time at 95 %. The price: with 3 rounds a side no 95 % interval exists (the most
// extreme arrangement has probability 1/20 a tail); 4 a side is the least of equal sides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kv::drive::compare {

// P(U = u) for u = 0 .. m*n under the null hypothesis (the m + n values exchangeable), where U
// counts the pairs (a_i, b_j) with b_j < a_i. Exact for m, n <= kExactRounds.
std::vector<double> mann_whitney_distribution(int m, int n);
inline constexpr int kExactRounds = 60;

// The rank k (1-based, among the m*n pairwise differences sorted) of the interval's lower end
// at `confidence` (two-sided): the largest k with P(U <= k - 1) <= (1 - confidence) / 2. 0 when
// there is none: too few rounds for that confidence. Beyond kExactRounds a side, the normal
// approximation of U.
int interval_rank(int m, int n, double confidence);

struct RatioInterval {
  double ratio = 1;                 // B / A: the Hodges-Lehmann estimate
  std::optional<double> low, high;  // the interval; nullopt: too few rounds
  double coverage = 0;  // the interval's exact coverage (>= the confidence asked); 0 without one
};

// B relative to A from their rounds (every value > 0; throws std::invalid_argument otherwise
// or when a side is empty).
RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double confidence = 0.95);

enum class Verdict { faster, slower, no_difference, indeterminate };
std::string verdict_name(Verdict v);  // "faster", "slower", "no detectable difference", ...

// What the interval says about B against A, for a figure where higher is better (throughput)
// or lower is (latency), given the smallest effect the user cares about (0.05: 5 %):
//   - no interval (too few rounds): indeterminate;
//   - the interval inside [1/(1+e), 1+e]: no detectable difference (no effect of e or more);
//   - the interval clear of 1: B is faster or slower;
//   - else (it holds 1 and reaches past the effect): indeterminate, too noisy for e.
Verdict verdict(const RatioInterval& r, bool higher_is_better, double min_effect);

// `kvdrive check`: may B be worse than A by more than `max_regression` (0.05: 5 %)? A
// regression when the whole interval is worse than that (throughput below 1 - max, latency
// above 1 + max), a pass when none of it is, else (or without an interval) indeterminate.
enum class CheckVerdict { pass, regression, indeterminate };
CheckVerdict check_verdict(const RatioInterval& r, bool higher_is_better, double max_regression);
std::string check_verdict_name(CheckVerdict v);  // "pass", "regression", "indeterminate"

// The median of `values` (0 for none).
double median(std::vector<double> values);

// The spread of one side's rounds: (max - min) / median, 0 for one round.
double relative_spread(std::vector<double> values);

}  // namespace kv::drive::compare
