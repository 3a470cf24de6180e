// `kvdrive report --html FILE`: one self-contained HTML page (inline CSS, charts as inline SVG,
// no script, no font or file from elsewhere) per results file. For each run:
//  - hints (report_hints.hpp) with the rule behind each;
//  - a timeline of stacked panels on one time axis (seconds since the run started): driver
//    req/s and p99 per store and op, the store process's RSS and swap (kvmon), host load1;
//  - scenario runs: req/s per step and store, writes and reads;
//  - latency percentile curves (nines scale) per store and op, from latency_buckets;
//  - the summary tables of the text report.
// With two or more runs, the comparison tables follow.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// `run_ids` empty: every run in the file. Throws std::invalid_argument for a run not in it.
void write_html_report(Database& db, const std::vector<int64_t>& run_ids, std::ostream& out);

}  // namespace kv::drive
