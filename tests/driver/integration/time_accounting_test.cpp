// Time as true as counts (issue #14): every second of a phase has its rows, rows sit on whole
// seconds of the wall clock, a phase's seconds are its wall time, req/s counts answered
// requests per wall second, a locked results file delays rows but never merges them, and a
// phase whose store is gone or refuses everything fails. Real redis-server, real kvdrive.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "kvbench/sqlite.hpp"
#include "kvdrive_test_util.hpp"

namespace kv::test {
namespace {

using namespace std::chrono_literals;

// Rows of one op of one phase tile [started, ended] without gap or overlap, each at most one
// second long, every one after the first starting on a whole second.
void expect_rows_tile_the_phase(kv::Database& db, int64_t phase_id, const std::string& op) {
  const std::string where = " FROM driver_seconds WHERE phase_id = " + std::to_string(phase_id) +
                            " AND op = '" + op + "'";
  const int64_t started = query_int(
      db, "SELECT started_ts_us FROM phases WHERE phase_id = " + std::to_string(phase_id));
  const int64_t ended =
      query_int(db, "SELECT ended_ts_us FROM phases WHERE phase_id = " + std::to_string(phase_id));
  EXPECT_EQ(query_int(db, "SELECT MIN(ts_us)" + where), started);
  EXPECT_EQ(query_int(db, "SELECT MAX(ts_us + interval_us)" + where), ended);
  EXPECT_EQ(query_int(db, "SELECT SUM(interval_us)" + where), ended - started);
  EXPECT_LE(query_int(db, "SELECT MAX(interval_us)" + where), 1'000'000);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*)" + where + " AND ts_us != " + std::to_string(started) +
                              " AND ts_us % 1000000 != 0"),
            0);
  // Each row starts where the previous one ended.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM (SELECT ts_us, LAG(ts_us + interval_us) OVER "
                      "(ORDER BY ts_us) AS prev_end" +
                          where + ") WHERE prev_end != ts_us"),
            0);
}

// A store stopped for 3 s in a 6 s closed-loop phase: the stalled seconds keep their rows
// (ops 0, latency NULL), the phase lasts 6 s of wall time, and req/s is requests / 6 s.
TEST(TimeAccounting, StalledSecondsCountInClosedLoop) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "mixed", "--ratio", "1:1", "--duration", "6s", "--threads", "2"},
            log);
  // Stall once the phase runs (a loaded machine or a sanitizer stretches the start), for 3 s:
  // at least two whole seconds in which nothing completes.
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("mixed", 1))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(3000ms);
  redis.process().signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::Database::open(dir.file("r.db"));
  const int64_t phase = query_int(db, "SELECT MAX(phase_id) FROM phases");
  for (const char* op : {"set", "get"}) {
    SCOPED_TRACE(op);
    expect_rows_tile_the_phase(db, phase, op);
    // At least one whole second of the stall had nothing completed: a row with ops 0 and no
    // latency figures (unknown, not zero).
    EXPECT_GE(query_int(db, std::string("SELECT COUNT(*) FROM driver_seconds WHERE op = '") + op +
                                "' AND ops = 0 AND lat_p50_us IS NULL AND lat_max_us IS NULL"),
              1);
  }
  const double wall = query_double(db, "SELECT (ended_ts_us - started_ts_us) / 1e6 FROM phases");
  EXPECT_GE(wall, 6.0);
  EXPECT_LT(wall, 6.0 + 1.0);  // the requests in flight at the end, not a second more
  // phase_summary: seconds is the wall time, req/s is answered requests over it.
  for (const char* op : {"set", "get"}) {
    SCOPED_TRACE(op);
    const std::string ps = std::string(" FROM phase_summary WHERE op = '") + op + "'";
    EXPECT_NEAR(query_double(db, "SELECT seconds" + ps), wall, 1e-6);
    EXPECT_NEAR(query_double(db, "SELECT req_per_s" + ps),
                static_cast<double>(query_int(db, "SELECT ok" + ps)) / wall, 1e-6);
  }
  const double answered = static_cast<double>(query_int(db, "SELECT SUM(ok) FROM driver_seconds"));
  EXPECT_NEAR(query_double(db, "SELECT mixed_req_per_s FROM store_summary"), answered / wall, 1e-6);
  // The timeline's per-second req/s adds up to the same requests.
  EXPECT_NEAR(query_double(db,
                           "SELECT SUM(req_per_s * (SELECT interval_us FROM driver_seconds d "
                           "WHERE d.ts_us = timeline.ts_us AND d.op = timeline.op) / 1e6) "
                           "FROM timeline"),
              answered, 0.5);
}

// Rate mode at 2,000/s with the store stopped for 2 s: the backlog is sent late (and counted as
// late), nothing is dropped, and req/s over the phase's wall time is the offered 2,000 — or, when
// draining the backlog took the phase past its 6 s (a slow build: ThreadSanitizer), less, over
// the real wall time, and the phase says so (a phase_extended event).
TEST(TimeAccounting, StalledSecondsCountInRateMode) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--rate", "2000", "--duration", "6s", "--threads", "2"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(2000ms);
  redis.process().signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::Database::open(dir.file("r.db"));
  expect_rows_tile_the_phase(db, 1, "get");
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 12'000);
  const double seconds = query_double(db, "SELECT seconds FROM phase_summary");
  const double rate = query_double(db, "SELECT req_per_s FROM phase_summary");
  EXPECT_GE(seconds, 5.9);
  EXPECT_NEAR(rate, static_cast<double>(query_int(db, "SELECT ok FROM phase_summary")) / seconds,
              1e-6);
  EXPECT_NEAR(query_double(db, "SELECT read_req_per_s FROM store_summary"), rate, 1e-6);
  if (seconds > 6.2) {
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'phase_extended'"), 1)
        << "a phase that ran past its duration says so";
  } else {
    EXPECT_NEAR(rate, 2000.0, 2000.0 * 0.03);
  }
  EXPECT_GT(query_int(db, "SELECT SUM(late) FROM driver_seconds"), 1000);
  // Slip is recorded where requests were sent: larger than a second for the backlog.
  EXPECT_GT(query_double(db, "SELECT MAX(slip_max_us) FROM driver_seconds"), 1'000'000);
}

// Another process holds the results file locked for 5 s mid-phase: kvdrive's rows are written
// late, still one per second, none folded into another.
TEST(TimeAccounting, LockedResultsFileDelaysRowsButDoesNotMergeThem) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--duration", "8s", "--threads", "1"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  {
    auto locker = kv::Database::open(dir.file("r.db"));
    locker.exec("BEGIN EXCLUSIVE");
    std::this_thread::sleep_for(5000ms);
    locker.exec("COMMIT");
  }
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::Database::open(dir.file("r.db"));
  expect_rows_tile_the_phase(db, 1, "get");
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM driver_seconds"), 8);
  // Requests went on during the lock: no second of it is empty.
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM driver_seconds WHERE ops = 0"), 0);
}

// A store that refuses every request (Redis at maxmemory 1 with noeviction refuses sets): the
// phase is failed, not completed, and kvdrive exits 1.
TEST(TimeAccounting, PhaseWithOnlyErrorsIsFailed) {
  StoreServer redis(StoreServer::Kind::redis,
                    {"--maxmemory", "1", "--maxmemory-policy", "noeviction"});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "300", "--phases", "load", "--threads", "2"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT status = 'failed' FROM phases"), 1);
  EXPECT_EQ(query_int(db, "SELECT status = 'failed' FROM runs"), 1);
  EXPECT_EQ(query_int(db, "SELECT error LIKE '%every request failed (300 of 300)%' FROM runs"), 1)
      << out.output;
  EXPECT_EQ(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 0);
  EXPECT_EQ(query_double(db, "SELECT write_req_per_s FROM store_summary"), 0.0);
}

// --max-errors: the number in the message is the number in the tables.
TEST(TimeAccounting, MaxErrorsMessageCountsWhatTheTablesCount) {
  StoreServer redis(StoreServer::Kind::redis,
                    {"--maxmemory", "1", "--maxmemory-policy", "noeviction"});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                        "200000", "--phases", "load", "--threads", "4", "--max-errors", "1000"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  const int64_t failed = query_int(db, "SELECT SUM(errors + timeouts) FROM driver_seconds");
  EXPECT_GE(failed, 1000);
  EXPECT_EQ(query_int(db, "SELECT error LIKE '%: " + std::to_string(failed) +
                              " requests failed (--max-errors 1000)%' FROM runs"),
            1)
      << query_text(db, "SELECT error FROM runs") << " vs " << failed;
}

// A store killed for good mid-phase: the phase gives up after --give-up-after without one
// answered request, is failed and says why, instead of erroring on for hours.
TEST(TimeAccounting, DeadStoreEndsThePhase) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "50M",
             "--phases", "load", "--threads", "2", "--timeout", "300ms", "--give-up-after", "3s"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("load", 1))) << slurp(log);
  redis.process().signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(p.wait(60'000), 1) << slurp(log);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_GE(took, 3.0);
  EXPECT_LT(took, 3.0 + 10.0);
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT status = 'failed' FROM phases"), 1);
  EXPECT_EQ(query_int(db, "SELECT error LIKE '%no request was answered for 3 s%' FROM runs"), 1)
      << query_text(db, "SELECT error FROM runs");
  EXPECT_GT(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 0);  // before the kill
}

}  // namespace
}  // namespace kv::test
