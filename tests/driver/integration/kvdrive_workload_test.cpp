// kvdrive's workload features against real servers: hit rate, verification, ketama pools,
// mixed ratios, rate mode, warm-up, a server killed mid-run, --max-errors, config files,
// pipelining. Authentication, process groups and --ttl: kvdrive_auth_groups_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

TEST(KvdriveWorkload, HitRateWithinTwoPointsOfTarget) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--keys", "5000",
            "--requests", "40000", "--hit-rate", "0.8", "--key-pattern", "uniform"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  double hits = static_cast<double>(driver_sum(db, "hits", "memcached", "get"));
  double gets = static_cast<double>(driver_sum(db, "ops", "memcached", "get"));
  EXPECT_EQ(gets, 40000);
  EXPECT_NEAR(hits / gets, 0.8, 0.02);
  std::string stats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(stats, "get_hits"), static_cast<long long>(hits));
  EXPECT_EQ(stat_value(stats, "get_misses"), driver_sum(db, "misses", "memcached", "get"));
}

// Misses stay misses on a store that holds an earlier, larger run's keys (10x --keys, same
// prefix): a miss aimed at keys N..2N-1 would hit a key that run wrote (aimed there, the
// test's run reads 16,000 hits and 0 misses at --hit-rate 0.8).
TEST(KvdriveWorkload, HitRateHoldsOnAStorePrefilledWithTenTimesTheKeys) {
  for (bool redis : {false, true}) {
    SCOPED_TRACE(redis ? "redis" : "memcached");
    StoreServer server(redis ? StoreServer::Kind::redis : StoreServer::Kind::memcached);
    KV_START_OR_SKIP(server);
    TempDir dir;
    auto prefill = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(),
                                     "--keys", "20000", "--phases", "load", "--value-size", "10"});
    ASSERT_EQ(prefill.exit_code, 0) << prefill.output;
    auto out =
        run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(), "--keys",
                          "2000", "--phases", "read", "--requests", "20000", "--hit-rate", "0.8",
                          "--key-pattern", "uniform", "--value-size", "10"});
    ASSERT_EQ(out.exit_code, 0) << out.output;
    auto db = kv::open_results_db(dir.file("r.db"));
    const std::string proto = redis ? "redis" : "memcached";
    double hits = static_cast<double>(driver_sum(db, "hits", proto, "get"));
    double misses = static_cast<double>(driver_sum(db, "misses", proto, "get"));
    EXPECT_EQ(hits + misses, 20000);
    // 20,000 draws at p = 0.8: one standard deviation is 0.0028; 0.015 is over 5 of them.
    EXPECT_NEAR(hits / (hits + misses), 0.8, 0.015);
    long long server_misses =
        redis ? stat_value(redis_info(server.port(), "stats"), "keyspace_misses")
              : stat_value(tcp_request(server.port(), "stats\r\n", "END\r\n"), "get_misses");
    EXPECT_EQ(server_misses, static_cast<long long>(misses));
  }
}

TEST(KvdriveWorkload, VerificationCountsAValueChangedBehindItsBack) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto load = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                                "1000", "--phases", "load", "--value-size", "100-300"});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  ASSERT_EQ(tcp_request(redis.port(), "SET kv:7 tampered\r\n", "\r\n"), "+OK\r\n");
  auto read = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                                "1000", "--phases", "read", "--verify", "--value-size", "100-300"});
  ASSERT_EQ(read.exit_code, 0) << read.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT SUM(wrong) FROM driver_seconds d JOIN phases p USING (phase_id) "
                      "WHERE p.run_id = 2"),
            1);
  EXPECT_EQ(query_int(db,
                      "SELECT SUM(hits) FROM driver_seconds d JOIN phases p USING (phase_id) "
                      "WHERE p.run_id = 2"),
            1000);
}

TEST(KvdriveWorkload, KetamaPoolSpreadsKeysOverBothServers) {
  StoreServer a(StoreServer::Kind::memcached), b(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  TempDir dir;
  std::string pool = "memcached://127.0.0.1:" + std::to_string(a.port()) +
                     ",127.0.0.1:" + std::to_string(b.port());
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", pool, "--keys", "10000",
                               "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  long long items_a = stat_value(tcp_request(a.port(), "stats\r\n", "END\r\n"), "curr_items");
  long long items_b = stat_value(tcp_request(b.port(), "stats\r\n", "END\r\n"), "curr_items");
  EXPECT_EQ(items_a + items_b, 10000);
  EXPECT_GT(items_a, 3000);
  EXPECT_GT(items_b, 3000);
  long long hits = stat_value(tcp_request(a.port(), "stats\r\n", "END\r\n"), "get_hits") +
                   stat_value(tcp_request(b.port(), "stats\r\n", "END\r\n"), "get_hits");
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(hits, driver_sum(db, "hits", "memcached", "get"));
  EXPECT_EQ(hits, 10000);
}

TEST(KvdriveWorkload, MixedPhaseKeepsTheRatioAndAgreesWithRedis) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "1000", "--phases", "load,mixed", "--ratio", "1:4", "--requests",
                               "10000", "--key-pattern", "zipf:1.1", "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "ops", "redis", "set", "mixed"), 2000);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "get", "mixed"), 8000);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 3000);
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 8000);
}

TEST(KvdriveWorkload, RateModeHoldsTheRateAndKeepsBothLatencies) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000", "--phases",
            "load,read", "--rate", "2000", "--duration", "3s", "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  double rate = query_double(db, "SELECT req_per_s FROM phase_summary WHERE kind = 'read'");
  EXPECT_NEAR(rate, 2000, 100) << "achieved rate not within 5 % of the target";
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM driver_seconds WHERE op = 'get' AND "
                      "(late IS NULL OR uncorrected_p99_us IS NULL)"),
            0);
  EXPECT_GT(query_int(db,
                      "SELECT count(*) FROM latency_buckets b JOIN phases p USING (phase_id) "
                      "WHERE p.kind = 'read' AND timing = 'intended'"),
            0);
  EXPECT_GT(query_int(db,
                      "SELECT count(*) FROM latency_buckets b JOIN phases p USING (phase_id) "
                      "WHERE p.kind = 'read' AND timing = 'sent'"),
            0);
  // Closed-loop phases keep those columns NULL (not 0).
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE rate = 2000"), 2);
}

TEST(KvdriveWorkload, WarmupSecondsAreKeptButLeftOutOfSummaries) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000", "--phases",
            "read", "--duration", "3s", "--warmup", "1s", "--threads", "1"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  // Rows are whole seconds of the wall clock: the warm-up ends on the whole second nearest to
  // start + 1 s, so it covers the first (partial) row and maybe the next.
  EXPECT_GE(query_int(db, "SELECT count(*) FROM driver_seconds WHERE warmup = 1"), 1);
  EXPECT_LE(query_int(db, "SELECT count(*) FROM driver_seconds WHERE warmup = 1"), 2);
  EXPECT_EQ(
      query_int(db,
                "SELECT MAX(ts_us + interval_us) % 1000000 FROM driver_seconds WHERE warmup = 1"),
      0);
  int64_t all = query_int(db, "SELECT SUM(ops) FROM driver_seconds");
  int64_t summarized = query_int(db, "SELECT ops FROM phase_summary");
  EXPECT_LT(summarized, all);
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), all);
  EXPECT_NEAR(query_double(db, "SELECT seconds FROM phase_summary"), 2.0, 0.5 + 0.2);
  EXPECT_NEAR(
      query_double(db, "SELECT seconds FROM phase_summary"),
      query_double(db, "SELECT SUM(interval_us) / 1e6 FROM driver_seconds WHERE warmup = 0"), 1e-9);
}

TEST(KvdriveWorkload, ServerKilledAndRestartedMidRunIsCountedAndSurvived) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  // 8 s: the reconnects back off (50 ms doubling to 2 s) while the store is down, so under
  // ThreadSanitizer beside another test the first connect to the restarted store can come
  // 4-5 s into the phase; it must come before its end.
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "load,read", "--duration", "8s", "--threads", "2", "--timeout", "500ms"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  redis.process().signal(SIGKILL);
  redis.process().wait(5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const long long restarted_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  redis.restart();
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);
  EXPECT_GT(driver_sum(db, "errors", "redis", "get") + driver_sum(db, "timeouts", "redis", "get"),
            0);
  // Every second of the read phase has its row, before, during and after the outage.
  EXPECT_GE(query_int(db,
                      "SELECT count(*) FROM driver_seconds d JOIN phases p USING (phase_id) "
                      "WHERE p.kind = 'read' AND d.op = 'get'"),
            6);
  // Requests succeeded again after the restart (the data is gone: misses). The new server's
  // gets are kvdrive's misses after the restart, plus at most the gets kvdrive gave up on
  // (a 500 ms timeout, on a loaded machine, that the server still executed); exact when none
  // timed out.
  const std::string after = " FROM driver_seconds WHERE op = 'get' AND ts_us + interval_us >= " +
                            std::to_string(restarted_us);
  const long long misses = query_int(db, "SELECT COALESCE(SUM(misses), 0)" + after);
  const long long failed_after =
      query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0)" + after);
  const long long server_gets = redis_command_calls(redis.port(), "get");
  EXPECT_GT(misses, 0);
  EXPECT_LE(misses, server_gets) << "kvdrive counted misses the server did not";
  EXPECT_LE(server_gets, misses + failed_after) << failed_after << " gets failed after the restart";
  if (query_int(db, "SELECT COALESCE(SUM(timeouts), 0)" + after) == 0) {
    EXPECT_EQ(server_gets, misses);
  }
}

TEST(KvdriveWorkload, MaxErrorsFailsTheRunWithTheReason) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--duration", "20s", "--max-errors", "5"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  redis.stop();
  EXPECT_EQ(p.wait(30'000), 1) << slurp(log);
  // The summary says the run failed, and why, before any figure.
  std::string out = slurp(log);
  auto said = out.find("run 1 FAILED: ");
  EXPECT_NE(said, std::string::npos) << out;
  EXPECT_NE(out.find("max-errors", said), std::string::npos) << out;
  EXPECT_LT(said, out.find("req/s")) << out;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE status = 'failed' AND error LIKE "
                      "'%max-errors%'"),
            1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'failed'"), 1);
}

TEST(KvdriveWorkload, ConfigFileSetsOptionsAndRejectsUnknownKeys) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  {
    std::ofstream f(dir.file("good.toml"));
    f << "[run]\ndb = \"" << dir.file("r.db") << "\"\ntarget = [\"" << redis.uri()
      << "\"]\nkeys = \"3000\"\nthreads = 2\nname = \"from-config\"\n";
  }
  auto good = run_kvdrive(dir, {"--config", dir.file("good.toml"), "run"});
  ASSERT_EQ(good.exit_code, 0) << good.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE name = 'from-config'"), 1);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 3000);
  {
    std::ofstream f(dir.file("bad.toml"));
    f << "[run]\nkeys = \"10\"\nno_such_key = 1\n";
  }
  auto bad = run_kvdrive(dir, {"--config", dir.file("bad.toml"), "run", "--db", dir.file("b.db"),
                               "--target", redis.uri()});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("no_such_key"), std::string::npos) << bad.output;
}

TEST(KvdriveWorkload, PipelinedConnectionsCountAndVerifyExactly) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run",
                               "--db",
                               dir.file("r.db"),
                               "--target",
                               redis.uri(),
                               "--keys",
                               "20000",
                               "--threads",
                               "2",
                               "--connections",
                               "3",
                               "--pipeline",
                               "16",
                               "--verify",
                               "--value-size",
                               "10-2000",
                               "--phases",
                               "load,read,mixed",
                               "--requests",
                               "30000"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), driver_sum(db, "ops", "redis", "get"));
  EXPECT_EQ(driver_sum(db, "ops", "redis", "set", "load"), 20000);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "get", "read"), 30000);
  EXPECT_EQ(driver_sum(db, "hits", "redis", "get"), driver_sum(db, "ops", "redis", "get"));
  EXPECT_EQ(driver_sum(db, "wrong", "redis", "get"), 0);
  EXPECT_EQ(query_int(db, "SELECT connections FROM phases LIMIT 1"), 6);
}

}  // namespace
