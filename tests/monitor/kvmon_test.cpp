// Integration tests: the real kvmon binary watching a real redis-server, its samples checked
// against what /proc says (memory, faults, context switches). How it finds and follows its
// targets: kvmon_targets_test.cpp; its results file and the rest: kvmon_results_file_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "kvmon_test_util.hpp"
#include "proc_parsers.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

TEST(Kvmon, PidSamplesMatchProcStatusAndSigtermCompletesTheSession) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  // Watch VmRSS ourselves for the whole time kvmon runs: each of its values must lie within
  // what we saw. Writing data meanwhile makes RSS move, so a stale or wrong value shows.
  int64_t min_rss_kib = INT64_MAX, max_rss_kib = 0;
  auto observe = [&] {
    auto rss = read_status(redis.pid()).vm_rss_kib;
    ASSERT_TRUE(rss.has_value());
    min_rss_kib = std::min(min_rss_kib, *rss);
    max_rss_kib = std::max(max_rss_kib, *rss);
  };
  observe();
  Process kvmon = start_kvmon(
      dir, {"--pid", std::to_string(redis.pid()), "--interval", "50ms", "--host-interval", "50ms"});
  // The writes start once kvmon has sampled the store (a sanitizer build starts slowly: writes
  // done before its first sample are growth it cannot see).
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 1;
        } catch (const std::exception&) {
          return false;  // the file or its tables are not there yet
        }
      },
      30'000))
      << slurp(dir.file("kvmon.log"));
  std::string value(200'000, 'x');
  for (int i = 0; i < 60; ++i) {
    if (i % 4 == 0) {
      std::string key = "k" + std::to_string(i);
      std::string set = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key +
                        "\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
      ASSERT_EQ(kv::test::tcp_request(redis.port(), set, "\r\n"), "+OK\r\n");
    }
    observe();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 10; },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  observe();

  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
  EXPECT_TRUE(query_int(db, "SELECT ended_ts_us FROM monitor_sessions").has_value());
  EXPECT_EQ(query_int(db, "SELECT pid FROM process_instances"), redis.pid());
  EXPECT_GT(max_rss_kib, min_rss_kib) << "RSS did not move: the check below is weak";
  EXPECT_EQ(
      query_int(db,
                "SELECT COUNT(*) FROM process_samples WHERE rss_kib IS NULL "
                "OR rss_kib < " +
                    std::to_string(min_rss_kib) + " OR rss_kib > " + std::to_string(max_rss_kib)),
      0)
      << "min " << min_rss_kib << " max " << max_rss_kib;
  // Later samples saw the data we wrote: RSS grew over the run.
  EXPECT_GT(query_int(db, "SELECT MAX(rss_kib) - MIN(rss_kib) FROM process_samples").value_or(0),
            1000);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE swap_kib IS NULL "
                      "OR cpu_user_us IS NULL OR threads < 1 OR fds < 3 "
                      "OR minor_faults IS NULL OR ctx_voluntary IS NULL"),
            0);
  EXPECT_GE(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE load1 IS NOT NULL AND "
                      "mem_total_kib > 0")
                .value_or(0),
            10);
  // Absolute deadlines: each sample was read soon after it was due (generous for loaded CI).
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE "
                      "ts_us - scheduled_ts_us NOT BETWEEN -5000 AND 200000"),
            0);
}

// Fault and context-switch counters of `pid` as /proc has them, with when they were read.
struct CounterReading {
  int64_t before_us = 0, after_us = 0;  // now_ts_us() before and after reading
  int64_t minor_faults = 0, major_faults = 0, ctx_voluntary = 0, ctx_involuntary = 0;
};

CounterReading read_counters(pid_t pid) {
  CounterReading r;
  r.before_us = now_ts_us();
  auto st = parse_pid_stat(slurp("/proc/" + std::to_string(pid) + "/stat"));
  PidStatus status = read_status(pid);
  r.after_us = now_ts_us();
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(status.ctx_voluntary && status.ctx_involuntary);
  if (st.ok()) {
    r.minor_faults = st.value().minor_faults;
    r.major_faults = st.value().major_faults;
  }
  r.ctx_voluntary = status.ctx_voluntary.value_or(-1);
  r.ctx_involuntary = status.ctx_involuntary.value_or(-1);
  return r;
}

TEST(Kvmon, FaultAndContextSwitchCountsMatchProcWithinOneSample) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  constexpr int64_t kIntervalUs = 50'000;
  // Read the counters ourselves every few ms while kvmon samples every 50 ms, and make them
  // move: large SETs fault in new pages, each request wakes redis (a voluntary switch).
  std::vector<CounterReading> seen{read_counters(redis.pid())};
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(redis.pid()), "--interval", "50ms"});
  std::string value(300'000, 'f');
  for (int i = 0; i < 150; ++i) {
    if (i % 3 == 0) {
      std::string key = "f" + std::to_string(i);
      std::string set = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key +
                        "\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
      ASSERT_EQ(kv::test::tcp_request(redis.port(), set, "\r\n"), "+OK\r\n");
    }
    seen.push_back(read_counters(redis.pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 10; },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  seen.push_back(read_counters(redis.pid()));
  ASSERT_GT(seen.back().minor_faults, seen.front().minor_faults + 100) << "faults did not move";
  ASSERT_GT(seen.back().ctx_voluntary, seen.front().ctx_voluntary + 50) << "switches did not move";

  // Each stored value was read within one interval of its ts_us: it is at least what we read
  // before (ts_us - interval) and at most what we read after (ts_us + interval).
  Database results = Database::open(db);
  Statement rows = results.prepare(
      "SELECT ts_us, minor_faults, major_faults, ctx_voluntary, ctx_involuntary "
      "FROM process_samples ORDER BY ts_us");
  int checked = 0;
  while (rows.step()) {
    const int64_t ts = rows.column_int(0);
    const CounterReading* lo = nullptr;
    const CounterReading* hi = nullptr;
    for (const CounterReading& r : seen) {
      if (r.after_us < ts - kIntervalUs) lo = &r;
      if (!hi && r.before_us > ts + kIntervalUs) hi = &r;
    }
    if (!lo || !hi) continue;  // too close to either end of our readings
    ++checked;
    const char* names[] = {"minor_faults", "major_faults", "ctx_voluntary", "ctx_involuntary"};
    const int64_t CounterReading::*fields[] = {
        &CounterReading::minor_faults, &CounterReading::major_faults,
        &CounterReading::ctx_voluntary, &CounterReading::ctx_involuntary};
    for (int c = 0; c < 4; ++c) {
      ASSERT_FALSE(rows.is_null(c + 1)) << names[c] << " is NULL at ts_us " << ts;
      const int64_t v = rows.column_int(c + 1);
      EXPECT_GE(v, lo->*fields[c]) << names[c] << " at ts_us " << ts << " is older than a sample";
      EXPECT_LE(v, hi->*fields[c]) << names[c] << " at ts_us " << ts << " is ahead of /proc";
    }
  }
  EXPECT_GE(checked, 8);
}

// NTP stepping the wall clock back 10 s (a preloaded clock_gettime, tests/support): kvmon goes
// on sampling every interval at the new clock's times, says so once (a clock_stepped event), and
// does not wait 10 s for the old grid's next time.
TEST(Kvmon, AWallClockSteppedBackDoesNotStopTheSampling) {
  TempDir dir;
  const std::string back = dir.file("back");
  const std::string db = dir.file("results.db");
  Process target({"/bin/sleep", "60"}, dir.file("sleep.log"));
  Process kvmon({"/usr/bin/env", "LD_PRELOAD=" KV_WALL_CLOCK_SHIFT,
                 "KV_WALL_CLOCK_BACK_FILE=" + back, kKvmon, "--db", db, "--pid",
                 std::to_string(target.pid()), "--interval", "100ms", "--flush-interval", "1s"},
                dir.file("kvmon.log"));
  const auto rows = [&] {
    try {
      return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0);
    } catch (const std::exception&) {
      return int64_t{0};  // the file or its tables are not there yet
    }
  };
  ASSERT_TRUE(wait_until([&] { return rows() >= 5; }, 30'000)) << slurp(dir.file("kvmon.log"));
  std::ofstream(back) << "10\n";
  const auto stepped = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const int64_t before_stop = rows();
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  // 2.5 s at 100 ms: ~25 ticks after the step (a flush period may still be queued at the count
  // above; SIGTERM writes it). Waiting for the old grid would have sampled none.
  const int64_t after_step = query_int(db,
                                       "SELECT COUNT(*) FROM process_samples WHERE ts_us < "
                                       "(SELECT MAX(ts_us) FROM process_samples) - 5000000")
                                 .value_or(0);
  EXPECT_GE(after_step, 15) << "rows at the new clock's times; " << before_stop
                            << " rows in all before the stop";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'clock_stepped'"), 1)
      << slurp(dir.file("kvmon.log"));
  EXPECT_LT(std::chrono::steady_clock::now() - stepped, std::chrono::seconds(10));
}

}  // namespace
}  // namespace kv::mon
