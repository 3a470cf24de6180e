// Pipelined memcached requests (--connections / --pipeline on memcached://) against a real
// memcached: kvdrive's counts must equal the server's own, on both protocols, with hit-rate
// control, verification, server-side refusals and a server killed mid-batch.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

long long mc_stat(int port, const std::string& field) {
  return stat_value(tcp_request(port, "stats\r\n", "END\r\n"), field);
}

class MemcachedPipeline : public ::testing::TestWithParam<std::string> {};

TEST_P(MemcachedPipeline, EveryRequestCountedAsTheServerCountsIt) {
  const std::string& proto = GetParam();
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::string uri = memcached.uri() + "?protocol=" + proto;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", uri, "--keys", "3000",
                               "--threads", "2", "--connections", "3", "--pipeline", "16",
                               "--phases", "load,read,mixed", "--ratio", "1:3", "--requests", "20000",
                               "--hit-rate", "0.7", "--verify", "--value-size", "10-2000",
                               "--key-pattern", "uniform"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT connections FROM phases LIMIT 1"), 6);
  std::string stats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(stats, "cmd_set"), driver_sum(db, "ops", "memcached", "set"));
  EXPECT_EQ(stat_value(stats, "cmd_get"), driver_sum(db, "ops", "memcached", "get"));
  EXPECT_EQ(stat_value(stats, "get_hits"), driver_sum(db, "hits", "memcached", "get"));
  EXPECT_EQ(stat_value(stats, "get_misses"), driver_sum(db, "misses", "memcached", "get"));
  EXPECT_EQ(stat_value(stats, "curr_items"), 3000);
  // The load wrote every key once; the read and mixed phases did what was asked.
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set", "load"), 3000);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "get", "read"), 20000);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set", "mixed") +
                driver_sum(db, "ops", "memcached", "get", "mixed"), 20000);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set", "mixed"), 5000);
  // Hit-rate control: misses aimed at never-written keys, hits verified byte for byte.
  double hits = static_cast<double>(driver_sum(db, "hits", "memcached", "get", "read"));
  EXPECT_NEAR(hits / 20000.0, 0.7, 0.03);
  EXPECT_GT(driver_sum(db, "misses", "memcached", "get", "read"), 0);
  EXPECT_EQ(driver_sum(db, "wrong", "memcached", "get"), 0);
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
}

TEST_P(MemcachedPipeline, VerificationSeesAValueChangedBehindItsBack) {
  const std::string& proto = GetParam();
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::string uri = memcached.uri() + "?protocol=" + proto;
  const std::vector<std::string> common = {"--target", uri, "--keys", "1000", "--threads", "1",
                                           "--connections", "2", "--pipeline", "8",
                                           "--value-size", "100-300"};
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  auto load = run_kvdrive(dir, args({"run", "--db", dir.file("r.db"), "--phases", "load"}));
  ASSERT_EQ(load.exit_code, 0) << load.output;
  ASSERT_EQ(tcp_request(memcached.port(), "set kv:7 0 0 8\r\ntampered\r\n", "\r\n"), "STORED\r\n");
  auto read = run_kvdrive(dir, args({"run", "--db", dir.file("r.db"), "--phases", "read", "--verify"}));
  ASSERT_EQ(read.exit_code, 0) << read.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(wrong) FROM driver_seconds d JOIN phases p USING (phase_id) "
                          "WHERE p.run_id = 2"), 1);
  EXPECT_EQ(query_int(db, "SELECT SUM(hits) FROM driver_seconds d JOIN phases p USING (phase_id) "
                          "WHERE p.run_id = 2"), 1000);
  EXPECT_EQ(mc_stat(memcached.port(), "get_hits"), 1000);
}

TEST_P(MemcachedPipeline, KilledServerMidBatchCountsErrorsAndRecovers) {
  const std::string& proto = GetParam();
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target",
             memcached.uri() + "?protocol=" + proto, "--keys", "1000", "--phases", "load,read",
             "--duration", "10s", "--threads", "2", "--connections", "4", "--pipeline", "16",
             "--timeout", "500ms"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  memcached.process().signal(SIGKILL);
  memcached.process().wait(5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  memcached.restart();
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);
  EXPECT_GT(driver_sum(db, "errors", "memcached", "get") +
                driver_sum(db, "timeouts", "memcached", "get"), 0);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM driver_seconds d JOIN phases p USING (phase_id) "
                          "WHERE p.kind = 'read' AND d.op = 'get'"), 10);
  // After the restart the data is gone (the read phase lasts 10 s so that, on a loaded machine
  // or under a sanitizer, several seconds remain after the server is back): every get the new server answered was a miss, and
  // kvdrive counted exactly those.
  EXPECT_GT(driver_sum(db, "misses", "memcached", "get"), 0);
  EXPECT_EQ(mc_stat(memcached.port(), "get_misses"), driver_sum(db, "misses", "memcached", "get"));
  EXPECT_EQ(mc_stat(memcached.port(), "cmd_get"), driver_sum(db, "misses", "memcached", "get"));
}

INSTANTIATE_TEST_SUITE_P(Protocols, MemcachedPipeline, ::testing::Values("text", "binary"));

// Binary protocol: every set's own reply is read, so a set the server refuses (larger than its
// 1 MB item limit) is an error of that request, in the same batch as sets that succeed.
TEST(MemcachedPipelineBinary, SetsTheServerRefusesAreErrorsOneByOne) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               memcached.uri() + "?protocol=binary", "--keys", "400", "--threads",
                               "1", "--connections", "2", "--pipeline", "8", "--phases", "load,read",
                               "--value-size", "100:3,2MB:1"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  std::string stats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  long long refused = driver_sum(db, "errors", "memcached", "set");
  EXPECT_GT(refused, 40);  // about a quarter of 400
  EXPECT_LT(refused, 200);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set"), 400);
  // What the server holds is exactly what kvdrive counted as stored (memcached 1.6's binary
  // protocol counts neither cmd_set nor store_too_large for a refused set).
  EXPECT_EQ(stat_value(stats, "curr_items"), 400 - refused);
  // The refused keys read back as misses, the others as hits, as the server counted them.
  EXPECT_EQ(driver_sum(db, "misses", "memcached", "get"), refused);
  EXPECT_EQ(driver_sum(db, "hits", "memcached", "get"), 400 - refused);
  EXPECT_EQ(stat_value(stats, "get_misses"), refused);
  EXPECT_EQ(stat_value(stats, "get_hits"), 400 - refused);
}

TEST(MemcachedPipelinePool, PipeliningAPoolIsRefusedBeforeWritingAnything) {
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               "memcached://127.0.0.1:1,127.0.0.1:2", "--pipeline", "4"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("single memcached server"), std::string::npos) << out.output;
  std::ifstream f(dir.file("r.db"));
  EXPECT_FALSE(f.good());
}

}  // namespace
