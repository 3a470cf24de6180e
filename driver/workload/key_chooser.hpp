// Picks the key of each read/mixed request: sequential, uniform, gaussian or zipfian over
// 0..keys-1, then (for hit-rate control) moves a chosen fraction to keys that no run writes. One
// per worker thread; no allocation per key.
#pragma once

#include <cstdint>
#include <random>

#include "workload/workload.hpp"

namespace kv::drive {

// Zipf(s) over ranks 1..n by rejection-inversion (Hörmann & Derflinger 1996): O(1) time and
// memory per sample for any n, where a CDF table would need n doubles per thread.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double exponent);
  template <typename Rng>
  uint64_t operator()(Rng& rng) {
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    for (;;) {
      double u = h_integral_n_ + u01(rng) * (h_integral_x1_ - h_integral_n_);
      double x = h_integral_inverse(u);
      // x >= 1 here; this rounding is part of which keys a seed chooses, so it stays.
      auto k = static_cast<uint64_t>(x + 0.5);  // NOLINT(bugprone-incorrect-roundings)
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      double kd = static_cast<double>(k);
      if (kd - x <= s_ || u >= h_integral(kd + 0.5) - h(kd)) return k;
    }
  }

 private:
  double h(double x) const;
  double h_integral(double x) const;
  double h_integral_inverse(double x) const;
  uint64_t n_;
  double exponent_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

class KeyChooser {
 public:
  // Keys begin..end-1 for sequential (a worker's share); 0..keys-1 otherwise.
  KeyChooser(const KeyPattern& pattern, uint64_t keys, uint64_t begin, uint64_t end,
             double hit_rate, uint64_t seed);
  // The key of the next get: with probability 1 - hit_rate a miss key (the base key |
  // kMissKey: a key no run writes, see KeyFormatter).
  uint64_t next_get();
  // The key of the next set: always a key of the written key space.
  uint64_t next_set() { return base_key(); }

 private:
  uint64_t base_key();
  KeyPattern pattern_;
  uint64_t keys_, begin_, end_, cursor_;
  double hit_rate_;
  std::mt19937_64 rng_;
  ZipfSampler zipf_;
  std::normal_distribution<double> gauss_;
  std::uniform_real_distribution<double> u01_{0.0, 1.0};
  uint64_t hot_;  // hotset: the number of hot keys
};

}  // namespace kv::drive
