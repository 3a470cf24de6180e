#include "report/group_latency.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "report/text_table.hpp"

namespace kv::drive {

std::vector<GroupPhaseLatency> group_latency(Database& db, const std::string& group,
                                             const PercentileList& list) {
  using Key = std::tuple<int64_t, int64_t, std::string>;  // target, phase ordinals, op
  struct Acc {
    GroupPhaseLatency row;
    std::map<double, int64_t> all;   // upper_us → count
    std::map<int64_t, Buckets> run;  // run_id → its rows
    LatencyBounds bounds{INFINITY, 0};
    std::map<int64_t, LatencyBounds> run_bounds;
  };
  std::map<Key, Acc> acc;
  std::map<int64_t, LatencyBoundsMap> bounds;  // run_id → its phases' bounds
  Statement q = db.prepare(
      "SELECT t.ordinal, p.ordinal, s.op, p.run_id, p.phase_id, p.name, t.uri, s.upper_us, "
      "       SUM(s.count) "
      "FROM second_latency_buckets s "
      "JOIN phases p ON p.phase_id = s.phase_id "
      "JOIN runs r ON r.run_id = p.run_id "
      "JOIN targets t ON t.target_id = p.target_id "
      "JOIN driver_seconds d ON d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op "
      "WHERE r.run_group = ?1 AND d.warmup = 0 AND s.count > 0 "
      "  AND s.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "GROUP BY t.ordinal, p.ordinal, s.op, p.run_id, s.upper_us "
      "ORDER BY t.ordinal, p.ordinal, s.op, p.run_id, s.upper_us");
  q.bind(1, group);
  while (q.step()) {
    const Key key{q.column_int(0), q.column_int(1), q.column_text(2)};
    Acc& a = acc[key];
    const int64_t run = q.column_int(3), phase_id = q.column_int(4);
    if (a.row.group.empty()) {
      a.row.group = group;
      a.row.target = std::get<0>(key);
      a.row.phase = std::get<1>(key);
      a.row.op = std::get<2>(key);
      a.row.phase_name = q.column_text(5);
      a.row.store = q.column_text(6);
    }
    if (!a.run_bounds.count(run)) {
      if (!bounds.count(run)) bounds[run] = phase_latency_bounds(db, run);
      const auto it = bounds[run].find({phase_id, a.row.op});
      const LatencyBounds b = it == bounds[run].end() ? LatencyBounds{} : it->second;
      a.run_bounds[run] = b;
      a.bounds.min_us = std::min(a.bounds.min_us, b.min_us);
      a.bounds.max_us = std::max(a.bounds.max_us, b.max_us);
    }
    const double upper = q.column_double(7);
    const int64_t n = q.column_int(8);
    a.all[upper] += n;
    a.run[run].emplace_back(upper, n);
  }
  std::vector<GroupPhaseLatency> rows;
  for (auto& [key, a] : acc) {
    Buckets all(a.all.begin(), a.all.end());
    GroupPhaseLatency& r = a.row;
    for (const auto& [upper, n] : all) r.requests += n;
    r.runs = static_cast<int64_t>(a.run.size());
    r.percentiles = from_buckets(all, list, a.bounds.min_us, a.bounds.max_us);
    r.max_us = from_buckets(all, PercentileList{{100}}, a.bounds.min_us, a.bounds.max_us)[0];
    double sum = 0;
    int64_t runs = 0;
    for (const auto& [run, rows_of_run] : a.run) {
      const LatencyBounds& b = a.run_bounds[run];
      if (auto p99 = from_buckets(rows_of_run, PercentileList{{99}}, b.min_us, b.max_us)[0]) {
        sum += *p99;
        ++runs;
      }
    }
    if (runs > 0) r.mean_of_runs_p99_us = sum / static_cast<double>(runs);
    rows.push_back(std::move(r));
  }
  return rows;
}

void print_group_latency(Database& db, const std::vector<std::string>& groups,
                         const PercentileList& list, std::ostream& out) {
  std::vector<std::string> header = {"group", "store", "phase", "op", "runs", "requests"};
  for (double p : list.values) header.push_back(percentile_label(p) + " us");
  header.emplace_back("max us");
  header.emplace_back("runs' mean p99 (not the group's)");
  TextTable table(header);
  auto cell = [](const std::optional<double>& v) { return v ? fmt_fixed(*v, 1) : "-"; };
  for (const auto& g : groups)
    for (const auto& r : group_latency(db, g, list)) {
      std::vector<std::string> row = {r.group,
                                      r.store,
                                      r.phase_name,
                                      r.op,
                                      fmt_int(static_cast<double>(r.runs)),
                                      fmt_int(static_cast<double>(r.requests))};
      for (const auto& p : r.percentiles) row.push_back(cell(p));
      row.push_back(cell(r.max_us));
      row.push_back(cell(r.mean_of_runs_p99_us));
      table.add_row(std::move(row));
    }
  if (table.empty()) return;
  out << "Group latency (every run's histograms added, then the percentiles):\n";
  table.print(out);
}

}  // namespace kv::drive
