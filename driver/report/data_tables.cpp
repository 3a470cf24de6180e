// A run's raw series as report tables: see data_tables.hpp.
#include "report/data_tables.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "kvbench/samples.hpp"
#include "view/hints.hpp"

namespace kv::drive {
namespace {

// A table from one query: a column's key is its name; the `texts` columns are text, the rest
// numbers (NULL stays empty). `bind` binds the query's parameters.
template <typename Bind>
ReportTable query_table(Database& db, std::string name, std::string title, const char* sql,
                        const std::set<std::string>& texts, Bind bind) {
  ReportTable t{std::move(name), std::move(title), {}, {}, {}, {}, {}};
  auto s = db.prepare(sql);
  bind(s);
  for (int c = 0; c < s.column_count(); ++c) t.keys.push_back(s.column_name(c));
  t.header = t.keys;
  std::vector<bool> is_text;
  for (const auto& k : t.keys) is_text.push_back(texts.count(k) > 0);
  while (s.step()) {
    std::vector<ReportCell> row;
    for (int c = 0; c < s.column_count(); ++c) {
      if (s.is_null(c))
        row.push_back({"-", std::nullopt});
      else if (is_text[static_cast<size_t>(c)])
        row.push_back({s.column_text(c), std::nullopt});
      else
        row.push_back({s.column_text(c), s.column_double(c)});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

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

// The kvmon instance chosen as each of the run's targets' store (store_instance).
std::vector<std::pair<int64_t, int64_t>> store_instances(Database& db, int64_t run_id) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto s = db.prepare("SELECT target_id FROM targets WHERE run_id = ? ORDER BY ordinal");
  s.bind(1, run_id);
  std::vector<int64_t> targets;
  while (s.step()) targets.push_back(s.column_int(0));
  for (int64_t t : targets)
    if (auto i = store_instance(db, t)) out.emplace_back(t, *i);
  return out;
}

// The timeline's lat_<p>_us columns for `percentiles`, before lat_max_us, and
// lat_percentiles_from after it, from the hidden first column phase_id (removed).
void add_second_percentiles(Database& db, int64_t run_id, const PercentileList& percentiles,
                            ReportTable& t) {
  const auto pct = second_percentiles(db, run_id, percentiles);
  const auto col = [&](const char* key) {
    return static_cast<size_t>(std::find(t.keys.begin(), t.keys.end(), key) - t.keys.begin());
  };
  const size_t ts = col("ts_us"), op = col("op"), max = col("lat_max_us");
  std::vector<std::string> keys;
  for (double q : percentiles.values) keys.push_back("lat_" + percentile_name(q) + "_us");
  keys.emplace_back("lat_max_us");
  keys.emplace_back("lat_percentiles_from");
  for (auto& row : t.rows) {
    const auto it = pct.find(
        {static_cast<int64_t>(*row[0].value), static_cast<int64_t>(*row[ts].value), row[op].text});
    std::vector<ReportCell> cells;
    for (size_t i = 0; i < percentiles.values.size(); ++i) {
      const std::optional<double> v = it == pct.end() ? std::nullopt : it->second.values[i];
      cells.push_back(v ? ReportCell{csv_number(*v), v} : ReportCell{"-", std::nullopt});
    }
    cells.push_back(row[max]);
    cells.push_back(
        it == pct.end()
            ? ReportCell{"-", std::nullopt}
            : ReportCell{it->second.from_histogram ? "second_latency_buckets" : "driver_seconds",
                         std::nullopt});
    row.erase(row.begin() + static_cast<std::ptrdiff_t>(max));
    row.insert(row.begin() + static_cast<std::ptrdiff_t>(max), cells.begin(), cells.end());
    row.erase(row.begin());
  }
  t.keys.erase(t.keys.begin() + static_cast<std::ptrdiff_t>(max));
  t.keys.insert(t.keys.begin() + static_cast<std::ptrdiff_t>(max), keys.begin(), keys.end());
  t.keys.erase(t.keys.begin());
  t.header = t.keys;
}

}  // namespace

std::vector<ReportTable> series_tables(Database& db, int64_t run_id,
                                       const PercentileList& percentiles) {
  std::vector<ReportTable> out;
  auto by_run = [run_id](Statement& s) { s.bind(1, run_id); };
  // Every second and op; the kvmon columns are the timeline view's (the store process's sample
  // whose tick fell in the second, the host's likewise, the store's latest used_memory).
  out.push_back(query_table(
      db, "timeline", "per second and op",
      "SELECT d.phase_id, t.uri AS store, p.name AS phase, d.op, d.ts_us, d.interval_us, d.warmup, "
      "d.ops, "
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
      "WHERE p.run_id = ? ORDER BY t.ordinal, p.ordinal, d.ts_us, d.op DESC",
      {"store", "phase", "op"}, by_run));
  add_second_percentiles(db, run_id, percentiles, out.back());

  // kvmon's samples of each target's store process during the run.
  ReportTable proc;
  bool first = true;
  auto instances = store_instances(db, run_id);
  if (instances.empty()) instances.emplace_back(-1, -1);  // the header alone
  const std::string proc_sql =
      "SELECT t.uri AS store, i.host, i.pid, i.name AS process, s.ts_us, s.scheduled_ts_us" +
      sample_columns(kProcessTable, "s") +
      " FROM process_samples s JOIN process_instances i ON i.instance_id = s.instance_id "
      "JOIN targets t ON t.target_id = ?1 JOIN runs r ON r.run_id = t.run_id "
      "WHERE s.instance_id = ?2 AND s.ts_us BETWEEN r.started_ts_us "
      " AND COALESCE(r.ended_ts_us, s.ts_us) ORDER BY s.ts_us";
  for (const auto& [target, instance] : instances) {
    auto t = query_table(db, "process_samples", "kvmon samples of the stores", proc_sql.c_str(),
                         {"store", "host", "process"},
                         [&, target_id = target, instance_id = instance](Statement& s) {
                           // Captured by copy: clang 14 (clang-tidy) cannot capture a structured
                           // binding.
                           s.bind(1, target_id);
                           s.bind(2, instance_id);
                         });
    if (first) {
      proc = std::move(t);
      first = false;
    } else {
      for (auto& row : t.rows) proc.rows.push_back(std::move(row));
    }
  }
  out.push_back(std::move(proc));

  const std::string host_sql =
      "SELECT m.host, h.ts_us, h.scheduled_ts_us" + sample_columns(kHostTable, "h") +
      " FROM host_samples h JOIN monitor_sessions m ON m.session_id = h.session_id "
      "JOIN runs r ON r.run_id = ?1 "
      "WHERE h.ts_us BETWEEN r.started_ts_us AND COALESCE(r.ended_ts_us, h.ts_us) "
      "ORDER BY m.host, h.ts_us";
  out.push_back(query_table(db, "host_samples", "kvmon samples of the hosts", host_sql.c_str(),
                            {"host"}, by_run));

  out.push_back(query_table(db, "events", "events of the run",
                            "SELECT e.ts_us, e.source, e.kind, e.message FROM events e "
                            "WHERE e.run_id = ? ORDER BY e.ts_us, e.event_id",
                            {"source", "kind", "message"}, by_run));
  return out;
}

ReportTable metadata_table(Database& db, int64_t run_id) {
  return query_table(db, "metadata", "what the run ran on",
                     "SELECT t.uri AS store, m.name, m.value FROM run_metadata m "
                     "LEFT JOIN targets t ON t.target_id = m.target_id WHERE m.run_id = ? "
                     "ORDER BY m.target_id IS NOT NULL, t.ordinal, m.rowid",
                     {"store", "name", "value"}, [run_id](Statement& s) { s.bind(1, run_id); });
}

ReportTable run_row_table(Database& db, int64_t run_id) {
  return query_table(
      db, "runs", "the run",
      "SELECT run_id, name, status, error, started_ts_us, ended_ts_us, "
      "(ended_ts_us - started_ts_us) / 1e6 AS seconds, command_line, kvdrive_version, "
      "client_host, client_pid, scenario, scale, run_group, process_index, process_count "
      "FROM runs WHERE run_id = ?",
      {"name", "status", "error", "command_line", "kvdrive_version", "client_host", "scenario",
       "run_group"},
      [run_id](Statement& s) { s.bind(1, run_id); });
}

}  // namespace kv::drive
