// How many rounds `kvdrive compare` needs: for a run-to-run spread and a true difference, how
// often the verdict finds it ("slower") and how often it is indeterminate, and for no difference
// how often it wrongly says faster or slower. Synthetic rounds, lognormal around their level
// (sigma = the spread as a coefficient of variation, near enough for small ones); the method
// itself is driver/stats/compare_stats.cpp, as `kvdrive compare` runs it.
//   ninja -C build compare_rounds_power && build/bench/compare_rounds_power
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "stats/compare_stats.hpp"

using namespace kv::drive::compare;

int main() {
  std::mt19937_64 rng(1);
  const int trials = 2000;
  const auto draw = [&](int n, double level, double sigma) {
    std::normal_distribution<double> noise(0, sigma);
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(level * std::exp(noise(rng)));
    return v;
  };
  std::printf("%-8s %-8s %-8s %-14s %-14s %s\n", "spread", "effect", "rounds", "found (slower)",
              "indeterminate", "false (A vs A)");
  for (double spread : {0.02, 0.05, 0.10}) {
    for (double effect : {0.05, 0.10, 0.20}) {
      for (int n : {4, 5, 6, 8, 10, 15}) {
        int found = 0, unsure = 0, wrong = 0;
        for (int t = 0; t < trials; ++t) {
          const Verdict v =
              verdict(ratio_interval(draw(n, 1000, spread), draw(n, 1000 * (1 - effect), spread)),
                      true, effect / 2);
          found += v == Verdict::slower;
          unsure += v == Verdict::indeterminate;
          const Verdict same = verdict(ratio_interval(draw(n, 1000, spread), draw(n, 1000, spread)),
                                       true, effect / 2);
          wrong += same == Verdict::faster || same == Verdict::slower;
        }
        std::printf("%-8.0f %-8.0f %-8d %-14.1f %-14.1f %.1f\n", spread * 100, effect * 100, n,
                    100.0 * found / trials, 100.0 * unsure / trials, 100.0 * wrong / trials);
      }
    }
  }
  return 0;
}
