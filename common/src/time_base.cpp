#include "kvbench/time_base.hpp"

#include <time.h>

#include <cstdint>

namespace kv {
namespace {

int64_t read_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

class SystemClockSource final : public ClockSource {
 public:
  int64_t wall_us() override { return read_ns(CLOCK_REALTIME) / 1000; }
  int64_t steady_ns() override { return read_ns(CLOCK_MONOTONIC); }
};

}  // namespace

ClockSource& system_clock_source() {
  static SystemClockSource source;
  return source;
}

void TimeBase::anchor() {
  // The wall reading is taken between two monotonic ones and paired with their midpoint, so a
  // preemption between the reads costs at most half its length. A read of a few microseconds
  // is kept; a longer one (the thread was descheduled: 240 ms beside a build put a row's time
  // 120 ms off and a 0.5 s phase measured 0.38 s) is read again, up to kTries times, and the
  // tightest pair kept.
  constexpr int kTries = 4;
  constexpr int64_t kTightNs = 20'000;
  int64_t best_gap = INT64_MAX;
  for (int i = 0; i < kTries && best_gap > kTightNs; ++i) {
    const int64_t before = source_.steady_ns();
    const int64_t wall = source_.wall_us();
    const int64_t after = source_.steady_ns();
    if (after - before >= best_gap) continue;
    best_gap = after - before;
    wall_us_ = wall;
    steady_ns_ = before + (after - before) / 2;
  }
}

}  // namespace kv
