#include "kvbench/time_base.hpp"

#include <time.h>

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
  // preemption between the reads costs at most half its length.
  int64_t before = source_.steady_ns();
  int64_t wall = source_.wall_us();
  int64_t after = source_.steady_ns();
  wall_us_ = wall;
  steady_ns_ = before + (after - before) / 2;
}

}  // namespace kv
