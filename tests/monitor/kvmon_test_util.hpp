// What the tests of the real kvmon binary share (kvmon_test.cpp, kvmon_targets_test.cpp,
// kvmon_results_file_test.cpp): kvmon started and stopped, its results file queried, a
// condition waited for.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "db_query.hpp"
#include "kvbench/sqlite.hpp"
#include "proc_parsers.hpp"
#include "servers.hpp"

namespace kv::mon {

using kv::test::Process;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;

inline const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// One integer from the results file; nullopt while it does not exist or the value is NULL.
inline std::optional<int64_t> query_int(const std::string& db_path, const std::string& sql) {
  try {
    Database db = Database::open(db_path);
    Statement st = db.prepare(sql);
    if (!st.step()) return std::nullopt;
    return st.column_opt_int(0);
  } catch (const SqliteError&) {
    return std::nullopt;  // not created or migrated yet
  }
}

inline std::string query_text(const std::string& db_path, const std::string& sql) {
  Database db = Database::open(db_path);
  Statement st = db.prepare(sql);
  return st.step() ? st.column_text(0) : std::string();
}

inline bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

inline PidStatus read_status(pid_t pid) {
  return parse_pid_status(slurp("/proc/" + std::to_string(pid) + "/status"));
}

inline Process start_kvmon(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {kKvmon, "--db", dir.file("results.db"), "--log-level", "debug"});
  return Process(args, dir.file("kvmon.log"));
}

// Stops kvmon with SIGTERM and returns its exit status.
inline int stop_kvmon(Process& kvmon) {
  kvmon.signal(SIGTERM);
  return kvmon.wait(10'000);
}

}  // namespace kv::mon
