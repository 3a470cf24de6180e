// Two processes write one results file at once (as kvmon and kvdrive do on one host): neither
// may see SQLITE_BUSY, and no row may be lost.
#include <gtest/gtest.h>

#include <string>

#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace {

int count(kv::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  s.step();
  return static_cast<int>(s.column_int(0));
}

TEST(TwoWriters, BothFinishAndEveryRowIsThere) {
  kv::test::TempDir dir;
  std::string file = dir.file("shared.db");
  std::string writer = std::string(KV_BINARY_DIR) + "/tests/common/kv_db_writer";
  constexpr int kRows = 2000;
  // Both start on a file that does not exist yet, so they also race to create the schema.
  kv::test::Process a({writer, file, "kvmon", std::to_string(kRows)}, dir.file("a.log"));
  kv::test::Process b({writer, file, "kvdrive", std::to_string(kRows)}, dir.file("b.log"));
  EXPECT_EQ(a.wait(120'000), 0);
  EXPECT_EQ(b.wait(120'000), 0);
  auto db = kv::open_results_db(file);
  EXPECT_EQ(count(db, "SELECT count(*) FROM events WHERE source='kvmon'"), kRows);
  EXPECT_EQ(count(db, "SELECT count(*) FROM events WHERE source='kvdrive'"), kRows);
  auto ic = db.prepare("PRAGMA integrity_check");
  ic.step();
  EXPECT_EQ(ic.column_text(0), "ok");
}

TEST(TwoWriters, WriterWaitsForALongTransactionInsteadOfFailing) {
  kv::test::TempDir dir;
  std::string file = dir.file("locked.db");
  auto db = kv::open_results_db(file);
  db.exec("BEGIN IMMEDIATE");  // hold the write lock
  std::string writer = std::string(KV_BINARY_DIR) + "/tests/common/kv_db_writer";
  kv::test::Process w({writer, file, "kvdrive", "50"}, dir.file("w.log"));
  EXPECT_EQ(w.wait(1500), -1) << "the writer finished while the lock was held";
  db.exec("COMMIT");
  EXPECT_EQ(w.wait(60'000), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM events"), 50);
}

}  // namespace
