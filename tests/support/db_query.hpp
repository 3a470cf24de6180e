// Small helpers for tests that read a results file or a log: one value per query, -1 when the
// value is NULL or there is no row (so a test can tell "none" from 0).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "kvbench/sqlite.hpp"

namespace kv::test {

inline int64_t query_int(kv::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  return s.step() ? s.column_opt_int(0).value_or(-1) : -1;
}

inline int64_t query_int(const std::string& db_path, const std::string& sql) {
  auto db = kv::Database::open(db_path);
  return query_int(db, sql);
}

inline double query_double(kv::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  return s.step() ? s.column_opt_double(0).value_or(-1) : -1;
}

// Text of the first column of the first row; "<none>" when there is no row or it is NULL.
inline std::string query_text(kv::Database& db, const std::string& sql) {
  auto s = db.prepare(sql);
  return s.step() && !s.is_null(0) ? s.column_text(0) : "<none>";
}

// The whole file as a string (empty if it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `text` as the whole file (a cgroup control file too: flushed before the verdict).
inline bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return f.good();
}

}  // namespace kv::test
