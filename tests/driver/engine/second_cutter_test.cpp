// The phase runner's rows in time (engine/second_cutter.hpp) with a fake clock: the partial
// first and last rows, whole seconds between them, empty rows for seconds the collector slept
// through, the warm-up flag, and re-anchoring to a stepped or slewed wall clock. No real time.
#include "engine/second_cutter.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "fake_clock.hpp"

namespace kv::drive {
namespace {

using test::FakeClock;

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kT0 = 1'780'000'000 * kSecond;  // a whole second of wall time

// Sleeps the fake clock to the end of the row now collected, as the collector's wait does.
void sleep_to_row_end(FakeClock& clock, const SecondCutter& cutter) {
  clock.advance_to(cutter.to_steady_ns(cutter.row_end_ts_us()));
}

TEST(SecondCutter, TheFirstRowRunsFromTheStartToTheNextWholeSecond) {
  FakeClock clock(kT0 + 300'000);  // 0.3 s past a whole second
  SecondCutter cutter(clock, 0);
  EXPECT_EQ(cutter.started_ts_us(), kT0 + 300'000);
  EXPECT_EQ(cutter.start_ns(), clock.steady_ns());
  EXPECT_EQ(cutter.row_end_ts_us(), kT0 + kSecond);

  sleep_to_row_end(clock, cutter);
  auto first = cutter.cut(false);
  EXPECT_TRUE(first.empty.empty());
  EXPECT_EQ(first.row.ts_us, kT0 + 300'000);
  EXPECT_EQ(first.row.interval_us, 700'000);
  EXPECT_EQ(first.now_ts_us, kT0 + kSecond);

  for (int i = 1; i <= 3; ++i) {
    sleep_to_row_end(clock, cutter);
    auto c = cutter.cut(false);
    EXPECT_TRUE(c.empty.empty());
    EXPECT_EQ(c.row.ts_us, kT0 + i * kSecond);
    EXPECT_EQ(c.row.interval_us, kSecond);
  }
}

TEST(SecondCutter, TheLastRowEndsWhenTheLastWorkerDid) {
  FakeClock clock(kT0 + 300'000);
  SecondCutter cutter(clock, 0);
  sleep_to_row_end(clock, cutter);
  cutter.cut(false);
  clock.advance_by_us(250'000);  // the workers are done a quarter into the next second
  auto last = cutter.cut(true);
  EXPECT_TRUE(last.empty.empty());
  EXPECT_EQ(last.row.ts_us, kT0 + kSecond);
  EXPECT_EQ(last.row.interval_us, 250'000);
  EXPECT_EQ(cutter.row_start_ts_us(), kT0 + kSecond + 250'000);  // the phase's end
}

TEST(SecondCutter, ALastRowIsNeverEmptyAndNeverLongerThanItsSecond) {
  {
    FakeClock clock(kT0);
    SecondCutter cutter(clock, 0);
    auto c = cutter.cut(true);  // done at the very start: one row of 1 µs
    EXPECT_EQ(c.row.ts_us, kT0);
    EXPECT_EQ(c.row.interval_us, 1);
  }
  {
    FakeClock clock(kT0 + 500'000);
    SecondCutter cutter(clock, 0);
    clock.advance_by_us(2 * kSecond);  // seen done only long after its second ended
    auto c = cutter.cut(true);
    EXPECT_TRUE(c.empty.empty());
    EXPECT_EQ(c.row.ts_us, kT0 + 500'000);
    EXPECT_EQ(c.row.end_ts_us(), kT0 + kSecond);
  }
}

TEST(SecondCutter, SecondsTheCollectorSleptThroughGetEmptyRows) {
  FakeClock clock(kT0 + 300'000);
  SecondCutter cutter(clock, 0);
  clock.advance_to(cutter.to_steady_ns(kT0 + 3 * kSecond + 500'000));  // woke 2.5 s late
  auto c = cutter.cut(false);
  ASSERT_EQ(c.empty.size(), 2U);
  EXPECT_EQ(c.empty[0].ts_us, kT0 + 300'000);
  EXPECT_EQ(c.empty[0].interval_us, 700'000);
  EXPECT_EQ(c.empty[1].ts_us, kT0 + kSecond);
  EXPECT_EQ(c.empty[1].interval_us, kSecond);
  // What completed goes into the last whole second before now.
  EXPECT_EQ(c.row.ts_us, kT0 + 2 * kSecond);
  EXPECT_EQ(c.row.interval_us, kSecond);
  EXPECT_EQ(cutter.row_end_ts_us(), kT0 + 4 * kSecond);
  sleep_to_row_end(clock, cutter);
  auto next = cutter.cut(false);
  EXPECT_TRUE(next.empty.empty());
  EXPECT_EQ(next.row.ts_us, kT0 + 3 * kSecond);  // contiguous: no second lost or doubled
}

TEST(SecondCutter, TheWarmupEndsOnTheNearestWholeSecondAndCoversTheFirstRow) {
  auto warmup_rows = [](int64_t start_offset_us, int64_t warmup_us) {
    FakeClock clock(kT0 + start_offset_us);
    SecondCutter cutter(clock, warmup_us);
    std::vector<bool> flags;
    for (int i = 0; i < 5; ++i) {
      sleep_to_row_end(clock, cutter);
      flags.push_back(cutter.cut(false).row.warmup);
    }
    return flags;
  };
  // From 0.3 s, 2 s of warm-up ends at 2.0 (2.3 rounded): rows [0.3,1) and [1,2).
  EXPECT_EQ(warmup_rows(300'000, 2 * kSecond),
            (std::vector<bool>{true, true, false, false, false}));
  // 1.4 s ends at 2.0 too (1.7 rounds up).
  EXPECT_EQ(warmup_rows(300'000, 1'400'000), (std::vector<bool>{true, true, false, false, false}));
  // 0.1 s would end before the first whole second: it still covers the first, partial row.
  EXPECT_EQ(warmup_rows(300'000, 100'000), (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(warmup_rows(300'000, 0), (std::vector<bool>(5, false)));
}

TEST(SecondCutter, AWallClockSteppedForwardIsFollowedAtTheNextCut) {
  FakeClock clock(kT0 + 300'000);
  SecondCutter cutter(clock, 0);
  sleep_to_row_end(clock, cutter);
  auto before = cutter.cut(false);
  clock.step_wall_us(400'000);  // settimeofday: wall +0.4 s, monotonic unmoved
  const int64_t woke_ns = clock.steady_ns();
  sleep_to_row_end(clock, cutter);  // by the old anchor: 1 s of monotonic time
  EXPECT_EQ(clock.steady_ns() - woke_ns, 1'000'000'000);
  auto at_step = cutter.cut(false);  // now is wall 2.4: the row [1,2) is cut, none empty
  EXPECT_TRUE(at_step.empty.empty());
  EXPECT_EQ(at_step.row.ts_us, kT0 + kSecond);
  EXPECT_EQ(at_step.row.interval_us, kSecond);
  EXPECT_EQ(at_step.now_ts_us, kT0 + 2 * kSecond + 400'000);
  EXPECT_EQ(at_step.row.clock_offset_us - before.row.clock_offset_us, 400'000);
  // Re-anchored: the next boundary (wall 3.0) is 0.6 s of monotonic time away.
  const int64_t cut_ns = clock.steady_ns();
  sleep_to_row_end(clock, cutter);
  EXPECT_EQ(clock.steady_ns() - cut_ns, 600'000'000);
  auto after = cutter.cut(false);
  EXPECT_EQ(after.row.ts_us, kT0 + 2 * kSecond);
  EXPECT_EQ(after.now_ts_us, kT0 + 3 * kSecond);
}

TEST(SecondCutter, UnderASlewedWallClockEveryCutStaysWithinASecondOfSlew) {
  FakeClock clock(kT0 + 300'000);
  clock.slew(0.005);  // 5 ms/s, what NTP did to this VM's clock
  SecondCutter cutter(clock, 0);
  int64_t expected_start = cutter.started_ts_us();
  for (int i = 0; i < 60; ++i) {
    sleep_to_row_end(clock, cutter);
    const int64_t boundary = cutter.row_end_ts_us();
    // Where the wall clock really is when the collector wakes for `boundary`.
    const int64_t miss = clock.wall_us() - boundary;
    EXPECT_LE(miss < 0 ? -miss : miss, 5'000 + 1) << "second " << i;
    auto c = cutter.cut(false);
    EXPECT_TRUE(c.empty.empty());
    EXPECT_EQ(c.row.ts_us, expected_start);  // contiguous rows on whole wall seconds
    EXPECT_EQ(c.row.end_ts_us(), boundary);
    expected_start = boundary;
  }
}

}  // namespace
}  // namespace kv::drive
