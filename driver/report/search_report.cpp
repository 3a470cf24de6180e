#include "report/search_report.hpp"

#include "report/text_table.hpp"

namespace kv::drive {
namespace {

std::string cell_ms(Statement& q, int col) {
  return q.is_null(col) ? "n/a" : fmt_fixed(q.column_double(col) / 1e3, 3);
}
std::string cell_int(Statement& q, int col) {
  return q.is_null(col) ? "-" : fmt_int(q.column_double(col));
}

}  // namespace

void print_search_results(Database& db, int64_t run_id, std::ostream& out) {
  auto targets = db.prepare(
      "SELECT r.target_id, t.uri, r.summary FROM search_results r JOIN targets t USING "
      "(target_id) WHERE r.run_id = ? ORDER BY t.ordinal");
  targets.bind(1, run_id);
  while (targets.step()) {
    const int64_t target_id = targets.column_int(0);
    out << "\ncapacity search: " << targets.column_text(1) << "\n";
    TextTable table({"step", "offered req/s", "achieved req/s", "p50 ms", "p99 ms", "p99.9 ms",
                     "slip p99 ms", "client cpu %", "store cpu %", "verdict", "limit"});
    auto q = db.prepare(
        "SELECT ordinal, offered_rate, achieved_rate, lat_p50_us, lat_p99_us, lat_p999_us, "
        "slip_p99_us, busiest_thread_cpu_pct, store_cpu_pct, verdict, limit_reason, requests "
        "FROM search_steps WHERE run_id = ? AND target_id = ? ORDER BY ordinal");
    q.bind(1, run_id).bind(2, target_id);
    while (q.step()) {
      // A percentile of fewer requests than it needs (one beyond it) is noise: n/a.
      const double n = q.is_null(11) ? 0 : q.column_double(11);
      auto pct_cell = [&](int col, double tail) {
        return n * tail < 1 ? std::string("n/a") : cell_ms(q, col);
      };
      table.add_row({std::to_string(q.column_int(0) + 1), cell_int(q, 1), cell_int(q, 2),
                     pct_cell(3, 0.5), pct_cell(4, 0.01), pct_cell(5, 0.001), cell_ms(q, 6),
                     cell_int(q, 7), cell_int(q, 8), q.column_text(9),
                     q.is_null(10) ? "" : q.column_text(10)});
    }
    table.print(out);
    out << targets.column_text(2) << "\n";
  }
}

}  // namespace kv::drive
