// kvdrive's HdrHistogram logs (--hdr-log) against real servers: per second and op one interval,
// added up the phase's histogram and within one bucket of its percentiles; rate mode's two
// timings; with --processes one log per target written by the parent, the sum of the processes'.
#include <gtest/gtest.h>

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
