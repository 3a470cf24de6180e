// Each second's latency histogram in the results file (second_latency_buckets, migration 008):
// summed over a phase's measured seconds with plain SQL, it is the phase's own histogram, so
// percentiles of any set of seconds come out of SQL within one bucket of the phase's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hdr_decode.hpp"
#include "kvbench/histogram.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// A phase's `timing` percentile q from its measured (non-warm-up) seconds' bucket rows.
double seconds_percentile(kv::Database& db, int64_t phase_id, const std::string& op,
                          const std::string& timing, double q) {
  return query_double(db,
                      "WITH b AS (SELECT s.upper_us, SUM(s.count) AS n "
                      "  FROM second_latency_buckets s JOIN driver_seconds d "
                      "    ON d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op "
                      "  WHERE s.phase_id = " +
                          std::to_string(phase_id) + " AND s.op = '" + op + "' AND s.timing = '" +
                          timing +
                          "' AND d.warmup = 0 GROUP BY s.upper_us), "
                          "c AS (SELECT upper_us, SUM(n) OVER (ORDER BY upper_us) AS cum, "
                          "  SUM(n) OVER () AS total FROM b) "
                          "SELECT MIN(upper_us) FROM c WHERE cum >= " +
                          std::to_string(q) + " * total");
}

// Every phase, op and timing: the seconds' buckets summed equal latency_buckets row for row,
// their counts equal driver_seconds' ops, and SQL percentiles match phase_percentiles.
void expect_seconds_add_up_to_phases(kv::Database& db, const std::string& timing) {
  // Bucket rows that differ between the sum of seconds and the phase's histogram, both ways.
  const std::string summed =
      "SELECT s.phase_id, s.op, s.timing, s.upper_us, SUM(s.count) AS count "
      "FROM second_latency_buckets s JOIN driver_seconds d "
      "  ON d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op "
      "WHERE d.warmup = 0 GROUP BY 1, 2, 3, 4";
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM (" + summed +
                              " EXCEPT SELECT phase_id, op, timing, upper_us, count "
                              "FROM latency_buckets)"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM (SELECT phase_id, op, timing, upper_us, count "
                      "FROM latency_buckets EXCEPT " +
                          summed + ")"),
            0);
  EXPECT_GT(
      query_int(db, "SELECT count(*) FROM second_latency_buckets WHERE timing = '" + timing + "'"),
      0);
  // Every completed request of every second (warm-up too) is in that second's histogram.
  EXPECT_EQ(query_int(db,
                      "SELECT COALESCE(SUM(count), 0) FROM second_latency_buckets "
                      "WHERE timing = '" +
                          timing + "'"),
            query_int(db, "SELECT SUM(ops) FROM driver_seconds"));
  kv::Statement s = db.prepare(
      "SELECT phase_id, op, p50_us, p90_us, p99_us, p999_us FROM phase_percentiles "
      "WHERE timing = ?");
  s.bind(1, timing);
  int checked = 0;
  while (s.step()) {
    const int64_t phase = s.column_int(0);
    const std::string op = s.column_text(1);
    const double qs[] = {0.5, 0.9, 0.99, 0.999};
    for (int i = 0; i < 4; ++i) {
      const double from_view = s.column_double(2 + i);
      const double from_seconds = seconds_percentile(db, phase, op, timing, qs[i]);
      // The view clamps to the exact max/min; the bucket bound is at most one bucket off.
      EXPECT_LE(std::abs(from_seconds - from_view), from_view / 128 + 0.001)
          << "phase " << phase << " " << op << " q=" << qs[i];
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(SecondHistograms, ClosedLoopSecondsAddUpToThePhaseHistogram) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "2000", "--threads",
            "2", "--phases", "load,mixed", "--duration", "3s", "--warmup", "1s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_GT(query_int(db, "SELECT count(*) FROM driver_seconds WHERE warmup = 1"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM second_latency_buckets WHERE timing <> 'sent'"), 0);
  expect_seconds_add_up_to_phases(db, "sent");
}

TEST(SecondHistograms, RateModeStoresBothTimingsPerSecond) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "500", "--threads",
            "1", "--phases", "load,read", "--rate", "1000", "--duration", "2s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  expect_seconds_add_up_to_phases(db, "intended");
  expect_seconds_add_up_to_phases(db, "sent");
}

// The CSV lines of `text` as fields (no field here holds a comma or a quote).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t c = line.find(',');; c = line.find(',', start)) {
      f.push_back(line.substr(start, c == std::string::npos ? std::string::npos : c - start));
      if (c == std::string::npos) break;
      start = c + 1;
    }
    rows.push_back(std::move(f));
  }
  return rows;
}

// Per second, the percentiles of `--percentiles` (#19): the CSV/JSON timeline's lat_<p>_us come
// from each second's histogram, never above the second's max, and the HTML latency panels draw
// the same list; a file whose seconds predate second_latency_buckets falls back to the stored
// columns (p50, p90, p99, p99.9; others null) and says so.
TEST(SecondPercentiles, TimelineAndHtmlFollowPercentilesAndOlderSecondsFallBack) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db_path = dir.file("r.db");
  auto out = run_kvdrive(
      dir, {"--log-level", "off", "run", "--db", db_path, "--target", redis.uri(), "--keys", "2000",
            "--threads", "2", "--phases", "load,mixed", "--duration", "2s"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::Database::open(db_path);
  // The clamp matters: some second's slowest bucket reaches above its max.
  EXPECT_GT(query_int(db,
                      "SELECT count(*) FROM driver_seconds d WHERE d.lat_max_us < (SELECT "
                      "MAX(s.upper_us) FROM second_latency_buckets s WHERE s.phase_id = d.phase_id "
                      "AND s.ts_us = d.ts_us AND s.op = d.op)"),
            0);
  auto timeline = [&](const std::string& file) {
    auto r = run_kvdrive(dir, {"--log-level", "off", "report", "--db", file, "--format", "csv",
                               "--percentiles", "50,99.99", "timeline"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return csv_rows(r.output);
  };
  auto html = [&](const std::string& file) {
    const std::string page = dir.file("report.html");
    std::filesystem::remove(page);
    auto r = run_kvdrive(dir, {"--log-level", "off", "report", "--db", file, "--percentiles",
                               "50,99.99", "--html", page});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return slurp(page);
  };
  std::vector<std::vector<std::string>> rows = timeline(db_path);
  ASSERT_GT(rows.size(), 2U);
  const std::vector<std::string>& head = rows[0];
  auto col = [&](const std::string& key) {
    const auto it = std::find(head.begin(), head.end(), key);
    EXPECT_NE(it, head.end()) << key;
    return static_cast<size_t>(it - head.begin());
  };
  const size_t mean = col("lat_mean_us"), p50 = col("lat_p50_us"), p9999 = col("lat_p9999_us"),
               max = col("lat_max_us"), from = col("lat_percentiles_from"), ts = col("ts_us"),
               op = col("op"), ops = col("ops");
  EXPECT_EQ(p50, mean + 1);
  EXPECT_EQ(p9999, mean + 2);
  EXPECT_EQ(max, mean + 3);
  EXPECT_EQ(from, mean + 4);
  EXPECT_EQ(std::count(head.begin(), head.end(), "lat_p99_us"), 0);  // not asked for
  int checked = 0, at_max = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), head.size());
    // Timestamps in full (16 digits), not "1.796151373e+15".
    EXPECT_EQ(r[ts].find_first_not_of("0123456789"), std::string::npos) << r[ts];
    if (r[ops] == "0") {
      EXPECT_EQ(r[p50], "");
      EXPECT_EQ(r[from], "");
      continue;
    }
    SCOPED_TRACE(r[ts] + " " + r[op]);
    EXPECT_EQ(r[from], "second_latency_buckets");
    const double v50 = std::stod(r[p50]), v9999 = std::stod(r[p9999]), vmax = std::stod(r[max]);
    EXPECT_LE(v50, v9999);
    EXPECT_LE(v9999, vmax);
    at_max += v9999 == vmax ? 1 : 0;
    const std::string second = "d.ts_us = " + r[ts] + " AND d.op = '" + r[op] + "'";
    // p50: the driver's own per-second column (the same histogram and rule).
    EXPECT_NEAR(v50, query_double(db, "SELECT lat_p50_us FROM driver_seconds d WHERE " + second),
                1e-6);
    // p99.99: recomputed here from the second's bucket rows, clamped to its max.
    const double sql = query_double(
        db,
        "WITH b AS (SELECT s.upper_us, s.count FROM second_latency_buckets s JOIN driver_seconds "
        "d ON d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op WHERE " +
            second +
            "), c AS (SELECT upper_us, SUM(count) OVER (ORDER BY upper_us) AS cum, "
            "SUM(count) OVER () AS total FROM b) SELECT MIN((SELECT MIN(upper_us) FROM c WHERE "
            "cum * 10000 >= 9999 * total), (SELECT lat_max_us FROM driver_seconds d WHERE " +
            second + "))");
    EXPECT_NEAR(v9999, sql, 1e-6);
    ++checked;
  }
  EXPECT_GT(checked, 2);
  EXPECT_GT(at_max, 0);
  std::string page = html(db_path);
  for (const char* text : {"Latency per second: p50, p99.99 on redis://", "get p99.99</text>",
                           "set p50</text>", "p50 green, p99.99 brown"})
    EXPECT_NE(page.find(text), std::string::npos) << text;
  EXPECT_EQ(page.find("get p99.9</text>"), std::string::npos);
  EXPECT_EQ(page.find("predate per-second histograms"), std::string::npos);

  // A file whose seconds an older kvdrive wrote: no bucket rows.
  db.exec("DELETE FROM second_latency_buckets");
  rows = timeline(db_path);
  checked = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r[ops] == "0") continue;
    SCOPED_TRACE(r[ts] + " " + r[op]);
    EXPECT_EQ(r[from], "driver_seconds");
    EXPECT_EQ(r[p9999], "");
    EXPECT_NEAR(std::stod(r[p50]),
                query_double(db, "SELECT lat_p50_us FROM driver_seconds d WHERE d.ts_us = " +
                                     r[ts] + " AND d.op = '" + r[op] + "'"),
                1e-6);
    ++checked;
  }
  EXPECT_GT(checked, 2);
  page = html(db_path);
  EXPECT_NE(page.find("predate per-second histograms"), std::string::npos);
  EXPECT_NE(page.find("set p50</text>"), std::string::npos);
}

// One interval line of an HdrHistogram log, with the phase whose comment preceded it.
struct Interval {
  int64_t phase_id;
  std::string tag;
  double start_s, length_s, max_ms;
  std::vector<uint64_t> counts;
};

std::vector<Interval> read_hlog(const std::string& path, std::vector<std::string>* header) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<Interval> out;
  int64_t phase = 0;
  for (std::string line; std::getline(in, line);) {
    const std::string mark = ": phase_id ";
    if (line.rfind("#[Phase ", 0) == 0 && line.find(mark) != std::string::npos) {
      phase = std::stoll(line.substr(line.find(mark) + mark.size()));
      continue;
    }
    if (line.rfind("Tag=", 0) != 0) {
      header->push_back(line);
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ss(line.substr(4));
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    EXPECT_EQ(f.size(), 5U) << line;
    if (f.size() != 5) continue;
    out.push_back(
        {phase, f[0], std::stod(f[1]), std::stod(f[2]), std::stod(f[3]), decode(f[4]).counts});
  }
  return out;
}

// The intervals of `file`: one per second and op of each phase, in the seconds' order, with
// their lengths; added up over the measured seconds, each phase's latency_buckets exactly and
// its percentiles within one bucket (tag OP = `timing`; OP-sent = 'sent' in rate mode).
void expect_log_matches_phases(kv::Database& db, const std::string& file, int64_t target_id,
                               bool rate_mode) {
  std::vector<std::string> header;
  const std::vector<Interval> log = read_hlog(file, &header);
  ASSERT_FALSE(log.empty()) << file;
  ASSERT_GE(header.size(), 5U);
  EXPECT_EQ(header[1], "#[Histogram log format version 1.3]");
  // Per phase and tag, the k-th interval is the k-th second of that op.
  std::map<std::pair<int64_t, std::string>, std::vector<const Interval*>> by;
  for (const Interval& i : log) by[{i.phase_id, i.tag}].push_back(&i);
  const int64_t phases =
      query_int(db, "SELECT count(*) FROM phases WHERE target_id = " + std::to_string(target_id));
  std::set<int64_t> seen_phases;
  int measured_phases = 0;
  for (const auto& [key, intervals] : by) {
    const auto& [phase, tag] = key;
    seen_phases.insert(phase);
    const bool sent_tag = tag.size() > 5 && tag.substr(tag.size() - 5) == "-sent";
    const std::string op = sent_tag ? tag.substr(0, tag.size() - 5) : tag;
    const std::string timing = sent_tag || !rate_mode ? "sent" : "intended";
    EXPECT_TRUE(!sent_tag || rate_mode) << tag;
    kv::Statement s = db.prepare(
        "SELECT d.ts_us, d.interval_us, d.warmup, d.ops FROM driver_seconds d "
        "JOIN phases p USING (phase_id) WHERE p.target_id = ? AND d.phase_id = ? AND d.op = ? "
        "ORDER BY d.ts_us");
    s.bind(1, target_id).bind(2, phase).bind(3, op);
    kv::LatencyHistogram measured;
    size_t k = 0;
    for (; s.step(); ++k) {
      ASSERT_LT(k, intervals.size()) << "phase " << phase << " " << tag << ": too few intervals";
      const Interval& i = *intervals[k];
      EXPECT_NEAR(i.length_s, static_cast<double>(s.column_int(1)) / 1e6, 0.0011);
      uint64_t n = 0;
      for (size_t b = 0; b < i.counts.size(); ++b) {
        n += i.counts[b];
        if (s.column_int(2) == 0)
          measured.record_n(kv::LatencyHistogram::bucket_upper_ns(static_cast<int>(b)),
                            i.counts[b]);
      }
      EXPECT_EQ(n, static_cast<uint64_t>(s.column_int(3))) << "phase " << phase << " " << tag;
    }
    EXPECT_EQ(k, intervals.size()) << "phase " << phase << " " << tag << ": extra intervals";
    EXPECT_EQ(
        static_cast<int64_t>(measured.count()),
        query_int(db, "SELECT COALESCE(SUM(count), 0) FROM latency_buckets WHERE phase_id = " +
                          std::to_string(phase) + " AND op = '" + op + "' AND timing = '" + timing +
                          "'"));
    if (measured.count() == 0) continue;  // e.g. a load phase done within its warm-up
    ++measured_phases;
    const char* cols[] = {"p50_us", "p90_us", "p99_us", "p999_us"};
    const double qs[] = {0.5, 0.9, 0.99, 0.999};
    for (int q = 0; q < 4; ++q) {
      const double view =
          query_double(db, std::string("SELECT ") + cols[q] +
                               " FROM phase_percentiles WHERE phase_id = " + std::to_string(phase) +
                               " AND op = '" + op + "' AND timing = '" + timing + "'");
      const double from_log = static_cast<double>(measured.percentile_ns(qs[q])) / 1000.0;
      EXPECT_LE(std::abs(from_log - view), view / 128 + 0.001)
          << file << " phase " << phase << " " << tag << " " << cols[q];
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen_phases.size()), phases) << file;
  EXPECT_GT(measured_phases, 0) << file;
}

TEST(HdrLogFile, EachTargetsLogHoldsItsSecondsAndMatchesThePhasePercentiles) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::string prefix = dir.file("lat");
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target",
                        memcached.uri(), "--keys", "2000", "--threads", "2", "--phases",
                        "load,mixed", "--duration", "2s", "--warmup", "1s", "--hdr-log", prefix});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM driver_seconds WHERE warmup = 1") > 0, true);
  for (int n = 0; n < 2; ++n) {
    const int64_t target =
        query_int(db, "SELECT target_id FROM targets WHERE ordinal = " + std::to_string(n));
    expect_log_matches_phases(db, prefix + "." + std::to_string(n) + ".hlog", target, false);
  }
  EXPECT_FALSE(std::filesystem::exists(prefix + ".2.hlog"));
}

TEST(HdrLogFile, RateModeLogsTheIntendedAndTheSentTiming) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string prefix = dir.file("lat");
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "500", "--threads", "1", "--phases", "load,read", "--rate", "1000",
                               "--duration", "2s", "--hdr-log", prefix});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::Database::open(dir.file("r.db"));
  expect_log_matches_phases(db, prefix + ".0.hlog", query_int(db, "SELECT target_id FROM targets"),
                            true);
  const std::string text = slurp(prefix + ".0.hlog");
  EXPECT_NE(text.find("Tag=get-sent,"), std::string::npos);
  EXPECT_NE(text.find("Tag=set,"), std::string::npos);
}

// A group log that cannot be written once the processes are done (its directory removed
// meanwhile) fails the group, exit 1 with one line naming --hdr-log, and the group's summary is
// printed all the same: the runs are recorded.
TEST(HdrLogFile, AGroupLogThatCannotBeWrittenFailsTheGroupAndKeepsItsSummary) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string logs = dir.file("logs");
  std::filesystem::create_directory(logs);
  Process drive({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                 "2000", "--threads", "1", "--processes", "2", "--phases", "load,mixed",
                 "--duration", "3s", "--hdr-log", logs + "/lat"},
                dir.file("kvdrive.log"));
  // The options were accepted (the log's place checked) and the processes are running.
  ASSERT_TRUE(file_contains_within(dir.file("kvdrive.log"), "processes running as group", 60'000))
      << slurp(dir.file("kvdrive.log"));
  std::filesystem::remove_all(logs);
  const int code = drive.wait(120'000);
  const std::string out = slurp(dir.file("kvdrive.log"));
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("--hdr-log: the group's HdrHistogram logs:"), std::string::npos) << out;
  EXPECT_NE(out.find("results: " + dir.file("r.db")), std::string::npos) << out;
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 2);
}

// --hdr-log with --processes (#19): the parent writes one log per target for the whole group,
// as HdrHistogram's tools read one log per source: per wall second and op one interval, the sum
// of the processes' histograms of that second, its max the largest of theirs; decoded here, it
// adds up bucket for bucket to the file's per-second histograms of both processes, and its
// percentiles are the group's.
TEST(HdrLogFile, WithProcessesTheParentWritesOneLogPerTargetSummingTheProcesses) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string prefix = dir.file("lat");
  auto out = run_kvdrive(dir, {"--log-level", "off", "run", "--db", dir.file("r.db"), "--target",
                               redis.uri(), "--keys", "2000", "--threads", "1", "--processes", "2",
                               "--phases", "load,mixed", "--duration", "2s", "--hdr-log", prefix});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_FALSE(std::filesystem::exists(prefix + ".1.hlog"));
  auto db = kv::Database::open(dir.file("r.db"));
  ASSERT_EQ(query_int(db, "SELECT count(*) FROM runs"), 2);
  std::vector<std::string> header;
  const std::vector<Interval> log = read_hlog(prefix + ".0.hlog", &header);
  ASSERT_FALSE(log.empty());
  ASSERT_GE(header.size(), 5U);
  EXPECT_EQ(header[1], "#[Histogram log format version 1.3]");
  // One comment per phase, naming the phase of each process.
  const std::string text = slurp(prefix + ".0.hlog");
  int phase_comments = 0;
  for (size_t at = text.find("#[Phase "); at != std::string::npos;
       at = text.find("#[Phase ", at + 1)) {
    ++phase_comments;
    const std::string line = text.substr(at, text.find('\n', at) - at);
    const std::string ids = line.substr(line.find(": phase_id ") + 11);
    std::istringstream in(ids);
    int64_t a = 0, b = 0;
    in >> a >> b;
    EXPECT_EQ(query_int(db, "SELECT count(DISTINCT run_id) FROM phases WHERE phase_id IN (" +
                                std::to_string(a) + ", " + std::to_string(b) + ")"),
              2)
        << line;
  }
  EXPECT_EQ(phase_comments, 2);
  // One interval per phase, op and wall second of either process, holding both processes'
  // requests of that second, its max theirs.
  EXPECT_EQ(static_cast<int64_t>(log.size()),
            query_int(db,
                      "SELECT count(*) FROM (SELECT DISTINCT p.ordinal, d.op, "
                      "d.ts_us / 1000000 FROM driver_seconds d JOIN phases p USING (phase_id))"));
  // The file's seconds of both processes, per phase (ordinal) and op, in time order.
  struct Second {
    int64_t ops;
    double max_us;
  };
  std::map<std::pair<int64_t, std::string>, std::vector<Second>> seconds;
  kv::Statement d = db.prepare(
      "SELECT p.ordinal, d.op, d.ts_us / 1000000, SUM(d.ops), MAX(d.lat_max_us) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
  while (d.step())
    seconds[{d.column_int(0), d.column_text(1)}].push_back(
        {d.column_int(3), d.is_null(4) ? 0.0 : d.column_double(4)});
  std::map<std::pair<int64_t, std::string>, size_t> next;
  std::map<uint64_t, uint64_t> from_log;  // bucket index → count
  kv::LatencyHistogram all;
  for (const Interval& i : log) {
    ASSERT_TRUE(i.tag == "set" || i.tag == "get") << i.tag;
    const auto key = std::pair{
        query_int(db, "SELECT ordinal FROM phases WHERE phase_id = " + std::to_string(i.phase_id)),
        i.tag};
    const size_t k = next[key]++;
    ASSERT_LT(k, seconds[key].size()) << i.tag << " at " << i.start_s;
    uint64_t n = 0;
    for (size_t b = 0; b < i.counts.size(); ++b) {
      n += i.counts[b];
      if (i.counts[b] > 0) from_log[b] += i.counts[b];
      all.record_n(kv::LatencyHistogram::bucket_upper_ns(static_cast<int>(b)), i.counts[b]);
    }
    EXPECT_EQ(static_cast<int64_t>(n), seconds[key][k].ops) << i.tag << " at " << i.start_s;
    if (n > 0) {
      EXPECT_NEAR(i.max_ms, seconds[key][k].max_us / 1000, 0.0011) << i.tag;
    }
  }
  std::map<uint64_t, uint64_t> from_file;
  kv::Statement s =
      db.prepare("SELECT upper_us, SUM(count) FROM second_latency_buckets GROUP BY upper_us");
  while (s.step())
    from_file[static_cast<uint64_t>(kv::LatencyHistogram::index_of(static_cast<uint64_t>(
        std::llround(s.column_double(0) * 1000))))] += static_cast<uint64_t>(s.column_int(1));
  EXPECT_EQ(from_log, from_file);
  // Its percentiles are the group's, from the file's seconds of both processes.
  for (const double q : {0.5, 0.99, 0.999}) {
    const double sql = query_double(
        db,
        "WITH b AS (SELECT upper_us, SUM(count) AS n FROM second_latency_buckets GROUP BY "
        "upper_us), c AS (SELECT upper_us, SUM(n) OVER (ORDER BY upper_us) AS cum, SUM(n) OVER () "
        "AS total FROM b) SELECT MIN(upper_us) FROM c WHERE cum >= " +
            std::to_string(q) + " * total");
    EXPECT_NEAR(static_cast<double>(all.percentile_ns(q)) / 1000, sql, sql / 128 + 0.001) << q;
  }
}

// The same from a --config file, which the processes read too: still one writer per file (a
// process writing its own log first would make the parent's creation fail).
TEST(HdrLogFile, WithProcessesAConfigFilesLogIsTheParentsToo) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string prefix = dir.file("lat"), doc = dir.file("group.json");
  {
    std::ofstream(dir.file("c.toml"))
        << "[run]\nhdr-log = \"" << prefix << "\"\njson-out = \"" << doc << "\"\n";
  }
  auto out = run_kvdrive(
      dir, {"--log-level", "off", "--config", dir.file("c.toml"), "run", "--db", dir.file("r.db"),
            "--target", redis.uri(), "--keys", "400", "--threads", "1", "--processes", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const std::string text = slurp(prefix + ".0.hlog");
  EXPECT_NE(text.find("#[kvdrive run group "), std::string::npos) << text.substr(0, 600);
  std::vector<std::string> header;
  uint64_t sets = 0;
  for (const Interval& i : read_hlog(prefix + ".0.hlog", &header))
    if (i.tag == "set")
      for (uint64_t n : i.counts) sets += n;
  EXPECT_EQ(sets, 400U);
  const std::string json = slurp(doc);
  EXPECT_NE(json.find("\"group\":"), std::string::npos) << json.substr(0, 300);
}

}  // namespace
