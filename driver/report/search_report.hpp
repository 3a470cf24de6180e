// The capacity search's results (`kvdrive run --search`; search_steps and search_results,
// migration 007) for every format, read only from the results file:
//  - "searches": one row per searched target: the answer (the highest rate that met the
//    objective), the step above it that failed and why, where the client became the limit,
//    why the search stopped, the objective (from runs.parameters);
//  - "search_steps": the curve, one row per step in the order run: offered and achieved rate,
//    percentiles (intended-time), verdict and limit, and the validity figures of each step
//    (the busiest kvdrive thread's CPU and its on-CPU-or-waiting share from schedstat, send
//    slip, the store's CPU and kvmon's distress figures, client_bound).
// Keys are the results file's column names; docs/output-fields.md lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/report_tables.hpp"

namespace kv::drive {

// "searches" then "search_steps"; empty when the run has no search step (unless `keep_empty`:
// then both, without rows).
std::vector<ReportTable> search_tables(Database& db, int64_t run_id, bool keep_empty = false);

// The objective and client limits a search ran with, as recorded in runs.parameters ("search");
// nullopt for a run without them (no search, or a file from before they were recorded).
struct SearchObjective {
  struct Bound {
    std::string name;  // "p99"
    double max_us;
  };
  std::vector<Bound> latency;
  double min_achieved = 0;
  std::optional<double> max_client_cpu, max_slip_p99_us;
};
std::optional<SearchObjective> search_objective(Database& db, int64_t run_id);

// Text: per searched target the curve (offered, achieved, p50 to p99.9, verdict, limit), the
// validity table (was the client the limit: its busiest thread's CPU, on CPU or runnable,
// slip; the store's CPU), then the result lines. Prints nothing when the run has no search.
// `width` > 0: fitted to that many columns (print_table_text), the objective's percentiles kept.
void print_search_results(Database& db, int64_t run_id, std::ostream& out, size_t width = 0);

// HTML: per searched target the result, the latency-throughput curve as inline SVG (offered
// rate vs p50/p90/p99/p99.9 with the objective as lines and the knee marked; offered vs
// achieved with each step coloured by verdict), then the curve and validity tables. Nothing
// when the run has no search.
void write_search_html(Database& db, int64_t run_id, std::ostream& out);

}  // namespace kv::drive
