// `kvdrive merge` and the schema: every table of the schema is one the merge copies; a file of
// an older kvbench (no run UUIDs) merges once, by its origin. Two segments of a group merged:
// merge_test.cpp; several database hosts: merge_hosts_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbench/schema.hpp"
#include "kvdrive_test_util.hpp"
#include "merge_test_util.hpp"
#include "results/merge.hpp"

namespace {
using namespace kv::test;

// A migration that adds a table merge does not know fails here (and merge refuses to run).
TEST(MergeTables, EveryTableOfTheSchemaIsOneTheMergeCopies) {
  auto db = kv::Database::open(":memory:");
  kv::schema::migrate(db);
  std::vector<std::string> tables;
  kv::Statement q = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name");
  while (q.step()) tables.push_back(q.column_text(0));
  EXPECT_EQ(tables, kv::drive::merged_tables());
  EXPECT_GE(tables.size(), 18U);
}

// A file of an older kvbench (schema 010: no run_uuid) is read as it is; its run is known by
// its client host, pid and start time, so merging it again adds nothing.
TEST(MergeTables, AnOlderFileWithoutRunUuidsMergesOnceByItsOrigin) {
  TempDir dir;
  const std::string old = dir.file("old.db"), out = dir.file("out.db");
  {
    auto db = kv::Database::open(old);
    kv::schema::migrate(db, 10);
    db.exec(
        "INSERT INTO runs (started_ts_us, status, command_line, kvdrive_version, client_host, "
        "client_pid) VALUES (1700000000000000, 'completed', 'kvdrive run', '0.1', 'h', 42);"
        "INSERT INTO targets (run_id, ordinal, uri, protocol) VALUES (1, 0, 'redis://x', 'redis');"
        "INSERT INTO phases (run_id, target_id, ordinal, name, kind, started_ts_us, threads, "
        "connections) VALUES (1, 1, 0, 'load', 'load', 1700000000000000, 1, 1);"
        "INSERT INTO driver_seconds (phase_id, ts_us, interval_us, op, ops, bytes_out, bytes_in, "
        "hits, misses, errors, timeouts) VALUES (1, 1700000000000000, 1000000, 'set', 7, 0, 0, "
        "0, 0, 0, 0);");
  }
  for (int i = 0; i < 2; ++i) {
    auto r = merge(dir, out, {old});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(i == 0 ? "1 run added (0 there" : "0 runs added (1 there"),
              std::string::npos)
        << r.output;
  }
  EXPECT_EQ(query_int(out, "SELECT COUNT(*) FROM runs WHERE run_uuid IS NULL"), 1);
  EXPECT_EQ(query_int(out, "SELECT SUM(ops) FROM driver_seconds"), 7);
  EXPECT_EQ(kv::Database::open_read_only(old).user_version(), 10);  // the input as it was
}

}  // namespace
