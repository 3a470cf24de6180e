// One run read back for the reports: see run_view.hpp.
#include "view/run_view.hpp"

#include "view/op_order.hpp"

namespace kv::drive {
namespace {

std::map<std::pair<int64_t, std::string>, double> dropped(Database& db, int64_t run_id) {
  std::map<std::pair<int64_t, std::string>, double> out;
  auto d = db.prepare(
      "SELECT d.phase_id, d.op, SUM(d.dropped) FROM driver_seconds d JOIN phases p USING "
      "(phase_id) WHERE p.run_id = ? AND d.warmup = 0 GROUP BY d.phase_id, d.op");
  d.bind(1, run_id);
  while (d.step())
    if (!d.is_null(2)) out[{d.column_int(0), d.column_text(1)}] = d.column_double(2);
  return out;
}

}  // namespace

RunView load_run_view(Database& db, int64_t run_id, const PercentileList& percentiles, bool hints) {
  RunView v;
  v.run_id = run_id;
  v.run = load_run_row(db, run_id);
  v.header = run_header(db, run_id);
  v.parameters = load_run_parameters(db, run_id);
  v.validity = load_run_validity(db, run_id);
  v.trace_curves = load_trace_curves(db, run_id);
  v.metadata = load_run_metadata(db, run_id);
  v.steps = Rows::query(db,
                        "SELECT step, store, protocol, write_req_per_s, read_req_per_s, "
                        "write_mib_per_s, read_mib_per_s, write_p99_us, read_p99_us, errors "
                        "FROM step_summary WHERE run_id = ? AND step IS NOT NULL "
                        "ORDER BY first_phase_id",
                        run_id);
  v.stores = load_store_summary(db, run_id);
  for (const Row& r : v.stores.rows) v.any_mixed = v.any_mixed || !r.is_null(6);
  v.phases = Rows::query(
      db,
      "SELECT store, phase, op, ops, seconds, req_per_s, mib_per_s, lat_mean_us, phase_id, "
      "lat_max_us, hits, misses, errors, timeouts, wrong, status, failed_per_s, "
      "(SELECT json_extract(x.parameters, '$.verify') FROM phases x WHERE x.phase_id = "
      "phase_summary.phase_id), "
      "(SELECT s.ordinal + 1 FROM search_steps s WHERE s.phase_id = phase_summary.phase_id) "
      "FROM phase_summary WHERE run_id = ? ORDER BY phase_id, " +
          view::op_order("op"),
      run_id);
  v.server = Rows::query(
      db,
      "SELECT store, phase, MAX(load1), MAX(load5), MAX(load15), MAX(peak_rss_kib), "
      "MAX(peak_swap_kib), MAX(store_cpu_s), MAX(client_cpu_user_s), MAX(client_cpu_system_s) "
      "FROM phase_report WHERE run_id = ? GROUP BY phase_id ORDER BY phase_id",
      run_id);
  v.dropped = dropped(db, run_id);
  {
    auto q = db.prepare("SELECT COUNT(*) FROM search_steps WHERE run_id = ?");
    q.bind(1, run_id);
    v.searched = q.step() && q.column_int(0) > 0;
  }
  v.percentiles = run_percentiles(db, run_id, percentiles);
  v.parts = run_part_percentiles(db, run_id, percentiles);
  v.time_went = run_time_went(db, run_id, percentiles);
  if (hints) v.hints = compute_hints(db, run_id);
  return v;
}

bool runs_have_rounds(Database& db) {
  auto q = db.prepare("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'repeat_group'");
  return q.step();
}

Rows load_run_row(Database& db, int64_t run_id) {
  // A file older than migration 019 opened read-only has no --repeat columns: NULL, as in a run
  // made once.
  const std::string rounds = runs_have_rounds(db)
                                 ? "repeat_group, round, rounds"
                                 : "NULL AS repeat_group, NULL AS round, NULL AS rounds";
  return Rows::query(db,
                     "SELECT run_id, name, status, error, started_ts_us, ended_ts_us, "
                     "(ended_ts_us - started_ts_us) / 1e6 AS seconds, command_line, "
                     "kvdrive_version, client_host, client_pid, scenario, scale, run_group, "
                     "process_index, process_count, " +
                         rounds + " FROM runs WHERE run_id = ?",
                     run_id);
}

Rows load_run_metadata(Database& db, int64_t run_id) {
  return Rows::query(db,
                     "SELECT t.uri AS store, m.name, m.value FROM run_metadata m "
                     "LEFT JOIN targets t ON t.target_id = m.target_id WHERE m.run_id = ? "
                     "ORDER BY m.target_id IS NOT NULL, t.ordinal, m.rowid",
                     run_id);
}

std::optional<std::string> load_run_parameters(Database& db, int64_t run_id) {
  auto p = db.prepare("SELECT parameters FROM runs WHERE run_id = ?");
  p.bind(1, run_id);
  if (p.step() && !p.is_null(0)) return p.column_text(0);
  return std::nullopt;
}

Rows load_store_summary(Database& db, int64_t run_id) {
  return Rows::query(db,
                     "SELECT store, write_req_per_s, read_req_per_s, write_p99_us, read_p99_us, "
                     "errors, mixed_req_per_s, mixed_p99_us, protocol FROM store_summary s "
                     // by position (a --repeat round runs them in a rotated order)
                     "WHERE run_id = ? ORDER BY (SELECT ordinal FROM targets t "
                     "WHERE t.target_id = s.target_id), target_id",
                     run_id);
}

std::vector<int64_t> load_run_ids(Database& db) {
  std::vector<int64_t> out;
  auto r = db.prepare("SELECT run_id FROM runs ORDER BY run_id");
  while (r.step()) out.push_back(r.column_int(0));
  return out;
}

std::vector<int64_t> load_group_run_ids(Database& db, const std::string& group) {
  std::vector<int64_t> out;
  auto r = db.prepare("SELECT run_id FROM runs WHERE run_group = ? ORDER BY process_index, run_id");
  r.bind(1, group);
  while (r.step()) out.push_back(r.column_int(0));
  return out;
}

Rows load_group_summary(Database& db, const std::string& group) {
  auto s = db.prepare(
      "SELECT store, kind, op, processes, ops, wall_seconds, req_per_s, failed FROM group_summary "
      "WHERE run_group = ? ORDER BY store, kind = 'load' DESC, " +
      view::op_order("op"));
  s.bind(1, group);
  return Rows::read(s);
}

Rows load_run_settings(Database& db, int64_t run_id) {
  return Rows::query(db,
                     "SELECT t.ordinal, m.name, m.value FROM run_metadata m "
                     "LEFT JOIN targets t ON t.target_id = m.target_id WHERE m.run_id = ?",
                     run_id);
}

RunValidity load_run_validity(Database& db, int64_t run_id) {
  RunValidity v;
  auto c = db.prepare(
      "SELECT (SELECT TOTAL(d.errors + d.timeouts) FROM driver_seconds d JOIN phases p USING "
      "(phase_id) WHERE p.run_id = ?1 AND d.warmup = 0), "
      "(SELECT TOTAL(d.dropped) FROM driver_seconds d JOIN phases p USING (phase_id) "
      "WHERE p.run_id = ?1 AND d.warmup = 0), "
      "(SELECT COUNT(*) FROM events WHERE run_id = ?1 AND kind = 'client_stall'), "
      "(SELECT COUNT(*) FROM events WHERE run_id = ?1 AND kind = 'client_bound')");
  c.bind(1, run_id);
  c.step();
  v.failed = c.column_int(0);
  v.dropped = c.column_int(1);
  v.client_stalls = c.column_int(2);
  v.client_bound = c.column_int(3);
  return v;
}

Rows load_search_steps(Database& db, int64_t run_id) {
  auto q = db.prepare(
      "SELECT t.uri, s.ordinal, s.offered_rate, s.achieved_rate, s.measured_us, s.requests, "
      "s.failed, s.lat_p50_us, s.lat_p90_us, s.lat_p99_us, s.lat_p999_us, s.lat_p9999_us, "
      "s.lat_max_us, s.slip_p50_us, s.slip_p99_us, s.busiest_thread_cpu_pct, "
      "s.busiest_thread_wanted_pct, s.store_cpu_pct, s.swap_in_pages_per_s, "
      "s.major_faults_per_s, s.psi_memory_full_pct, s.verdict, s.limit_reason, s.detail, "
      "s.offered_rate = r.max_compliant_rate AND s.verdict = 'pass', s.cg_memory_high_events, "
      "s.cg_memory_max_events, s.cg_oom_events, s.cg_cpu_throttled_pct, "
      "s.cg_cpu_throttled_ms_per_s, s.server_calls, s.server_p50_us, s.server_p99_us, "
      "s.server_p999_us, s.client_share_pct, s.run_delay_max_us "
      "FROM search_steps s JOIN targets t USING (target_id) LEFT JOIN search_results r "
      "ON r.run_id = s.run_id AND r.target_id = s.target_id WHERE s.run_id = ? "
      "ORDER BY t.ordinal, s.ordinal");
  q.bind(1, run_id);
  return Rows::read(q);
}

Rows load_search_results(Database& db, int64_t run_id) {
  auto q = db.prepare(
      "SELECT t.uri, r.max_compliant_rate, l.ordinal, l.offered_rate, l.limit_reason, l.detail, "
      "r.client_bound_rate, (SELECT count(*) FROM search_steps s WHERE s.run_id = r.run_id AND "
      "s.target_id = r.target_id), r.stopped, r.summary FROM search_results r "
      "JOIN targets t USING (target_id) LEFT JOIN search_steps l ON l.phase_id = "
      "r.limiting_phase_id WHERE r.run_id = ? ORDER BY t.ordinal");
  q.bind(1, run_id);
  return Rows::read(q);
}

}  // namespace kv::drive
