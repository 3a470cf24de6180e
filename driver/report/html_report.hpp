// `kvdrive report --html FILE`: one self-contained HTML page (inline CSS, charts as inline SVG,
// no script, no font or file from elsewhere) per results file. For each run:
//  - hints (report_hints.hpp) with the rule behind each;
//  - a timeline of stacked panels on one time axis (seconds since the run started): driver
//    req/s per store and op, latency p50/p99/p99.9 per second (a panel per store), the store's
//    RSS and swap (kvmon) and its own used_memory on one scale, the store process's CPU %, the
//    hit ratio of gets, host load1; scenario step boundaries as lines; a panel without data is
//    a "no data" note, not an empty frame;
//  - scenario runs: req/s and MiB/s per step and store, writes and reads;
//  - latency percentile curves (nines scale) per store and op, from latency_buckets; more than
//    six curves in one chart (a scenario's steps) become small multiples on shared axes;
//  - a capacity search's result, its latency-throughput curve, curve and validity tables
//    (search_report.hpp);
//  - the summary tables of the text report (wide ones dense, in a box that scrolls).
// With two or more runs, their per-second curves overlaid (compare_html.hpp) and the comparison
// tables follow.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {

// `run_ids` empty: every run in the file. `percentiles`: those of the per-phase tables
// (--percentiles). Throws UsageError for a run not in it.
void write_html_report(Database& db, const std::vector<int64_t>& run_ids, std::ostream& out,
                       const PercentileList& percentiles = default_percentiles());

}  // namespace kv::drive
