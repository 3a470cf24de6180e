// Pipelined memcached requests (--connections / --pipeline on memcached://) against a real
// memcached: kvdrive's counts must equal the server's own, on both protocols, with hit-rate
// control, verification, server-side refusals and a server killed mid-batch.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "fake_store.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

long long mc_stat(int port, const std::string& field) {
  return stat_value(tcp_request(port, "stats\r\n", "END\r\n"), field);
}

long long wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A protocol (text or binary) through a transport (--io epoll or uring).
struct Mode {
  std::string proto;
  std::string io;
};

void PrintTo(const Mode& m, std::ostream* os) { *os << m.proto << " over " << m.io; }

class MemcachedPipeline : public ::testing::TestWithParam<Mode> {
 protected:
  // The target with the protocol, and the --io option.
  std::string uri(const StoreServer& s) const { return s.uri() + "?protocol=" + GetParam().proto; }
  std::vector<std::string> io() const { return {"--io", GetParam().io}; }
};

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_P(MemcachedPipeline, EveryRequestCountedAsTheServerCountsIt) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(dir, std::vector<std::string>{"run",
                                                       "--db",
                                                       dir.file("r.db"),
                                                       "--target",
                                                       uri(memcached),
                                                       "--keys",
                                                       "3000",
                                                       "--threads",
                                                       "2",
                                                       "--connections",
                                                       "3",
                                                       "--pipeline",
                                                       "16",
                                                       "--phases",
                                                       "load,read,mixed",
                                                       "--ratio",
                                                       "1:3",
                                                       "--requests",
                                                       "20000",
                                                       "--hit-rate",
                                                       "0.7",
                                                       "--verify",
                                                       "--value-size",
                                                       "10-2000",
                                                       "--key-pattern",
                                                       "uniform"} +
                                  io());
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
                driver_sum(db, "ops", "memcached", "get", "mixed"),
            20000);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set", "mixed"), 5000);
  // Hit-rate control: misses aimed at never-written keys, hits verified byte for byte.
  double hits = static_cast<double>(driver_sum(db, "hits", "memcached", "get", "read"));
  EXPECT_NEAR(hits / 20000.0, 0.7, 0.03);
  EXPECT_GT(driver_sum(db, "misses", "memcached", "get", "read"), 0);
  EXPECT_EQ(driver_sum(db, "wrong", "memcached", "get"), 0);
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
}

TEST_P(MemcachedPipeline, VerificationSeesAValueChangedBehindItsBack) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::vector<std::string> common =
      std::vector<std::string>{
          "--target", uri(memcached), "--keys", "1000",         "--threads", "1", "--connections",
          "2",        "--pipeline",   "8",      "--value-size", "100-300"} +
      io();
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  auto load = run_kvdrive(dir, args({"run", "--db", dir.file("r.db"), "--phases", "load"}));
  ASSERT_EQ(load.exit_code, 0) << load.output;
  ASSERT_EQ(tcp_request(memcached.port(), "set kv:7 0 0 8\r\ntampered\r\n", "\r\n"), "STORED\r\n");
  auto read =
      run_kvdrive(dir, args({"run", "--db", dir.file("r.db"), "--phases", "read", "--verify"}));
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
  EXPECT_EQ(mc_stat(memcached.port(), "get_hits"), 1000);
}

TEST_P(MemcachedPipeline, KilledServerMidBatchCountsErrorsAndRecovers) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive,        "run",         "--db",       dir.file("r.db"),
             "--io",          GetParam().io, "--target",   uri(memcached),
             "--keys",        "1000",        "--phases",   "load,read",
             "--duration",    "10s",         "--threads",  "2",
             "--connections", "4",           "--pipeline", "16",
             "--timeout",     "500ms"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  memcached.process().signal(SIGKILL);
  memcached.process().wait(5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const long long restarted_us = wall_us();  // no get reaches the new server before this
  memcached.restart();
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);
  EXPECT_GT(
      driver_sum(db, "errors", "memcached", "get") + driver_sum(db, "timeouts", "memcached", "get"),
      0);
  EXPECT_GE(query_int(db,
                      "SELECT count(*) FROM driver_seconds d JOIN phases p USING (phase_id) "
                      "WHERE p.kind = 'read' AND d.op = 'get'"),
            10);
  // After the restart the data is gone (the read phase lasts 10 s so that, on a loaded machine
  // or under a sanitizer, several seconds remain after the server is back): every get the new
  // server executed was a miss. kvdrive counts a miss only when the server said so, so never
  // more than the server; the server may have executed gets that kvdrive counted as timeouts
  // (it gave up at 500 ms; the server answered later) or errors, never more than those; when
  // none timed out, the two counts are equal.
  // (Counted over the rows that end after the restart: a get the old server answered, a miss
  // if a load set was lost, is not in the new server's counters.)
  const std::string after = " FROM driver_seconds WHERE op = 'get' AND ts_us + interval_us >= " +
                            std::to_string(restarted_us);
  const long long misses = query_int(db, "SELECT COALESCE(SUM(misses), 0)" + after);
  const long long server_misses = mc_stat(memcached.port(), "get_misses");
  const long long failed_after =
      query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0)" + after);
  const long long timeouts_after = query_int(db, "SELECT COALESCE(SUM(timeouts), 0)" + after);
  EXPECT_GT(misses, 0);
  EXPECT_EQ(mc_stat(memcached.port(), "cmd_get"), server_misses);
  EXPECT_LE(misses, server_misses) << "kvdrive counted misses the server did not";
  EXPECT_LE(server_misses, misses + failed_after)
      << failed_after << " gets failed after the restart";
  if (timeouts_after == 0) {
    EXPECT_EQ(server_misses, misses);
  }
}

// Both transports: io_uring's multishot receives and batched sends must count as epoll's do, see
// a changed value, and fail and reconnect the same way when the server is killed.
INSTANTIATE_TEST_SUITE_P(Protocols, MemcachedPipeline,
                         ::testing::Values(Mode{"text", "epoll"}, Mode{"binary", "epoll"},
                                           Mode{"text", "uring"}, Mode{"binary", "uring"}),
                         [](const ::testing::TestParamInfo<Mode>& i) {
                           return i.param.proto + "_" + i.param.io;
                         });

// Binary protocol: every set's own reply is read, so a set the server refuses (larger than its
// 1 MB item limit) is an error of that request, in the same batch as sets that succeed.
TEST(MemcachedPipelineBinary, SetsTheServerRefusesAreErrorsOneByOne) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri() + "?protocol=binary",
            "--keys", "400", "--threads", "1", "--connections", "2", "--pipeline", "8", "--phases",
            "load,read", "--value-size", "100:3,2MB:1"});
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

// A memcached-protocol server that is not memcached (the fake store): text protocol only (a
// binary request is never answered), "VERSION 1.1.41", no set counters in its stats, and it
// refuses every set ("SERVER_ERROR out of memory storing object"), as a read-only or full store
// would.
class TextOnlyServer {
 public:
  TextOnlyServer() {
    FakeStore::Behavior b;
    b.text_only = true;
    b.version = "1.1.41";
    b.set_counters = false;
    b.refuse_sets = FakeStore::Refusal::out_of_memory;
    store_.set_behavior_all(b);
  }
  std::string uri() const { return store_.memcached_uri(); }
  long long sets_refused() const { return store_.requests("set"); }

 private:
  FakeStore store_;
};

// ?protocol=binary against a server that speaks only text: the error says the server may not
// speak the binary protocol, in plain words (no pointers or source paths, as libmemcached's
// errors once carried).
TEST(MemcachedErrors, BinaryAgainstATextOnlyServerSaysSoInPlainWords) {
  TextOnlyServer server;
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                        server.uri() + "?protocol=binary", "--keys", "10", "--timeout", "500ms"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("may not speak the binary protocol"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("(0x"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find(".cc:"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("libmemcached/"), std::string::npos) << out.output;
}

// server_version is what the server said, labelled as a memcached-protocol reply, not
// "memcached 1.1.41" for a server that is not memcached.
TEST(MemcachedErrors, ServerVersionIsWhatTheServerSaid) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TextOnlyServer server;
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(),
                               "--target", memcached.uri(), "--keys", "10", "--phases", "read"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  auto q = db.prepare("SELECT server_version FROM targets ORDER BY ordinal");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "memcached protocol: VERSION 1.1.41");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0).rfind("memcached protocol: VERSION 1.", 0), 0u) << q.column_text(0);
}

// Pipelined text-protocol sets the server refused were once counted as ok with no word
// (libmemcached keeps only a batch's last reply). The engine reads every reply: each refused
// set is an error of its own request, with no set_verdicts_unseen event to guess from. A
// server without set counters (the fake store) refuses all of them.
TEST(MemcachedErrors, RefusedPipelinedTextSetsAreEachAnError) {
  TextOnlyServer server;
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(), "--keys",
                               "2000", "--phases", "load", "--pipeline", "16"});
  ASSERT_EQ(server.sets_refused(), 2000);
  EXPECT_EQ(out.exit_code, 1) << out.output;  // errors only: the phase fails
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "errors", "memcached", "set"), 2000) << out.output;
  EXPECT_EQ(driver_sum(db, "ok", "memcached", "set"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM events WHERE kind = 'set_verdicts_unseen'"), 0);
}

// memcached out of memory (-M: refuse rather than evict) refuses most sets of a load larger than
// its memory. kvdrive's errors equal the server's own count of refusals, set by set.
TEST(MemcachedErrors, RefusedPipelinedTextSetsEqualTheServersCounters) {
  StoreServer memcached(StoreServer::Kind::memcached, {"-M", "-m", "2", "-I", "512k"});
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--keys",
                        "30000", "--phases", "load", "--pipeline", "16", "--value-size", "100"});
  const long long refused = mc_stat(memcached.port(), "store_no_memory");
  ASSERT_GT(refused, 0) << "memcached stored everything: the test needs a fuller server";
  EXPECT_EQ(mc_stat(memcached.port(), "curr_items") + refused, 30000);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "errors", "memcached", "set"), refused) << out.output;
  EXPECT_EQ(driver_sum(db, "ok", "memcached", "set"), 30000 - refused);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM events WHERE kind = 'set_verdicts_unseen'"), 0);
}

// memcached full (-M) refuses every set of a second load: its counters say all of them were
// refused, so every set of the phase is an error in its own second, and the phase (errors
// only) and the run fail.
TEST(MemcachedErrors, EverySetRefusedOnPipelinedTextIsCountedAsErrors) {
  StoreServer memcached(StoreServer::Kind::memcached, {"-M", "-m", "2", "-I", "512k"});
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto fill = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(),
                                "--keys", "30000", "--phases", "load", "--value-size", "100"});
  ASSERT_GT(mc_stat(memcached.port(), "store_no_memory"), 0) << "memcached is not full";
  const long long refused_before = mc_stat(memcached.port(), "store_no_memory");
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(),
                               "--keys", "3000", "--phases", "load", "--pipeline", "16",
                               "--value-size", "100", "--key-prefix", "more:"});
  ASSERT_EQ(mc_stat(memcached.port(), "store_no_memory") - refused_before, 3000)
      << "memcached stored some of the second load";
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("run 2 FAILED"), std::string::npos) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string run2 =
      " FROM driver_seconds d JOIN phases p USING (phase_id) WHERE p.run_id = 2";
  EXPECT_EQ(query_int(db, "SELECT SUM(errors)" + run2), 3000);
  EXPECT_EQ(query_int(db, "SELECT SUM(ok)" + run2), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE run_id = 2 AND status = 'failed'"), 1);
}

}  // namespace
