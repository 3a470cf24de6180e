// `kvdrive run --segment I/N`: N segments of one run, started as local processes at once, issue
// exactly the requests of the unsegmented run: the servers' counters and the rows agree, load
// key ranges are disjoint (every key set once), rate shares add up to the whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "kvbench/clock.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// Sum of a driver_seconds column of one op and phase kind over several results files.
int64_t sum_over(const std::vector<std::string>& files, const std::string& column,
                 const std::string& op, const std::string& kind) {
  int64_t n = 0;
  for (const auto& f : files) {
    auto db = kv::Database::open(f);
    n += driver_sum(db, column, "redis", op, kind);
  }
  return n;
}

// Runs the N segments of `args` at once, each into its own file; returns the files.
std::vector<std::string> run_segments(const TempDir& dir, const std::string& name, int n,
                                      const std::vector<std::string>& args) {
  std::vector<Process> procs;
  std::vector<std::string> files;
  for (int i = 1; i <= n; ++i) {
    files.push_back(dir.file(name + std::to_string(i) + ".db"));
    std::vector<std::string> a = {kKvdrive,    "run",
                                  "--db",      files.back(),
                                  "--segment", std::to_string(i) + "/" + std::to_string(n)};
    a.insert(a.end(), args.begin(), args.end());
    procs.emplace_back(a, dir.file(name + std::to_string(i) + ".log"));
  }
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(procs[static_cast<size_t>(i)].wait(180'000), 0)
        << slurp(dir.file(name + std::to_string(i + 1) + ".log"));
  return files;
}

TEST(SegmentedRun, ThreeSegmentsIssueExactlyTheUnsegmentedRunsRequests) {
  StoreServer whole(StoreServer::Kind::redis), split(StoreServer::Kind::redis);
  KV_START_OR_SKIP(whole);
  KV_START_OR_SKIP(split);
  TempDir dir;
  // 4 threads over 3 segments: shares 1, 1 and 2. Odd totals so no share divides evenly.
  const std::vector<std::string> workload = {"--keys",   "3001",       "--threads",  "4",
                                             "--phases", "load,mixed", "--requests", "5003",
                                             "--seed",   "7"};
  std::vector<std::string> one = {"run", "--db", dir.file("whole.db"), "--target", whole.uri()};
  one.insert(one.end(), workload.begin(), workload.end());
  auto out = run_kvdrive(dir, one);
  ASSERT_EQ(out.exit_code, 0) << out.output;

  std::vector<std::string> seg = {"--target", split.uri()};
  seg.insert(seg.end(), workload.begin(), workload.end());
  const auto files = run_segments(dir, "seg", 3, seg);
  ASSERT_EQ(files.size(), 3U);

  // Every key set exactly once over the three segments' load phases: the ranges are disjoint.
  EXPECT_EQ(sum_over(files, "ops", "set", "load"), 3001);
  EXPECT_NE(tcp_request(split.port(), "DBSIZE\r\n", "\r\n").find(":3001"), std::string::npos);
  // The same counts as the unsegmented run, per op and phase kind, and as the server counted.
  auto whole_db = kv::Database::open(dir.file("whole.db"));
  for (const char* kind : {"load", "mixed"})
    for (const char* op : {"set", "get"})
      EXPECT_EQ(sum_over(files, "ops", op, kind), driver_sum(whole_db, "ops", "redis", op, kind))
          << kind << " " << op;
  EXPECT_EQ(redis_command_calls(split.port(), "set"), redis_command_calls(whole.port(), "set"));
  EXPECT_EQ(redis_command_calls(split.port(), "get"), redis_command_calls(whole.port(), "get"));
  EXPECT_EQ(redis_command_calls(split.port(), "set"),
            sum_over(files, "ops", "set", "load") + sum_over(files, "ops", "set", "mixed"));
  // Each segment ran its share of the threads and says which segment it was.
  std::vector<int64_t> threads;
  for (size_t i = 0; i < files.size(); ++i) {
    auto db = kv::Database::open(files[i]);
    threads.push_back(query_int(db, "SELECT threads FROM phases WHERE kind = 'load'"));
    EXPECT_EQ(query_text(db, "SELECT value FROM run_metadata WHERE name = 'segment'"),
              std::to_string(i + 1) + "/3");
  }
  EXPECT_EQ(threads, (std::vector<int64_t>{1, 1, 2}));
}

TEST(SegmentedRun, AGroupStartsOnOneInstantAndEachRunHasItsOwnUuid) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Both wait for the same instant, 3 s after now (generous: both must have connected by then).
  const int64_t at_us = (kv::now_ts_us() / 1'000'000 + 4) * 1'000'000;
  const std::string at = "@" + std::to_string(at_us / 1'000'000);
  const auto files = run_segments(dir, "grp", 2,
                                  {"--target", redis.uri(), "--keys", "200", "--threads", "2",
                                   "--phases", "load", "--group", "g1", "--start-at", at});
  std::vector<std::string> uuids;
  for (size_t i = 0; i < files.size(); ++i) {
    auto db = kv::Database::open(files[i]);
    const std::string uuid = query_text(db, "SELECT run_uuid FROM runs");
    EXPECT_EQ(uuid.size(), 36U) << uuid;
    EXPECT_EQ(uuid[14], '4') << uuid;  // version 4
    uuids.push_back(uuid);
    EXPECT_EQ(query_text(db, "SELECT run_group FROM runs"), "g1");
    EXPECT_EQ(query_int(db, "SELECT process_index FROM runs"), static_cast<int64_t>(i));
    EXPECT_EQ(query_int(db, "SELECT process_count FROM runs"), 2);
    // The first phase began at the instant, not before; the wait ended on time (slack: load).
    const int64_t started = query_int(db, "SELECT MIN(started_ts_us) FROM phases");
    EXPECT_GE(started, at_us) << files[i];
    EXPECT_LT(started, at_us + 2'000'000) << files[i];
    EXPECT_EQ(query_int(db, "SELECT value FROM run_metadata WHERE name = 'start_at_ts_us'"), at_us);
    EXPECT_GE(query_int(db, "SELECT value FROM run_metadata WHERE name = 'start_at_late_us'"), 0);
    const std::string synced =
        query_text(db, "SELECT value FROM run_metadata WHERE name = 'clock_synchronized'");
    EXPECT_TRUE(synced == "yes" || synced == "no") << synced;
  }
  EXPECT_NE(uuids[0], uuids[1]);
}

TEST(SegmentedRun, TheGroupQueryAddsTheSegmentsHistogramsIntoOneDistribution) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Three segments writing one shared file (WAL; as --processes does), one group.
  const std::string db_path = dir.file("all.db");
  std::vector<Process> procs;
  for (int i = 1; i <= 3; ++i)
    procs.emplace_back(
        std::vector<std::string>{kKvdrive, "run", "--db", db_path, "--segment",
                                 std::to_string(i) + "/3", "--group", "g", "--target", redis.uri(),
                                 "--keys", "1500", "--threads", "3", "--phases", "load,read",
                                 "--requests", "3000"},
        dir.file("g" + std::to_string(i) + ".log"));
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(procs[static_cast<size_t>(i)].wait(180'000), 0)
        << slurp(dir.file("g" + std::to_string(i + 1) + ".log"));
  auto db = kv::Database::open(db_path);
  const std::string query =
      slurp(std::string(KV_SOURCE_DIR) + "/schema/queries/group_percentiles.sql");
  kv::Statement q = db.prepare(query);
  int rows = 0;
  while (q.step()) {
    ++rows;
    EXPECT_EQ(q.column_text(0), "g");
    const std::string kind = q.column_text(2), op = q.column_text(3);
    EXPECT_EQ(q.column_int(4), 3) << "one phase of each segment";
    // The group's requests are the server's, its p99 the p99 of the three phases' histograms
    // added up (latency_buckets of every run: the union of every request's latency).
    EXPECT_EQ(q.column_int(5), redis_command_calls(redis.port(), op)) << kind << " " << op;
    const double union_p99 = query_double(
        db,
        "WITH b AS (SELECT l.upper_us, SUM(l.count) AS n FROM latency_buckets l JOIN phases p "
        "USING (phase_id) WHERE p.kind = '" +
            kind + "' AND l.op = '" + op +
            "' GROUP BY l.upper_us), c AS (SELECT upper_us, SUM(n) OVER (ORDER BY upper_us) AS "
            "cum, SUM(n) OVER () AS total FROM b) SELECT MIN(upper_us) FROM c WHERE cum >= "
            "0.99 * total");
    // ... clamped to the slowest request, as phase_percentiles is (a bucket's bound can exceed it).
    const double slowest = query_double(
        db,
        "SELECT MAX(r.max_us) FROM latency_range r JOIN phases p USING (phase_id) WHERE "
        "p.kind = '" +
            kind + "' AND r.op = '" + op + "'");
    EXPECT_DOUBLE_EQ(q.column_double(7), std::min(union_p99, slowest)) << kind << " " << op;
    EXPECT_LE(q.column_double(8), slowest) << "no percentile above the max: " << kind << " " << op;
  }
  EXPECT_EQ(rows, 2);  // load/set and read/get
}

TEST(SegmentedRun, RateSharesAddUpToTheWholeRate) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // 1,200 gets at 600/s over 4 threads in 3 segments: 300 + 300 + 600 requests, each segment
  // at its share of the rate (150, 150, 300/s), so every one takes about 2 s.
  const auto files = run_segments(dir, "rate", 3,
                                  {"--target", redis.uri(), "--keys", "100", "--threads", "4",
                                   "--phases", "read", "--rate", "600", "--requests", "1200"});
  std::vector<int64_t> gets;
  for (const auto& f : files) {
    auto db = kv::Database::open(f);
    gets.push_back(driver_sum(db, "ops", "redis", "get", "read"));
    const double seconds = query_double(
        db, "SELECT (ended_ts_us - started_ts_us) / 1e6 FROM phases WHERE kind = 'read'");
    EXPECT_GT(seconds, 1.4) << f << ": faster than its share of the rate";
    EXPECT_LT(seconds, 8.0) << f;
  }
  EXPECT_EQ(gets, (std::vector<int64_t>{300, 300, 600}));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 1200);
}

// `kvdrive report --group` on the merged file of three segments, one of them told to start 2 s
// after the others (#18): the whole beside each host's share, the late one flagged, the shares
// adding up to what the server counted.
TEST(SegmentedRun, TheGroupReportShowsEachHostsShareAndFlagsALateStart) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const int64_t start_s = kv::now_ts_us() / 1'000'000 + 8;  // time to start under sanitizers
  std::vector<Process> procs;
  std::vector<std::string> files;
  for (int i = 1; i <= 3; ++i) {
    files.push_back(dir.file("late" + std::to_string(i) + ".db"));
    const int64_t at = start_s + (i == 3 ? 2 : 0);
    procs.emplace_back(std::vector<std::string>{kKvdrive,     "run",
                                                "--db",       files.back(),
                                                "--segment",  std::to_string(i) + "/3",
                                                "--group",    "late-host",
                                                "--start-at", "@" + std::to_string(at),
                                                "--target",   redis.uri(),
                                                "--keys",     "3000",
                                                "--threads",  "3",
                                                "--phases",   "load,read",
                                                "--requests", "6000"},
                       dir.file("late" + std::to_string(i) + ".log"));
  }
  for (size_t i = 0; i < procs.size(); ++i)
    ASSERT_EQ(procs[i].wait(120'000), 0)
        << slurp(dir.file("late" + std::to_string(i + 1) + ".log"));
  std::vector<std::string> merge = {"merge", "--db", dir.file("all.db")};
  merge.insert(merge.end(), files.begin(), files.end());
  auto merged = run_kvdrive(dir, merge);
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("all.db"), "--group", "late-host"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string& text = report.output;
  std::cout << text;  // for the record (the CI log keeps it)
  EXPECT_NE(text.find("group late-host: 3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("each host's share"), std::string::npos) << text;
  // The late segment, and only it, is flagged (2 s late, within the start's scheduling).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("started (\\d+\\.\\d) s late"))) << text;
  EXPECT_NEAR(std::stod(m[1]), 2.0, 0.5) << text;
  size_t late_rows = 0, ok_rows = 0;
  for (size_t at = text.find("\n"); at != std::string::npos; at = text.find("\n", at + 1)) {
    const std::string line = text.substr(at + 1, text.find("\n", at + 1) - at - 1);
    if (line.find(" 3/3 ") != std::string::npos && line.find("late") != std::string::npos)
      ++late_rows;
    // (a slow machine may flag them otherwise, client-bound: never late)
    if ((line.find(" 1/3 ") != std::string::npos || line.find(" 2/3 ") != std::string::npos) &&
        line.find("late") == std::string::npos)
      ++ok_rows;
  }
  EXPECT_EQ(late_rows, 1u) << text;
  EXPECT_EQ(ok_rows, 2u) << text;
  // The shares are of what the server counted: 3,000 sets and 6,000 gets in all.
  auto db = kv::Database::open(dir.file("all.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds WHERE warmup = 0"),
            redis_command_calls(redis.port(), "set") + redis_command_calls(redis.port(), "get"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 6000);
  // Bad input: an unknown group, and --group beside --run.
  auto unknown = run_kvdrive(dir, {"report", "--db", dir.file("all.db"), "--group", "nope"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--group 'nope': no run of that group"), std::string::npos)
      << unknown.output;
  auto both = run_kvdrive(
      dir, {"report", "--db", dir.file("all.db"), "--group", "late-host", "--run", "1"});
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

}  // namespace
