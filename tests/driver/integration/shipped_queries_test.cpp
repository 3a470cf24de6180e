// The shipped queries (schema/queries/*.sql) and the timeline against a host with two stores of
// the same name: kvmon watches both redis-servers by name, kvdrive benchmarks one. Every query
// runs, and every figure of the store's process comes from the benchmarked one (matched by pid),
// never from the other redis-server; each kvmon sample belongs to exactly one timeline row.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "kvdrive_test_util.hpp"

namespace kv::test {
namespace {

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// Once with the benchmarked store the small one, once the big one: whichever order kvmon samples
// the two in, a rule that matched by name would show the wrong one's RSS in one of the two.
class ShippedQueries : public ::testing::TestWithParam<bool> {};

TEST_P(ShippedQueries, TwoStoresOfTheSameNameAreNotMixedUp) {
  const bool bench_is_big = GetParam();
  StoreServer bench(StoreServer::Kind::redis, {"--enable-debug-command", "yes"});
  StoreServer other(StoreServer::Kind::redis, {"--enable-debug-command", "yes"});
  KV_START_OR_SKIP(bench);
  KV_START_OR_SKIP(other);
  // One redis-server holds ~100 MB, so the two RSS figures cannot be mistaken for each other.
  tcp_request((bench_is_big ? bench : other).port(), "DEBUG POPULATE 400000 k 200\r\n", "\r\n",
              60'000);
  TempDir dir;
  const std::string db_path = dir.file("r.db");
  Process kvmon({kKvmon, "--db", db_path, "--name", "redis-server", "--interval", "1s",
                 "--flush-interval", "1s"},
                dir.file("kvmon.log"));
  usleep(1'200'000);
  auto out = run_kvdrive(dir, {"run", "--db", db_path, "--target", bench.uri(), "--keys", "2000",
                               "--phases", "load,read", "--duration", "4s", "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  usleep(1'200'000);
  kvmon.signal(SIGTERM);
  ASSERT_EQ(kvmon.wait(10'000), 0) << slurp(dir.file("kvmon.log"));

  auto db = kv::Database::open(db_path);
  ASSERT_GE(query_int(db,
                      "SELECT COUNT(DISTINCT pid) FROM process_instances WHERE "
                      "name = 'redis-server' AND parent_instance_id IS NULL"),
            2)
      << slurp(dir.file("kvmon.log"));
  const std::string bench_pid = std::to_string(bench.pid());
  auto rss = [&](const char* agg, pid_t pid) {
    return query_int(db, std::string("SELECT ") + agg +
                             "(s.rss_kib) FROM process_samples s JOIN "
                             "process_instances i USING (instance_id) WHERE i.pid = " +
                             std::to_string(pid));
  };
  const int64_t bench_min_rss = rss("MIN", bench.pid()), bench_max_rss = rss("MAX", bench.pid());
  const int64_t other_min_rss = rss("MIN", other.pid()), other_max_rss = rss("MAX", other.pid());
  ASSERT_TRUE(other_min_rss > bench_max_rss * 2 || bench_min_rss > other_max_rss * 2)
      << "the two stores must be told apart by RSS";

  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(KV_SOURCE_DIR) + "/schema/queries")) {
    SCOPED_TRACE(entry.path().filename().string());
    auto q = db.prepare(slurp(entry.path().string()));
    int rows = 0;
    int rss_col = -1;
    for (int c = 0; c < q.column_count(); ++c)
      if (q.column_name(c) == "rss_kib" || q.column_name(c) == "rss_mib") rss_col = c;
    while (q.step()) {
      ++rows;
      if (rss_col >= 0 && !q.is_null(rss_col)) {
        double kib = q.column_double(rss_col) * (q.column_name(rss_col) == "rss_mib" ? 1024 : 1);
        EXPECT_LE(kib, static_cast<double>(bench_max_rss) + 1024) << "another store's RSS";
        EXPECT_GE(kib, static_cast<double>(bench_min_rss) - 1024) << "another store's RSS";
      }
    }
    if (entry.path().filename() != "swap_onset.sql") {  // nothing swapped
      EXPECT_GT(rows, 0);
    }
  }
  // Every whole-second row of the timeline got the one kvmon tick that fell in it, and no
  // sample was shown in two rows.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM timeline t JOIN driver_seconds d ON d.phase_id = "
                      "t.phase_id AND d.ts_us = t.ts_us AND d.op = t.op "
                      "WHERE d.interval_us = 1000000 AND t.rss_kib IS NULL"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i USING "
                      "(instance_id) WHERE i.pid = " +
                          bench_pid +
                          " AND (SELECT COUNT(*) FROM "
                          "driver_seconds d WHERE s.scheduled_ts_us >= d.ts_us AND "
                          "s.scheduled_ts_us < d.ts_us + d.interval_us AND d.op = 'get') > 1"),
            0);
}

INSTANTIATE_TEST_SUITE_P(BothWays, ShippedQueries, ::testing::Bool());

}  // namespace
}  // namespace kv::test
