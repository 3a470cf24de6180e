// The one reconnect policy of the store clients (store/reconnect_policy.hpp), on a fake clock.
#include "store/reconnect_policy.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kv::drive {
namespace {

struct FakeTime {
  int64_t now_us = 1'000'000;
  std::vector<int64_t> pauses;
  ReconnectPolicy policy(int64_t max_backoff_us) {
    return ReconnectPolicy(
        max_backoff_us, [this] { return now_us; },
        [this](int64_t us) {
          pauses.push_back(us);
          now_us += us;
        });
  }
};

TEST(ReconnectPolicy, AttemptsAreSpacedFrom50msDoublingToTheMaximum) {
  FakeTime t;
  ReconnectPolicy p = t.policy(2'000'000);
  std::vector<int64_t> gaps;  // between the starts of successive attempts
  int64_t last_attempt = -1;
  for (int attempts = 0; attempts < 9;) {
    if (!p.may_connect()) continue;  // each refusal pauses 10 ms on the fake clock
    if (last_attempt >= 0) gaps.push_back(t.now_us - last_attempt);
    last_attempt = t.now_us;
    t.now_us += 3'000;  // the attempt itself takes 3 ms
    p.connect_failed();
    ++attempts;
  }
  // Counted from each attempt's start; the 10 ms pauses round each gap up to their grid.
  const std::vector<int64_t> expected = {50'000,  100'000,   200'000,   400'000,
                                         800'000, 1'600'000, 2'000'000, 2'000'000};
  ASSERT_EQ(gaps.size(), expected.size());
  for (size_t i = 0; i < gaps.size(); ++i) {
    EXPECT_GE(gaps[i], expected[i]) << i;
    EXPECT_LT(gaps[i], expected[i] + 10'000) << i;
  }
}

TEST(ReconnectPolicy, ARefusedAttemptPausesTenMillisecondsSoAWorkerNeverSpins) {
  FakeTime t;
  ReconnectPolicy p = t.policy(2'000'000);
  EXPECT_TRUE(p.may_connect());
  EXPECT_TRUE(t.pauses.empty());  // nothing to wait for yet
  p.connect_failed();
  EXPECT_FALSE(p.may_connect());
  EXPECT_EQ(t.pauses, (std::vector<int64_t>{kStoreGonePauseUs}));
  p.store_gone();
  EXPECT_EQ(t.pauses.size(), 2U);
}

TEST(ReconnectPolicy, ASuccessResetsTheBackoff) {
  FakeTime t;
  ReconnectPolicy p = t.policy(2'000'000);
  for (int i = 0; i < 5; ++i) {
    while (!p.may_connect()) {
    }
    p.connect_failed();
  }
  EXPECT_EQ(p.backoff_us(), 800'000);
  while (!p.may_connect()) {
  }
  p.connected();
  EXPECT_EQ(p.backoff_us(), 0);
  EXPECT_TRUE(p.may_connect());
  p.connect_failed();
  EXPECT_EQ(p.backoff_us(), kFirstBackoffUs);
}

}  // namespace
}  // namespace kv::drive
