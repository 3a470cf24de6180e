// What report_hints.cpp and report_hints_failures.cpp share: a run's targets and when its
// phases ran, the run's start, "+12.3 s" from it, and the failure family of hints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/hints.hpp"

namespace kv::drive::hints {

struct Target {
  int64_t id;
  std::string uri, protocol;
  int64_t lo, hi;  // when its phases ran
};

std::vector<Target> run_targets(Database& db, int64_t run_id);
int64_t run_start(Database& db, int64_t run_id);
// "+12.3 s": ts_us after start_us.
std::string at(int64_t ts_us, int64_t start_us);

// Redis Cluster redirects, a pool's failed servers, a store that began to fail or a failed
// phase or run (report_hints_failures.cpp).
void redirect_hints(Database& db, const std::vector<Target>& targets, std::vector<Hint>& out);
void pool_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                std::vector<Hint>& out);
void failure_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                   std::vector<Hint>& out);

}  // namespace kv::drive::hints
