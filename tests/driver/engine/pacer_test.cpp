// Rate mode's pacer: the adaptive spin margin (pure) and the waits' contract on the real clock
// (bounds only from below or generous from above: never the machine's speed).
#include "engine/pacer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kvbench/clock.hpp"

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

struct Flags {
  std::atomic<bool> stop{false}, abort{false};
};

TEST(Pacer, NeverReturnsBeforeTheSendTime) {
  Flags f;
  Pacer pacer(f.stop, f.abort);
  uint64_t spin = 0;
  for (int i = 0; i < 20; ++i) {
    const int64_t intended = steady_ns() + 1'000'000;
    ASSERT_TRUE(pacer.wait_until(intended, INT64_MAX, &spin));
    EXPECT_GE(steady_ns(), intended);
  }
  // Spinning happens only in the stretch before a send time: at most 1 ms per wait here.
  EXPECT_LE(spin, 20u * 1'000'000);
}

TEST(Pacer, DoesNotWaitOrSpinWhenLate) {
  Flags f;
  Pacer pacer(f.stop, f.abort);
  uint64_t spin = 0;
  EXPECT_TRUE(pacer.wait_until(steady_ns() - 1'000'000, INT64_MAX, &spin));
  EXPECT_EQ(spin, 0u);
  // Behind schedule at the end of the phase: a send time at or past the end is never sent.
  const int64_t now = steady_ns();
  EXPECT_FALSE(pacer.wait_until(now - 1'000'000, now - 1'000'000, &spin));
  EXPECT_EQ(spin, 0u);
}

TEST(Pacer, StopsAtTheEndWhenTheSendTimeLiesBeyondIt) {
  Flags f;
  Pacer pacer(f.stop, f.abort);
  uint64_t spin = 0;
  const int64_t t0 = steady_ns();
  EXPECT_FALSE(pacer.wait_until(t0 + 60'000'000'000, t0 + 200'000'000, &spin));
  const int64_t waited = steady_ns() - t0;
  EXPECT_GE(waited, 200'000'000);     // the phase lasts until its end...
  EXPECT_LT(waited, 20'000'000'000);  // ...not until the next send time
  EXPECT_EQ(spin, 0u);
}

TEST(Pacer, AbortEndsALongWait) {
  Flags f;
  Pacer pacer(f.stop, f.abort);
  uint64_t spin = 0;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    f.abort = true;
  });
  const int64_t t0 = steady_ns();
  EXPECT_FALSE(pacer.wait_until(t0 + 60'000'000'000, INT64_MAX, &spin));
  t.join();
  EXPECT_LT(steady_ns() - t0, 20'000'000'000);
}

}  // namespace
}  // namespace kv::drive
