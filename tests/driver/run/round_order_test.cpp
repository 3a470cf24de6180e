// --repeat's order of the targets in each round: every target runs first equally often, and
// each round runs every target once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "run/run.hpp"

namespace {
using kv::drive::round_target_order;

TEST(RoundTargetOrder, RotatesByRoundAndKeepsEveryTargetOnce) {
  EXPECT_EQ(round_target_order(2, 1), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(round_target_order(2, 2), (std::vector<size_t>{1, 0}));
  EXPECT_EQ(round_target_order(3, 2), (std::vector<size_t>{1, 2, 0}));
  EXPECT_EQ(round_target_order(3, 4), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(round_target_order(1, 7), (std::vector<size_t>{0}));
  EXPECT_TRUE(round_target_order(0, 3).empty());
  std::map<size_t, int> first;
  for (int round = 1; round <= 12; ++round) {
    auto order = round_target_order(4, round);
    first[order.front()]++;
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3})) << "round " << round;
  }
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(first[t], 3) << "target " << t;
}

}  // namespace
