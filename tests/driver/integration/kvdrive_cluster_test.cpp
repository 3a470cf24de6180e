// kvdrive against a 3-master Redis Cluster made by the test (--engine events,
// redis+cluster://seed): keys go to their hash slot's master, the counts in the results file
// equal the sum of the nodes' commandstats, and the store counters are polled from every node.
#include <gtest/gtest.h>

#include <string>

#include "kvdrive_test_util.hpp"
#include "redis_cluster.hpp"

namespace {
using namespace kv::test;

TEST(KvdriveCluster, CountsEqualTheSumOfTheNodesCommandstats) {
  RedisCluster cluster(3);
  KV_START_OR_SKIP(cluster);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--engine", "events", "--db", dir.file("r.db"), "--target",
                        cluster.uri(), "--keys", "3000", "--phases", "load,read", "--duration",
                        "2s", "--threads", "2", "--connections", "3", "--pipeline", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t sets = driver_sum(db, "ops", "redis", "set");
  const int64_t gets = driver_sum(db, "ops", "redis", "get");
  EXPECT_EQ(sets, 3000);
  EXPECT_GT(gets, 0);
  // Every key reached its slot's master: no MOVED (an error of the request) anywhere.
  EXPECT_EQ(driver_sum(db, "errors", "redis", "set"), 0);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "get"), 0);
  EXPECT_EQ(driver_sum(db, "misses", "redis", "get"), 0);
  EXPECT_EQ(cluster.command_calls("set"), sets);
  EXPECT_EQ(cluster.command_calls("get"), gets);
  EXPECT_EQ(cluster.command_stat("get", "rejected_calls"), 0);
  for (int port : cluster.ports()) EXPECT_GT(redis_command_calls(port, "set"), 500) << port;
  // store_stats: one set of names per node, host:port/...
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(DISTINCT name) FROM store_stats "
                      "WHERE name LIKE '127.0.0.1:%/cmdstat_set_calls'"),
            3);
}

}  // namespace
