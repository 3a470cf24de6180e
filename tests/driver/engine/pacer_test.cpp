// Rate mode's pacing: the adaptive spin margin and the spin budget, both pure.
#include "engine/pacer.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kv::drive {
namespace {

TEST(SpinMargin, FollowsTheNinetiethPercentileOfRecentOversleeps) {
  SpinMargin m;
  EXPECT_EQ(m.margin_ns(), SpinMargin::kInitialNs);
  // 58 of 64 wake-ups 30 µs late, 6 (under 10 %) 5 ms late: the outliers do not count.
  for (int i = 0; i < 64; ++i) m.observe(i % 10 == 9 && i < 60 ? 5'000'000 : 30'000);
  EXPECT_EQ(m.margin_ns(), 32'000);
}

TEST(SpinMargin, StaysWithinItsBounds) {
  SpinMargin m;
  for (int i = 0; i < 64; ++i) m.observe(-5);  // a clock read before the deadline
  EXPECT_EQ(m.margin_ns(), SpinMargin::kMinNs);
  for (int i = 0; i < 64; ++i) m.observe(10'000'000);  // a loaded machine: spin is capped
  EXPECT_EQ(m.margin_ns(), SpinMargin::kMaxNs);
}

TEST(SpinMargin, ForgetsOldSamples) {
  SpinMargin m;
  for (int i = 0; i < 64; ++i) m.observe(200'000);
  for (int i = 0; i < 64; ++i) m.observe(10'000);
  EXPECT_EQ(m.margin_ns(), 12'000);
}

// The budget on explicit times: no clock, no machine speed.
TEST(SpinBudget, ASpinnerThatSpendsItsBudgetSleepsUntilItRefills) {
  SpinBudget b(0.10);  // 100 µs of spin per ms of wall time
  int64_t now = 1'000'000'000;
  EXPECT_EQ(b.margin_ns(now, 30'000), 30'000) << "a full bucket grants the margin";
  b.spent(SpinBudget::kBurstNs);  // the whole burst spun away
  EXPECT_EQ(b.margin_ns(now, 30'000), 0) << "nothing left: sleep until the send time";
  now += 100'000;  // 100 µs later: 10 µs of spin
  EXPECT_EQ(b.margin_ns(now, 30'000), 10'000);
  now += 10'000'000;  // 10 ms later the bucket is full again, and no fuller
  EXPECT_EQ(b.margin_ns(now, 300'000), 300'000);
  now += 1'000'000'000;
  EXPECT_EQ(b.margin_ns(now, 5'000'000), SpinBudget::kBurstNs);
}

TEST(SpinBudget, SpinOverAnyWindowIsAtMostItsShareAndOneBurst) {
  // A loaded machine: the margin wanted is the cap, and every spin is granted in full and
  // overshoots by 20 µs (descheduled in it). Sends 50 µs apart for one second.
  SpinBudget b(0.05);
  int64_t now = 0, spun = 0;
  for (int i = 0; i < 20'000; ++i, now += 50'000) {
    const int64_t m = b.margin_ns(now, SpinMargin::kMaxNs);
    if (m == 0) continue;
    const int64_t spin = std::min<int64_t>(m, 50'000) + 20'000;
    b.spent(spin);
    spun += spin;
  }
  EXPECT_LE(spun, now / 20 + SpinBudget::kBurstNs + 70'000);  // 5 %, a burst, one overshoot
  EXPECT_GE(spun, now / 20 - 70'000) << "and it uses what it is given";
}

TEST(SpinBudget, ZeroNeverSpinsAndAWholeCoreIsNoBound) {
  SpinBudget none(0), all(1.0);
  EXPECT_EQ(none.margin_ns(0, 30'000), 0);
  EXPECT_EQ(none.margin_ns(1'000'000'000, 30'000), 0);
  for (int i = 0; i < 1000; ++i) all.spent(SpinBudget::kBurstNs);
  EXPECT_EQ(all.margin_ns(0, 250'000), 250'000);
}

}  // namespace
}  // namespace kv::drive
