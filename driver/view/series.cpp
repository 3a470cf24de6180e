// A run's raw series read back: see series.hpp.
#include "view/series.hpp"

#include <string>

#include "kvbench/samples.hpp"
#include "view/hints.hpp"
#include "view/op_order.hpp"

namespace kv::drive {
namespace {

// ", a.col1, a.col2, ..." of a sample table's fields, in its order (kvbench/samples.hpp: the
// one field table, so a new kvmon column reaches the CSV and JSON tables without an edit here).
template <typename S>
std::string sample_columns(const SampleTable<S>& table, const char* alias) {
  std::string out;
  for (const SampleField<S>& f : table.fields) {
    out += ", ";
    out += alias;
    out += '.';
    out += f.column;
  }
  return out;
}

}  // namespace

Rows load_timeline(Database& db, int64_t run_id) {
  return Rows::query(
      db,
      "SELECT d.phase_id, t.uri AS store, p.name AS phase, d.op, d.ts_us, d.interval_us, "
      "d.warmup, d.ops, "
      "COALESCE(d.ok, d.ops - d.errors - d.timeouts) AS ok, "
      "COALESCE(d.ok, d.ops - d.errors - d.timeouts) * 1e6 / d.interval_us AS req_per_s, "
      "(d.errors + d.timeouts) * 1e6 / d.interval_us AS failed_per_s, "
      "d.hits, d.misses, d.errors, d.timeouts, d.wrong, d.late, d.bytes_out, d.bytes_in, "
      "d.lat_mean_us, d.lat_max_us, "
      "d.uncorrected_p50_us, d.uncorrected_p99_us, d.uncorrected_max_us, "
      "d.slip_p50_us, d.slip_p99_us, d.slip_max_us, "
      "c.cpu_user_us AS client_cpu_user_us, c.cpu_system_us AS client_cpu_system_us, "
      "c.busiest_thread_cpu_pct, c.spin_us AS client_spin_us, c.cluster_moved, c.cluster_ask, "
      "tl.rss_kib, tl.swap_kib, tl.major_faults, tl.cpu_us AS store_cpu_us, tl.io_write_bytes, "
      "tl.load1, tl.host_swap_used_kib, tl.pswpin, tl.pswpout, tl.store_used_memory "
      "FROM driver_seconds d JOIN phases p ON p.phase_id = d.phase_id "
      "JOIN targets t ON t.target_id = p.target_id "
      "LEFT JOIN client_seconds c ON c.phase_id = d.phase_id AND c.ts_us = d.ts_us "
      "LEFT JOIN timeline tl ON tl.phase_id = d.phase_id AND tl.ts_us = d.ts_us AND tl.op = d.op "
      "WHERE p.run_id = ? ORDER BY t.ordinal, p.ordinal, d.ts_us, " +
          view::op_order("d.op"),
      run_id);
}

std::vector<std::pair<int64_t, int64_t>> load_store_instances(Database& db, int64_t run_id) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto s = db.prepare("SELECT target_id FROM targets WHERE run_id = ? ORDER BY ordinal");
  s.bind(1, run_id);
  std::vector<int64_t> targets;
  while (s.step()) targets.push_back(s.column_int(0));
  for (int64_t t : targets)
    if (auto i = store_instance(db, t)) out.emplace_back(t, *i);
  return out;
}

Rows load_process_samples(Database& db, int64_t target_id, int64_t instance_id) {
  const std::string sql =
      "SELECT t.uri AS store, i.host, i.pid, i.name AS process, s.ts_us, s.scheduled_ts_us" +
      sample_columns(kProcessTable, "s") +
      " FROM process_samples s JOIN process_instances i ON i.instance_id = s.instance_id "
      "JOIN targets t ON t.target_id = ?1 JOIN runs r ON r.run_id = t.run_id "
      "WHERE s.instance_id = ?2 AND s.ts_us BETWEEN r.started_ts_us "
      " AND COALESCE(r.ended_ts_us, s.ts_us) ORDER BY s.ts_us";
  auto s = db.prepare(sql);
  s.bind(1, target_id);
  s.bind(2, instance_id);
  return Rows::read(s);
}

Rows load_host_samples(Database& db, int64_t run_id) {
  return Rows::query(
      db,
      "SELECT m.host, h.ts_us, h.scheduled_ts_us" + sample_columns(kHostTable, "h") +
          " FROM host_samples h JOIN monitor_sessions m ON m.session_id = h.session_id "
          "JOIN runs r ON r.run_id = ?1 "
          "WHERE h.ts_us BETWEEN r.started_ts_us AND COALESCE(r.ended_ts_us, h.ts_us) "
          "ORDER BY m.host, h.ts_us",
      run_id);
}

Rows load_events(Database& db, int64_t run_id) {
  return Rows::query(db,
                     "SELECT e.ts_us, e.source, e.kind, e.message FROM events e "
                     "WHERE e.run_id = ? ORDER BY e.ts_us, e.event_id",
                     run_id);
}

}  // namespace kv::drive
