#include "kvbench/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace kv {

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  max_ns_ = std::max(max_ns_, other.max_ns_);
  min_ns_ = std::min(min_ns_, other.min_ns_);
}

void LatencyHistogram::reset() noexcept { *this = LatencyHistogram(); }

uint64_t LatencyHistogram::bucket_upper_ns(int index) noexcept {
  if (index < 256) return static_cast<uint64_t>(index);
  int e = 8 + (index - 256) / 128;
  uint64_t m = 128 + static_cast<uint64_t>((index - 256) % 128);
  int shift = e - 7;
  return ((m + 1) << shift) - 1;
}

uint64_t LatencyHistogram::percentile_ns(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[static_cast<size_t>(i)];
    if (seen >= rank) return std::min(bucket_upper_ns(i), max_ns_);
  }
  return max_ns_;
}

}  // namespace kv
