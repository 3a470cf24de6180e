#include "report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>
#include <stdexcept>
#include <string>

#include "kvbench/clock.hpp"
#include "json.hpp"
#include "text_table.hpp"

namespace kv::drive {
namespace {

double opt(const Statement& s, int col) {
  return s.is_null(col) ? std::nan("") : s.column_double(col);
}

void print_run_header(Statement& r, std::ostream& out) {
  out << "run " << r.column_int(0);
  if (!r.is_null(1)) out << " \"" << r.column_text(1) << "\"";
  out << ": " << r.column_text(3) << ", started " << format_ts_us(r.column_int(2));
  if (!r.is_null(4)) out << ", " << fmt_fixed(static_cast<double>(r.column_int(4) - r.column_int(2)) / 1e6, 1) << " s";
  out << " on " << r.column_text(5) << "\n";
  if (!r.is_null(6)) out << "  error: " << r.column_text(6) << "\n";
}

// Scenario runs: one row per step, and per store its write and read rates side by side, the
// shape of the published sweeps. Returns false if the run has no steps.
bool print_step_pivot(Database& db, int64_t run_id, std::ostream& out) {
  std::vector<std::string> stores, steps;
  std::map<std::pair<std::string, std::string>, std::array<double, 5>> cells;
  auto s = db.prepare(
      "SELECT step, store, write_req_per_s, read_req_per_s, write_p99_us, read_p99_us, errors "
      "FROM step_summary WHERE run_id = ? AND step IS NOT NULL ORDER BY first_phase_id");
  s.bind(1, run_id);
  while (s.step()) {
    std::string step = s.column_text(0), store = s.column_text(1);
    if (std::find(steps.begin(), steps.end(), step) == steps.end()) steps.push_back(step);
    if (std::find(stores.begin(), stores.end(), store) == stores.end()) stores.push_back(store);
    cells[{step, store}] = {opt(s, 2), opt(s, 3), opt(s, 4), opt(s, 5), opt(s, 6)};
  }
  if (steps.empty()) return false;
  for (size_t i = 0; i < stores.size(); ++i) out << "[" << i + 1 << "] " << stores[i] << "\n";
  std::vector<std::string> header{"step"};
  for (size_t i = 0; i < stores.size(); ++i) {
    std::string n = "[" + std::to_string(i + 1) + "] ";
    header.insert(header.end(),
                  {n + "write/s", n + "read/s", n + "w p99 ms", n + "r p99 ms", n + "errors"});
  }
  TextTable t(header);
  for (const auto& step : steps) {
    std::vector<std::string> row{step};
    for (const auto& store : stores) {
      auto it = cells.find({step, store});
      std::array<double, 5> c;
      c.fill(std::nan(""));
      if (it != cells.end()) c = it->second;
      row.insert(row.end(), {fmt_int(c[0]), fmt_int(c[1]), fmt_fixed(c[2] / 1000, 3),
                             fmt_fixed(c[3] / 1000, 3), fmt_int(c[4])});
    }
    t.add_row(row);
  }
  t.print(out);
  out << "(req/s count every request, failed ones too: see errors)\n";
  return true;
}

}  // namespace

void print_run_summary(Database& db, int64_t run_id, std::ostream& out) {
  if (print_step_pivot(db, run_id, out)) return;
  TextTable stores({"store", "write req/s", "read req/s", "write p99 ms", "read p99 ms", "errors"});
  auto s = db.prepare(
      "SELECT store, write_req_per_s, read_req_per_s, write_p99_us, read_p99_us, errors "
      "FROM store_summary WHERE run_id = ? ORDER BY target_id");
  s.bind(1, run_id);
  while (s.step()) {
    stores.add_row({s.column_text(0), fmt_int(opt(s, 1)), fmt_int(opt(s, 2)),
                    fmt_fixed(opt(s, 3) / 1000, 3), fmt_fixed(opt(s, 4) / 1000, 3),
                    fmt_int(opt(s, 5))});
  }
  if (stores.empty()) {
    out << "  (no measurements)\n";
    return;
  }
  stores.print(out);
  out << "\n";
  TextTable phases({"store", "phase", "op", "requests", "seconds", "req/s", "MiB/s", "mean ms",
                    "p50 ms", "p99 ms", "max ms", "hits", "misses", "errors", "timeouts",
                    "wrong", "status"});
  auto p = db.prepare(
      "SELECT store, phase, op, ops, seconds, req_per_s, mib_per_s, lat_mean_us, lat_p50_us, "
      "lat_p99_us, lat_max_us, hits, misses, errors, timeouts, wrong, status FROM phase_summary "
      "WHERE run_id = ? ORDER BY phase_id, op DESC");
  p.bind(1, run_id);
  while (p.step()) {
    bool get = p.column_text(2) == "get";
    phases.add_row({p.column_text(0), p.column_text(1), p.column_text(2), fmt_int(opt(p, 3)),
                    fmt_fixed(opt(p, 4), 1), fmt_int(opt(p, 5)), fmt_fixed(opt(p, 6), 2),
                    fmt_fixed(opt(p, 7) / 1000, 3), fmt_fixed(opt(p, 8) / 1000, 3),
                    fmt_fixed(opt(p, 9) / 1000, 3), fmt_fixed(opt(p, 10) / 1000, 3),
                    get ? fmt_int(opt(p, 11)) : "-", get ? fmt_int(opt(p, 12)) : "-",
                    fmt_int(opt(p, 13)), fmt_int(opt(p, 14)), get ? fmt_int(opt(p, 15)) : "-",
                    p.column_text(16)});
  }
  phases.print(out);
}

void print_run_json(Database& db, int64_t run_id, std::ostream& out) {
  auto r = db.prepare("SELECT status, started_ts_us, ended_ts_us, name FROM runs WHERE run_id = ?");
  r.bind(1, run_id);
  if (!r.step()) throw std::invalid_argument("no run " + std::to_string(run_id) + " in " + db.path());
  out << "{\"run_id\":" << run_id << ",\"status\":" << json_string(r.column_text(0))
      << ",\"name\":" << (r.is_null(3) ? "null" : json_string(r.column_text(3)))
      << ",\"started_ts_us\":" << r.column_int(1)
      << ",\"ended_ts_us\":" << (r.is_null(2) ? "null" : std::to_string(r.column_int(2)))
      << ",\"phases\":[";
  auto p = db.prepare(
      "SELECT store, protocol, phase, op, ops, seconds, req_per_s, mib_per_s, lat_mean_us, "
      "lat_p50_us, lat_p99_us, lat_max_us, hits, misses, errors, timeouts, wrong, late, status "
      "FROM phase_summary WHERE run_id = ? ORDER BY phase_id, op DESC");
  p.bind(1, run_id);
  const char* names[] = {"store", "protocol", "phase", "op", "ops", "seconds", "req_per_s",
                         "mib_per_s", "mean_us", "p50_us", "p99_us", "max_us", "hits", "misses",
                         "errors", "timeouts", "wrong", "late", "status"};
  bool first = true;
  while (p.step()) {
    out << (first ? "{" : ",{");
    first = false;
    for (int c = 0; c < 19; ++c) {
      out << (c ? "," : "") << json_string(names[c]) << ":";
      bool text = c < 4 || c == 18;
      out << (text ? json_string(p.column_text(c)) : json_number(p.column_opt_double(c)));
    }
    out << "}";
  }
  out << "]}\n";
}

void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out) {
  auto r = db.prepare(
      "SELECT run_id, name, started_ts_us, status, ended_ts_us, client_host, error "
      "FROM runs WHERE ?1 IS NULL OR run_id = ?1 ORDER BY run_id");
  r.bind(1, run_id);
  bool any = false;
  while (r.step()) {
    if (any) out << "\n";
    any = true;
    print_run_header(r, out);
    print_run_summary(db, r.column_int(0), out);
  }
  if (!any && run_id) throw std::invalid_argument("no run " + std::to_string(*run_id) + " in " + db.path());
  if (!any) out << db.path() << " holds no runs yet\n";
}

}  // namespace kv::drive
