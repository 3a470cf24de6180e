// The HTML report's timeline: one set of panels over a run's wall time (throughput, latency
// percentiles per second, the store's memory and CPU from kvmon, the host), with the hints and
// kvmon's events as markers. The queries and the SVG of html_report.cpp's largest section.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "kvbench/clock.hpp"
#include "report/html_parts.hpp"
#include "report/report.hpp"
#include "report/report_tables.hpp"
#include "report/svg_chart.hpp"
#include "report/text_table.hpp"
#include "view/hints.hpp"

namespace kv::drive {
namespace {

using svg::escape_xml;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Window {
  int64_t t0, t1;
  double x(int64_t ts) const { return static_cast<double>(ts - t0) / 1e6; }
  double seconds() const { return std::max(1.0, x(t1)); }
};

Window run_window(Database& db, int64_t run_id) {
  auto s = db.prepare(
      "SELECT r.started_ts_us, MAX(COALESCE(r.ended_ts_us, 0), "
      "COALESCE((SELECT MAX(d.ts_us + d.interval_us) FROM driver_seconds d JOIN phases p "
      "USING (phase_id) WHERE p.run_id = r.run_id), 0)) FROM runs r WHERE r.run_id = ?");
  s.bind(1, run_id);
  s.step();
  return {s.column_int(0), std::max(s.column_int(0), s.column_int(1))};
}

struct TargetInfo {
  int64_t id;
  int ordinal;
  std::string uri, protocol;
};

std::vector<TargetInfo> targets_of(Database& db, int64_t run_id) {
  std::vector<TargetInfo> out;
  auto s = db.prepare(
      "SELECT target_id, ordinal, uri, protocol FROM targets WHERE run_id = ? ORDER BY ordinal");
  s.bind(1, run_id);
  while (s.step())
    out.push_back(
        {s.column_int(0), static_cast<int>(s.column_int(1)), s.column_text(2), s.column_text(3)});
  return out;
}

// Adds (x, y) to a series, first a gap (NaN) if x is more than `gap` after the last point.
void add_point(svg::Series& s, double x, double y, double gap) {
  if (!s.points.empty() && x - s.points.back().first > gap) s.points.emplace_back(x, kNaN);
  s.points.emplace_back(x, y);
}

// kvmon's events of the stores' processes as markers on every panel (#20): cgroup memory events,
// OOM kills, exits and restarts, at most kMaxEventMarkers of them (the first ones), labelled
// by what happened.
void add_kvmon_markers(Database& db, const std::vector<TargetInfo>& targets, const Window& w,
                       const std::vector<svg::Chart*>& charts) {
  constexpr int64_t kMaxEventMarkers = 12;
  std::set<int64_t> instances;
  for (const auto& t : targets)
    if (auto inst = store_instance(db, t.id)) instances.insert(*inst);
  int64_t n = 0;
  for (int64_t inst : instances) {
    auto e = db.prepare(
        "SELECT ts_us, kind, message FROM events WHERE instance_id = ? AND ts_us BETWEEN ? AND ? "
        "AND kind IN ('cgroup_high', 'cgroup_max', 'cgroup_oom', 'cgroup_oom_kill', "
        "'cgroup_failcnt', 'cgroup_under_oom', 'cgroup_swap_max', 'cgroup_swap_fail', "
        "'target_exited', 'target_restarted', 'cgroup_psi_trigger') ORDER BY ts_us");
    e.bind(1, inst).bind(2, w.t0).bind(3, w.t1);
    while (e.step() && n < kMaxEventMarkers) {
      const std::string kind = e.column_text(1);
      std::string label = kind == "target_exited"        ? "store exited"
                          : kind == "target_restarted"   ? "store restarted"
                          : kind == "cgroup_oom_kill"    ? "OOM kill"
                          : kind == "cgroup_failcnt"     ? "memory limit hit"
                          : kind == "cgroup_psi_trigger" ? "pressure stall"
                                                         : "memory." + kind.substr(7);
      if (kind == "target_exited" && e.column_text(2).find("OOM killer") != std::string::npos)
        label = "store OOM-killed";
      ++n;
      for (auto* c : charts) c->markers.push_back({w.x(e.column_int(0)), label});
    }
  }
}

// The store's cgroup memory and its limit (when it has one) on the memory panel (#20). A limit
// far above everything else drawn (over 4x) would flatten the store's memory into the axis: it
// is named in the cgroup line's legend instead.
void add_cgroup_memory(Database& db, int64_t instance, const TargetInfo& t, const Window& w,
                       svg::Chart& memory) {
  auto s = db.prepare(
      "SELECT ts_us, cg_memory_bytes, cg_memory_max_bytes FROM process_samples "
      "WHERE instance_id = ? AND ts_us BETWEEN ? AND ? ORDER BY ts_us");
  s.bind(1, instance).bind(2, w.t0).bind(3, w.t1);
  svg::Series used = chart_series(t.uri + " cgroup memory", t.ordinal, false);
  svg::Series limit = chart_series(t.uri + " cgroup memory limit", t.ordinal, true);
  used.css_color = limit.css_color = "#7a0177";
  used.width = 1.2;
  bool any_limit = false;
  while (s.step()) {
    const double x = w.x(s.column_int(0));
    add_point(used, x, s.is_null(1) ? kNaN : s.column_double(1) / 1048576.0, 5);
    const bool limited = !s.is_null(2) && s.column_int(2) < INT64_MAX - 4095;
    any_limit = any_limit || limited;
    add_point(limit, x, limited ? s.column_double(2) / 1048576.0 : kNaN, 5);
  }
  auto drawn = [](const svg::Series& v) {
    return std::any_of(v.points.begin(), v.points.end(),
                       [](const auto& p) { return !std::isnan(p.second); });
  };
  double highest = 0, limit_max = 0;
  for (const auto& series : memory.series)
    for (const auto& p : series.points)
      if (!std::isnan(p.second)) highest = std::max(highest, p.second);
  for (const auto& p : used.points)
    if (!std::isnan(p.second)) highest = std::max(highest, p.second);
  for (const auto& p : limit.points)
    if (!std::isnan(p.second)) limit_max = std::max(limit_max, p.second);
  const bool off_scale = any_limit && highest > 0 && limit_max > 4 * highest;
  if (off_scale) used.name += " (limit " + fmt_int(limit_max) + " MiB, off this scale)";
  if (drawn(used)) memory.series.push_back(std::move(used));
  if (any_limit && !off_scale) memory.series.push_back(std::move(limit));
}

void emit(const svg::Chart& c, const std::string& why_empty, std::ostream& out) {
  html_chart(c, why_empty, out);
}

// The colour of a percentile drawn per second (line style is by op): p50 green, p90 purple, p99
// orange, p99.9 red, p99.99 brown, p99.999 pink; any other by its place in the list.
std::pair<int, const char*> second_percentile_color(double p, size_t index) {
  constexpr struct {
    double p;
    int color;
    const char* name;
  } kKnown[] = {{50, 2, "green"}, {90, 4, "purple"},   {99, 3, "orange"},
                {99.9, 1, "red"}, {99.99, 5, "brown"}, {99.999, 6, "pink"}};
  for (const auto& k : kKnown)
    if (std::abs(k.p - p) < 1e-6) return {k.color, k.name};
  constexpr const char* kOthers[] = {"cyan", "grey", "olive"};
  return {7 + static_cast<int>(index % 3), kOthers[index % 3]};
}

}  // namespace

void html_timeline(Database& db, int64_t run_id, const std::vector<Hint>& hints,
                   const PercentileList& percentiles, std::ostream& out) {
  Window w = run_window(db, run_id);
  auto targets = targets_of(db, run_id);
  svg::Axis time{
      "time since the run started (s)", svg::Scale::linear, 0.0, w.seconds(), true, {}, {}};
  auto panel = [&](std::string title, std::string ylabel, svg::Scale scale) {
    svg::Chart c;
    c.title = std::move(title);
    c.height = 210;
    c.x = time;
    c.y.label = std::move(ylabel);
    c.y.scale = scale;
    return c;
  };
  svg::Chart rate = panel("Throughput per second", "req/s", svg::Scale::linear);
  std::map<int64_t, svg::Chart> latency;  // per target
  std::string listed, colors;             // "p50, p99, p99.9"; "p50 green, p99 orange ..."
  for (size_t k = 0; k < percentiles.values.size(); ++k) {
    const std::string label = percentile_label(percentiles.values[k]);
    listed += (k ? ", " : "") + label;
    colors +=
        (k ? ", " : "") + label + " " + second_percentile_color(percentiles.values[k], k).second;
  }
  for (const auto& t : targets)
    latency[t.id] = panel("Latency per second: " + listed + " on " + t.uri + " (log scale)",
                          "latency (ms)", svg::Scale::log);
  svg::Chart memory = panel("Store memory: RSS, swap and the store's own used memory (one scale)",
                            "MiB", svg::Scale::linear);
  svg::Chart cpu = panel("Store process CPU", "CPU (% of one core)", svg::Scale::linear);
  svg::Chart hit = panel("Hit ratio of reads per second", "hits (% of gets)", svg::Scale::linear);
  hit.y.min = 0.0;
  hit.y.max = 100.0;
  svg::Chart load =
      panel("Host load average (1 min)", "load1 (runnable tasks)", svg::Scale::linear);
  std::vector<svg::Chart*> all{&rate};
  for (auto& [id, c] : latency) all.push_back(&c);
  for (auto* c : {&memory, &cpu, &hit, &load}) all.push_back(c);
  // Shaded bands: which store (and phase, outside scenarios) ran when; scenario steps as
  // boundary lines with the step's name.
  bool steps = false;
  {
    auto s = db.prepare(
        "SELECT t.protocol, p.name, p.started_ts_us, COALESCE(p.ended_ts_us, p.started_ts_us), "
        "p.step, t.ordinal FROM phases p JOIN targets t USING (target_id) WHERE p.run_id = ? "
        "ORDER BY p.phase_id");
    s.bind(1, run_id);
    std::vector<svg::Band> bands;
    std::vector<svg::Marker> boundaries;
    std::map<int64_t, svg::Band> per_target;
    std::string last_step;
    int64_t last_target = -1;
    while (s.step()) {
      steps = steps || !s.is_null(4);
      bands.push_back(
          {w.x(s.column_int(2)), w.x(s.column_int(3)), s.column_text(0) + " " + s.column_text(1)});
      auto [it, fresh] = per_target.try_emplace(
          s.column_int(5), svg::Band{bands.back().x0, bands.back().x1, s.column_text(0)});
      if (!fresh) it->second.x1 = bands.back().x1;
      std::string step = s.is_null(4) ? "" : s.column_text(4);
      if (!step.empty() && (step != last_step || s.column_int(5) != last_target))
        boundaries.push_back({bands.back().x0, step});
      last_step = step;
      last_target = s.column_int(5);
    }
    if (steps) {
      bands.clear();
      for (auto& [ord, b] : per_target) bands.push_back(b);
    }
    for (auto* c : all) {
      c->bands = bands;
      c->boundaries = boundaries;
    }
  }
  for (const auto& h : hints)
    if (h.ts_us && (h.kind == "swap_onset" || h.kind == "store_failed"))
      for (auto* c : all)
        c->markers.push_back({w.x(*h.ts_us), h.kind == "swap_onset" ? "swap onset" : "failures"});
  add_kvmon_markers(db, targets, w, all);

  // Driver seconds: req/s, the percentiles asked for (from each second's histogram), and the
  // hit ratio of gets.
  const RunSecondPercentiles pct = second_percentiles(db, run_id, percentiles);
  int64_t stored_seconds = 0;  // seconds older than second_latency_buckets: the stored columns
  for (const auto& [key, sp] : pct) stored_seconds += sp.from_histogram ? 0 : 1;
  std::map<std::pair<int64_t, std::string>, size_t> index;
  std::map<std::tuple<int64_t, std::string, size_t>, size_t> lat_index;
  std::map<int64_t, size_t> hit_index;
  auto d = db.prepare(
      "SELECT t.target_id, t.ordinal, t.uri, d.op, d.ts_us, d.interval_us, d.ops, d.phase_id, "
      "d.hits, d.misses, "
      "(SELECT MAX(x.interval_us) FROM driver_seconds x WHERE x.phase_id = d.phase_id) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? ORDER BY t.ordinal, d.op DESC, d.ts_us");
  d.bind(1, run_id);
  while (d.step()) {
    const int64_t target = d.column_int(0);
    const int ordinal = static_cast<int>(d.column_int(1));
    const std::string op = d.column_text(3);
    auto key = std::pair{target, op};
    auto [it, fresh] = index.try_emplace(key, rate.series.size());
    if (fresh)
      rate.series.push_back(chart_series(d.column_text(2) + " " + op, ordinal, op == "get"));
    double iv = static_cast<double>(d.column_int(5));
    // A phase's last, partial second (under 0.5 s, beside full ones) is noise as a rate: left out.
    if (iv < 5e5 && d.column_int(10) >= 1'000'000) continue;
    double x = w.x(d.column_int(4)) + iv / 2e6;
    add_point(rate.series[it->second], x, static_cast<double>(d.column_int(6)) * 1e6 / iv, 1.6);
    svg::Chart& lc = latency[target];
    const auto sp = pct.find({d.column_int(7), d.column_int(4), op});
    for (size_t k = 0; k < percentiles.values.size(); ++k) {
      auto [li, lfresh] = lat_index.try_emplace(std::tuple{target, op, k}, lc.series.size());
      if (lfresh)
        lc.series.push_back(chart_series(op + " " + percentile_label(percentiles.values[k]),
                                         second_percentile_color(percentiles.values[k], k).first,
                                         op == "get"));
      const std::optional<double> v = sp == pct.end() ? std::nullopt : sp->second.values[k];
      add_point(lc.series[li->second], x, v ? *v / 1000 : kNaN, 1.6);
    }
    if (op == "get" && !d.is_null(8) && !d.is_null(9)) {
      const double hits = d.column_double(8), misses = d.column_double(9);
      auto [hi, hfresh] = hit_index.try_emplace(target, hit.series.size());
      if (hfresh) hit.series.push_back(chart_series(d.column_text(2), ordinal, false));
      add_point(hit.series[hi->second], x,
                hits + misses > 0 ? 100.0 * hits / (hits + misses) : kNaN, 1.6);
    }
  }
  // kvmon's samples of each store's process, and the store's own figure of its memory.
  std::set<int64_t> seen;
  for (const auto& t : targets) {
    const std::string server = t.protocol == "redis" ? "redis-server" : "memcached";
    auto inst = store_instance(db, t.id);
    if (inst && seen.insert(*inst).second) {
      auto s = db.prepare(
          "SELECT s.ts_us, s.rss_kib, s.swap_kib, i.pid, s.cpu_user_us + s.cpu_system_us "
          "FROM process_samples s JOIN process_instances i USING (instance_id) "
          "WHERE s.instance_id = ? AND s.ts_us BETWEEN ? AND ? ORDER BY s.ts_us");
      s.bind(1, *inst).bind(2, w.t0).bind(3, w.t1);  // this run's time only
      svg::Series r = chart_series(t.uri, t.ordinal, false),
                  sw = chart_series(t.uri, t.ordinal, true),
                  c = chart_series(t.uri, t.ordinal, false);
      int64_t prev_ts = -1, prev_cpu = 0;  // the last sample with CPU; -1: none
      while (s.step()) {
        std::string who = " (" + server + " pid " + std::to_string(s.column_int(3)) + ")";
        r.name = t.uri + " RSS" + who;
        sw.name = t.uri + " swap";
        c.name = t.uri + who;
        double x = w.x(s.column_int(0));
        add_point(r, x, s.is_null(1) ? kNaN : static_cast<double>(s.column_int(1)) / 1024, 5);
        add_point(sw, x, s.is_null(2) ? kNaN : static_cast<double>(s.column_int(2)) / 1024, 5);
        if (s.is_null(4)) {
          prev_ts = -1;
          continue;
        }
        const int64_t ts = s.column_int(0), used = s.column_int(4);
        if (prev_ts >= 0 && ts > prev_ts)
          add_point(
              c, x,
              100.0 * static_cast<double>(used - prev_cpu) / static_cast<double>(ts - prev_ts), 5);
        prev_ts = ts;
        prev_cpu = used;
      }
      memory.series.push_back(std::move(r));
      memory.series.push_back(std::move(sw));
      cpu.series.push_back(std::move(c));
      add_cgroup_memory(db, *inst, t, w, memory);
    }
    auto m = db.prepare(
        "SELECT ts_us, value FROM store_stats WHERE target_id = ? AND name = ? "
        "AND ts_us BETWEEN ? AND ? ORDER BY ts_us");
    m.bind(1, t.id)
        .bind(2, t.protocol == "redis" ? "used_memory" : "bytes")
        .bind(3, w.t0)
        .bind(4, w.t1);
    svg::Series u = chart_series(
        t.uri + (t.protocol == "redis" ? " used_memory" : " bytes") + " (the store's own)",
        t.ordinal, false);
    u.dotted = true;
    u.width = 2.4;
    while (m.step())
      add_point(u, w.x(m.column_int(0)), m.is_null(1) ? kNaN : m.column_double(1) / 1048576.0, 5);
    if (!u.points.empty()) memory.series.push_back(std::move(u));
  }
  auto h = db.prepare(
      "SELECT h.session_id, m.host, h.ts_us, h.load1 FROM host_samples h JOIN monitor_sessions m "
      "USING (session_id) WHERE h.ts_us BETWEEN ? AND ? AND h.session_id IN (SELECT session_id "
      "FROM run_sessions WHERE run_id = ?) ORDER BY h.session_id, h.ts_us");
  h.bind(1, w.t0).bind(2, w.t1).bind(3, run_id);
  int64_t session = -1;
  while (h.step()) {
    if (h.column_int(0) != session) {
      session = h.column_int(0);
      load.series.push_back(chart_series("load1 on " + h.column_text(1), 8, false));
    }
    add_point(load.series.back(), w.x(h.column_int(2)), h.is_null(3) ? kNaN : h.column_double(3),
              5);
  }
  out << "<h3>Timeline</h3>\n<p class=\"note\">One time axis for all panels; shaded bands show "
         "which store"
      << (steps ? " ran when, grey lines where each scenario step began" : " and phase ran when")
      << ". Writes (set) solid, reads (get) dashed; in the latency panels " << colors
      << " (each second's own histogram, never above its max). Memory: RSS solid, swap dashed "
         "(kvmon's samples of the store's "
         "process), the store's own figure dotted, all in MiB on one scale. A phase's last "
         "partial second (under 0.5 s) is not drawn.</p>\n";
  if (stored_seconds > 0)
    out << "<p class=\"note\">" << stored_seconds
        << " seconds of this run predate per-second histograms (second_latency_buckets; an "
           "older kvdrive wrote them): their latency lines are the stored p50, p90, p99 and "
           "p99.9 columns, and any other percentile is not drawn for them.</p>\n";
  const std::string no_kvmon = "kvmon did not watch the store's process during this run";
  emit(rate, "no driver seconds", out);
  for (auto& [id, c] : latency) emit(c, "no request completed", out);
  emit(memory, no_kvmon + ", and the store reported no memory figure", out);
  emit(cpu, no_kvmon, out);
  emit(hit, "no reads in this run", out);
  emit(load, "kvmon did not sample the host during this run", out);
}

}  // namespace kv::drive
