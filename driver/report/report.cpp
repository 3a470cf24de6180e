// Text, CSV and JSON reports read back from a results file: see report.hpp.
#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvbench/clock.hpp"
#include "report/report_hints.hpp"
#include "report/report_tables.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

void print_run_header(Statement& r, std::ostream& out) {
  out << "run " << r.column_int(0);
  if (!r.is_null(1)) out << " \"" << r.column_text(1) << "\"";
  out << ": " << r.column_text(3) << ", started " << format_ts_us(r.column_int(2));
  if (!r.is_null(4))
    out << ", " << fmt_fixed(static_cast<double>(r.column_int(4) - r.column_int(2)) / 1e6, 1)
        << " s";
  out << " on " << r.column_text(5) << "\n";
  if (!r.is_null(6)) out << "  error: " << r.column_text(6) << "\n";
}

}  // namespace

void print_run_summary(Database& db, int64_t run_id, std::ostream& out) {
  auto tables = run_tables(db, run_id);
  if (tables.empty()) {
    out << "  (no measurements)\n";
    return;
  }
  // Scenario runs: the per-step pivot alone; otherwise per store, then per phase and op.
  bool steps = tables.front().name == "steps_pivot";
  bool first = true;
  for (const auto& t : tables) {
    bool wanted = t.name == "server" ||
                  (steps ? t.name == "steps_pivot" : (t.name == "stores" || t.name == "phases"));
    if (!wanted) continue;
    if (!first) out << "\n";
    first = false;
    if (t.name == "server") out << t.title << ":\n";
    print_table_text(t, out);
  }
  // What the data shows (swap onset with throughput before and after, cliffs, failures ...).
  auto hints = compute_hints(db, run_id);
  if (!hints.empty()) out << "\n";
  for (const auto& h : hints) out << "hint: " << h.message << "\n";
}

void print_group_summary(Database& db, const std::string& group, std::ostream& out) {
  TextTable t({"store", "phase", "op", "processes", "requests", "wall s", "req/s", "failed"});
  auto s = db.prepare(
      "SELECT store, kind, op, processes, ops, wall_seconds, req_per_s, failed FROM group_summary "
      "WHERE run_group = ? ORDER BY store, kind = 'load' DESC, op DESC");
  s.bind(1, group);
  while (s.step()) {
    t.add_row({s.column_text(0), s.column_text(1), s.column_text(2), fmt_int(s.column_double(3)),
               fmt_int(s.column_double(4)), fmt_fixed(s.column_double(5), 2),
               fmt_int(s.column_double(6)), fmt_int(s.column_double(7))});
  }
  t.print(out);
}

namespace {

// A summary figure: null when unknown, a whole number as an integer (counts), else a double.
nlohmann::ordered_json json_figure(const Statement& s, int col) {
  if (s.is_null(col)) return nullptr;
  const double v = s.column_double(col);
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
  return v;
}

}  // namespace

void print_group_json(Database& db, const std::string& group, int processes,
                      const std::vector<std::string>& problems, std::ostream& out) {
  nlohmann::ordered_json j;
  j["run_group"] = group;
  j["processes"] = processes;
  j["problems"] = problems;
  auto& runs = j["runs"] = nlohmann::ordered_json::array();
  auto r = db.prepare("SELECT run_id FROM runs WHERE run_group = ? ORDER BY process_index, run_id");
  r.bind(1, group);
  while (r.step()) runs.push_back(r.column_int(0));
  auto& phases = j["phases"] = nlohmann::ordered_json::array();
  auto s = db.prepare(
      "SELECT store, kind, op, processes, ops, wall_seconds, req_per_s, failed FROM group_summary "
      "WHERE run_group = ? ORDER BY store, kind = 'load' DESC, op DESC");
  s.bind(1, group);
  const char* names[] = {"store", "phase",        "op",        "processes",
                         "ops",   "wall_seconds", "req_per_s", "failed"};
  while (s.step()) {
    nlohmann::ordered_json row;
    for (int c = 0; c < 8; ++c)
      row[names[c]] = c < 3 ? nlohmann::ordered_json(s.column_text(c)) : json_figure(s, c);
    phases.push_back(std::move(row));
  }
  out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

void print_run_json(Database& db, int64_t run_id, std::ostream& out) {
  auto r = db.prepare("SELECT status, started_ts_us, ended_ts_us, name FROM runs WHERE run_id = ?");
  r.bind(1, run_id);
  if (!r.step())
    throw std::invalid_argument("no run " + std::to_string(run_id) + " in " + db.path());
  nlohmann::ordered_json run;
  run["run_id"] = run_id;
  run["status"] = r.column_text(0);
  run["name"] =
      r.is_null(3) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.column_text(3));
  run["started_ts_us"] = r.column_int(1);
  run["ended_ts_us"] =
      r.is_null(2) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.column_int(2));
  auto& phases = run["phases"] = nlohmann::ordered_json::array();
  auto p = db.prepare(
      "SELECT store, protocol, phase, op, ops, seconds, req_per_s, mib_per_s, lat_mean_us, "
      "lat_p50_us, lat_p99_us, lat_max_us, hits, misses, errors, timeouts, wrong, late, status "
      "FROM phase_summary WHERE run_id = ? ORDER BY phase_id, op DESC");
  p.bind(1, run_id);
  const char* names[] = {"store",    "protocol",  "phase",     "op",      "ops",
                         "seconds",  "req_per_s", "mib_per_s", "mean_us", "p50_us",
                         "p99_us",   "max_us",    "hits",      "misses",  "errors",
                         "timeouts", "wrong",     "late",      "status"};
  while (p.step()) {
    nlohmann::ordered_json phase;
    for (int c = 0; c < 19; ++c) {
      const bool text = c < 4 || c == 18;
      phase[names[c]] = text ? nlohmann::ordered_json(p.column_text(c)) : json_figure(p, c);
    }
    phases.push_back(std::move(phase));
  }
  // Text from a store or an older file may hold bytes that are not UTF-8: replaced (U+FFFD) so
  // the output stays JSON.
  out << run.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

std::vector<int64_t> report_runs(Database& db, const std::vector<int64_t>& run_ids) {
  std::vector<int64_t> out;
  auto r = db.prepare("SELECT run_id FROM runs ORDER BY run_id");
  while (r.step()) out.push_back(r.column_int(0));
  if (run_ids.empty()) return out;
  for (int64_t id : run_ids)
    if (std::find(out.begin(), out.end(), id) == out.end())
      throw std::invalid_argument("no run " + std::to_string(id) + " in " + db.path());
  return run_ids;
}

ReportFormat parse_report_format(const std::string& s) {
  if (s == "text") return ReportFormat::text;
  if (s == "csv") return ReportFormat::csv;
  if (s == "json") return ReportFormat::json;
  throw std::invalid_argument("--format: expected text, csv or json, not '" + s + "'");
}

void print_report(Database& db, const std::vector<int64_t>& run_ids, ReportFormat format,
                  std::ostream& out) {
  auto runs = report_runs(db, run_ids);
  if (runs.empty() && format == ReportFormat::text) out << db.path() << " holds no runs yet\n";
  auto compared = run_ids.size() >= 2 ? comparison_tables(db, run_ids) : std::vector<ReportTable>{};
  if (format == ReportFormat::json) {
    for (int64_t id : runs) print_run_json(db, id, out);
    return;
  }
  if (format == ReportFormat::csv) {
    // Machine form: the long per-step table instead of the pivot; one table after another.
    bool first = true;
    for (int64_t id : runs) {
      for (const auto& t : run_tables(db, id)) {
        if (t.name == "steps_pivot") continue;
        if (!first) out << "\n";
        first = false;
        print_table_csv(t, out, "run_id", std::to_string(id));
      }
    }
    for (const auto& t : compared) {
      if (!first) out << "\n";
      first = false;
      print_table_csv(t, out);
    }
    return;
  }
  auto r = db.prepare(
      "SELECT run_id, name, started_ts_us, status, ended_ts_us, client_host, error "
      "FROM runs WHERE run_id = ?");
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i) out << "\n";
    r.bind(1, runs[i]);
    r.step();
    print_run_header(r, out);
    print_run_summary(db, runs[i], out);
    r.reset();
  }
  for (const auto& t : compared) {
    out << "\n";
    print_table_text(t, out);
  }
}

void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out) {
  print_report(db, run_id ? std::vector<int64_t>{*run_id} : std::vector<int64_t>{},
               ReportFormat::text, out);
}

}  // namespace kv::drive
