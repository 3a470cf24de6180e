// check_results_path on files whose -wal belongs to them: what a writer that died leaves must be
// taken (only another file's -wal is refused: tests/driver/integration/bad_input_files_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "kvbench/schema.hpp"
#include "kvbench/sqlite.hpp"
#include "kvbench/units.hpp"
#include "servers.hpp"

namespace {

using kv::test::TempDir;

void insert_events(kv::Database& db, int n) {
  auto s = db.prepare(
      "INSERT INTO events (ts_us, source, kind, message) VALUES (?, 'kvdrive', 'test', ?)");
  for (int i = 0; i < n; ++i) {
    s.bind(1, int64_t{i}).bind(2, std::string(3000, 'e'));
    s.run();
  }
}

// The state a writer killed -9 leaves: the file and its -wal as they are while it is open.
std::string copy_while_open(const TempDir& dir, const std::string& name, const std::string& path) {
  const std::string copy = dir.file(name);
  std::filesystem::copy_file(path, copy);
  std::filesystem::copy_file(path + "-wal", copy + "-wal");
  return copy;
}

TEST(ResultsFile, TheFilesOwnLeftOverWalIsTaken) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  for (int i = 0; i < 3; ++i) {  // a history, so page 1's change counter is not where it began
    kv::Database db = kv::open_results_db(path);
    insert_events(db, 5);
  }
  kv::Database db = kv::open_results_db(path);
  db.exec("PRAGMA wal_autocheckpoint = 0");
  insert_events(db, 30);
  // Not checkpointed: the -wal continues the file.
  const std::string plain = copy_while_open(dir, "plain.db", path);
  EXPECT_NO_THROW(kv::check_results_path("--db", plain, true));
  // Checkpointed, then restarted by the same connection (page 1 cached: same counter).
  db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  insert_events(db, 30);
  const std::string restarted = copy_while_open(dir, "restarted.db", path);
  EXPECT_NO_THROW(kv::check_results_path("--db", restarted, true));
  // Checkpointed part of the way: page 1 in the file is one of the -wal's images.
  kv::Database reader = kv::Database::open_read_only(path);
  auto hold = reader.prepare("SELECT count(*) FROM events");  // a reader stops the restart
  ASSERT_TRUE(hold.step());
  insert_events(db, 10);
  db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  insert_events(db, 10);
  const std::string partial = copy_while_open(dir, "partial.db", path);
  EXPECT_NO_THROW(kv::check_results_path("--db", partial, true));
  // And each copy then opens with every row.
  for (const auto& f : {plain, restarted, partial}) {
    kv::Database copy = kv::open_results_db(f);
    auto check = copy.prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.step());
    EXPECT_EQ(check.column_text(0), "ok") << f;
  }
  // The file in use by this process: its live -wal is not second-guessed.
  EXPECT_NO_THROW(kv::check_results_path("--db", path, true));
}

TEST(ResultsFile, CheckWritesNothingBesideTheFile) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  kv::open_results_db(path);
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  kv::check_results_path("--db", path, true);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST(ResultsFile, AnOlderCompleteSchemaIsTakenAndUpgraded) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    kv::Database db = kv::Database::open(path);
    kv::schema::migrate(db, kv::schema::latest_version() - 1);
  }
  EXPECT_NO_THROW(kv::check_results_path("--db", path, true));
  {
    kv::Database db = kv::Database::open(path);
    db.exec("DROP TABLE events");
  }
  try {
    kv::check_results_path("--db", path, true);
    ADD_FAILURE() << "a version " << kv::schema::latest_version() - 1
                  << " file without events was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("table 'events' is missing"), std::string::npos)
        << e.what();
  }
}

TEST(Units, DurationsStopWellBeforeNanosecondsOverflow) {
  EXPECT_EQ(kv::parse_duration_us("87600h"), kv::kMaxDurationUs);
  EXPECT_THROW(kv::parse_duration_us("87601h"), std::invalid_argument);
  EXPECT_THROW(kv::parse_duration_us("2562048h"), std::invalid_argument);  // overflowed as ns
  EXPECT_LT(kv::kMaxDurationUs, INT64_MAX / 1000 / 10);
}

}  // namespace
