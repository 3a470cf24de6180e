#include "view/group.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include "kvbench/units.hpp"

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

namespace {

std::string seconds_text(int64_t us) { return fmt_fixed(static_cast<double>(us) / 1e6, 1) + " s"; }

// The median of `v` (not empty).
int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<GroupMember> group_members(Database& db, const std::string& group) {
  std::vector<GroupMember> out;
  auto s = db.prepare(
      "SELECT r.run_id, r.client_host, COALESCE((SELECT m.value FROM run_metadata m WHERE "
      "m.run_id = r.run_id AND m.target_id IS NULL AND m.name = 'segment'), "
      "CASE WHEN r.process_index IS NOT NULL THEN (r.process_index + 1) || '/' || "
      "r.process_count END, ''), r.status, "
      "(SELECT MIN(p.started_ts_us) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT MAX(p.ended_ts_us) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT COALESCE(SUM(d.ops), 0) FROM driver_seconds d JOIN phases p USING (phase_id) "
      " WHERE p.run_id = r.run_id AND d.warmup = 0), "
      "(SELECT COALESCE(SUM(d.errors + d.timeouts), 0) FROM driver_seconds d JOIN phases p "
      " USING (phase_id) WHERE p.run_id = r.run_id AND d.warmup = 0), "
      "(SELECT MAX(p.threads) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT COUNT(*) FROM events e WHERE e.run_id = r.run_id AND e.kind = 'client_bound'), "
      "(SELECT MAX(pp.p99_us) FROM phase_percentiles pp JOIN phases p USING (phase_id) "
      " WHERE p.run_id = r.run_id AND pp.timing = CASE WHEN p.rate IS NULL THEN 'sent' "
      " ELSE 'intended' END) "
      "FROM runs r WHERE r.run_group = ? ORDER BY r.process_index, r.started_ts_us, r.run_id");
  s.bind(1, group);
  std::vector<std::optional<int64_t>> starts, ends;
  while (s.step()) {
    GroupMember m;
    m.run_id = s.column_int(0);
    m.host = s.column_text(1);
    m.segment = s.column_text(2);
    m.status = s.column_text(3);
    starts.push_back(s.column_opt_int(4));
    ends.push_back(s.column_opt_int(5));
    m.requests = s.column_int(6);
    m.failed = s.column_int(7);
    m.threads = s.column_opt_int(8).value_or(0);
    m.client_bound_seconds = s.column_int(9);
    if (!s.is_null(10)) m.p99_us = s.column_double(10);
    out.push_back(std::move(m));
  }
  int64_t total = 0, first_start = INT64_MAX, first_end = INT64_MAX;
  for (size_t i = 0; i < out.size(); ++i) {
    total += out[i].requests;
    if (starts[i]) first_start = std::min(first_start, *starts[i]);
    if (ends[i]) first_end = std::min(first_end, *ends[i]);
  }
  std::vector<int64_t> busy;
  for (size_t i = 0; i < out.size(); ++i) {
    GroupMember& m = out[i];
    m.share = total > 0 ? static_cast<double>(m.requests) / static_cast<double>(total) : 0;
    if (starts[i]) m.start_offset_us = *starts[i] - first_start;
    if (ends[i]) m.end_offset_us = *ends[i] - first_end;
    if (starts[i] && ends[i]) {
      m.busy_us = *ends[i] - *starts[i];
      busy.push_back(*m.busy_us);
    }
  }
  // The flags: a late start, a run that took longer than the others (beyond its late start),
  // a client that could not keep up.
  const int64_t typical = busy.empty() ? 0 : median(busy);
  for (GroupMember& m : out) {
    if (m.start_offset_us && *m.start_offset_us > kGroupLateUs)
      m.flags.push_back("started " + seconds_text(*m.start_offset_us) + " late");
    if (m.busy_us && out.size() > 1 &&
        *m.busy_us - typical > std::max<int64_t>(kGroupLateUs, typical / 10))
      m.flags.push_back("lagged: ran " + seconds_text(*m.busy_us) + ", the group's median " +
                        seconds_text(typical));
    if (m.client_bound_seconds > 0)
      m.flags.push_back("client-bound (" + std::to_string(m.client_bound_seconds) +
                        " client_bound events)");
    if (m.status != "completed") m.flags.push_back("run " + m.status);
  }
  return out;
}

}  // namespace kv::drive
