// RunStatus: one name and one exit code per way a run or phase ends (the strings the results
// file holds, kvdrive's codes).
#include "engine/run_status.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace kv::drive {
namespace {

TEST(RunStatus, NamesAreTheResultsFileStrings) {
  EXPECT_STREQ(run_status_name(RunStatus::completed), "completed");
  EXPECT_STREQ(run_status_name(RunStatus::interrupted), "interrupted");
  EXPECT_STREQ(run_status_name(RunStatus::failed), "failed");
}

TEST(RunStatus, ExitCodesAreKvdrivesCodes) {
  EXPECT_EQ(run_status_exit_code(RunStatus::completed), kExitOk);
  EXPECT_EQ(run_status_exit_code(RunStatus::interrupted), kExitInterrupted);
  EXPECT_EQ(run_status_exit_code(RunStatus::failed), kExitFailed);
  EXPECT_EQ(kExitOk, 0);
  EXPECT_EQ(kExitFailed, 1);
  EXPECT_EQ(kExitInterrupted, 130);
}

TEST(RunStatus, TableHoldsEveryStatusOnceInEnumOrder) {
  std::set<std::string> names;
  for (size_t i = 0; i < kRunStatuses.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(kRunStatuses[i].status), i);
    EXPECT_TRUE(names.insert(kRunStatuses[i].name).second) << kRunStatuses[i].name;
  }
  EXPECT_EQ(static_cast<size_t>(RunStatus::failed) + 1, kRunStatuses.size());
}

TEST(RunStatus, EveryExitCodeIsADocumentedKvdriveCode) {
  for (const auto& s : kRunStatuses) {
    const auto it = std::find_if(kExitCodes.begin(), kExitCodes.end(),
                                 [&](const ExitCodeInfo& c) { return c.code == s.exit_code; });
    ASSERT_NE(it, kExitCodes.end()) << s.name;
    EXPECT_NE(it->kvdrive, nullptr) << s.name;
  }
}

TEST(RunEnd, CompletedOnlyWhenTheStatusIs) {
  EXPECT_TRUE(RunEnd{}.completed());
  EXPECT_TRUE(RunEnd{}.error.empty());
  EXPECT_FALSE((RunEnd{RunStatus::failed, "load: every request failed"}.completed()));
  EXPECT_FALSE((RunEnd{RunStatus::interrupted, "interrupted by signal"}.completed()));
}

}  // namespace
}  // namespace kv::drive
