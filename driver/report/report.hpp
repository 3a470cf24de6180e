// Text reports read back from a results file, so a report is the same whether printed at the
// end of a run or later with `kvdrive report`.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// The published-table shape for one run: store, write req/s, read req/s, p99s, errors; then
// one line per phase and op.
void print_run_summary(Database& db, int64_t run_id, std::ostream& out);
// The same as JSON: {"run_id", "status", "phases": [{store, phase, op, ops, req_per_s, ...}]}.
void print_run_json(Database& db, int64_t run_id, std::ostream& out);
// A --processes group: per store, phase kind and op, the requests of all its processes over
// the group's wall-clock time.
void print_group_summary(Database& db, const std::string& group, std::ostream& out);
// The same as one JSON object on one line (kvdrive run --json --processes N): run_group,
// processes, problems (a line per process that did not complete), runs (their run ids) and
// phases (store, phase, op, processes, ops, wall_seconds, req_per_s, failed).
void print_group_json(Database& db, const std::string& group, int processes,
                      const std::vector<std::string>& problems, std::ostream& out);
// Every run in the file (or only `run_id`), oldest first. Throws std::invalid_argument if
// `run_id` is not in the file.
void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out);

enum class ReportFormat { text, csv, json };
// "text", "csv" or "json"; throws std::invalid_argument otherwise.
ReportFormat parse_report_format(const std::string& s);
// `run_ids` as given, or every run of the file (oldest first) when empty. Throws
// std::invalid_argument naming a run that is not in the file.
std::vector<int64_t> report_runs(Database& db, const std::vector<int64_t>& run_ids);
// The listed runs (every run when empty) in one format:
//  - text: each run's header and tables, as print_run_summary;
//  - csv:  one table after another, each a header line of column keys and raw values in the
//          results file's units (req/s, µs), a leading run_id column, a blank line between;
//  - json: print_run_json for each run, one object per line.
// With two or more runs listed, text and csv end with the comparison tables (ratios of each
// run to the first, per store and op; see comparison_tables).
void print_report(Database& db, const std::vector<int64_t>& run_ids, ReportFormat format,
                  std::ostream& out);

}  // namespace kv::drive
