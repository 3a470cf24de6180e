// `kvdrive merge`: two client hosts' segments of one group (the real kvdrive against two fake
// stores, one slow) and a kvmon's own file, merged into one; every row of every file there; the
// same result whatever the order, merging again adds nothing, a merged file merges again; the
// group's p99 is the union's, not the mean of the hosts'; bad input is refused; the group's
// HdrHistogram log is the merged histograms; Ctrl-C leaves the whole merge or nothing.
#include "results/merge.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_store.hpp"
#include "hdr_decode.hpp"
#include "kvbench/histogram.hpp"
#include "kvbench/schema.hpp"
#include "kvdrive_test_util.hpp"
#include "merge_test_util.hpp"
#include "view/group.hpp"
#include "view/hints.hpp"

namespace {
using namespace kv::test;

// Every row of every table, each table's rows sorted; with `drop_ids`, the columns holding
// integer ids (which depend on the order files were merged in) are left out.
std::string dump(const std::string& path, bool drop_ids = false) {
  auto db = kv::Database::open_read_only(path);
  std::string out;
  std::vector<std::string> tables;
  {
    kv::Statement t = db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name");
    while (t.step()) tables.push_back(t.column_text(0));
  }
  const std::set<std::string> ids = {
      "run_id",      "target_id", "phase_id",           "session_id",
      "instance_id", "event_id",  "parent_instance_id", "limiting_phase_id"};
  for (const auto& t : tables) {
    kv::Statement q = db.prepare("SELECT * FROM " + t);
    std::vector<std::string> rows;
    while (q.step()) {
      std::string row;
      for (int c = 0; c < q.column_count(); ++c) {
        if (drop_ids && ids.count(q.column_name(c))) continue;
        row += (q.is_null(c) ? std::string("NULL") : q.column_text(c)) + "|";
      }
      rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    out += "== " + t + " (" + std::to_string(rows.size()) + ")\n";
    for (const auto& r : rows) out += r + "\n";
  }
  return out;
}

int64_t count(const std::string& path, const std::string& table) {
  return query_int(path, "SELECT COUNT(*) FROM " + table);
}

// The inputs, made once: host 1's segment against a fast fake store, host 2's against one that
// answers each request 10 ms late (far above what a loaded sanitizer build adds to the fast
// one: under ASan on CI the fast host's p99 was 2.1 ms), one group; a kvmon's own file from a
// "database host".
class Merge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    kv::test::FakeStore fast, slow;
    kv::test::FakeStore::Behavior late;
    late.delay_us = 10'000;
    slow.set_behavior_all(late);
    const kv::test::FakeStore* stores[] = {&fast, &slow};
    for (int i = 0; i < 2; ++i) {
      const std::string db = host_file(i);
      auto r = run_kvdrive(*dir_, {"run", "--db", db, "--segment", std::to_string(i + 1) + "/2",
                                   "--group", "g", "--target", stores[i]->redis_uri(), "--keys",
                                   "400", "--threads", "2", "--phases", "load"});
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    sets_[0] = fast.requests("set");
    sets_[1] = slow.requests("set");
    const std::string kvmon_db = kvmon_file();
    Process kvmon({std::string(KV_BINARY_DIR) + "/monitor/kvmon", "--db", kvmon_db, "--pid",
                   std::to_string(getpid()), "--interval", "20ms", "--host-interval", "20ms",
                   "--flush-interval", "50ms"},
                  dir_->file("kvmon.log"));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      try {
        if (std::filesystem::exists(kvmon_db) && count(kvmon_db, "process_samples") >= 5 &&
            count(kvmon_db, "host_samples") >= 5)
          break;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kvmon.signal(SIGTERM);
    ASSERT_EQ(kvmon.wait(10'000), 0) << slurp(dir_->file("kvmon.log"));
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string host_file(int i) { return dir_->file("host" + std::to_string(i + 1) + ".db"); }
  static std::string kvmon_file() { return dir_->file("kvmon.db"); }
  static std::vector<std::string> inputs() { return {host_file(0), host_file(1), kvmon_file()}; }

  static std::unique_ptr<TempDir> dir_;
  static int64_t sets_[2];
};
std::unique_ptr<TempDir> Merge::dir_;
int64_t Merge::sets_[2] = {0, 0};

TEST_F(Merge, EveryRowOfEveryFileIsInTheMergedFileWithItsHostNames) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("all.db");
  auto r = merge(*dir_, out, inputs());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 runs added (0 there already), 1 kvmon session added"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Group latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("group g: requests of all its runs"), std::string::npos) << r.output;
  // Each table holds the rows of all inputs.
  for (const auto& t : kv::drive::merged_tables()) {
    int64_t sum = 0;
    for (const auto& in : inputs()) sum += count(in, t);
    EXPECT_EQ(count(out, t), sum) << t;
  }
  EXPECT_GT(count(out, "second_latency_buckets"), 0);
  EXPECT_GT(count(out, "process_samples"), 0);
  // The counts are the stores' own, and each run kept its uuid, group and segment.
  auto db = kv::Database::open_read_only(out);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "set"), sets_[0] + sets_[1]);
  EXPECT_EQ(sets_[0] + sets_[1], 400);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT run_uuid) FROM runs WHERE run_group = 'g'"), 2);
  for (int i = 0; i < 2; ++i) {
    auto in = kv::Database::open_read_only(host_file(i));
    const std::string uuid = query_text(in, "SELECT run_uuid FROM runs");
    EXPECT_EQ(query_int(db,
                        "SELECT SUM(d.ops) FROM driver_seconds d JOIN phases p USING "
                        "(phase_id) JOIN runs r USING (run_id) WHERE r.run_uuid = '" +
                            uuid + "'"),
              sets_[i]);
    // Every reference points into the same run.
    EXPECT_EQ(query_int(db,
                        "SELECT COUNT(*) FROM phases p JOIN targets t USING (target_id) "
                        "WHERE p.run_id != t.run_id"),
              0);
  }
  // The kvmon session keeps its host name, and its processes and samples follow it.
  auto k = kv::Database::open_read_only(kvmon_file());
  EXPECT_EQ(query_text(db, "SELECT host FROM monitor_sessions"),
            query_text(k, "SELECT host FROM monitor_sessions"));
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) JOIN monitor_sessions m USING (session_id)"),
            count(kvmon_file(), "process_samples"));
}

TEST_F(Merge, TheGroupsP99IsTheUnionsNotTheMeanOfTheHostsP99s) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("group.db");
  auto r = merge(*dir_, out, {host_file(0), host_file(1)});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The union, computed here from the two inputs: their per-second histograms added bucket by
  // bucket, rank ceil(0.99 n), clamped to the slowest request of either.
  std::map<double, int64_t> all;
  double slowest = 0;
  for (int i = 0; i < 2; ++i) {
    auto in = kv::Database::open_read_only(host_file(i));
    kv::Statement q = in.prepare(
        "SELECT s.upper_us, s.count FROM second_latency_buckets s JOIN driver_seconds d ON "
        "d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op WHERE d.warmup = 0 AND "
        "s.timing = 'sent' AND s.op = 'set'");
    while (q.step()) all[q.column_double(0)] += q.column_int(1);
    slowest = std::max(slowest, query_double(in,
                                             "SELECT max_us FROM latency_range WHERE op = "
                                             "'set' AND timing = 'sent'"));
  }
  int64_t total = 0;
  for (const auto& [u, n] : all) total += n;
  ASSERT_EQ(total, 400);
  const int64_t rank = (99 * total + 99) / 100;
  int64_t cum = 0;
  double union_p99 = 0;
  for (const auto& [u, n] : all)
    if ((cum += n) >= rank) {
      union_p99 = std::min(u, slowest);
      break;
    }
  auto db = kv::Database::open_read_only(out);
  const auto rows = kv::drive::group_latency(db, "g", kv::drive::default_percentiles());
  ASSERT_EQ(rows.size(), 1U);
  const auto& g = rows[0];
  EXPECT_EQ(g.op, "set");
  EXPECT_EQ(g.runs, 2);
  EXPECT_EQ(g.requests, 400);
  ASSERT_EQ(g.percentiles.size(), 4U);  // p50, p90, p99, p99.9
  ASSERT_TRUE(g.percentiles[2].has_value());
  EXPECT_DOUBLE_EQ(*g.percentiles[2], union_p99);
  EXPECT_LE(*g.max_us, slowest);
  // The hosts disagree (one store answers 10 ms late): the mean of their p99s is far from the
  // group's p99, which sits in the slow host's latencies. The gap is about half of (slow p99 -
  // fast p99), so more than 1 ms unless the fast host's p99 passes 8 ms.
  ASSERT_TRUE(g.mean_of_runs_p99_us.has_value());
  EXPECT_GT(union_p99, 10'000.0);
  EXPECT_GT(union_p99 - *g.mean_of_runs_p99_us, 1000.0)
      << "union " << union_p99 << " mean " << *g.mean_of_runs_p99_us;
}

TEST_F(Merge, AnyOrderGivesTheSameFileAndMergingAgainAddsNothing) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string ab = dir_->file("ab.db"), ba = dir_->file("ba.db");
  ASSERT_EQ(merge(*dir_, ab, inputs()).exit_code, 0);
  ASSERT_EQ(merge(*dir_, ba, {kvmon_file(), host_file(1), host_file(0)}).exit_code, 0);
  const std::string want = dump(ab);
  EXPECT_EQ(dump(ba), want) << "ids included: one call's order does not matter";
  // The same files again (and one twice on the line): nothing added, nothing changed.
  auto again = merge(*dir_, ab, {host_file(1), host_file(0), host_file(0), kvmon_file()});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 runs added (2 there already), 0 kvmon sessions added (1 there "
                              "already)"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(dump(ab), want);
  // A merged file merges again, into an empty file or beside what it holds.
  const std::string re = dir_->file("re.db");
  ASSERT_EQ(merge(*dir_, re, {ab}).exit_code, 0);
  EXPECT_EQ(dump(re), want);
  ASSERT_EQ(merge(*dir_, re, {ab, ba, host_file(0)}).exit_code, 0);
  EXPECT_EQ(dump(re), want);
  // One file at a time, in another order: the same rows (ids follow the order of the calls).
  const std::string inc = dir_->file("inc.db");
  for (const auto& in : {host_file(1), kvmon_file(), host_file(0)})
    ASSERT_EQ(merge(*dir_, inc, {in}).exit_code, 0);
  EXPECT_EQ(dump(inc, true), dump(ab, true));
}

TEST_F(Merge, ARecordedRunIsNeverOverwritten) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("mine.db");
  ASSERT_EQ(merge(*dir_, out, {host_file(0)}).exit_code, 0);
  {
    auto db = kv::Database::open(out);
    db.exec("UPDATE runs SET name = 'kept'; DELETE FROM driver_seconds;");
  }
  auto r = merge(*dir_, out, {host_file(0), host_file(1)});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 run added (1 there already)"), std::string::npos) << r.output;
  EXPECT_EQ(query_int(out, "SELECT COUNT(*) FROM runs WHERE name = 'kept'"), 1);
  EXPECT_EQ(query_int(out,
                      "SELECT COUNT(*) FROM driver_seconds d JOIN phases p USING "
                      "(phase_id) JOIN runs r USING (run_id) WHERE r.name = 'kept'"),
            0);
}

// Two copies of one kvmon session whose samples differ in one time only (as two kvdrives
// started together on one clock pull them: the same count, first and last sample): both are
// kept, and every sample time of either is in the merged file.
TEST_F(Merge, CopiesOfASessionThatDifferInOneSampleTimeAreBothKept) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string copy = dir_->file("kvmon-copy.db"), out = dir_->file("copies.db");
  {
    auto db = kv::Database::open(kvmon_file());
    db.exec("VACUUM INTO '" + copy + "'");
  }
  {
    auto db = kv::Database::open(copy);
    db.exec(
        "UPDATE process_samples SET ts_us = ts_us + 1 WHERE rowid = (SELECT rowid FROM "
        "process_samples ORDER BY ts_us LIMIT 1 OFFSET 1)");
  }
  auto r = merge(*dir_, out, {kvmon_file(), copy});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 kvmon sessions added"), std::string::npos) << r.output;
  std::set<int64_t> want, got;
  for (const auto& path : {kvmon_file(), copy}) {
    auto db = kv::Database::open_read_only(path);
    kv::Statement q = db.prepare("SELECT ts_us FROM process_samples");
    while (q.step()) want.insert(q.column_int(0));
  }
  auto m = kv::Database::open_read_only(out);
  kv::Statement q = m.prepare("SELECT ts_us FROM process_samples");
  while (q.step()) got.insert(q.column_int(0));
  EXPECT_EQ(got, want);
  EXPECT_EQ(query_int(out, "SELECT COUNT(*) FROM process_samples"),
            2 * count(kvmon_file(), "process_samples"));
}

// A table made by a migration the merge was not taught: refused before anything is copied.
TEST_F(Merge, AnOutputWithATableTheMergeDoesNotKnowIsLeftAsItWas) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("later.db");
  ASSERT_EQ(merge(*dir_, out, {host_file(0)}).exit_code, 0);
  {
    auto db = kv::Database::open(out);
    db.exec("CREATE TABLE later_table (x INTEGER)");
  }
  const std::string before = dump(out);
  auto r = merge(*dir_, out, {host_file(1), kvmon_file()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("later_table"), std::string::npos) << r.output;
  EXPECT_EQ(dump(out), before);
}

TEST_F(Merge, BadInputIsOneLineExitTwoAndNothingWritten) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("out.db");
  ASSERT_EQ(merge(*dir_, out, {host_file(0)}).exit_code, 0);
  const std::string before = dump(out);
  const std::string text = dir_->file("notes.txt");
  std::ofstream(text) << "not a results file\n";
  const std::string newer = dir_->file("newer.db");
  std::filesystem::copy_file(host_file(1), newer);
  {
    auto db = kv::Database::open(newer);
    db.exec("PRAGMA user_version = " + std::to_string(kv::schema::latest_version() + 1));
  }
  struct Case {
    std::string out;
    std::vector<std::string> in;
    std::string says;
  };
  const std::vector<Case> cases = {
      {out, {dir_->file("missing.db")}, "no such file"},
      {out, {host_file(1), text}, "notes.txt"},
      {host_file(0), {host_file(1), host_file(0)}, "host1.db"},
      {text, {host_file(1)}, "notes.txt"},
      {out, {newer}, "newer"},
      {dir_->file("new.db"), {newer}, "newer"},
  };
  for (const auto& c : cases) {
    const std::string in0 = dump(host_file(0));
    auto r = merge(*dir_, c.out, c.in);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
    EXPECT_EQ(dump(out), before);
    EXPECT_EQ(dump(host_file(0)), in0);
    EXPECT_EQ(slurp(text), "not a results file\n");
    EXPECT_FALSE(std::filesystem::exists(dir_->file("new.db")));
  }
}

// `kvdrive report --group g --hdr-log PREFIX` on the merged file: decoded, the log's intervals
// added up are the merged histograms: the same requests, and percentiles within one bucket of
// group_latency's.
TEST_F(Merge, TheGroupsHdrLogIsTheMergedHistograms) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string out = dir_->file("hdr.db");
  ASSERT_EQ(merge(*dir_, out, {host_file(0), host_file(1)}).exit_code, 0);
  const std::string prefix = dir_->file("group");
  auto r = run_kvdrive(*dir_, {"report", "--db", out, "--group", "g", "--hdr-log", prefix});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(prefix + ".0.hlog");
  ASSERT_TRUE(in) << r.output;
  kv::LatencyHistogram all;
  int intervals = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Tag=set,", 0) != 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 5U) << line;
    const auto counts = kv::test::decode(f[4]).counts;
    for (size_t b = 0; b < counts.size(); ++b)
      all.record_n(kv::LatencyHistogram::bucket_upper_ns(static_cast<int>(b)), counts[b]);
    ++intervals;
  }
  EXPECT_GE(intervals, 1);
  auto db = kv::Database::open_read_only(out);
  EXPECT_EQ(static_cast<int64_t>(all.count()),
            query_int(db, "SELECT SUM(ops) FROM driver_seconds WHERE op = 'set'"));
  EXPECT_EQ(static_cast<int64_t>(all.count()), sets_[0] + sets_[1]);
  const auto rows = kv::drive::group_latency(db, "g", kv::drive::default_percentiles());
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(static_cast<int64_t>(all.count()), rows[0].requests);
  const double qs[] = {0.50, 0.90, 0.99, 0.999};
  ASSERT_EQ(rows[0].percentiles.size(), 4U);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(rows[0].percentiles[i].has_value());
    const int from_log = kv::LatencyHistogram::index_of(all.percentile_ns(qs[i]));
    const int from_sql = kv::LatencyHistogram::index_of(
        static_cast<uint64_t>(std::llround(*rows[0].percentiles[i] * 1000)));
    EXPECT_LE(std::abs(from_log - from_sql), 1) << "p" << qs[i] * 100;
  }
  // Written once: an existing log is refused, as is --hdr-log without --group.
  auto again = run_kvdrive(*dir_, {"report", "--db", out, "--group", "g", "--hdr-log", prefix});
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("exists"), std::string::npos) << again.output;
  auto lone = run_kvdrive(*dir_, {"report", "--db", out, "--hdr-log", dir_->file("x")});
  EXPECT_EQ(lone.exit_code, 2) << lone.output;
  EXPECT_FALSE(std::filesystem::exists(dir_->file("x.0.hlog")));
}

// Ctrl-C during a merge: the inputs are untouched, and OUT is the whole merge or as it was (a
// new OUT not created). The signal goes as soon as a new OUT appears, so that some merge is
// caught inside its transaction; each outcome is checked whichever it was.
TEST_F(Merge, CtrlCLeavesTheInputsAndOutWholeOrAsTheyWere) {
  ASSERT_FALSE(HasFatalFailure());
  const std::string whole = dir_->file("whole.db");
  ASSERT_EQ(merge(*dir_, whole, inputs()).exit_code, 0);
  const std::string want = dump(whole, true);
  std::vector<std::string> before;
  for (const auto& f : inputs()) before.push_back(dump(f));
  const std::string part = dir_->file("part.db");
  ASSERT_EQ(merge(*dir_, part, {host_file(0)}).exit_code, 0);
  const std::string part_dump = dump(part, true);
  int interrupted = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    const bool existing = attempt % 2 == 1;  // into a copy of a file that holds one run
    const std::string out = dir_->file("sig" + std::to_string(attempt) + ".db");
    if (existing) {
      auto p = kv::Database::open(part);
      p.exec("VACUUM INTO '" + out + "'");
    }
    std::vector<std::string> argv = {kKvdrive, "merge", "--db", out};
    for (const auto& f : inputs()) argv.push_back(f);
    const std::string log_path = dir_->file("sig" + std::to_string(attempt) + ".log");
    Process m(argv, log_path);
    if (existing) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));  // when to signal
    } else {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!std::filesystem::exists(out) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    m.signal(SIGINT);
    const int code = m.wait(60'000);
    const std::string log = slurp(log_path);
    if (code == 0) {
      EXPECT_EQ(dump(out, true), want) << "attempt " << attempt;
    } else {
      // 130: the merge's own exit (it says so), or killed before its handler was installed.
      EXPECT_EQ(code, 130) << log;
      if (log.find("interrupted: nothing merged") != std::string::npos) ++interrupted;
      if (existing)
        EXPECT_EQ(dump(out, true), part_dump) << "attempt " << attempt;
      else
        EXPECT_FALSE(std::filesystem::exists(out)) << "attempt " << attempt << ": " << log;
    }
    for (size_t i = 0; i < inputs().size(); ++i) EXPECT_EQ(dump(inputs()[i]), before[i]);
  }
  EXPECT_GE(interrupted, 1) << "no merge was caught before its commit";
}

}  // namespace
