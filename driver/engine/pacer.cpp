#include "engine/pacer.hpp"

#include <algorithm>

namespace kv::drive {

void SpinMargin::observe(int64_t oversleep_ns) noexcept {
  samples_[count_ % samples_.size()] = std::max<int64_t>(oversleep_ns, 0);
  ++count_;
  if (count_ % 8 != 0) return;
  std::array<int64_t, 64> sorted = samples_;
  const size_t n = std::min(count_, sorted.size());
  const size_t k = n * 9 / 10;  // the 90th percentile of what is there
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(k),
                   sorted.begin() + static_cast<ptrdiff_t>(n));
  margin_ns_ = std::clamp<int64_t>(sorted[k] + 2'000, kMinNs, kMaxNs);
}

SpinBudget::SpinBudget(double fraction) noexcept
    : fraction_(std::max(fraction, 0.0)), tokens_ns_(fraction_ > 0 ? kBurstNs : 0) {}

int64_t SpinBudget::margin_ns(int64_t now, int64_t wanted_ns) noexcept {
  if (fraction_ >= 1) return wanted_ns;
  if (last_ns_ >= 0 && now > last_ns_)
    tokens_ns_ =
        std::min<double>(kBurstNs, tokens_ns_ + static_cast<double>(now - last_ns_) * fraction_);
  last_ns_ = std::max(last_ns_, now);
  if (tokens_ns_ <= 0) return 0;
  return std::min(wanted_ns, static_cast<int64_t>(tokens_ns_));
}

void SpinBudget::spent(int64_t ns) noexcept {
  if (fraction_ >= 1 || ns <= 0) return;
  tokens_ns_ = std::max<double>(-kBurstNs, tokens_ns_ - static_cast<double>(ns));
}

}  // namespace kv::drive
