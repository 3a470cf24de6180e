// kvdrive against real redis-server and memcached: its counts must equal the servers' own.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

TEST(Kvdrive, CountsAgreeWithRedisAndMemcachedCounters) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const int kKeys = 20'000;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target",
                               memcached.uri(), "--keys", std::to_string(kKeys), "--threads", "3",
                               "--value-size", "1KB", "--name", "agree"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("write req/s"), std::string::npos) << out.output;

  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(
      query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed' AND name = 'agree'"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'completed'"), 4);

  // What kvdrive recorded, second by second.
  for (const char* proto : {"redis", "memcached"}) {
    EXPECT_EQ(driver_sum(db, "ops", proto, "set"), kKeys) << proto;
    EXPECT_EQ(driver_sum(db, "ops", proto, "get"), kKeys) << proto;
    EXPECT_EQ(driver_sum(db, "hits", proto, "get"), kKeys) << proto;
    EXPECT_EQ(driver_sum(db, "errors", proto, "set") + driver_sum(db, "errors", proto, "get"), 0);
    EXPECT_EQ(driver_sum(db, "bytes_in", proto, "get"), int64_t{kKeys} * 1024) << proto;
  }
  // ... equals what the servers counted.
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), driver_sum(db, "ops", "redis", "get"));
  std::string stats = redis_info(redis.port(), "stats");
  EXPECT_EQ(stat_value(stats, "keyspace_hits"), driver_sum(db, "hits", "redis", "get"));
  std::string mstats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(mstats, "cmd_set"), driver_sum(db, "ops", "memcached", "set"));
  EXPECT_EQ(stat_value(mstats, "cmd_get"), driver_sum(db, "ops", "memcached", "get"));
  EXPECT_EQ(stat_value(mstats, "get_hits"), driver_sum(db, "hits", "memcached", "get"));
  EXPECT_EQ(stat_value(mstats, "get_misses"), 0);

  // The stores' own counters were polled each second into store_stats.
  EXPECT_GE(query_int(db,
                      "SELECT count(DISTINCT ts_us) FROM store_stats s JOIN targets t USING "
                      "(target_id) WHERE t.protocol = 'redis'"),
            1);
  int64_t polled_sets =
      query_int(db,
                "SELECT MAX(value) FROM store_stats s JOIN targets t USING "
                "(target_id) WHERE t.protocol = 'redis' AND name = 'cmdstat_set_calls'");
  EXPECT_EQ(polled_sets, kKeys);  // the last poll comes after the last request
  EXPECT_EQ(query_int(db,
                      "SELECT MAX(value) FROM store_stats s JOIN targets t USING (target_id) "
                      "WHERE t.protocol = 'redis' AND name = 'process_id'"),
            redis.pid());
  EXPECT_EQ(query_int(db,
                      "SELECT MAX(value) FROM store_stats s JOIN targets t USING (target_id) "
                      "WHERE t.protocol = 'memcached' AND name = 'pid'"),
            memcached.pid());
  // Histogram rows hold every request of each phase.
  EXPECT_EQ(
      query_int(db,
                "SELECT SUM(count) FROM latency_buckets b JOIN phases p USING (phase_id) "
                "JOIN targets t USING (target_id) WHERE t.protocol = 'redis' AND b.op = 'get'"),
      kKeys);
  // The summary view shows both stores with non-zero write and read rates.
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM store_summary WHERE write_req_per_s > 0 AND "
                      "read_req_per_s > 0"),
            2);

  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find(redis.uri()), std::string::npos) << report.output;
  EXPECT_NE(report.output.find(memcached.uri()), std::string::npos) << report.output;
}

TEST(Kvdrive, MemcachedBinaryProtocolCountsAgree) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               memcached.uri() + "?protocol=binary", "--keys", "5000"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  std::string mstats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(mstats, "cmd_set"), driver_sum(db, "ops", "memcached", "set"));
  EXPECT_EQ(stat_value(mstats, "get_hits"), 5000);
  EXPECT_EQ(driver_sum(db, "hits", "memcached", "get"), 5000);
}

TEST(Kvdrive, UnreachableStoreFailsWithOneLineAndWritesNothing) {
  TempDir dir;
  int port = free_port();  // nothing listens there
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               "redis://127.0.0.1:" + std::to_string(port), "--keys", "10"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << out.output;
  EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
  std::ifstream f(dir.file("r.db"));
  EXPECT_FALSE(f.good()) << "the results file was created";
}

TEST(Kvdrive, BadArgumentsExitTwoAndWriteNothing) {
  TempDir dir;
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--db", dir.file("r.db"), "--target", "redis://x:1", "--keys", "ten"},
      {"run", "--db", dir.file("r.db"), "--target", "redis://x:1", "--keys", "0"},
      {"run", "--db", dir.file("r.db"), "--target", "redis://x:1", "--value-size", "-5"},
      {"run", "--db", dir.file("r.db"), "--target", "redis://x:1", "--threads", "0"},
      {"run", "--db", dir.file("r.db"), "--target", "bogus://x:1"},
      {"run", "--db", dir.file("r.db")},
      {"run", "--db", dir.file("r.db"), "--target", "redis://x:1", "--no-such-option"},
      {"report", "--db", dir.file("missing.db")},
  };
  for (const auto& args : cases) {
    auto out = run_kvdrive(dir, args);
    EXPECT_EQ(out.exit_code, 2) << args.back() << ": " << out.output;
    EXPECT_NE(out.output.find("kvdrive: "), std::string::npos) << out.output;
  }
  std::ifstream f(dir.file("r.db"));
  EXPECT_FALSE(f.good()) << "a results file was created";
}

TEST(Kvdrive, InterruptKeepsEverySecondAndMarksTheRun) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "50M",
             "--threads", "2"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("load", 2))) << slurp(log);
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(30'000), 130) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'interrupted'"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'interrupted'"), 1);
  int64_t sets = driver_sum(db, "ops", "redis", "set");
  EXPECT_GT(sets, 0);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM driver_seconds"), 2);
  // Every request the server saw is in the file: nothing measured was lost.
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), sets);
}

// Ctrl-C while --start-at waits: the run is interrupted (exit 130) before any phase, and the
// store's stats polled during the wait are in the file (written each second while waiting: a
// wait of hours overflowed their queue, and Ctrl-C dropped them all).
TEST(Kvdrive, InterruptDuringTheStartAtWaitKeepsTheStoresStats) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("r.db"), log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", db, "--target", redis.uri(), "--keys", "100", "--threads",
             "1", "--start-at", "+10m"},
            log);
  const std::string polls = "SELECT count(DISTINCT ts_us) FROM store_stats";
  ASSERT_TRUE(wait_for_value(db, "SELECT (" + polls + ") >= 2")) << slurp(log);
  int64_t before = 0;
  {
    auto d = kv::open_results_db(db);
    before = query_int(d, polls);
  }
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(30'000), 130) << slurp(log);
  auto d = kv::open_results_db(db);
  EXPECT_EQ(query_text(d, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM phases"), 0);
  EXPECT_GE(query_int(d, polls), before);
  EXPECT_GT(query_int(d, "SELECT count(*) FROM store_stats WHERE name = 'used_memory'"), 0);
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM run_metadata WHERE name = 'start_at_late_us'"), 0);
}

}  // namespace
