// Text reports read back from a results file, so a report is the same whether printed at the
// end of a run or later with `kvdrive report`.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {

// After a --search run: the search's answer and validity table (print_search_results) and the
// hints, not the per-phase tables, whose steps are each a phase (dozens of rows averaged into a
// per-store figure that means nothing for a search); a line says where they are. `width` > 0:
// fitted to that many columns (print_table_text).
void print_search_run_summary(Database& db, int64_t run_id, std::ostream& out, size_t width = 0);
// The published-table shape for one run: store, write req/s, read req/s, p99s, errors; then
// one line per phase and op, with `percentiles` and the max of each. `width` > 0: fitted to that
// many columns, a last line naming what was left out and where to see it all.
void print_run_summary(Database& db, int64_t run_id, std::ostream& out,
                       const PercentileList& percentiles = default_percentiles(), size_t width = 0);
// The same as one JSON object on one line (`kvdrive run --json`): the run object of
// write_json_document without its per-second and kvmon sample series.
void print_run_json(Database& db, int64_t run_id, std::ostream& out,
                    const PercentileList& percentiles = default_percentiles());
// The listed runs (every run when empty) as one JSON document, the structure of
// docs/output-fields.md (format "kvbench-results", format_version 1): the percentile list, then
// per run its parameters, tables (stores, phases, steps, server), validity (status, error,
// hints, events), searches and search_steps (search_report.hpp; empty arrays without a search)
// and series (timeline, process_samples, host_samples); then the comparison of
// each later run with the first when two or more are listed. Names are the CSV files' keys.
void write_json_document(Database& db, const std::vector<int64_t>& run_ids,
                         const PercentileList& percentiles, std::ostream& out);

// The tables of the machine formats, by name: runs, stores, phases, steps, server, timeline,
// process_samples, host_samples, events, searches, search_steps, comparison, differences (see
// docs/output-fields.md).
const std::vector<std::string>& csv_table_names();
// One table of the listed runs (every run when empty) as CSV: a header line of keys, a leading
// run_id column (base_run_id, run_id for comparison), rows of every run under one header (the
// union of their columns); nothing at all when no listed run has that table (steps outside
// scenario runs, server without kvmon, comparison with fewer than two runs). Throws
// UsageError for a name not in csv_table_names().
void print_csv_table(Database& db, const std::vector<int64_t>& run_ids, const std::string& table,
                     const PercentileList& percentiles, std::ostream& out);
// The group's runs (oldest process first) as write_json_document, plus a top-level "group":
// the object of print_group_json (`kvdrive run --processes N --json-out FILE`).
void write_group_json_document(Database& db, const std::string& group, int processes,
                               const std::vector<std::string>& problems,
                               const PercentileList& percentiles, std::ostream& out);
// A --processes group: per store, phase kind and op, the requests of all its processes over
// the group's wall-clock time.
void print_group_summary(Database& db, const std::string& group, std::ostream& out);
// The same as one JSON object on one line (kvdrive run --json --processes N): run_group,
// processes, problems (a line per process that did not complete), runs (their run ids) and
// phases (store, phase, op, processes, ops, wall_seconds, req_per_s, failed).
void print_group_json(Database& db, const std::string& group, int processes,
                      const std::vector<std::string>& problems, std::ostream& out);
// Every run in the file (or only `run_id`), oldest first. Throws UsageError if
// `run_id` is not in the file.
void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out);

enum class ReportFormat { text, csv, json };
// "text", "csv" or "json"; throws UsageError otherwise.
ReportFormat parse_report_format(const std::string& s);
// `run_ids` as given, or every run of the file (oldest first) when empty. Throws
// UsageError naming a run that is not in the file.
std::vector<int64_t> report_runs(Database& db, const std::vector<int64_t>& run_ids);
// The listed runs (every run when empty) in one format:
//  - text: each run's header and tables, as print_run_summary;
//  - csv:  print_csv_table of `csv_table` (required: one table per stream);
//  - json: write_json_document.
// With two or more runs listed, text ends with the comparison tables (ratios of each run to the
// first, per store and op; see comparison_tables).
void print_report(Database& db, const std::vector<int64_t>& run_ids, ReportFormat format,
                  std::ostream& out, const PercentileList& percentiles = default_percentiles(),
                  const std::string& csv_table = "phases");

}  // namespace kv::drive
