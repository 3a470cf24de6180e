// `kvdrive check`'s verdicts into the results file: check_results rows (schema 020) and events,
// on the run of the candidate's last round.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

struct CheckRow {
  std::string repeat_group, baseline;  // the candidate's group; FILE#GROUP of the baseline
  std::string store, against, phase, op, figure;
  double max_regression = 0, ratio = 1;
  std::optional<double> low, high;
  std::string verdict;  // pass, regression, indeterminate
};

// The rows, and the events (kind, message) of the run, in one transaction.
void write_check(Database& db, int64_t run_id, int64_t ts_us, const std::vector<CheckRow>& rows,
                 const std::vector<std::pair<std::string, std::string>>& events);

}  // namespace kv::drive
