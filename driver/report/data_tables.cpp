// A run's raw series as report tables: see data_tables.hpp.
#include "report/data_tables.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "view/series.hpp"

namespace kv::drive {
namespace {

// A table of loaded rows: a column's key is its name; the `texts` columns are text, the rest
// numbers (NULL stays empty).
ReportTable rows_table(std::string name, std::string title, const Rows& rows,
                       const std::set<std::string>& texts) {
  ReportTable t{std::move(name), std::move(title), rows.columns, rows.columns, {}, {}, {}};
  std::vector<bool> is_text;
  for (const auto& k : t.keys) is_text.push_back(texts.count(k) > 0);
  for (const Row& r : rows.rows) {
    std::vector<ReportCell> row;
    for (int c = 0; c < r.column_count(); ++c) {
      if (r.is_null(c))
        row.push_back({"-", std::nullopt});
      else if (is_text[static_cast<size_t>(c)])
        row.push_back({r.column_text(c), std::nullopt});
      else
        row.push_back({r.column_text(c), r.column_double(c)});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
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
  out.push_back(rows_table("timeline", "per second and op", load_timeline(db, run_id),
                           {"store", "phase", "op"}));
  add_second_percentiles(db, run_id, percentiles, out.back());

  // kvmon's samples of each target's store process during the run.
  ReportTable proc;
  bool first = true;
  auto instances = load_store_instances(db, run_id);
  if (instances.empty()) instances.emplace_back(-1, -1);  // the header alone
  for (const auto& [target, instance] : instances) {
    auto t = rows_table("process_samples", "kvmon samples of the stores",
                        load_process_samples(db, target, instance), {"store", "host", "process"});
    if (first) {
      proc = std::move(t);
      first = false;
    } else {
      for (auto& row : t.rows) proc.rows.push_back(std::move(row));
    }
  }
  out.push_back(std::move(proc));
  out.push_back(rows_table("host_samples", "kvmon samples of the hosts",
                           load_host_samples(db, run_id), {"host"}));
  out.push_back(rows_table("events", "events of the run", load_events(db, run_id),
                           {"source", "kind", "message"}));
  return out;
}

ReportTable metadata_table(const Rows& metadata) {
  return rows_table("metadata", "what the run ran on", metadata, {"store", "name", "value"});
}

ReportTable run_row_table(const Rows& run) {
  return rows_table("runs", "the run", run,
                    {"name", "status", "error", "command_line", "kvdrive_version", "client_host",
                     "scenario", "run_group", "repeat_group"});
}

}  // namespace kv::drive
