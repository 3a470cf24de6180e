#include "view/trace_curve.hpp"

namespace kv::drive {

std::vector<TraceCurveView> load_trace_curves(Database& db, int64_t run_id) {
  std::vector<TraceCurveView> out;
  if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'trace_curves'")
           .step())
    return out;
  auto c = db.prepare(
      "SELECT trace, fraction, objects, objects_miss_ratio, bytes, bytes_miss_ratio "
      "FROM trace_curves WHERE run_id = ? ORDER BY trace, fraction");
  c.bind(1, run_id);
  while (c.step()) {
    if (out.empty() || out.back().trace != c.column_text(0)) {
      out.emplace_back();
      out.back().trace = c.column_text(0);
    }
    out.back().points.push_back({c.column_double(1), c.column_int(2), c.column_int(4),
                                 c.column_double(3), c.column_double(5)});
  }
  if (out.empty()) return out;
  auto m = db.prepare(
      "SELECT t.uri, t.ordinal, SUM(d.misses) * 1.0 / SUM(d.hits + d.misses) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND p.kind = 'trace' AND d.op = 'get' AND d.warmup = 0 "
      "GROUP BY t.target_id HAVING SUM(d.hits + d.misses) > 0 ORDER BY t.ordinal");
  m.bind(1, run_id);
  std::vector<TraceCurveView::Measured> measured;
  while (m.step())
    measured.push_back({m.column_text(0), static_cast<int>(m.column_int(1)), m.column_double(2)});
  for (auto& v : out) v.measured = measured;  // a run replays one trace (every step the same)
  return out;
}

}  // namespace kv::drive
