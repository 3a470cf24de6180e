#include "view/charts.hpp"

#include "view/op_order.hpp"

namespace kv::drive {

std::vector<StepThroughput> step_throughput(Database& db, int64_t run_id) {
  std::vector<StepThroughput> out;
  auto s = db.prepare(
      "SELECT s.step, s.target_id, s.store, s.write_req_per_s, s.read_req_per_s, t.ordinal, "
      "s.write_mib_per_s, s.read_mib_per_s FROM step_summary s JOIN targets t USING (target_id) "
      "WHERE s.run_id = ? AND s.step IS NOT NULL ORDER BY s.first_phase_id");
  s.bind(1, run_id);
  while (s.step()) {
    StepThroughput r;
    r.step = s.column_text(0);
    r.target_id = s.column_int(1);
    r.store = s.column_text(2);
    r.write_req_per_s = s.column_opt_double(3);
    r.read_req_per_s = s.column_opt_double(4);
    r.target_ordinal = static_cast<int>(s.column_int(5));
    r.write_mib_per_s = s.column_opt_double(6);
    r.read_mib_per_s = s.column_opt_double(7);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LatencyBucket> latency_buckets(Database& db, int64_t run_id) {
  std::vector<LatencyBucket> out;
  auto s = db.prepare(
      "SELECT t.uri, t.ordinal, b.op, COALESCE(p.step, ''), b.upper_us, SUM(b.count), "
      "MIN(p.phase_id) "
      "FROM latency_buckets b JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND b.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "GROUP BY t.target_id, b.op, p.step, b.upper_us ORDER BY t.ordinal, " +
      view::op_order("b.op") +
      ", "
      "MIN(p.phase_id)");
  s.bind(1, run_id);
  while (s.step())
    out.push_back({s.column_text(0), static_cast<int>(s.column_int(1)), s.column_text(2),
                   s.column_text(3), s.column_double(4), s.column_int(5)});
  return out;
}

std::vector<OverlaySecond> overlay_seconds(Database& db, int64_t run_id) {
  std::vector<OverlaySecond> out;
  auto d = db.prepare(
      "SELECT t.ordinal, t.uri, d.op, d.ts_us - r.started_ts_us, d.interval_us, "
      "COALESCE(d.ok, d.ops - d.errors - d.timeouts), "
      "d.lat_p50_us, d.lat_p99_us, "
      "(SELECT MAX(x.interval_us) FROM driver_seconds x WHERE x.phase_id = d.phase_id) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "JOIN runs r ON r.run_id = p.run_id WHERE p.run_id = ? ORDER BY t.ordinal, " +
      view::op_order("d.op") +
      ", "
      "d.ts_us");
  d.bind(1, run_id);
  while (d.step()) {
    OverlaySecond s;
    s.target_ordinal = static_cast<int>(d.column_int(0));
    s.uri = d.column_text(1);
    s.op = d.column_text(2);
    s.offset_us = d.column_int(3);
    s.interval_us = d.column_int(4);
    s.ok = d.column_int(5);
    s.p50_us = d.column_opt_double(6);
    s.p99_us = d.column_opt_double(7);
    s.phase_max_interval_us = d.column_int(8);
    out.push_back(std::move(s));
  }
  return out;
}

int64_t target_count(Database& db, int64_t run_id) {
  auto t = db.prepare("SELECT COUNT(*) FROM targets WHERE run_id = ?");
  t.bind(1, run_id);
  return t.step() ? t.column_int(0) : 0;
}

std::vector<SideBySideSecond> side_by_side_seconds(Database& db, int64_t run_id) {
  std::vector<SideBySideSecond> out;
  auto s = db.prepare(
      "SELECT p.name, t.uri, t.ordinal, d.op, (d.ts_us - p.started_ts_us) / 1e6, "
      "(d.ops - d.errors - d.timeouts) * 1e6 / d.interval_us, d.lat_p99_us / 1e3 "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND d.warmup = 0 AND d.interval_us >= 500000 "
      "ORDER BY MIN(p.ordinal) OVER (PARTITION BY p.name), t.ordinal, " +
      view::op_order("d.op") + ", d.ts_us");
  s.bind(1, run_id);
  while (s.step())
    out.push_back({s.column_text(0), s.column_text(1), static_cast<int>(s.column_int(2)),
                   s.column_text(3), s.column_double(4), s.column_double(5),
                   s.column_opt_double(6)});
  return out;
}

}  // namespace kv::drive
