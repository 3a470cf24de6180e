// Helpers for tests that run the real kvdrive binary and read its results file.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kvbench/schema.hpp"
#include "db_query.hpp"
#include "servers.hpp"

namespace kv::test {

inline const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";

struct Outcome {
  int exit_code;
  std::string output;
};

inline Outcome run_kvdrive(const TempDir& dir, std::vector<std::string> args,
                           int timeout_ms = 120'000) {
  args.insert(args.begin(), kKvdrive);
  std::string log = dir.file("kvdrive.log");
  std::remove(log.c_str());
  Process p(args, log);
  int code = p.wait(timeout_ms);
  return {code, slurp(log)};
}

// Sum of a driver_seconds column over one protocol's op (optionally one phase kind).
inline int64_t driver_sum(kv::Database& db, const std::string& column, const std::string& protocol,
                          const std::string& op, const std::string& kind = "") {
  return query_int(db, "SELECT COALESCE(SUM(d." + column + "), 0) FROM driver_seconds d "
                       "JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
                       "WHERE t.protocol = '" + protocol + "' AND d.op = '" + op + "'" +
                       (kind.empty() ? "" : " AND p.kind = '" + kind + "'"));
}

}  // namespace kv::test
