// kvdrive run --monitor: kvmon's samples pulled over TCP into kvdrive's results file (the real
// kvmon). Peers that misbehave, and the link's token: kvdrive_monitor_peers_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

TEST(KvdriveMonitor, SamplesArriveOverTcpInKvdrivesTimeBase) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  int port = free_port();
  Process kvmon({kKvmon, "--db", dir.file("kvmon.db"), "--pid", std::to_string(redis.pid()),
                 "--interval", "200ms", "--listen", "127.0.0.1:" + std::to_string(port)},
                dir.file("kvmon.log"));
  ASSERT_TRUE(accepts_within(port, 30'000)) << slurp(dir.file("kvmon.log"));
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "30000",
                        "--threads", "2", "--monitor", "127.0.0.1:" + std::to_string(port)});
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0);
  ASSERT_EQ(out.exit_code, 0) << out.output;

  auto db = kv::open_results_db(dir.file("r.db"));
  // One linked session, completed, with its clock offset measured (one host: close to 0).
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM monitor_sessions WHERE status = 'completed' AND "
                      "link = '127.0.0.1:" +
                          std::to_string(port) + "'"),
            1);
  EXPECT_LT(std::abs(query_int(db, "SELECT clock_offset_us FROM monitor_sessions")), 5000);
  EXPECT_GE(query_int(db, "SELECT clock_uncertainty_us FROM monitor_sessions"), 0);
  // Samples of the store, raw time kept, covering the run.
  EXPECT_GE(query_int(db, "SELECT count(*) FROM process_samples WHERE remote_ts_us IS NOT NULL"),
            3);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM process_instances WHERE pid = " +
                              std::to_string(redis.pid())),
            1);
  // ... from the start of the run (within two 200 ms intervals) to its end.
  EXPECT_LE(query_int(db, "SELECT MIN(ts_us) FROM process_samples"),
            query_int(db, "SELECT started_ts_us FROM runs") + 400'000);
  EXPECT_GE(query_int(db, "SELECT MAX(ts_us) FROM process_samples"),
            query_int(db, "SELECT MAX(ts_us) FROM driver_seconds"));
  // The timeline joins them to the driver's seconds.
  EXPECT_GE(query_int(db, "SELECT count(*) FROM timeline WHERE rss_kib > 0"), 1);
}

// At the end of the run kvdrive waits for kvmon's next tick, so even with a 1 s interval the
// samples reach past the last phase's end (without the wait the last up to 1 s was missing).
TEST(KvdriveMonitor, WaitsForTheSampleAfterTheEndOfTheRun) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  int port = free_port();
  Process kvmon({kKvmon, "--db", dir.file("kvmon.db"), "--pid", std::to_string(redis.pid()),
                 "--interval", "1s", "--listen", "127.0.0.1:" + std::to_string(port)},
                dir.file("kvmon.log"));
  ASSERT_TRUE(accepts_within(port, 30'000)) << slurp(dir.file("kvmon.log"));
  for (int i = 0; i < 3; ++i) {  // three runs end at three different points of kvmon's second
    std::string file = dir.file("r" + std::to_string(i) + ".db");
    auto out =
        run_kvdrive(dir, {"run", "--db", file, "--target", redis.uri(), "--keys", "1000",
                          "--phases", "mixed", "--duration", std::to_string(1200 + 300 * i) + "ms",
                          "--monitor", "127.0.0.1:" + std::to_string(port)});
    ASSERT_EQ(out.exit_code, 0) << out.output;
    auto db = kv::open_results_db(file);
    EXPECT_GE(query_int(db, "SELECT MAX(ts_us) FROM process_samples"),
              query_int(db, "SELECT MAX(ended_ts_us) FROM phases"))
        << "run " << i << ": no kvmon sample after the end of its last phase";
  }
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0);
}

TEST(KvdriveMonitor, UnreachableKvmonIsAnErrorUnlessOptional) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string nowhere = "127.0.0.1:" + std::to_string(free_port());
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "100", "--monitor", nowhere});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find(nowhere), std::string::npos) << out.output;
  std::ifstream f(dir.file("r.db"));
  EXPECT_FALSE(f.good()) << "a results file was written";

  auto optional = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(),
                                    "--keys", "100", "--monitor", nowhere, "--monitor-optional"});
  EXPECT_EQ(optional.exit_code, 0) << optional.output;
}

// One host, no network: kvmon and kvdrive write the same file, and kvmon may join a run that
// is already going (the other start order is the demo's).
TEST(KvdriveMonitor, KvmonJoiningARunningKvdriveOnTheSameFile) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string db_path = dir.file("shared.db");
  Process drive({kKvdrive, "run", "--db", db_path, "--target", redis.uri(), "--keys", "5000",
                 "--phases", "load,read", "--duration", "4s", "--threads", "2"},
                dir.file("kvdrive.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  Process kvmon(
      {kKvmon, "--db", db_path, "--pid", std::to_string(redis.pid()), "--interval", "200ms"},
      dir.file("kvmon.log"));
  ASSERT_EQ(drive.wait(60'000), 0) << slurp(dir.file("kvdrive.log"));
  kvmon.signal(SIGTERM);
  ASSERT_EQ(kvmon.wait(10'000), 0) << slurp(dir.file("kvmon.log"));
  auto db = kv::open_results_db(db_path);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM monitor_sessions WHERE status = 'completed' "
                      "AND link IS NULL"),
            1);
  // Seconds after kvmon joined have the store's RSS beside them; none before has a sample
  // from the future.
  EXPECT_GE(query_int(db, "SELECT count(*) FROM timeline WHERE rss_kib > 0"), 2);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM timeline WHERE rss_kib IS NOT NULL AND ts_us + "
                      "1000000 < (SELECT MIN(ts_us) FROM process_samples)"),
            0);
  // Sharing the file cost neither writer an error.
  EXPECT_EQ(slurp(dir.file("kvdrive.log")).find(" error: "), std::string::npos);
  EXPECT_EQ(slurp(dir.file("kvmon.log")).find(" error: "), std::string::npos);
}

}  // namespace
