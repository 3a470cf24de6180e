// The report's tables from the summary views: see report_tables.hpp.
#include "report/report_tables.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "kvbench/client_stall.hpp"
#include "report/text_table.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {
namespace cells {

double opt(const Row& s, int col) { return s.is_null(col) ? std::nan("") : s.column_double(col); }

std::optional<double> raw(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}
ReportCell text(std::string s) { return {std::move(s), std::nullopt}; }
ReportCell count(double v) { return {fmt_int(v), raw(v)}; }
ReportCell ms(double us) { return {fmt_fixed(us / 1000, 3), raw(us)}; }
ReportCell fixed(double v, int decimals) { return {fmt_fixed(v, decimals), raw(v)}; }

}  // namespace cells

using namespace cells;

namespace {

void add_steps(const RunView& v, std::vector<ReportTable>& out, bool keep_empty) {
  ReportTable machine{
      "steps",
      "per step and store",
      {},
      {"step", "store", "protocol", "write_req_per_s", "read_req_per_s", "write_mib_per_s",
       "read_mib_per_s", "write_p99_us", "read_p99_us", "errors"},
      {},
      {},
      {}};
  machine.header = machine.keys;
  std::vector<std::string> stores, steps;
  std::map<std::pair<std::string, std::string>, std::array<double, 5>> cells;
  for (const Row& s : v.steps.rows) {
    std::string step = s.column_text(0), store = s.column_text(1);
    if (std::find(steps.begin(), steps.end(), step) == steps.end()) steps.push_back(step);
    if (std::find(stores.begin(), stores.end(), store) == stores.end()) stores.push_back(store);
    cells[{step, store}] = {opt(s, 3), opt(s, 4), opt(s, 7), opt(s, 8), opt(s, 9)};
    machine.rows.push_back({text(step), text(store), text(s.column_text(2)), count(opt(s, 3)),
                            count(opt(s, 4)), fixed(opt(s, 5), 3), fixed(opt(s, 6), 3),
                            count(opt(s, 7)), count(opt(s, 8)), count(opt(s, 9))});
  }
  if (steps.empty()) {
    if (keep_empty) out.push_back(std::move(machine));
    return;
  }
  // The published sweeps' shape: one row per step, per store its rates side by side.
  ReportTable pivot{"steps_pivot", "per step", {"step"}, {"step"}, {}, {}, {}};
  for (size_t i = 0; i < stores.size(); ++i) {
    // Appended, not "[" + std::string: GCC 12 -O3 warned -Wrestrict (false positive).
    const std::string num = std::to_string(i + 1);
    std::string n = "[", k = "s";
    n.append(num).append("] ");
    k.append(num).append("_");
    pivot.notes_before.push_back(n + stores[i]);
    pivot.header.insert(pivot.header.end(), {n + "write/s", n + "read/s", n + "w p99 ms",
                                             n + "r p99 ms", n + "errors"});
    pivot.keys.insert(pivot.keys.end(), {k + "write_req_per_s", k + "read_req_per_s",
                                         k + "write_p99_us", k + "read_p99_us", k + "errors"});
  }
  for (const auto& step : steps) {
    std::vector<ReportCell> row{text(step)};
    for (const auto& store : stores) {
      auto it = cells.find({step, store});
      std::array<double, 5> c;
      c.fill(std::nan(""));
      if (it != cells.end()) c = it->second;
      row.insert(row.end(), {count(c[0]), count(c[1]), ms(c[2]), ms(c[3]), count(c[4])});
    }
    pivot.rows.push_back(std::move(row));
  }
  pivot.notes_after.emplace_back("(req/s count every request, failed ones too: see errors)");
  out.push_back(std::move(pivot));
  out.push_back(std::move(machine));
}

struct StoreRow {
  std::string store, protocol;
  double v[4];  // write req/s, read req/s, write p99 us, read p99 us
};

std::vector<StoreRow> store_rows(Database& db, int64_t run_id) {
  std::vector<StoreRow> out;
  for (const Row& s : load_store_summary(db, run_id).rows)
    out.push_back(
        {s.column_text(0), s.column_text(8), {opt(s, 1), opt(s, 2), opt(s, 3), opt(s, 4)}});
  return out;
}

// "Where the time went": per phase and op, at each percentile (then the max and the mean), the
// mean latency of the requests there and its parts, which add up to it.
ReportTable parts_table_for() {
  ReportTable t{"parts",
                "where the time went: at each percentile, the mean latency of its requests and "
                "its parts",
                {"store", "phase", "op", "at", "requests", "latency ms", "queue ms",
                 "client send ms", "wire ms", "client recv ms", "kvdrive %", "store's own ms"},
                {"store", "phase", "op", "at", "count", "latency_us", "queue_us", "client_send_us",
                 "wire_us", "client_recv_us", "client_pct", "store_own_us"},
                {},
                {},
                {}};
  t.notes_after.emplace_back(
      "client send / client recv: kvdrive's own time before the request left and after its "
      "reply arrived (the kernel's receive stamp); wire: the network and the store; queue: "
      "waiting for a --pipeline slot (rate mode: the store's). kvdrive %: client send + recv. "
      "store's own: Redis's LATENCY HISTOGRAM of the command at that percentile over the phase "
      "(a power-of-two bucket's upper bound, part of wire, not added; '-' where the store does "
      "not tell).");
  t.narrow_first = {"count", "queue_us", "store_own_us", "client_pct"};
  return t;
}

std::string at_label(const std::string& at) {
  if (at.size() <= 3 || at[0] != 'p') return at;  // "p50", "max", "mean"
  // "p999" -> "p99.9" (appended, not concatenated: GCC 12 at -O3 warns falsely on the latter)
  std::string label = at.substr(0, 3);
  label.append(".").append(at, 3);
  return label;
}

// The rows of one phase and op; a note when its p99 was kvdrive's own time (is_client_stall).
// `step`: the row's search step column (a search run's tables have one after op), or none.
void add_time_went(const RunTimeWent& went, int64_t phase_id, const std::string& op,
                   const std::vector<ReportCell>& phase_row, const std::optional<ReportCell>& step,
                   ReportTable& t) {
  const auto it = went.find({phase_id, op});
  if (it == went.end()) return;
  for (const TimeWent& w : it->second) {
    t.rows.push_back({phase_row[0], phase_row[1], phase_row[2], text(at_label(w.at)),
                      count(static_cast<double>(w.count)), ms(w.latency_us), ms(w.queue_us),
                      ms(w.client_send_us), ms(w.wire_us), ms(w.client_recv_us),
                      fixed(w.latency_us > 0 ? 100 * w.client_us() / w.latency_us : 0, 0),
                      w.store_us ? ms(*w.store_us) : fixed(std::nan(""), 3)});
    if (step) t.rows.back().insert(t.rows.back().begin() + 3, *step);
    if (w.at == "p99" && is_client_stall(w.client_us(), w.latency_us))
      t.notes_after.push_back(phase_row[0].text + " " + phase_row[1].text + " " + op +
                              ": the p99 (" + fmt_fixed(w.latency_us / 1e3, 3) +
                              " ms) is kvdrive's own time (" + fmt_fixed(w.client_us() / 1e3, 3) +
                              " ms of it): the client, not the store");
  }
}

}  // namespace

// What kvmon saw of each phase (phase_report): load average at its end, the store process's
// peak RSS, swap and CPU seconds, beside kvdrive's own CPU (the parallel-writers study's
// client-vs-server CPU). Left out when kvmon did not watch the run.
void add_server_side(const RunView& v, std::vector<ReportTable>& out, bool keep_empty) {
  ReportTable t{"server",
                "server side, per phase (kvmon)",
                {"store", "phase", "load1", "load5", "load15", "peak RSS MiB", "peak swap MiB",
                 "store CPU s", "client user s", "client sys s"},
                {"store", "phase", "load1", "load5", "load15", "peak_rss_kib", "peak_swap_kib",
                 "store_cpu_s", "client_cpu_user_s", "client_cpu_system_s"},
                {},
                {},
                {}};
  bool any = false;
  for (const Row& s : v.server.rows) {
    for (int c = 2; c <= 6; ++c) any = any || !s.is_null(c);
    auto mib = [&](int col) {
      const double kib = opt(s, col);
      return ReportCell{std::isnan(kib) ? "-" : fmt_fixed(kib / 1024, 1),
                        std::isnan(kib) ? std::nullopt : std::optional<double>(kib)};
    };
    t.rows.push_back({text(s.column_text(0)), text(s.column_text(1)), fixed(opt(s, 2), 2),
                      fixed(opt(s, 3), 2), fixed(opt(s, 4), 2), mib(5), mib(6), fixed(opt(s, 7), 2),
                      fixed(opt(s, 8), 2), fixed(opt(s, 9), 2)});
  }
  if (any || keep_empty) out.push_back(std::move(t));
}

std::vector<ReportTable> run_tables(Database& db, int64_t run_id, const PercentileList& percentiles,
                                    bool keep_empty) {
  return run_tables(load_run_view(db, run_id, percentiles, false), percentiles, keep_empty);
}

namespace {

// write: the sets of load phases, read: the gets of read phases, mixed: every answered request
// of mixed phases; each per wall second of those phases (the mixed column only when the run had
// a mixed phase).
ReportTable stores_table(const RunView& v) {
  ReportTable stores{
      "stores",
      "per store",
      {"store", "write req/s", "read req/s", "write p99 ms", "read p99 ms", "errors"},
      {"store", "write_req_per_s", "read_req_per_s", "write_p99_us", "read_p99_us", "errors"},
      {},
      {},
      {}};
  if (v.any_mixed) {
    stores.header.insert(stores.header.begin() + 3, "mixed req/s");
    stores.keys.insert(stores.keys.begin() + 3, "mixed_req_per_s");
    stores.header.insert(stores.header.begin() + 6, "mixed p99 ms");
    stores.keys.insert(stores.keys.begin() + 6, "mixed_p99_us");
  }
  for (const Row& s : v.stores.rows) {
    std::vector<ReportCell> row{text(s.column_text(0)), count(opt(s, 1)), count(opt(s, 2)),
                                ms(opt(s, 3)),          ms(opt(s, 4)),    count(opt(s, 5))};
    if (v.any_mixed) {
      row.insert(row.begin() + 3, count(opt(s, 6)));
      row.insert(row.begin() + 6, ms(opt(s, 7)));
    }
    stores.rows.push_back(std::move(row));
  }
  return stores;
}

// The phases table without rows: the percentiles asked for (--percentiles), from each phase's
// histogram, then the max, the counts, dropped; for machines beside lat_<p>_us each part's
// <part>_<p>_us (the parts table shows them); a search run's step column after op (machines:
// search_step), in `parts_table` too.
ReportTable phases_table_for(const PercentileList& percentiles, bool searched,
                             ReportTable& parts_table) {
  ReportTable phases{
      "phases",
      "per phase and op",
      {"store", "phase", "op", "requests", "seconds", "req/s", "failed/s", "MiB/s", "mean ms"},
      {"store", "phase", "op", "ops", "seconds", "req_per_s", "failed_per_s", "mib_per_s",
       "lat_mean_us"},
      {},
      {},
      {}};
  for (double q : percentiles.values) {
    phases.header.push_back(percentile_label(q) + " ms");
    phases.keys.push_back("lat_" + percentile_name(q) + "_us");
  }
  phases.header.insert(phases.header.end(),
                       {"max ms", "hits", "misses", "errors", "timeouts", "wrong", "status"});
  phases.keys.insert(phases.keys.end(),
                     {"lat_max_us", "hits", "misses", "errors", "timeouts", "wrong", "status"});
  // Rate mode: the requests due before each phase's end that never left (NULL: closed loop).
  phases.header.emplace_back("dropped");
  phases.keys.emplace_back("dropped");
  phases.shown = phases.keys.size();
  for (const char* part : kLatencyParts) {
    for (double q : percentiles.values) {
      const std::string key = std::string(part) + "_" + percentile_name(q) + "_us";
      phases.header.push_back(key);
      phases.keys.push_back(key);
    }
  }
  if (searched) {
    for (ReportTable* t : {&phases, &parts_table}) {
      t->header.insert(t->header.begin() + 3, "step");
      t->keys.insert(t->keys.begin() + 3, "search_step");
    }
    ++phases.shown;
  }
  phases.narrow_first = {"timeouts",     "wrong",       "seconds", "mib_per_s",  "lat_mean_us",
                         "failed_per_s", "hits",        "misses",  "lat_p90_us", "lat_max_us",
                         "lat_p50_us",   "lat_p999_us", "status",  "errors",     "dropped"};
  return phases;
}

// One row of the phases table (RunView::phases' row `p`), its note if requests were dropped,
// and its rows of the parts table.
void add_phase_row(const RunView& v, const Row& p, const PercentileList& percentiles,
                   ReportTable& phases, ReportTable& parts_table) {
  const bool get = p.column_text(2) == "get";
  auto get_only = [&](int col) { return get ? count(opt(p, col)) : text("-"); };
  // Hits and misses of every op that finds or misses its key (delete, incr, touch, ...; for
  // add, replace, append and prepend a miss is "not stored"); a set or backfill has neither.
  const bool finds =
      p.column_text(2) != "set" && p.column_text(2) != "backfill" && p.column_text(2) != "mset";
  auto if_finds = [&](int col) { return finds ? count(opt(p, col)) : text("-"); };
  // Gets are checked only with --verify: without it none was, and "0 wrong" would claim they
  // were (a file from before phases recorded `verify` shows the count).
  const bool unverified = !p.is_null(17) && p.column_int(17) == 0;
  std::vector<ReportCell> row{
      text(p.column_text(0)), text(p.column_text(1)), text(p.column_text(2)),
      count(opt(p, 3)),       fixed(opt(p, 4), 1),    count(opt(p, 5)),
      count(opt(p, 16)),      fixed(opt(p, 6), 2),    ms(opt(p, 7))};
  const std::pair<int64_t, std::string> key{p.column_int(8), p.column_text(2)};
  const auto it = v.percentiles.find(key);
  for (size_t i = 0; i < percentiles.values.size(); ++i) {
    const bool known = it != v.percentiles.end() && it->second[i].has_value();
    row.push_back(ms(known ? *it->second[i] : std::nan("")));
  }
  row.insert(row.end(),
             {ms(opt(p, 9)), if_finds(10), if_finds(11), count(opt(p, 12)), count(opt(p, 13)),
              unverified ? text("-") : get_only(14), text(p.column_text(15))});
  const auto dr = v.dropped.find(key);
  row.push_back(count(dr == v.dropped.end() ? std::nan("") : dr->second));
  if (dr != v.dropped.end() && dr->second > 0)
    phases.notes_after.push_back(
        row[0].text + " " + row[1].text + " " + row[2].text + ": " + fmt_int(dr->second) +
        " requests due before the phase's end could not be sent within the request timeout "
        "past it: dropped (requests + dropped = the requests due)");
  for (const char* part : kLatencyParts) {
    const auto f = v.parts.find({key.first, key.second, part});
    for (size_t i = 0; i < percentiles.values.size(); ++i) {
      const bool known =
          f != v.parts.end() && i < f->second.values.size() && f->second.values[i].has_value();
      row.push_back(ms(known ? *f->second.values[i] : std::nan("")));
    }
  }
  std::optional<ReportCell> step;
  if (v.searched) {  // a search's steps are phases of one kind: their number tells them apart
    step = p.is_null(18) ? text("-") : count(p.column_double(18));
    row.insert(row.begin() + 3, *step);
  }
  add_time_went(v.time_went, key.first, key.second, row, step, parts_table);
  phases.rows.push_back(std::move(row));
}

}  // namespace

// A replayed trace's miss-ratio curve (trace_curves): a row per size, the stores' measured
// miss ratios in a note.
void add_trace_curves(const RunView& v, std::vector<ReportTable>& out, bool keep_empty) {
  ReportTable t{"trace_curve",
                "the trace's LRU miss ratio by cache size",
                {"trace", "working set", "objects", "miss ratio", "bytes", "miss ratio (bytes)"},
                {"trace", "fraction", "objects", "objects_miss_ratio", "bytes", "bytes_miss_ratio"},
                {},
                {},
                {}};
  for (const TraceCurveView& c : v.trace_curves) {
    for (const TraceCurvePoint& p : c.points)
      t.rows.push_back({text(c.trace),
                        {fmt_fixed(p.fraction * 100, 0) + " %", p.fraction},
                        count(static_cast<double>(p.objects)),
                        fixed(p.objects_miss_ratio, 3),
                        {format_size(static_cast<uint64_t>(p.bytes)), static_cast<double>(p.bytes)},
                        fixed(p.bytes_miss_ratio, 3)});
    for (const auto& m : c.measured)
      t.notes_after.push_back(m.store + " missed " + fmt_fixed(m.miss_ratio, 3) +
                              " of the trace's gets");
  }
  if (!t.rows.empty() || keep_empty) out.push_back(std::move(t));
}

std::vector<ReportTable> run_tables(const RunView& v, const PercentileList& percentiles,
                                    bool keep_empty) {
  std::vector<ReportTable> out;
  add_steps(v, out, keep_empty);
  add_trace_curves(v, out, keep_empty);
  ReportTable stores = stores_table(v);
  if (stores.rows.empty() && !keep_empty) return out;
  out.push_back(std::move(stores));
  ReportTable parts_table = parts_table_for();
  ReportTable phases = phases_table_for(percentiles, v.searched, parts_table);
  for (const Row& p : v.phases.rows) add_phase_row(v, p, percentiles, phases, parts_table);
  out.push_back(std::move(phases));
  if (!parts_table.rows.empty() || keep_empty) out.push_back(std::move(parts_table));
  add_server_side(v, out, keep_empty);
  return out;
}

namespace {

// What can differ between two runs, by (scope, name): the workload parameters (runs.parameters,
// each top-level key as JSON text), kvdrive's host and build, and each target's settings (by
// target position: "target 1").
std::map<std::pair<std::string, std::string>, std::string> run_facts(Database& db, int64_t run) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  if (const auto params = load_run_parameters(db, run)) {
    auto j = nlohmann::json::parse(*params, nullptr, false);
    if (j.is_object())
      for (const auto& [k, v] : j.items())
        out[{"parameter", k}] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  for (const Row& m : load_run_settings(db, run).rows) {
    const std::string scope =
        m.is_null(0) ? "client" : "target " + std::to_string(m.column_int(0) + 1);
    out[{scope, m.column_text(1)}] = m.is_null(2) ? "-" : m.column_text(2);
  }
  return out;
}

}  // namespace

std::vector<ReportTable> difference_tables(Database& db, const std::vector<int64_t>& run_ids) {
  std::vector<ReportTable> out;
  if (run_ids.size() < 2) return out;
  const std::string a = std::to_string(run_ids[0]);
  const auto base = run_facts(db, run_ids[0]);
  for (size_t r = 1; r < run_ids.size(); ++r) {
    const std::string b = std::to_string(run_ids[r]);
    ReportTable t{"differences",
                  "what differs between run " + a + " and run " + b,
                  {"of", "name", "run " + a, "run " + b},
                  {"scope", "name", "base_value", "value"},
                  {},
                  {},
                  {}};
    t.notes_before.push_back("parameters and settings that differ, run " + a + " / run " + b +
                             " (targets by position):");
    const auto other = run_facts(db, run_ids[r]);
    auto keys = base;
    for (const auto& [k, v] : other) keys.emplace(k, v);
    for (const auto& [k, unused] : keys) {
      auto x = base.find(k), y = other.find(k);
      const std::string va = x == base.end() ? "-" : x->second;
      const std::string vb = y == other.end() ? "-" : y->second;
      if (va == vb) continue;
      t.rows.emplace_back(
          std::vector<ReportCell>{text(k.first), text(k.second), text(va), text(vb)});
    }
    if (t.rows.empty()) t.notes_after.emplace_back("(none)");
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<ReportTable> comparison_tables(Database& db, const std::vector<int64_t>& run_ids) {
  std::vector<ReportTable> out;
  if (run_ids.size() < 2) return out;
  const std::string a = std::to_string(run_ids[0]);
  auto base = store_rows(db, run_ids[0]);
  const char* ops[] = {"write", "read"};
  for (size_t r = 1; r < run_ids.size(); ++r) {
    const std::string b = std::to_string(run_ids[r]);
    ReportTable t{"comparison",
                  "run " + b + " against run " + a,
                  {"store", "op", "run " + a + " req/s", "run " + b + " req/s", "ratio",
                   "run " + a + " p99 ms", "run " + b + " p99 ms", "p99 ratio"},
                  {"store", "op", "base_req_per_s", "req_per_s", "req_per_s_ratio", "base_p99_us",
                   "p99_us", "p99_ratio"},
                  {},
                  {},
                  {}};
    t.notes_before.push_back("run " + b + " / run " + a +
                             ", stores matched by protocol and position:");
    auto other = store_rows(db, run_ids[r]);
    std::map<std::string, int> seen_a, seen_b;
    std::vector<std::pair<std::string, int>> pos_b;
    for (const auto& row : other) pos_b.emplace_back(row.protocol, seen_b[row.protocol]++);
    for (const auto& row : base) {
      int pos = seen_a[row.protocol]++;
      const StoreRow* match = nullptr;
      for (size_t i = 0; i < other.size(); ++i)
        if (pos_b[i] == std::pair{row.protocol, pos}) match = &other[i];
      for (int op = 0; op < 2; ++op) {
        double ra = row.v[op], pa = row.v[op + 2];
        double rb = match ? match->v[op] : std::nan(""),
               pb = match ? match->v[op + 2] : std::nan("");
        if (std::isnan(ra) && std::isnan(rb)) continue;
        std::string name = row.store;
        if (match && match->store != row.store) name += " / " + match->store;
        t.rows.push_back({text(name), text(ops[op]), count(ra), count(rb),
                          fixed(ra > 0 ? rb / ra : std::nan(""), 2), ms(pa), ms(pb),
                          fixed(pa > 0 ? pb / pa : std::nan(""), 2)});
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kv::drive
