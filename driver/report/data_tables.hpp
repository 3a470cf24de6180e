// A run's raw series as report tables, for the machine formats (CSV files, JSON): every second
// the driver recorded beside what kvmon and the store saw in it, kvmon's samples of the stores
// and of the host during the run, and the run's events. Column keys are the results file's
// column names (units in the name: _us, _kib, _bytes); docs/output-fields.md lists them.
#pragma once

#include <cstdint>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/report_tables.hpp"

namespace kv::drive {

// "timeline", "process_samples", "host_samples", "events", in that order; each present even
// when it has no rows (so a CSV file per table always exists, with its header). The timeline's
// per-second latency columns are lat_<p>_us per `percentiles` (second_percentiles: from each
// second's histogram, never above lat_max_us), then lat_max_us and lat_percentiles_from (which
// table they came from: second_latency_buckets, or driver_seconds' stored columns for seconds
// an older kvdrive wrote; null when nothing completed).
std::vector<ReportTable> series_tables(Database& db, int64_t run_id,
                                       const PercentileList& percentiles = default_percentiles());

// What the run ran on ("metadata", run_metadata): store (null: kvdrive and its host), name,
// value; the host's facts first, then each target's settings in target order.
ReportTable metadata_table(const Rows& metadata);  // RunView::metadata

// The run's own row ("runs": parameters, status, validity), one row.
ReportTable run_row_table(const Rows& run);  // RunView::run

}  // namespace kv::drive
