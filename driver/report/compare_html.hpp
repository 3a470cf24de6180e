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

}  // namespace kv::drive
