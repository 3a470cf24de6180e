// Time as kvdrive measures it, against real servers: rate mode sends on schedule (slip), a phase
// with a duration lasts it at any rate, rate mode paces pipelines, and latency starts when a
// request is queued in every mode. Bounds leave room for slow machines (ThreadSanitizer): each
// compares kvdrive with itself or with a schedule, never with a speed.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// The p50 upper bound (µs) of a phase's latency_buckets for one op and timing.
double bucket_p50_us(kv::Database& db, int64_t phase_id, const std::string& op,
                     const std::string& timing) {
  return query_double(
      db,
      "SELECT MIN(upper_us) FROM (SELECT upper_us, SUM(count) OVER (ORDER BY upper_us) AS cum, "
      "SUM(count) OVER () AS total FROM latency_buckets WHERE phase_id = " +
          std::to_string(phase_id) + " AND op = '" + op + "' AND timing = '" + timing +
          "') WHERE cum * 2 >= total");
}

int64_t phase_id(kv::Database& db, int64_t run_id, const std::string& kind) {
  return query_int(db, "SELECT phase_id FROM phases WHERE run_id = " + std::to_string(run_id) +
                           " AND kind = '" + kind + "'");
}

double phase_seconds(kv::Database& db, int64_t id) {
  return query_double(db,
                      "SELECT (ended_ts_us - started_ts_us) / 1e6 FROM phases WHERE phase_id = " +
                          std::to_string(id));
}

int64_t phase_ops(kv::Database& db, int64_t id, const std::string& op) {
  return query_int(db, "SELECT COALESCE(SUM(ops), 0) FROM driver_seconds WHERE phase_id = " +
                           std::to_string(id) + " AND op = '" + op + "'");
}

// A plain clock_nanosleep wakes 80-110 µs late on the dev VM (50 µs of it the default timer
// slack: at least that on any Linux), which went into every rate-mode latency: intended-time p50
// was ~110 µs above the from-send p50, and the slip was not stored at all. Sleeping to a margin
// before the send time and spinning the rest keeps the slip p50 under 1 µs here (~2.4 µs under
// ThreadSanitizer at load average 9); 40 µs leaves room and still fails a plain sleep. The
// difference of the two latency p50s is not asserted: under load it also reflects the spread of
// the round trips behind the few sends that were preempted, not the slip.
TEST(KvdriveTiming, RateModeSendsWithinMicrosecondsOfTheSchedule) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000", "--phases",
            "read", "--rate", "1000", "--threads", "1", "--duration", "3s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t read = phase_id(db, 1, "read");
  const std::string rows = "FROM driver_seconds WHERE phase_id = " + std::to_string(read) +
                           " AND op = 'get' AND ops > 0";
  const int64_t seconds = query_int(db, "SELECT count(*) " + rows);
  ASSERT_GE(seconds, 3);
  // Measured: every second has it, and a send never leaves at the very instant it is due.
  EXPECT_EQ(query_int(db, "SELECT count(slip_p50_us) " + rows), seconds);
  EXPECT_GT(query_double(db, "SELECT MAX(slip_max_us) " + rows), 0.0);
  // Small: the median second's p50.
  const double slip = query_double(db, "SELECT slip_p50_us " + rows +
                                           " ORDER BY slip_p50_us "
                                           "LIMIT 1 OFFSET " +
                                           std::to_string(seconds / 2));
  EXPECT_LT(slip, 40.0) << "median second's slip p50 (µs); latency p50 from the intended time "
                        << bucket_p50_us(db, read, "get", "intended") << " µs, from the send "
                        << bucket_p50_us(db, read, "get", "sent") << " µs";
  // Spinning is reported for every second of a rate-mode phase.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM client_seconds WHERE phase_id = " +
                              std::to_string(read) + " AND spin_us IS NULL"),
            0);
  EXPECT_GT(query_int(db, "SELECT SUM(spin_us) FROM client_seconds WHERE phase_id = " +
                              std::to_string(read)),
            0);
}

// --rate 0.1 --duration 5s ended after one request: the worker returned when its next send time
// fell beyond the end. The phase must last its duration (and not run on to the next send time).
TEST(KvdriveTiming, LowRatePhaseLastsItsDuration) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "100",
                        "--phases", "read", "--rate", "0.2", "--threads", "1", "--duration", "3s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  // Four threads at 1/s over 2 s: two of them have their first send time after the end.
  out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "100",
                          "--phases", "read", "--rate", "1", "--threads", "4", "--duration", "2s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t slow = phase_id(db, 1, "read"), spread = phase_id(db, 2, "read");
  EXPECT_EQ(phase_ops(db, slow, "get"), 1);
  EXPECT_GE(phase_seconds(db, slow), 2.95);
  EXPECT_LT(phase_seconds(db, slow), 4.9) << "ran on towards the next send time (5 s)";
  EXPECT_EQ(phase_ops(db, spread, "get"), 2);
  EXPECT_GE(phase_seconds(db, spread), 1.95);
}

// Ctrl-C while a worker sleeps towards a send time 10 s away ends the run at once: the sleep is
// cut into slices that look at the stop flag.
TEST(KvdriveTiming, CtrlCDuringALongWaitForASendTimeEndsTheRun) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db_path = dir.file("r.db"), log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", db_path, "--target", redis.uri(), "--keys", "100", "--phases",
             "read", "--rate", "0.1", "--threads", "1", "--duration", "120s"},
            log);
  ASSERT_TRUE(wait_for_value(db_path, phase_rows_at_least("read", 1))) << slurp(log);
  const auto t0 = std::chrono::steady_clock::now();
  p.signal(SIGINT);
  const int code = p.wait(30'000);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(code, 130) << slurp(log);
  EXPECT_LT(took, std::chrono::seconds(5)) << "slept on towards the next send time";
  auto db = kv::open_results_db(db_path);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'interrupted'"), 1);
  EXPECT_EQ(phase_ops(db, phase_id(db, 1, "read"), "get"), 1);
}

// Fewer requests than threads: the phase's requests are due at 0 and 0.5 s (2/s); handing them
// to workers by key range put them at 0.5 and 1.5 s.
TEST(KvdriveTiming, FewerRequestsThanThreadsKeepTheRate) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "100",
                        "--phases", "read", "--rate", "2", "--threads", "4", "--requests", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t read = phase_id(db, 1, "read");
  EXPECT_EQ(phase_ops(db, read, "get"), 2);
  EXPECT_GE(phase_seconds(db, read), 0.5);
  EXPECT_LT(phase_seconds(db, read), 1.2);
}

// Rate mode with pipelining and several connections paces (it was refused before; unpaced it
// would send flat out): 2 s at 500/s is 1,000 send times, none at or after the end.
TEST(KvdriveTiming, RateModePacesPipelinedConnections) {
  for (auto kind : {StoreServer::Kind::redis, StoreServer::Kind::memcached}) {
    StoreServer server(kind);
    KV_START_OR_SKIP(server);
    TempDir dir;
    auto out =
        run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(), "--keys",
                          "200", "--phases", "load,read", "--rate", "500", "--threads", "1",
                          "--connections", "2", "--pipeline", "4", "--duration", "2s"});
    ASSERT_EQ(out.exit_code, 0) << out.output;
    auto db = kv::open_results_db(dir.file("r.db"));
    const int64_t read = phase_id(db, 1, "read");
    const int64_t gets = phase_ops(db, read, "get");
    EXPECT_LE(gets, 1000) << server.uri();
    // Loose: at load average 16 on 2 cores a run fell more than 1 s behind (under 500 sent).
    EXPECT_GE(gets, 100) << server.uri();
    EXPECT_EQ(query_int(db, "SELECT SUM(hits) FROM driver_seconds WHERE phase_id = " +
                                std::to_string(read)),
              gets);
  }
}

// Pipelined latency started after the flush, so a request whose reply was already in the
// socket when the flush returned looked faster than a round trip (memcached --pipeline 16: p50
// 3-5 µs). With 200 KB values the flush of 16 sets takes many round trips' worth of transfer:
// from queue time a pipelined set waits for its own transfer and those ahead of it, so its p50
// is at least the unpipelined one; from after the flush it is the time to read a buffered reply.
TEST(KvdriveTiming, PipelinedLatencyStartsWhenTheRequestIsQueued) {
  for (auto kind : {StoreServer::Kind::redis, StoreServer::Kind::memcached}) {
    StoreServer server(kind);
    KV_START_OR_SKIP(server);
    TempDir dir;
    for (const char* depth : {"1", "16"}) {
      auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server.uri(),
                                   "--keys", "128", "--phases", "load", "--value-size", "200KB",
                                   "--threads", "1", "--pipeline", depth});
      ASSERT_EQ(out.exit_code, 0) << out.output;
    }
    auto db = kv::open_results_db(dir.file("r.db"));
    const double single = bucket_p50_us(db, phase_id(db, 1, "load"), "set", "sent");
    const double piped = bucket_p50_us(db, phase_id(db, 2, "load"), "set", "sent");
    EXPECT_GE(piped, 0.8 * single) << server.uri() << ": --pipeline 16 p50 " << piped
                                   << " µs, --pipeline 1 p50 " << single << " µs";
  }
}

}  // namespace
