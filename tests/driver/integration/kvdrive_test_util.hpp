// Helpers for tests that run the real kvdrive binary and read its results file.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace kv::test {

inline const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";

struct Outcome {
  int exit_code;
  std::string output;
};

// kvdrive with `args`, its output in dir/kvdrive.log; `prefix` goes before it (e.g.
// NetNamespace::inside's `ip netns exec NAME`).
inline Outcome run_kvdrive(const TempDir& dir, std::vector<std::string> args,
                           int timeout_ms = 120'000, const std::vector<std::string>& prefix = {}) {
  args.insert(args.begin(), kKvdrive);
  args.insert(args.begin(), prefix.begin(), prefix.end());
  std::string log = dir.file("kvdrive.log");
  std::remove(log.c_str());
  Process p(args, log);
  const pid_t pid = p.pid();
  int code = p.wait(timeout_ms);
  // A sanitizer's report first: a failure's output may be shown cut short.
  return {code, sanitizer_reports_of(pid) + slurp(log)};
}

// The results file at `path` made as schema 018 left it (without 019's repeat columns, 020's
// check_results and 021's trace_curves), as a kvdrive of that schema would hand it over:
// checkpointed, no -wal. (021's wider phases.kind stays: no row of such a file uses it.)
inline void make_schema_018(const std::string& path) {
  auto db = kv::open_results_db(path);
  db.exec(
      "DROP INDEX runs_by_repeat_group; ALTER TABLE runs DROP COLUMN repeat_group; "
      "ALTER TABLE runs DROP COLUMN round; ALTER TABLE runs DROP COLUMN rounds; "
      "DROP TABLE check_results; DROP TABLE trace_curves; PRAGMA user_version = 18; "
      "PRAGMA wal_checkpoint(TRUNCATE)");
}

// Sum of a driver_seconds column over one protocol's op (optionally one phase kind).
inline int64_t driver_sum(kv::Database& db, const std::string& column, const std::string& protocol,
                          const std::string& op, const std::string& kind = "") {
  return query_int(db, "SELECT COALESCE(SUM(d." + column +
                           "), 0) FROM driver_seconds d "
                           "JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
                           "WHERE t.protocol = '" +
                           protocol + "' AND d.op = '" + op + "'" +
                           (kind.empty() ? "" : " AND p.kind = '" + kind + "'"));
}

// Waits until the results file at `path` answers `sql` with a value > 0 (e.g. kvdrive started
// its read phase), so a test acts on what kvdrive is doing rather than on how long it should
// have taken to get there (which a sanitizer or a loaded machine stretches). False after
// `timeout_ms`.
inline bool wait_for_value(const std::string& path, const std::string& sql,
                           int timeout_ms = 60'000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      try {
        if (query_int(path, sql) > 0) return true;
      } catch (const std::exception&) {
        // not created or migrated yet
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// SQL for wait_for_value: the phase of that kind has recorded at least `rows` seconds.
inline std::string phase_rows_at_least(const std::string& kind, int rows) {
  return "SELECT count(*) >= " + std::to_string(rows) +
         " FROM driver_seconds d JOIN phases p "
         "USING (phase_id) WHERE p.kind = '" +
         kind + "'";
}

}  // namespace kv::test
