// The common time base under a slewed wall clock (a fake clock source): kvdrive's row
// boundaries and kvmon's ticks, both mapped through TimeBase re-anchored every second, stay on
// the wall clock's whole seconds, so rows and samples of the same instant land in the same
// second; without re-anchoring they drift apart as they did before (244 ms after 50 s).
#include "kvbench/time_base.hpp"

#include <gtest/gtest.h>

#include "fake_clock.hpp"

namespace kv {
namespace {

using test::FakeClock;

// Monotonic time moves only when told; the wall clock runs `slew` faster (5 ms/s: what the
// issue measured while NTP slewed this VM's clock), from 0.305 s past a whole second.
FakeClock slewed_clock(double slew) {
  FakeClock c(1'780'000'001'305'000);
  c.slew(slew);
  return c;
}

// Sleeps until each next whole wall second by the time base's mapping, as the collector and
// kvmon's timer do; returns how far from the whole second the wall clock was at each wake-up.
int64_t worst_miss_us(FakeClock& clock, TimeBase& base, bool reanchor, int seconds) {
  int64_t worst = 0;
  int64_t t = base.now_ts_us();
  for (int i = 0; i < seconds; ++i) {
    const int64_t boundary = next_multiple_us(t, 1'000'000);
    clock.advance_to(base.to_steady_ns(boundary));
    const int64_t miss = clock.wall_us() - boundary;
    worst = std::max(worst, miss < 0 ? -miss : miss);
    if (reanchor) base.anchor();
    t = boundary;
  }
  return worst;
}

TEST(TimeBase, ReanchoredEverySecondFollowsASlewedWallClock) {
  FakeClock clock = slewed_clock(0.005);
  TimeBase base(clock);
  EXPECT_LE(worst_miss_us(clock, base, true, 50), 5'000 + 1);  // one second of slew at most
}

TEST(TimeBase, OneAnchorDriftsAsBefore) {
  FakeClock clock = slewed_clock(0.005);
  TimeBase base(clock);
  EXPECT_GE(worst_miss_us(clock, base, false, 50), 240'000);  // the fake reproduces the bug
}

// kvdrive's rows and kvmon's ticks of the same instant land in the same second: both map
// through their own TimeBase on the same clocks, anchored at different moments.
TEST(TimeBase, TwoProgramsPutTheSameInstantInTheSameSecond) {
  FakeClock clock = slewed_clock(0.005);
  TimeBase driver(clock);
  clock.advance_to(clock.steady_ns() + 123'456'789);
  TimeBase monitor(clock);
  for (int i = 0; i < 50; ++i) {
    // kvmon's tick for the next whole second, as its timer fires it ...
    const int64_t tick_ts = next_multiple_us(monitor.now_ts_us(), 1'000'000);
    clock.advance_to(monitor.to_steady_ns(tick_ts) + 200'000);  // taken 200 us late
    monitor.anchor();
    driver.anchor();
    // ... is in the driver row that holds the instant it was taken.
    const int64_t taken_by_driver = driver.now_ts_us();
    EXPECT_EQ(taken_by_driver / 1'000'000, tick_ts / 1'000'000) << "second " << i;
    clock.advance_to(clock.steady_ns() + 500'000'000);
  }
}

TEST(TimeBase, OffsetShowsTheSlew) {
  FakeClock clock = slewed_clock(0.005);
  TimeBase base(clock);
  const int64_t before = base.offset_us();
  clock.advance_to(clock.steady_ns() + 10'000'000'000);
  base.anchor();
  EXPECT_NEAR(static_cast<double>(base.offset_us() - before), 50'000.0, 2.0);
}

// A clock whose reader is descheduled for `stall_ns` right after its first wall reading (between
// the two monotonic reads of an anchor), as a thread beside a build can be.
class StallingClock final : public ClockSource {
 public:
  explicit StallingClock(int64_t stall_ns) : stall_ns_(stall_ns) {}
  int64_t wall_us() override {
    const int64_t w = 1'780'000'000'000'000 + steady_ / 1000;  // wall = monotonic + a constant
    if (stall_ns_ > 0) {
      steady_ += stall_ns_;
      stall_ns_ = 0;
    }
    return w;
  }
  int64_t steady_ns() override {
    steady_ += 50;  // each read takes 50 ns
    return steady_;
  }

 private:
  int64_t steady_ = 1'000'000'000;
  int64_t stall_ns_;
};

// An anchor preempted between its reads reads again: the instant it maps is exact, not off by
// half the stall (120 ms of a 240 ms one, which made a 0.5 s phase look 0.38 s long).
TEST(TimeBase, AnAnchorPreemptedBetweenItsReadsReadsAgain) {
  StallingClock clock(240'000'000);
  TimeBase base(clock);
  const int64_t at = clock.steady_ns();
  EXPECT_NEAR(static_cast<double>(base.to_ts_us(at)),
              static_cast<double>(1'780'000'000'000'000 + at / 1000), 1.0);
}

TEST(TimeBase, NextMultiple) {
  EXPECT_EQ(next_multiple_us(1'500'000, 1'000'000), 2'000'000);
  EXPECT_EQ(next_multiple_us(2'000'000, 1'000'000), 3'000'000);  // strictly after
  EXPECT_EQ(next_multiple_us(0, 250'000), 250'000);
}

}  // namespace
}  // namespace kv
