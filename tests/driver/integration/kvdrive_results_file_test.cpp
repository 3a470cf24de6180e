// A results file that is not whole is refused before kvdrive sends anything to the store.
#include <gtest/gtest.h>

#include <filesystem>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

TEST(KvdriveResultsFile, ADroppedTableIsRefusedBeforeAnyTraffic) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto first = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                                 "100", "--threads", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const long long sets_before = redis_command_calls(redis.port(), "set");
  kv::Database::open(dir.file("r.db")).exec("DROP TABLE store_stats");
  const std::string bytes = slurp(dir.file("r.db"));

  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "100", "--threads", "1"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("table 'store_stats' is missing"), std::string::npos) << out.output;
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), sets_before) << "traffic was sent";
  EXPECT_TRUE(slurp(dir.file("r.db")) == bytes) << "a run was written";
}

}  // namespace
