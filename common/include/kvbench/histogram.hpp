// Log-linear latency histogram: exact below 256 ns, then 128 buckets per power of two (bucket
// width 1/128 of its value, so any percentile is within 0.8 %), up to 2^36 ns (68.7 s); larger
// values are clamped into the last bucket and still counted. Fixed size, no allocation after
// construction: record() is a handful of instructions. Not thread-safe: one per thread, merged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace kv {

class LatencyHistogram {
 public:
  static constexpr int kBuckets = 256 + 28 * 128;
  static constexpr uint64_t kMaxTrackableNs = (uint64_t{1} << 36) - 1;

  void record(uint64_t ns) noexcept {
    if (ns > kMaxTrackableNs) ns = kMaxTrackableNs;
    ++counts_[index_of(ns)];
    ++count_;
    sum_ns_ += ns;
    if (ns > max_ns_) max_ns_ = ns;
    if (ns < min_ns_) min_ns_ = ns;
  }
  // `n` values of `ns` at once (a histogram rebuilt from its bucket rows: its sum, min and max
  // are then those of the values given, e.g. bucket bounds).
  void record_n(uint64_t ns, uint64_t n) noexcept {
    if (n == 0) return;
    if (ns > kMaxTrackableNs) ns = kMaxTrackableNs;
    counts_[index_of(ns)] += n;
    count_ += n;
    sum_ns_ += ns * n;
    if (ns > max_ns_) max_ns_ = ns;
    if (ns < min_ns_) min_ns_ = ns;
  }
  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  uint64_t count() const noexcept { return count_; }
  uint64_t max_ns() const noexcept { return max_ns_; }
  uint64_t min_ns() const noexcept { return count_ ? min_ns_ : 0; }
  double mean_ns() const noexcept {
    return count_ ? static_cast<double>(sum_ns_) / static_cast<double>(count_) : 0;
  }
  // The value below which a fraction q (0..1) of the recorded values lie: the upper bound of
  // the bucket holding that rank, but never more than the largest value recorded. 0 when empty.
  uint64_t percentile_ns(double q) const noexcept;

  uint64_t bucket_count(int index) const noexcept { return counts_[static_cast<size_t>(index)]; }
  // Largest value (ns) that falls into bucket `index`.
  static uint64_t bucket_upper_ns(int index) noexcept;
  static int index_of(uint64_t ns) noexcept {
    if (ns < 256) return static_cast<int>(ns);
    int e = 63 - __builtin_clzll(ns);  // 8..35
    int shift = e - 7;
    return 256 + (e - 8) * 128 + static_cast<int>((ns >> shift) - 128);
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
  uint64_t max_ns_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
};

}  // namespace kv
