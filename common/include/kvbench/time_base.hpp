// The common time base: every row's ts_us is wall-clock time (CLOCK_REALTIME, microseconds
// since the Unix epoch). Intervals and deadlines are kept on the monotonic clock, which does not
// jump; TimeBase maps one to the other through an anchor (a pair of readings taken together)
// that the caller renews once per second, so a slewed or stepped wall clock moves kvdrive's
// per-second rows and kvmon's ticks the same way, and neither drifts from the other.
// Not thread-safe: one per thread that schedules.
#pragma once

#include <cstdint>

namespace kv {

// Where the two clocks are read: the real ones by default, a fake in tests.
class ClockSource {
 public:
  virtual ~ClockSource() = default;
  virtual int64_t wall_us() = 0;    // CLOCK_REALTIME, ts_us
  virtual int64_t steady_ns() = 0;  // CLOCK_MONOTONIC, arbitrary origin
};

// The process's real clocks (a static object; thread-safe to read).
ClockSource& system_clock_source();

class TimeBase {
 public:
  explicit TimeBase(ClockSource& source = system_clock_source()) : source_(source) { anchor(); }

  // Reads both clocks now and makes that pair the anchor. Call once per second (or per tick).
  void anchor();
  // Wall time of a monotonic instant, by the latest anchor.
  int64_t to_ts_us(int64_t steady_ns) const { return wall_us_ + (steady_ns - steady_ns_) / 1000; }
  // Monotonic instant of a wall time, by the latest anchor (for deadlines on the wall grid).
  int64_t to_steady_ns(int64_t ts_us) const { return steady_ns_ + (ts_us - wall_us_) * 1000; }
  // Wall time now, by the latest anchor (reads only the monotonic clock).
  int64_t now_ts_us() const { return to_ts_us(source_.steady_ns()); }
  int64_t steady_now_ns() const { return source_.steady_ns(); }
  // Wall minus monotonic at the latest anchor, in microseconds: its change between anchors is
  // how far the wall clock was slewed or stepped meanwhile.
  int64_t offset_us() const { return wall_us_ - steady_ns_ / 1000; }

 private:
  ClockSource& source_;
  int64_t wall_us_ = 0;
  int64_t steady_ns_ = 0;
};

// The first multiple of `step_us` strictly after ts_us (whole seconds for step 1 s).
inline int64_t next_multiple_us(int64_t ts_us, int64_t step_us) {
  int64_t q = ts_us / step_us;
  if (q * step_us > ts_us) --q;  // negative times round down too
  return (q + 1) * step_us;
}

}  // namespace kv
