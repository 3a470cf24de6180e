// Each second's latency histogram in the results file (second_latency_buckets, migration 008):
// summed over a phase's measured seconds with plain SQL, it is the phase's own histogram, so
// percentiles of any set of seconds come out of SQL within one bucket of the phase's; the
// timeline's per-second percentiles come from it. The --hdr-log files made of it:
// hdr_log_file_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace
