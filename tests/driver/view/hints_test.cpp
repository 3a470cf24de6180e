// Hint rules, the store-process match and the report formats on small synthetic results files
// (rows written by hand, no servers).
#include "view/hints.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "kvbench/schema.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"
#include "servers.hpp"
#include "view/percentiles.hpp"

namespace {
using kv::Database;
using kv::drive::compute_hints;
using kv::drive::Hint;

constexpr int64_t T0 = 1'700'000'000'000'000;  // run start
constexpr int64_t S = 1'000'000;               // one second

struct Synthetic {
  kv::test::TempDir dir;
  Database db = kv::open_results_db(dir.file("r.db"));
  int64_t phase_id = 0;

  void run(int64_t id, const std::string& status = "completed") {
    db.exec(
        "INSERT INTO runs (run_id, started_ts_us, ended_ts_us, status, command_line, "
        "kvdrive_version, "
        "client_host, client_pid, error) VALUES (" +
        std::to_string(id) + ", " + std::to_string(T0) + ", " + std::to_string(T0 + 60 * S) +
        ", '" + status + "', 'kvdrive run', '0.1.0', 'h', 1, " +
        (status == "failed" ? "'lost the store'" : "NULL") + ")");
  }
  void target(int64_t id, int64_t run, int ordinal, const std::string& protocol) {
    db.exec("INSERT INTO targets (target_id, run_id, ordinal, uri, protocol) VALUES (" +
            std::to_string(id) + ", " + std::to_string(run) + ", " + std::to_string(ordinal) +
            ", '" + protocol + "://h:" + std::to_string(id) + "', '" + protocol + "')");
  }
  // A phase of `seconds` seconds from `start_s`, one driver_seconds row per second with the
  // given ops and errors per second; returns its id.
  int64_t phase(int64_t run, int64_t target, const std::string& step, const std::string& kind,
                int start_s, const std::vector<int64_t>& ops,
                const std::vector<int64_t>& errors = {}) {
    ++phase_id;
    int64_t start = T0 + start_s * S;
    db.exec(
        "INSERT INTO phases (phase_id, run_id, target_id, ordinal, step, name, kind, "
        "started_ts_us, "
        "ended_ts_us, threads, connections, status) VALUES (" +
        std::to_string(phase_id) + ", " + std::to_string(run) + ", " + std::to_string(target) +
        ", " + std::to_string(phase_id) + ", " + (step.empty() ? "NULL" : "'" + step + "'") +
        ", '" + kind + "', '" + kind + "', " + std::to_string(start) + ", " +
        std::to_string(start + static_cast<int64_t>(ops.size()) * S) + ", 1, 1, 'completed')");
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t err = i < errors.size() ? errors[i] : 0;
      db.exec(
          "INSERT INTO driver_seconds (phase_id, ts_us, interval_us, op, ops, bytes_out, bytes_in, "
          "hits, "
          "misses, errors, timeouts, lat_p99_us) VALUES (" +
          std::to_string(phase_id) + ", " + std::to_string(start + static_cast<int64_t>(i) * S) +
          ", 1000000, '" + (kind == "load" ? "set" : "get") + "', " + std::to_string(ops[i]) +
          ", 0, 0, 0, 0, " + std::to_string(err) + ", 0, 100)");
    }
    return phase_id;
  }
  // A kvmon session with one process whose swap_kib per second (from T0) is given.
  int64_t process(int64_t instance, const std::string& name, int64_t pid,
                  const std::vector<int64_t>& swap) {
    db.exec(
        "INSERT OR IGNORE INTO monitor_sessions (session_id, host, started_ts_us, kvmon_version, "
        "kvmon_pid, "
        "interval_us, command_line) VALUES (1, 'h', " +
        std::to_string(T0) + ", '0.1.0', 2, 1000000, 'kvmon')");
    db.exec(
        "INSERT INTO process_instances (instance_id, session_id, host, pid, start_ticks, name, "
        "selector, "
        "first_seen_ts_us) VALUES (" +
        std::to_string(instance) + ", 1, 'h', " + std::to_string(pid) + ", " +
        std::to_string(instance) + ", '" + name + "', 'pid:" + std::to_string(pid) + "', " +
        std::to_string(T0) + ")");
    for (size_t i = 0; i < swap.size(); ++i) {
      std::string ts = std::to_string(T0 + static_cast<int64_t>(i) * S + S / 2);
      db.exec(
          "INSERT INTO process_samples (instance_id, ts_us, scheduled_ts_us, rss_kib, swap_kib) "
          "VALUES (" +
          std::to_string(instance) + ", " + ts + ", " + ts + ", 100000, " +
          std::to_string(swap[i]) + ")");
    }
    return instance;
  }
  // A kvmon event of process instance `instance`.
  void event(int64_t instance, const std::string& kind, int64_t ts,
             const std::string& message = "x") {
    db.exec("INSERT INTO events (ts_us, source, instance_id, kind, message) VALUES (" +
            std::to_string(ts) + ", 'kvmon', " + std::to_string(instance) + ", '" + kind + "', '" +
            message + "')");
  }
  std::vector<Hint> hints(const std::string& kind, int64_t run = 1) {
    std::vector<Hint> out;
    for (auto& h : compute_hints(db, run))
      if (h.kind == kind) out.push_back(h);
    return out;
  }
};

TEST(ReportHints, CliffBetweenAdjacentStepsOnlyAboveFiveTimes) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "memcached");
  s.phase(1, 1, "1K", "load", 0, {10000});
  s.phase(1, 1, "10K", "load", 1, {2500});  // 4x: no cliff
  s.phase(1, 1, "100K", "load", 2, {400});  // 6.25x: a cliff
  auto h = s.hints("cliff");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].store, "memcached://h:1");
  EXPECT_NE(
      h[0].message.find("writes fell from 2,500 req/s at 10K to 400 req/s at 100K (6.2x lower)"),
      std::string::npos)
      << h[0].message;
  EXPECT_NE(h[0].rule.find("5x"), std::string::npos);
}

TEST(ReportHints, SwapOnsetWithThroughputBeforeAndAfter) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, {10000, 10000, 100, 100});
  s.process(7, "redis-server", 4242, {0, 0, 4096, 8192});
  auto h = s.hints("swap_onset");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ts_us, T0 + 2 * S + S / 2);
  EXPECT_NE(h[0].message.find("+2.5 s (4,096 KiB); 10,000 req/s before, 100 req/s after"),
            std::string::npos)
      << h[0].message;
  EXPECT_EQ(kv::drive::store_instance(s.db, 1), 7);
}

TEST(ReportHints, StoreReportedPidBeatsTheNameHeuristic) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, {10000, 10000, 10000, 10000});
  s.process(7, "redis-server", 4242, {0, 0, 4096, 8192, 8192});  // another redis that swaps
  s.process(8, "redis-server", 5151, {0, 0, 0, 0});              // ours, by its INFO process_id
  s.process(9, "memcached", 6161, {0, 0, 0, 0});
  EXPECT_EQ(kv::drive::store_instance(s.db, 1), 7);  // by name alone: the one with most samples
  s.db.exec("INSERT INTO store_stats (target_id, ts_us, name, value) VALUES (1, " +
            std::to_string(T0) + ", 'process_id', 5151)");
  EXPECT_EQ(kv::drive::store_instance(s.db, 1), 8);
  EXPECT_TRUE(s.hints("swap_onset").empty());
  // Swap already above 0 before the store was benchmarked is no onset either.
  Synthetic t;
  t.run(1);
  t.target(1, 1, 0, "memcached");
  t.phase(1, 1, "", "read", 2, {100, 100});
  t.process(1, "memcached", 1, {0, 50, 60, 70});
  EXPECT_TRUE(t.hints("swap_onset").empty());
}

TEST(ReportHints, ClientBoundFromBusyThreadOrEvent) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  int64_t p = s.phase(1, 1, "", "read", 0, {100, 100, 100});
  for (int i = 0; i < 3; ++i)
    s.db.exec(
        "INSERT INTO client_seconds (phase_id, ts_us, interval_us, busiest_thread_cpu_pct) VALUES "
        "(" +
        std::to_string(p) + ", " + std::to_string(T0 + i * S) + ", 1000000, " +
        (i == 1 ? "97" : "40") + ")");
  auto h = s.hints("client_bound");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(h[0].message.find("1 of 3 seconds"), std::string::npos) << h[0].message;
  EXPECT_EQ(h[0].ts_us, T0 + S);

  Synthetic e;
  e.run(1);
  e.target(1, 1, 0, "redis");
  e.phase(1, 1, "", "read", 0, {100});
  EXPECT_TRUE(e.hints("client_bound").empty());
  e.db.exec("INSERT INTO events (ts_us, source, run_id, kind, message) VALUES (" +
            std::to_string(T0) + ", 'kvdrive', 1, 'client_bound', 'worker 0 at 99 % of a core')");
  h = e.hints("client_bound");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].message, "worker 0 at 99 % of a core");
}

TEST(ReportHints, StoreFailedAfterCleanSecondsOrRunFailed) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.target(2, 1, 1, "memcached");
  s.phase(1, 1, "", "read", 0, {100, 100, 100, 50}, {0, 0, 7, 50});
  s.phase(1, 2, "", "read", 5, {100, 100}, {3, 0});  // errors from the start: not "mid-run"
  auto h = s.hints("store_failed");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].store, "redis://h:1");
  EXPECT_EQ(h[0].ts_us, T0 + 2 * S);
  EXPECT_NE(h[0].message.find("+2.0 s after 2 clean seconds: 57 errors"), std::string::npos)
      << h[0].message;

  Synthetic f;
  f.run(1, "failed");
  f.target(1, 1, 0, "redis");
  h = f.hints("store_failed");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].message, "the run failed: lost the store");
}

TEST(ReportFormats, CsvTablesAndComparisonRatios) {
  Synthetic s;
  for (int64_t run : {1, 2}) {
    s.run(run);
    s.target(run * 10, run, 0, "redis");
    s.target(run * 10 + 1, run, 1, "memcached");
    s.phase(run, run * 10, "", "load", 0, {1000 * run});
    s.phase(run, run * 10 + 1, "", "load", 2, {4000});
  }
  // One table per stream, every listed run under one header (no stacked tables).
  auto csv_of = [&](const std::string& table) {
    std::ostringstream csv;
    kv::drive::print_csv_table(s.db, {1, 2}, table, kv::drive::default_percentiles(), csv);
    return csv.str();
  };
  std::string out = csv_of("stores");
  EXPECT_EQ(
      out.rfind("run_id,store,write_req_per_s,read_req_per_s,write_p99_us,read_p99_us,errors\n"
                "1,redis://h:10,1000,,",
                0),
      0u)
      << out;
  EXPECT_EQ(out.find("\n\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("run_id,", 1), std::string::npos) << out;  // one header
  EXPECT_NE(out.find("\n2,redis://h:20,2000,"), std::string::npos) << out;
  EXPECT_EQ(csv_of("phases").rfind("run_id,store,phase,op,ops,seconds,req_per_s,failed_per_s,"
                                   "mib_per_s,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,"
                                   "lat_p999_us,lat_max_us,hits,",
                                   0),
            0u);
  out = csv_of("comparison");
  EXPECT_EQ(out.rfind("base_run_id,run_id,store,op,", 0), 0u) << out;
  EXPECT_NE(out.find("\n1,2,redis://h:10 / redis://h:20,write,1000,2000,2,"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\n1,2,memcached://h:11 / memcached://h:21,write,4000,4000,1,"),
            std::string::npos)
      << out;
  // No scenario run: the steps table is its header alone.
  EXPECT_EQ(csv_of("steps"),
            "run_id,step,store,protocol,write_req_per_s,read_req_per_s,write_mib_per_s,"
            "read_mib_per_s,write_p99_us,read_p99_us,errors\n");
  EXPECT_THROW(csv_of("nope"), std::invalid_argument);
  std::ostringstream text;
  kv::drive::print_report(s.db, {1, 2}, kv::drive::ReportFormat::text, text);
  EXPECT_NE(text.str().find("run 2 / run 1, stores matched by protocol and position:"),
            std::string::npos);
  std::ostringstream json;
  kv::drive::print_report(s.db, {2}, kv::drive::ReportFormat::json, json);
  EXPECT_EQ(json.str().rfind("{\"format\":\"kvbench-results\",\"format_version\":1,", 0), 0u)
      << json.str();
  EXPECT_NE(json.str().find("\"runs\":[{\"run_id\":2,"), std::string::npos);
  EXPECT_THROW(kv::drive::print_report(s.db, {3}, kv::drive::ReportFormat::text, text),
               std::invalid_argument);
  std::ostringstream html;
  kv::drive::write_html_report(s.db, {1, 2}, html);
  EXPECT_NE(html.str().find("<h2>Comparison</h2>"), std::string::npos);
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
  EXPECT_EQ(html.str().find("http://"),
            html.str().find("http://www.w3.org/2000/svg"));  // no fetches
}

}  // namespace

namespace {

TEST(Percentiles, NamesListsAndTheClampToTheObservedRange) {
  using kv::drive::percentile_label;
  using kv::drive::percentile_name;
  EXPECT_EQ(percentile_name(50), "p50");
  EXPECT_EQ(percentile_name(99.9), "p999");
  EXPECT_EQ(percentile_name(99.99), "p9999");
  EXPECT_EQ(percentile_name(99.5), "p995");
  EXPECT_EQ(percentile_name(5), "p05");
  EXPECT_EQ(percentile_name(0.5), "p005");
  EXPECT_EQ(percentile_label(99.99), "p99.99");
  EXPECT_EQ(kv::drive::parse_percentiles("99.9,50,50,90").values,
            (std::vector<double>{50, 90, 99.9}));
  for (const char* bad : {"", "50,", "x", "100", "0", "99.9999", "1e400"})
    EXPECT_THROW(kv::drive::parse_percentiles(bad), std::invalid_argument) << bad;

  Synthetic s;
  s.run(1);
  s.target(10, 1, 0, "redis");
  const int64_t phase = s.phase(1, 10, "", "read", 0, {100});
  // 98 requests at <= 10 µs, 2 in the bucket up to 1000 µs, the slowest seen 500 µs.
  s.db.exec("INSERT INTO latency_buckets (phase_id, op, timing, upper_us, count) VALUES (" +
            std::to_string(phase) + ", 'get', 'sent', 10, 98), (" + std::to_string(phase) +
            ", 'get', 'sent', 1000, 2)");
  s.db.exec(
      "INSERT INTO latency_range (phase_id, op, timing, count, min_us, max_us, mean_us) "
      "VALUES (" +
      std::to_string(phase) + ", 'get', 'sent', 100, 4, 500, 20)");
  auto p = kv::drive::run_percentiles(s.db, 1, kv::drive::parse_percentiles("50,98,99,99.99"));
  const auto& v = p.at({phase, "get"});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], 10);   // rank 50 of 100
  EXPECT_EQ(v[1], 10);   // rank 98: still the first bucket
  EXPECT_EQ(v[2], 500);  // rank 99: the 1000 µs bucket, but nothing slower than 500 was seen
  EXPECT_EQ(v[3], 500);
}

TEST(ReportHints, CgroupMemoryEventWithThroughputAfterOnlyWithEnoughSeconds) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, {1000, 1000, 1000, 1000, 1000, 1000, 600, 600, 600, 600, 600, 600});
  s.process(7, "redis-server", 4242, std::vector<int64_t>(12, 0));
  s.event(7, "cgroup_max", T0 + S);  // one second before it: too few to say anything
  s.event(7, "cgroup_high", T0 + 6 * S);
  s.event(7, "cgroup_high", T0 + 8 * S);         // not the first of its kind
  EXPECT_TRUE(s.hints("cgroup_limit").empty());  // no cgroup limit known
  s.db.exec(
      "UPDATE process_samples SET cg_memory_bytes = 47185920 + ts_us % 2, "
      "cg_memory_max_bytes = 50331648 WHERE instance_id = 7");
  auto l = s.hints("cgroup_limit");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].message,
            "the store's cgroup memory peaked at 45.0 MiB of its 48.0 MiB limit (94 %)");
  auto h = s.hints("cgroup_memory");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ts_us, T0 + 6 * S);
  EXPECT_EQ(h[0].message,
            "memory.high reached at +6.0 s, throughput fell 40 % in the next 5 s (1,000 req/s -> "
            "600 req/s)");
}

TEST(ReportHints, BgsaveWithP99BeforeAndDuringForkAndCow) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  int64_t p = s.phase(1, 1, "", "read", 0, std::vector<int64_t>(12, 1000));
  s.db.exec("UPDATE driver_seconds SET lat_p99_us = CASE WHEN ts_us IN (" +
            std::to_string(T0 + 7 * S) + ", " + std::to_string(T0 + 8 * S) +
            ") THEN 41000 ELSE 3100 END WHERE phase_id = " + std::to_string(p));
  auto stat = [&](const char* name, int64_t ts, double v) {
    s.db.exec("INSERT INTO store_stats (target_id, ts_us, name, value) VALUES (1, " +
              std::to_string(ts) + ", '" + name + "', " + std::to_string(v) + ")");
  };
  for (int k = 0; k < 12; ++k) {
    stat("rdb_bgsave_in_progress", T0 + k * S + S / 2, k == 7 || k == 8 ? 1 : 0);
  }
  stat("latest_fork_usec", T0 + 9 * S + S / 2, 180000);
  stat("rdb_last_cow_size", T0 + 9 * S + S / 2, 62914560);
  auto h = s.hints("persistence");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].message,
            "BGSAVE at +7.5 s: p99 3.1 ms -> 41 ms for 2 s (fork 180 ms, COW 60.0 MiB)");
  // the same BGSAVE without a latency change says nothing
  s.db.exec("UPDATE driver_seconds SET lat_p99_us = 3100");
  EXPECT_TRUE(s.hints("persistence").empty());
}

}  // namespace

namespace {

// Redis LATENCY LATEST polled into store_stats (#20): each event first seen during the run is a
// hint with its ms; one from before the run (still the latest at the first poll) is not; the
// threshold 0 says monitoring was off instead of saying nothing.
TEST(ReportHints, RedisLatencyEventsAndMonitoringOff) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, std::vector<int64_t>(12, 1000));
  auto stat = [&](const std::string& name, int64_t ts, double v) {
    s.db.exec("INSERT INTO store_stats (target_id, ts_us, name, value) VALUES (1, " +
              std::to_string(ts) + ", '" + name + "', " + std::to_string(v) + ")");
  };
  const double t0_s = static_cast<double>(T0 / S);
  for (int k = 0; k < 12; ++k) {
    const int64_t ts = T0 + k * S + S / 2;
    stat("latency_monitor_threshold_ms", ts, 100);
    stat("latency_command_ts", ts, t0_s - 30);  // before the run: never a hint
    stat("latency_command_latest_ms", ts, 250);
    if (k >= 7) {  // a BGSAVE's fork at +7 s, polled at +7.5 s and after
      stat("latency_fork_ts", ts, t0_s + 7);
      stat("latency_fork_latest_ms", ts, 180);
    }
  }
  auto h = s.hints("latency");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].message, "Redis latency event 'fork' at +7.0 s: 180 ms");
  EXPECT_EQ(h[0].ts_us, T0 + 7 * S);
  s.db.exec("UPDATE store_stats SET value = 0 WHERE name = 'latency_monitor_threshold_ms'");
  h = s.hints("latency");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(h[0].message.find("monitoring off (latency-monitor-threshold 0)"), std::string::npos)
      << h[0].message;
}

// kvmon's host load above the CPUs of kvdrive's host (the same host) is a hint, with when.
TEST(ReportHints, HostLoadAboveItsCpusWhenKvmonRanOnKvdrivesHost) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, std::vector<int64_t>(12, 1000));
  s.process(7, "redis-server", 4242, std::vector<int64_t>(12, 0));
  for (int k = 0; k < 12; ++k)
    s.db.exec("INSERT INTO host_samples (session_id, ts_us, scheduled_ts_us, load1) VALUES (1, " +
              std::to_string(T0 + k * S) + ", " + std::to_string(T0 + k * S) + ", " +
              std::to_string(k == 6 ? 17.0 : 1.5) + ")");
  EXPECT_TRUE(s.hints("host_load").empty());  // no CPU count known: no claim
  s.db.exec(
      "INSERT INTO run_metadata (run_id, target_id, name, value) VALUES (1, NULL, "
      "'cpu_count', '2')");
  auto h = s.hints("host_load");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].message.rfind("host h: load rose to 17.0 on 2 CPUs (+6.0 s)", 0), 0u)
      << h[0].message;
  EXPECT_EQ(h[0].ts_us, T0 + 6 * S);
  s.db.exec("UPDATE host_samples SET load1 = 2.0");  // at the CPU count: no hint
  EXPECT_TRUE(s.hints("host_load").empty());
}

// The HTML timeline marks kvmon's events of the store's process (a cgroup memory.high, a PSI
// trigger on its cgroup, the OOM kill that ended it) and draws its cgroup memory against the limit
// (#20).
TEST(HtmlReport, KvmonEventsAreMarkersAndTheCgroupLimitIsALine) {
  Synthetic s;
  s.run(1);
  s.target(1, 1, 0, "redis");
  s.phase(1, 1, "", "read", 0, std::vector<int64_t>(12, 1000));
  s.process(7, "redis-server", 4242, std::vector<int64_t>(12, 0));
  auto html_of = [&] {
    std::ostringstream html;
    kv::drive::write_html_report(s.db, {1}, html);
    return html.str();
  };
  std::string before = html_of();
  EXPECT_EQ(before.find("OOM-killed"), std::string::npos);
  EXPECT_EQ(before.find("cgroup memory limit"), std::string::npos);  // none known
  s.event(7, "cgroup_high", T0 + 4 * S, "redis: memory.events high 0 -> 1");
  s.event(7, "cgroup_found", T0 + 5 * S, "redis: cgroup v1 memory /x");  // not a marker
  s.event(7, "cgroup_psi_trigger", T0 + 6 * S,
          "redis: cgroup pressure: memory full >= 100 ms within 2 s (PSI trigger on /x)");
  s.event(7, "target_exited", T0 + 9 * S,
          "pid:4242: process 4242 exited: killed by the OOM killer (cgroup /x oom_kill 0 -> 1)");
  s.db.exec(
      "UPDATE process_samples SET cg_memory_bytes = 40 * 1048576, cg_memory_max_bytes = "
      "48 * 1048576 WHERE instance_id = 7");
  std::string after = html_of();
  EXPECT_NE(after.find(">memory.high</text>"), std::string::npos);
  EXPECT_NE(after.find(">store OOM-killed</text>"), std::string::npos);
  EXPECT_NE(after.find(">pressure stall</text>"), std::string::npos);  // --psi-trigger cgroup:
  EXPECT_EQ(after.find(">memory.found</text>"), std::string::npos);
  EXPECT_NE(after.find("redis://h:1 cgroup memory limit"), std::string::npos);
  EXPECT_NE(after.find("redis://h:1 cgroup memory<"), std::string::npos);
  // A limit over 4x everything drawn would flatten the memory into the axis: named, not drawn.
  s.db.exec(
      "UPDATE process_samples SET cg_memory_max_bytes = 1200 * 1048576 WHERE instance_id = 7");
  std::string far = html_of();
  EXPECT_EQ(far.find("redis://h:1 cgroup memory limit"), std::string::npos);
  EXPECT_NE(far.find("redis://h:1 cgroup memory (limit 1,200 MiB, off this scale)"),
            std::string::npos);
}

}  // namespace
