// The clock offset estimator: lowest round trip wins, sign and uncertainty.
#include "kvmon_link/clock_sync.hpp"

#include <gtest/gtest.h>

namespace kv::drive {
namespace {

TEST(ClockSync, KeepsTheLowestRoundTripAndAddsOffsetToRemoteTimes) {
  ClockSync sync;
  EXPECT_FALSE(sync.best());
  // kvmon's clock is 1000 us ahead of ours. A slow exchange whose reply was delayed skews the
  // midpoint; the fast one must win.
  sync.add({10'000, 12'000 + 1000, 18'000, 8'000});
  sync.add({20'000, 20'100 + 1000, 20'200, 200});
  sync.add({30'000, 30'300 + 1000, 30'600, 600});
  ASSERT_TRUE(sync.best());
  EXPECT_EQ(sync.best()->offset_us, -1000);  // our time = kvmon's time + offset
  EXPECT_EQ(sync.best()->uncertainty_us, 100);
  EXPECT_EQ(sync.best()->rtt_us, 200);
  EXPECT_EQ(sync.count(), 3);
  EXPECT_FALSE(sync.done());
  for (int i = 0; i < 5; ++i) sync.add({0, 0, 100'000, 100'000});
  EXPECT_TRUE(sync.done());
  EXPECT_EQ(sync.best()->rtt_us, 200);
  sync.reset();
  EXPECT_FALSE(sync.best());
}

}  // namespace
}  // namespace kv::drive
