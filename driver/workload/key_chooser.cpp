#include "workload/key_chooser.hpp"

#include <algorithm>
#include <cmath>

namespace kv::drive {
namespace {
// log1p(x)/x and expm1(x)/x, continuous at 0.
double helper1(double x) { return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x / 3); }
double helper2(double x) {
  return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3);
}
}  // namespace

ZipfSampler::ZipfSampler(uint64_t n, double exponent) : n_(n < 1 ? 1 : n), exponent_(exponent) {
  h_integral_x1_ = h_integral(1.5) - 1;
  h_integral_n_ = h_integral(static_cast<double>(n_) + 0.5);
  s_ = 2 - h_integral_inverse(h_integral(2.5) - h(2));
}

double ZipfSampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  double log_x = std::log(x);
  return helper2((1 - exponent_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1 - exponent_);
  if (t < -1) t = -1;
  return std::exp(helper1(t) * x);
}

KeyChooser::KeyChooser(const KeyPattern& pattern, uint64_t keys, uint64_t begin, uint64_t end,
                       double hit_rate, uint64_t seed)
    : pattern_(pattern),
      keys_(keys),
      begin_(begin),
      end_(end),
      cursor_(begin),
      hit_rate_(hit_rate),
      rng_(seed),
      zipf_(keys, pattern.zipf_exponent),
      gauss_(static_cast<double>(keys) / 2, static_cast<double>(keys) * pattern.gaussian_stddev),
      // The hot keys are 0..hot_-1: at least one, and at least one cold key left.
      hot_(std::clamp<uint64_t>(
          static_cast<uint64_t>(std::ceil(pattern.hot_fraction * static_cast<double>(keys))), 1,
          keys > 1 ? keys - 1 : 1)) {}

uint64_t KeyChooser::base_key() {
  switch (pattern_.kind) {
    case KeyPattern::Kind::sequential: {
      uint64_t k = cursor_++;
      if (cursor_ >= end_) cursor_ = begin_;  // wrap: a phase may send more than its share
      return k;
    }
    case KeyPattern::Kind::uniform:
      return std::uniform_int_distribution<uint64_t>(0, keys_ - 1)(rng_);
    case KeyPattern::Kind::gaussian: {
      double x = gauss_(rng_);
      if (x < 0) x = 0;
      auto k = static_cast<uint64_t>(x);
      return k >= keys_ ? keys_ - 1 : k;
    }
    case KeyPattern::Kind::zipf:
      return zipf_(rng_) - 1;  // rank 1 (the most popular) is key 0
    case KeyPattern::Kind::hotset:
      if (keys_ == 1 || u01_(rng_) < pattern_.hot_share)
        return std::uniform_int_distribution<uint64_t>(0, hot_ - 1)(rng_);
      return std::uniform_int_distribution<uint64_t>(hot_, keys_ - 1)(rng_);
  }
  return 0;
}

uint64_t KeyChooser::next_get() {
  uint64_t k = base_key();
  // A miss is aimed at a key no run writes (the miss key space), same popularity shape.
  if (hit_rate_ < 1.0 && u01_(rng_) >= hit_rate_) k |= kMissKey;
  return k;
}

}  // namespace kv::drive
