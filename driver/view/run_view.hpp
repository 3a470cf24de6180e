// One run of a results file read back for the reports: google/benchmark's `Run`, which every
// reporter renders. load_run_view makes every query of a run's summary once; the text, JSON, CSV
// and HTML reports render the RunView and hold no SQL. Each Rows lists its columns below, in
// the order of its SELECT (Row reads them by position); a NULL (unknown) stays NULL.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/hints.hpp"
#include "view/percentiles.hpp"
#include "view/rows.hpp"
#include "view/run_header.hpp"
#include "view/trace_curve.hpp"

namespace kv::drive {

// A run's validity figures, warm-up left out (its status and error: RunView::header).
struct RunValidity {
  int64_t failed = 0;         // errors + timeouts
  int64_t dropped = 0;        // due requests never sent (rate mode)
  int64_t client_stalls = 0;  // client_stall events
  int64_t client_bound = 0;   // client_bound events
};
RunValidity load_run_validity(Database& db, int64_t run_id);

struct RunView {
  int64_t run_id = 0;
  // runs: run_id, name, status, error, started_ts_us, ended_ts_us, seconds, command_line,
  // kvdrive_version, client_host, client_pid, scenario, scale, run_group, process_index,
  // process_count (one row; none when the file has no such run).
  Rows run;
  RunHeader header;                       // the same row, typed, for a report's heading
  std::optional<std::string> parameters;  // runs.parameters, the workload as JSON text
  RunValidity validity;
  // run_metadata: store (NULL: kvdrive and its host), name, value; the host's facts first, then
  // each target's settings in target order.
  Rows metadata;
  // step_summary of scenario steps: step, store, protocol, write_req_per_s, read_req_per_s,
  // write_mib_per_s, read_mib_per_s, write_p99_us, read_p99_us, errors (by first phase).
  Rows steps;
  // store_summary by target: store, write_req_per_s, read_req_per_s, write_p99_us, read_p99_us,
  // errors, mixed_req_per_s, mixed_p99_us, protocol.
  Rows stores;
  bool any_mixed = false;  // a store ran a mixed phase (mixed_req_per_s not NULL)
  // phase_summary by phase, op DESC: store, phase, op, ops, seconds, req_per_s, mib_per_s,
  // lat_mean_us, phase_id, lat_max_us, hits, misses, errors, timeouts, wrong, status,
  // failed_per_s, verify (the phase's --verify: 0/1, NULL in files from before it), search_step
  // (1-based, NULL outside a search).
  Rows phases;
  // phase_report per phase: store, phase, load1, load5, load15, peak_rss_kib, peak_swap_kib,
  // store_cpu_s, client_cpu_user_s, client_cpu_system_s (the maxima over its rows).
  Rows server;
  // Rate mode: the requests due before each phase's end that never left, per (phase_id, op),
  // warm-up left out; closed-loop phases are not in the map.
  std::map<std::pair<int64_t, std::string>, double> dropped;
  bool searched = false;  // the run has search steps
  PhasePercentiles percentiles;
  PartPercentiles parts;
  RunTimeWent time_went;
  std::vector<Hint> hints;
  // A replay's trace sized (trace_curves) with each store's measured miss ratio; a run that
  // replayed no trace has none.
  std::vector<TraceCurveView> trace_curves;
};

// Run `run_id` with `percentiles` of each phase. With `hints` false, RunView::hints stays empty
// (the machine tables need none). An id with no run gives a view whose `run` has no rows.
RunView load_run_view(Database& db, int64_t run_id, const PercentileList& percentiles,
                      bool hints = true);

// The parts of a RunView that other readers need alone: its `run` and `metadata` rows,
// runs.parameters (none: NULL or no such run) and the store_summary rows (RunView::stores).
// Whether the file's runs table has migration 019's --repeat columns (repeat_group, round,
// rounds): an older file opened read-only has not.
bool runs_have_rounds(Database& db);
Rows load_run_row(Database& db, int64_t run_id);
Rows load_run_metadata(Database& db, int64_t run_id);
std::optional<std::string> load_run_parameters(Database& db, int64_t run_id);
Rows load_store_summary(Database& db, int64_t run_id);

// A search run's steps (search_steps with the target's uri), by target and step: uri, ordinal,
// offered_rate, achieved_rate, measured_us, requests, failed, lat_p50_us, lat_p90_us, lat_p99_us,
// lat_p999_us, lat_p9999_us, lat_max_us, slip_p50_us, slip_p99_us, busiest_thread_cpu_pct,
// busiest_thread_wanted_pct, store_cpu_pct, swap_in_pages_per_s, major_faults_per_s,
// psi_memory_full_pct, verdict, limit_reason, detail, is_max_compliant (0/1),
// cg_memory_high_events, cg_memory_max_events, cg_oom_events, cg_cpu_throttled_pct,
// cg_cpu_throttled_ms_per_s, server_calls, server_p50_us, server_p99_us, server_p999_us,
// client_share_pct, run_delay_max_us.
Rows load_search_steps(Database& db, int64_t run_id);
// Its answers, by target: uri, max_compliant_rate, the limiting step's ordinal, offered_rate,
// limit_reason and detail, client_bound_rate, steps, stopped, summary.
Rows load_search_results(Database& db, int64_t run_id);

// Every run id of the file, oldest first.
std::vector<int64_t> load_run_ids(Database& db);
// The run ids of run group `group`, by process index.
std::vector<int64_t> load_group_run_ids(Database& db, const std::string& group);
// group_summary of `group`: store, kind, op, processes, ops, wall_seconds, req_per_s, failed;
// by store, load phases first, op DESC.
Rows load_group_summary(Database& db, const std::string& group);

// What can differ between two runs: run_metadata with each row's target position: ordinal
// (NULL: kvdrive and its host), name, value.
Rows load_run_settings(Database& db, int64_t run_id);

}  // namespace kv::drive
