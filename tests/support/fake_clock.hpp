// A ClockSource for tests: time moves only when the test says so. The wall clock is the
// monotonic clock plus an offset the test can step (a settimeofday) or slew (NTP's adjtime).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kvbench/time_base.hpp"

namespace kv::test {

class FakeClock final : public ClockSource {
 public:
  // The monotonic clock starts at 1 s; the wall clock at `wall_start_us`.
  explicit FakeClock(int64_t wall_start_us) : offset_us_(wall_start_us - steady_ns_ / 1000) {}

  int64_t wall_us() override {
    return steady_ns_ / 1000 + offset_us_ +
           static_cast<int64_t>(static_cast<double>(steady_ns_ - slew_from_ns_) / 1000.0 * slew_);
  }
  int64_t steady_ns() override { return steady_ns_; }

  // Moves the monotonic clock (and the wall clock with it) to `ns`; never backwards.
  void advance_to(int64_t ns) { steady_ns_ = std::max(steady_ns_, ns); }
  void advance_by_us(int64_t us) { steady_ns_ += us * 1000; }
  // The wall clock jumps by `us` (may be negative); the monotonic clock does not move.
  void step_wall_us(int64_t us) { offset_us_ += us; }
  // From now on the wall clock runs `rate` faster than the monotonic one (0.005: 5 ms/s).
  void slew(double rate) {
    offset_us_ = wall_us() - steady_ns_ / 1000;
    slew_from_ns_ = steady_ns_;
    slew_ = rate;
  }

 private:
  int64_t steady_ns_ = 1'000'000'000;
  int64_t offset_us_;
  int64_t slew_from_ns_ = 0;
  double slew_ = 0;
};

}  // namespace kv::test
