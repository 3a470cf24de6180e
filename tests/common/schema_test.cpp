#include "kvbench/schema.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "kvbench/version.hpp"
#include "servers.hpp"

namespace {

int count_rows(kv::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  s.step();
  return static_cast<int>(s.column_int(0));
}

TEST(Schema, NewFileGetsLatestVersionWalAndAllTables) {
  kv::test::TempDir dir;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(db.user_version(), kv::schema::latest_version());
  EXPECT_GE(kv::schema::latest_version(), 2);
  auto mode = db.prepare("PRAGMA journal_mode");
  mode.step();
  EXPECT_EQ(mode.column_text(0), "wal");
  for (const char* t : {"runs", "targets", "phases", "driver_seconds", "latency_buckets",
                        "store_stats", "monitor_sessions", "process_instances", "process_samples",
                        "host_samples", "disk_samples", "events"}) {
    EXPECT_EQ(
        count_rows(db, std::string("SELECT count(*) FROM sqlite_master WHERE name='") + t + "'"), 1)
        << t;
  }
}

// The build's snapshot of the latest schema (what check_results_schema compares files with)
// makes exactly what the migrations make: every object, its SQL and its columns.
TEST(Schema, TheBuildsSnapshotMakesWhatTheMigrationsMake) {
  auto objects = [](kv::Database& db) {
    std::string all;
    auto s = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name");
    while (s.step())
      all += s.column_text(0) + " " + s.column_text(1) + " " + s.column_text(2) + " " +
             (s.is_null(3) ? "" : s.column_text(3)) + "\n";
    auto c = db.prepare(
        "SELECT m.name, p.name, p.type, p.\"notnull\", p.pk, COALESCE(p.dflt_value, '') FROM "
        "sqlite_schema m, pragma_table_info(m.name) p WHERE m.type IN ('table', 'view') "
        "ORDER BY m.name, p.cid");
    while (c.step())
      for (int i = 0; i < 6; ++i) all += c.column_text(i) + (i == 5 ? "\n" : " ");
    return all;
  };
  auto migrated = kv::Database::open(":memory:");
  kv::schema::migrate(migrated);
  EXPECT_EQ(migrated.user_version(), kv::schema::latest_version());
  auto snapshot = kv::Database::open(":memory:");
  snapshot.exec(kv::schema::latest_schema_sql());
  const std::string want = objects(migrated);
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(objects(snapshot), want);
}

TEST(Schema, OlderFileIsUpgradedKeepingItsRows) {
  kv::test::TempDir dir;
  {
    auto db = kv::Database::open(dir.file("r.db"));
    kv::schema::migrate(db, 1);
    ASSERT_EQ(db.user_version(), 1);
    db.exec(
        "INSERT INTO runs(run_id, started_ts_us, command_line, kvdrive_version, client_host, "
        "client_pid) VALUES (7, 1, 'kvdrive run', '0.0.1', 'h', 1)");
    EXPECT_THROW(db.exec("SELECT * FROM phase_summary"), kv::SqliteError);  // not yet there
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(db.user_version(), kv::schema::latest_version());
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM runs WHERE run_id = 7"), 1);
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM phase_summary"), 0);  // the view now exists
}

// A phase left running in a run that ended (the disk filled between the two updates) is marked
// with its run's status on the next open, ended at its last row.
TEST(Schema, OpenMarksAPhaseLeftRunningUnderAnEndedRun) {
  kv::test::TempDir dir;
  {
    auto db = kv::open_results_db(dir.file("r.db"));
    db.exec(
        "INSERT INTO runs(run_id, started_ts_us, status, command_line, kvdrive_version, "
        "client_host, client_pid) VALUES "
        "(1, 100, 'failed', 'kvdrive', 'x', 'elsewhere', 1), "
        "(2, 100, 'completed', 'kvdrive', 'x', 'elsewhere', 1), "
        "(3, 100, 'running', 'kvdrive', 'x', 'elsewhere', 1);"
        "INSERT INTO targets(target_id, run_id, ordinal, uri, protocol) VALUES "
        "(1, 1, 0, 'redis://h:1', 'redis'), (2, 2, 0, 'redis://h:1', 'redis'), "
        "(3, 3, 0, 'redis://h:1', 'redis');"
        "INSERT INTO phases(phase_id, run_id, target_id, ordinal, name, kind, started_ts_us, "
        "threads, connections, status) VALUES "
        "(1, 1, 1, 0, 'load', 'load', 100, 1, 1, 'running'), "
        "(2, 2, 2, 0, 'load', 'load', 100, 1, 1, 'running'), "
        "(3, 3, 3, 0, 'load', 'load', 100, 1, 1, 'running'), "
        "(4, 1, 1, 1, 'read', 'read', 100, 1, 1, 'completed');");
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(count_rows(db,
                       "SELECT count(*) FROM phases WHERE phase_id = 1 AND status = 'failed' "
                       "AND ended_ts_us IS NOT NULL"),
            1);
  EXPECT_EQ(
      count_rows(db, "SELECT count(*) FROM phases WHERE phase_id = 2 AND status = 'incomplete'"),
      1);
  // A run still running (another host's, or live) keeps its phase running.
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM phases WHERE phase_id = 3 AND status = 'running'"),
            1);
  EXPECT_EQ(
      count_rows(db, "SELECT count(*) FROM phases WHERE phase_id = 4 AND status = 'completed'"), 1);
}

// A run left `running` is its writer's while that process lives, whatever the binary is called
// (a kvdrive copied to another name once lost its live run here); a pid that started after the
// run began is another process's, reused: the run is marked incomplete.
TEST(Schema, OpenKeepsARunWhoseWriterLivesUnderAnotherNameAndEndsOneWhosePidWasReused) {
  kv::test::TempDir dir;
  const int64_t pid = ::getpid();  // this test's process: not named "kvdrive"
  const int64_t now = kv::now_ts_us();
  {
    auto db = kv::open_results_db(dir.file("r.db"));
    auto s = db.prepare(
        "INSERT INTO runs(run_id, started_ts_us, status, command_line, kvdrive_version, "
        "client_host, client_pid) VALUES (1, ?1, 'running', 'kvdrive', 'x', ?3, ?4), "
        "(2, ?2, 'running', 'kvdrive', 'x', ?3, ?4)");
    s.bind(1, now).bind(2, int64_t{86'400'000'000}).bind(3, kv::host_name()).bind(4, pid);
    s.run();
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM runs WHERE run_id = 1 AND status = 'running'"), 1);
  // Run 2 began in 1970, long before this process: its pid was reused.
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM runs WHERE run_id = 2 AND status = 'incomplete'"),
            1);
}

TEST(Schema, NewerFileIsRefusedWithClearError) {
  kv::test::TempDir dir;
  {
    auto db = kv::Database::open(dir.file("r.db"));
    db.exec("PRAGMA user_version = 999");
  }
  try {
    kv::open_results_db(dir.file("r.db"));
    FAIL() << "a newer file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("999"), std::string::npos) << e.what();
  }
  auto db = kv::Database::open(dir.file("r.db"));
  EXPECT_EQ(db.user_version(), 999);  // untouched
}

TEST(Schema, UnknownStatusIsRejectedByConstraint) {
  kv::test::TempDir dir;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_THROW(db.exec("INSERT INTO runs(started_ts_us, status, command_line, kvdrive_version, "
                       "client_host, client_pid) VALUES (1, 'bogus', '', '', '', 1)"),
               kv::SqliteError);
}

// Bad --db paths are refused before anything is created or written.
TEST(Schema, CheckResultsPathRefusesWhatCannotBeAResultsFile) {
  kv::test::TempDir dir;
  auto refusal = [](const std::string& path, bool must_exist) -> std::string {
    try {
      kv::check_results_path("--db", path, must_exist);
      return "";
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  };
  std::ofstream(dir.file("text.db")) << "not SQLite";
  std::ofstream(dir.file("empty.db")).flush();
  kv::Database::open(dir.file("other.db")).exec("CREATE TABLE t (x)");
  kv::open_results_db(dir.file("results.db"));
  EXPECT_NE(refusal("", false).find("--db: empty file name"), std::string::npos);
  EXPECT_NE(refusal(dir.path(), false).find("is a directory"), std::string::npos);
  EXPECT_NE(refusal(dir.file("no/r.db"), false).find("no such directory"), std::string::npos);
  EXPECT_NE(refusal(dir.file("text.db"), false).find("not a SQLite file"), std::string::npos);
  EXPECT_EQ(refusal(dir.file("new.db"), false), "");
  EXPECT_EQ(refusal(dir.file("empty.db"), false), "");
  EXPECT_EQ(refusal(dir.file("results.db"), false), "");
  EXPECT_NE(refusal(dir.file("new.db"), true).find("no such file"), std::string::npos);
  EXPECT_NE(refusal(dir.file("empty.db"), true).find("is empty"), std::string::npos);
  EXPECT_NE(refusal(dir.file("other.db"), true).find("not a kvbench results file"),
            std::string::npos);
  EXPECT_EQ(refusal(dir.file("results.db"), true), "");
  EXPECT_FALSE(std::ifstream(dir.file("new.db")).good());
}

TEST(Sqlite, OptionalBindsNull) {
  kv::test::TempDir dir;
  auto db = kv::Database::open(dir.file("r.db"));
  db.exec("CREATE TABLE t(a INTEGER)");
  auto ins = db.prepare("INSERT INTO t VALUES (?)");
  ins.bind(1, std::optional<int64_t>{}).run();
  ins.bind(1, std::optional<int64_t>{0}).run();
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM t WHERE a IS NULL"), 1);
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM t WHERE a = 0"), 1);
}

}  // namespace

namespace {

// A percentile is the upper bound of its histogram bucket (up to 0.8 % above the true value):
// phase_percentiles and phase_summary clamp it to the observed maximum (the issue saw p99
// 71.827 ms above a max of 71.708 ms).
TEST(Schema, PercentilesNeverExceedTheObservedMaximum) {
  kv::test::TempDir dir;
  auto db = kv::open_results_db(dir.file("r.db"));
  db.exec(
      "INSERT INTO runs(run_id, started_ts_us, command_line, kvdrive_version, client_host, "
      "client_pid) VALUES (1, 0, 'x', '0', 'h', 1);"
      "INSERT INTO targets(target_id, run_id, ordinal, uri, protocol) VALUES (1, 1, 0, 'u', "
      "'redis');"
      "INSERT INTO phases(phase_id, run_id, target_id, ordinal, name, kind, started_ts_us, "
      "threads, "
      "connections) VALUES (1, 1, 1, 0, 'load', 'load', 0, 1, 1);"
      "INSERT INTO driver_seconds(phase_id, ts_us, interval_us, op, ops, ok, bytes_out, bytes_in, "
      "hits, misses, errors, timeouts, lat_max_us) VALUES (1, 0, 1000000, 'set', 100, 100, 0, 0, "
      "0, 0, 0, 0, 71708);"
      "INSERT INTO latency_buckets(phase_id, op, timing, upper_us, count) VALUES "
      "(1, 'set', 'sent', 100, 99), (1, 'set', 'sent', 71827, 1);"
      "INSERT INTO latency_range(phase_id, op, timing, count, min_us, max_us, mean_us) VALUES "
      "(1, 'set', 'sent', 100, 90, 71708, 800);");
  auto pp = db.prepare("SELECT p50_us, p999_us FROM phase_percentiles");
  ASSERT_TRUE(pp.step());
  EXPECT_DOUBLE_EQ(pp.column_double(0), 100);
  EXPECT_DOUBLE_EQ(pp.column_double(1), 71708);  // the bucket's bound 71827, clamped
  auto ps = db.prepare("SELECT lat_p999_us, lat_max_us FROM phase_summary");
  ASSERT_TRUE(ps.step());
  EXPECT_LE(ps.column_double(0), ps.column_double(1));
}

}  // namespace
