// `kvdrive report --run A --run B --html FILE`: the listed runs' per-second curves overlaid on
// one time axis (seconds since each run started): throughput and latency p50 / p99 per store
// and op, a colour per run. Reads only the results file.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// Nothing with fewer than two runs.
void write_comparison_charts(Database& db, const std::vector<int64_t>& run_ids, std::ostream& out);

// One run's stores overlaid: per phase, req/s and p99 of each second on time since that store's
// phase began, so stores run one after the other (each filling half of a timeline panel) can be
// compared. Nothing for a run of one store; the caller leaves out scenario and search runs,
// whose phases are steps.
void write_stores_side_by_side(Database& db, int64_t run_id, std::ostream& out);

}  // namespace kv::drive
