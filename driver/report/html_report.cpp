// The HTML report: page layout and the queries behind its charts. See html_report.hpp.
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "kvbench/clock.hpp"
#include "kvbench/version.hpp"
#include "report/compare_html.hpp"
#include "report/headline.hpp"
#include "report/html_parts.hpp"
#include "report/report.hpp"
#include "report/report_hints.hpp"
#include "report/report_tables.hpp"
#include "report/search_report.hpp"
#include "report/svg_chart.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

using svg::escape_xml;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222;
       max-width: 1160px; margin: 16px auto; padding: 0 12px; }
h1 { font-size: 22px; margin: 4px 0; } h2 { font-size: 19px; border-top: 2px solid #ccd; padding-top: 10px; }
h3 { font-size: 15px; margin: 18px 0 4px; color: #334; }
.meta { color: #555; font-size: 13px; } .meta code { font-size: 12px; }
.hints { background: #fff8e6; border-left: 4px solid #e6a700; padding: 6px 12px; font-size: 14px; }
.hints li { margin: 3px 0; } .rule { color: #777; font-size: 12px; }
.ok { color: #555; font-size: 13px; }
.answer { background: #eef6ef; border-left: 4px solid #2e7d32; padding: 6px 14px; margin: 8px 0; }
.answer.doubt { background: #fdf0ee; border-left-color: #c62828; }
.answer ul { margin: 4px 0; padding-left: 20px; } .answer li { font-size: 17px; margin: 4px 0; }
.answer .valid { font-size: 14px; margin: 4px 0; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 12px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e3e5ea; white-space: nowrap; }
th { background: #f0f2f6; text-align: left; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafbfc; }
.note { color: #666; font-size: 12px; margin: 2px 0; }
svg.chart { display: block; margin: 2px 0; max-width: 100%; height: auto; }
.multiples { display: flex; flex-wrap: wrap; gap: 6px 10px; }
.multiples svg.chart { margin: 0; }
.nodata { color: #666; font-size: 13px; background: #f6f7fa; border: 1px dashed #ccd;
          padding: 6px 10px; margin: 6px 0; }
.wide { max-width: 100%; overflow-x: auto; }
table.dense { font-size: 11px; } table.dense th, table.dense td { padding: 2px 5px; }
th { white-space: normal; vertical-align: bottom; }
)";

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

svg::Series line(std::string name, int color, bool dashed, bool markers = false) {
  svg::Series s;
  s.name = std::move(name);
  s.color = color;
  s.dashed = dashed;
  s.markers = markers;
  return s;
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
  svg::Series used = line(t.uri + " cgroup memory", t.ordinal, false);
  svg::Series limit = line(t.uri + " cgroup memory limit", t.ordinal, true);
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

}  // namespace

// A chart, or where it would have nothing to draw, one line saying so instead of an empty frame.
void html_chart(const svg::Chart& c, const std::string& why_empty, std::ostream& out) {
  if (svg::has_data(c)) {
    out << svg::render(c);
    return;
  }
  out << "<p class=\"nodata\"><b>" << escape_xml(c.title) << "</b>: no data"
      << (why_empty.empty() ? "" : " (" + escape_xml(why_empty) + ")") << "</p>\n";
}

namespace {

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

void timeline(Database& db, int64_t run_id, const std::vector<Hint>& hints,
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
    if (fresh) rate.series.push_back(line(d.column_text(2) + " " + op, ordinal, op == "get"));
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
        lc.series.push_back(line(op + " " + percentile_label(percentiles.values[k]),
                                 second_percentile_color(percentiles.values[k], k).first,
                                 op == "get"));
      const std::optional<double> v = sp == pct.end() ? std::nullopt : sp->second.values[k];
      add_point(lc.series[li->second], x, v ? *v / 1000 : kNaN, 1.6);
    }
    if (op == "get" && !d.is_null(8) && !d.is_null(9)) {
      const double hits = d.column_double(8), misses = d.column_double(9);
      auto [hi, hfresh] = hit_index.try_emplace(target, hit.series.size());
      if (hfresh) hit.series.push_back(line(d.column_text(2), ordinal, false));
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
      svg::Series r = line(t.uri, t.ordinal, false), sw = line(t.uri, t.ordinal, true),
                  c = line(t.uri, t.ordinal, false);
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
    svg::Series u =
        line(t.uri + (t.protocol == "redis" ? " used_memory" : " bytes") + " (the store's own)",
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
      load.series.push_back(line("load1 on " + h.column_text(1), 8, false));
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

// Per step and store, writes and reads: req/s (`mib` false) or MiB/s.
void step_chart(Database& db, int64_t run_id, const std::string& scenario, bool mib,
                std::ostream& out) {
  svg::Chart c;
  c.title = (mib ? "MiB/s per step" : "Throughput per step") +
            (scenario.empty() ? "" : " (" + scenario + ")");
  c.height = 300;
  c.x.label = "scenario step";
  c.y.label = mib ? "MiB/s (values sent or received)" : "req/s";
  std::map<std::pair<int64_t, int>, size_t> index;
  auto s = db.prepare(
      std::string("SELECT s.step, s.target_id, s.store, ") +
      (mib ? "s.write_mib_per_s, s.read_mib_per_s" : "s.write_req_per_s, s.read_req_per_s") +
      ", t.ordinal FROM step_summary s JOIN targets t USING (target_id) "
      "WHERE s.run_id = ? AND s.step IS NOT NULL ORDER BY s.first_phase_id");
  s.bind(1, run_id);
  double lo = INFINITY, hi = 0;
  while (s.step()) {
    std::string step = s.column_text(0);
    auto& cats = c.x.categories;
    auto pos = std::find(cats.begin(), cats.end(), step);
    if (pos == cats.end()) pos = cats.insert(cats.end(), step);
    double x = static_cast<double>(pos - cats.begin());
    for (int op = 0; op < 2; ++op) {
      if (s.is_null(3 + op)) continue;
      auto [it, fresh] = index.try_emplace(std::pair{s.column_int(1), op}, c.series.size());
      if (fresh)
        c.series.push_back(line(s.column_text(2) + (op ? " reads" : " writes"),
                                static_cast<int>(s.column_int(5)), op == 1, true));
      double v = s.column_double(3 + op);
      c.series[it->second].points.emplace_back(x, v);
      if (v > 0) lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (c.x.categories.empty()) return;
  bool log = lo > 0 && hi / lo > 30;
  if (log) {
    c.y.scale = svg::Scale::log;
    c.y.label += " (log scale)";
  }
  out << "<h3>" << (mib ? "MiB/s per step" : "Throughput per step")
      << "</h3>\n<p class=\"note\">Per store: writes solid, reads dashed"
      << (log ? "; log scale because the values span more than 30x" : "") << ".</p>\n";
  emit(c, "no step completed a request", out);
}

// More curves than this in one chart (a scenario's 13 steps) are shown as small multiples.
constexpr size_t kMaxCurvesInOneChart = 6;

// One small chart per series of `ch`, on the same axes: the series in its colour over all the
// others in light grey, so each step reads alone and against the rest.
void small_multiples(const svg::Chart& ch, std::ostream& out) {
  double lo = INFINITY, hi = 0;
  for (const auto& se : ch.series)
    for (const auto& p : se.points)
      if (std::isfinite(p.second) && p.second > 0) {
        lo = std::min(lo, p.second);
        hi = std::max(hi, p.second);
      }
  out << "<p class=\"note\"><b>" << escape_xml(ch.title) << "</b>: one chart per step (in "
      << "colour; the other steps grey), all on the same axes (" << escape_xml(ch.y.label)
      << "; x: " << escape_xml(ch.x.label) << ").</p>\n<div class=\"multiples\">\n";
  for (size_t i = 0; i < ch.series.size(); ++i) {
    svg::Chart m = ch;
    m.title = ch.series[i].name;
    m.width = 272;
    m.height = 190;
    m.legend = false;
    m.x.label = "percentile (%)";
    m.y.label = "ms";
    if (hi > 0) {
      m.y.min = std::pow(10.0, std::floor(std::log10(lo)));
      m.y.max = std::pow(10.0, std::ceil(std::log10(hi)));
    }
    m.series.clear();
    for (size_t k = 0; k < ch.series.size(); ++k) {
      if (k == i) continue;
      svg::Series grey = ch.series[k];
      grey.css_color = "#d4d6dc";
      grey.width = 1.0;
      grey.in_legend = false;
      m.series.push_back(std::move(grey));
    }
    svg::Series own = ch.series[i];
    own.width = 2.4;
    m.series.push_back(std::move(own));  // drawn last: on top
    out << svg::render(m);
  }
  out << "</div>\n";
}

// Percentile curves: x is the number of nines of the percentile (0 → p0, 1 → p90, 2 → p99 ...).
void latency_charts(Database& db, int64_t run_id, bool steps, std::ostream& out) {
  struct Curve {
    std::string chart, name;
    int color;
    bool dashed;
    std::map<double, int64_t> buckets;
  };
  std::vector<Curve> curves;
  std::map<std::string, size_t> index;
  auto s = db.prepare(
      "SELECT t.uri, t.ordinal, b.op, COALESCE(p.step, ''), b.upper_us, SUM(b.count), "
      "MIN(p.phase_id) "
      "FROM latency_buckets b JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND b.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "GROUP BY t.target_id, b.op, p.step, b.upper_us ORDER BY t.ordinal, b.op DESC, "
      "MIN(p.phase_id)");
  s.bind(1, run_id);
  std::map<std::string, int> step_color;
  while (s.step()) {
    std::string uri = s.column_text(0), op = s.column_text(2), step = s.column_text(3);
    std::string chart = steps ? uri + " " + op : op, name = steps ? step : uri;
    auto [it, fresh] = index.try_emplace(chart + "\n" + name, curves.size());
    if (fresh) {
      int color =
          steps ? step_color.try_emplace(step, static_cast<int>(step_color.size())).first->second
                : static_cast<int>(s.column_int(1));
      curves.push_back({chart, name, color, false, {}});
    }
    curves[it->second].buckets[s.column_double(4)] += s.column_int(5);
  }
  std::vector<std::string> order;
  std::map<std::string, svg::Chart> charts;
  for (const auto& c : curves) {
    auto [it, fresh] = charts.try_emplace(c.chart);
    svg::Chart& ch = it->second;
    if (fresh) {
      order.push_back(c.chart);
      std::string op = c.chart.substr(c.chart.rfind(' ') + 1);
      ch.title =
          "Latency percentiles: " + (op == "set" ? std::string("writes") : std::string("reads")) +
          " (" + op + ")" + (steps ? " on " + c.chart.substr(0, c.chart.rfind(' ')) : "");
      ch.height = 280;
      ch.x.label = "percentile (%), nines scale";
      ch.x.ticks = {{0, "0"}, {1, "90"}, {2, "99"}, {3, "99.9"}, {4, "99.99"}, {5, "99.999"}};
      ch.y.label = "latency (ms, log scale)";
      ch.y.scale = svg::Scale::log;
    }
    int64_t total = 0, cum = 0;
    for (auto& [u, n] : c.buckets) total += n;
    svg::Series se = line(c.name, c.color, c.dashed);
    if (steps && step_color.size() > 1)  // ordered steps: a sequential scale, small → large
      se.css_color = svg::sequential(0.9 * c.color / static_cast<double>(step_color.size() - 1));
    double cap = std::log10(static_cast<double>(std::max<int64_t>(total, 1)));
    if (!c.buckets.empty()) se.points.emplace_back(0.0, c.buckets.begin()->first / 1000);
    for (auto& [u, n] : c.buckets) {
      cum += n;
      double f = static_cast<double>(cum) / static_cast<double>(total);
      double x = f >= 1 ? cap : std::min(cap, -std::log10(1 - f));
      se.points.emplace_back(x, u / 1000);
    }
    ch.series.push_back(std::move(se));
  }
  out << "<h3>Latency percentiles</h3>\n<p class=\"note\">Whole phases"
      << (steps ? ", one curve per step" : ", all phases of an op combined")
      << " (warm-up left out); x: "
         "0 → p0, 90 → p90, 99 → p99 … each step one more nine; a curve ends at the slowest "
         "request. "
         "Latency from the actual send (rate mode: from the intended send time).</p>\n";
  if (order.empty())
    out << "<p class=\"nodata\">Latency percentiles: no data (no latency "
           "histograms in this run)</p>\n";
  for (auto& name : order) {
    svg::Chart& ch = charts[name];
    double maxx = 2;
    for (auto& se : ch.series)
      for (auto& p : se.points) maxx = std::max(maxx, p.first);
    ch.x.max = std::min(5.0, std::ceil(maxx - 1e-9));
    ch.x.min = 0.0;
    while (!ch.x.ticks.empty() && ch.x.ticks.back().first > *ch.x.max) ch.x.ticks.pop_back();
    if (ch.series.size() <= kMaxCurvesInOneChart) {
      out << svg::render(ch);
    } else {
      small_multiples(ch, out);
    }
  }
}

}  // namespace

void html_table(const ReportTable& t, std::ostream& out) {
  for (const auto& n : t.notes_before) out << "<p class=\"note\">" << escape_xml(n) << "</p>\n";
  // Wide tables: smaller type, headers that wrap, and a horizontal scroll inside the page's
  // width rather than past it.
  const size_t shown = t.shown == 0 ? t.header.size() : std::min(t.shown, t.header.size());
  out << "<div class=\"wide\"><table" << (shown > 10 ? " class=\"dense\"" : "") << ">\n<tr>";
  std::vector<bool> numeric(shown, true);
  for (const auto& row : t.rows)
    for (size_t c = 0; c < row.size() && c < numeric.size(); ++c)
      if (!row[c].value && row[c].text != "-") numeric[c] = false;
  for (size_t c = 0; c < shown; ++c)
    out << "<th" << (numeric[c] && !t.rows.empty() ? " class=\"n\"" : "") << ">"
        << escape_xml(t.header[c]) << "</th>";
  out << "</tr>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (size_t c = 0; c < row.size() && c < shown; ++c)
      out << "<td" << (c < numeric.size() && numeric[c] ? " class=\"n\"" : "") << ">"
          << escape_xml(row[c].text) << "</td>";
    out << "</tr>\n";
  }
  out << "</table></div>\n";
  for (const auto& n : t.notes_after) out << "<p class=\"note\">" << escape_xml(n) << "</p>\n";
}

namespace {

// `t` less the columns in which every row is "-" (a write-only run's read columns).
ReportTable without_empty_columns(const ReportTable& t) {
  ReportTable out = t;
  for (size_t c = out.header.size(); c-- > 1;) {
    const bool empty = std::all_of(out.rows.begin(), out.rows.end(), [&](const auto& r) {
      return c >= r.size() || r[c].text == "-";
    });
    if (!empty) continue;
    out.header.erase(out.header.begin() + static_cast<std::ptrdiff_t>(c));
    out.keys.erase(out.keys.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& r : out.rows)
      if (c < r.size()) r.erase(r.begin() + static_cast<std::ptrdiff_t>(c));
    if (out.shown > c) --out.shown;
  }
  return out;
}

// One run's section; `tables` (run_tables) and `headline` (run_headline) made once by the caller.
void run_section(Database& db, int64_t run_id, const std::vector<ReportTable>& tables,
                 const Headline& headline, const PercentileList& percentiles, std::ostream& out) {
  auto r = db.prepare(
      "SELECT name, status, started_ts_us, ended_ts_us, client_host, command_line, scenario, "
      "scale, error "
      "FROM runs WHERE run_id = ?");
  r.bind(1, run_id);
  r.step();
  std::string scenario = r.is_null(6) ? "" : r.column_text(6);
  out << "<h2>Run " << run_id << (r.is_null(0) ? "" : " “" + escape_xml(r.column_text(0)) + "”")
      << "</h2>\n"
      << "<p class=\"meta\">" << escape_xml(r.column_text(1)) << ", started "
      << escape_xml(format_ts_us(r.column_int(2)));
  if (!r.is_null(3))
    out << ", " << fmt_fixed(static_cast<double>(r.column_int(3) - r.column_int(2)) / 1e6, 1)
        << " s";
  out << " on " << escape_xml(r.column_text(4));
  if (!scenario.empty())
    out << "; scenario " << escape_xml(scenario) << " at scale " << r.column_double(7);
  out << "<br><code>" << escape_xml(r.column_text(5)) << "</code></p>\n";
  if (!r.is_null(8)) out << "<p class=\"meta\">error: " << escape_xml(r.column_text(8)) << "</p>\n";

  // The answer first (what was found, who was faster by how much, can it be trusted), then
  // the evidence.
  out << "<div class=\"answer" << (headline.valid ? "" : " doubt") << "\"><b>The answer</b><ul>\n";
  for (const auto& a : headline.answers) out << "<li>" << escape_xml(a) << "</li>\n";
  if (headline.answers.empty()) out << "<li>no measurements</li>\n";
  out << "</ul>\n";
  // The per-store figures beside the comparison; a search's steps are not one figure.
  for (const auto& t : tables)
    if (t.name == "stores" && t.rows.size() > 1 && !headline.searched)
      html_table(without_empty_columns(t), out);
  for (const auto& v : headline.validity) out << "<p class=\"valid\">" << escape_xml(v) << "</p>\n";
  out << "</div>\n";

  auto hints = compute_hints(db, run_id);
  if (hints.empty()) {
    out << "<p class=\"ok\">No hints: no throughput cliff between steps (&gt; 5x), no swap onset, "
           "no "
           "client-bound seconds (&gt; 90 % of a core), no failures after clean seconds.</p>\n";
  } else {
    out << "<div class=\"hints\"><b>Hints</b><ul>\n";
    for (const auto& h : hints)
      out << "<li><b>" << escape_xml(h.kind) << "</b>"
          << (h.store.empty() ? "" : " " + escape_xml(h.store)) << ": " << escape_xml(h.message)
          << " <span class=\"rule\">(rule: " << escape_xml(h.rule) << ")</span></li>\n";
    out << "</ul></div>\n";
  }
  bool steps = !tables.empty() && tables.front().name == "steps_pivot";
  timeline(db, run_id, hints, percentiles, out);
  if (steps) {
    step_chart(db, run_id, scenario, false, out);
    step_chart(db, run_id, scenario, true, out);
  }
  if (!steps && !headline.searched) write_stores_side_by_side(db, run_id, out);
  latency_charts(db, run_id, steps, out);
  write_search_html(db, run_id, out);
  out << "<h3>Summary</h3>\n";
  if (tables.empty()) out << "<p class=\"note\">no measurements</p>\n";
  for (const auto& t : tables)
    if (t.name != "steps") {
      bool fold = t.rows.size() > 16;  // long per-phase tables: folded, the charts come first
      out << (fold ? "<details><summary class=\"note\"><b>" : "<p class=\"note\"><b>")
          << escape_xml(t.title)
          << (fold ? " (" + std::to_string(t.rows.size()) + " rows)</b></summary>\n"
                   : "</b></p>\n");
      html_table(t, out);
      if (fold) out << "</details>\n";
    }
}

}  // namespace

void write_html_report(Database& db, const std::vector<int64_t>& run_ids, std::ostream& out,
                       const PercentileList& percentiles) {
  auto runs = report_runs(db, run_ids);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kvbench "
         "report: "
      << escape_xml(db.path()) << "</title>\n<style>" << kStyle << "</style></head><body>\n"
      << "<h1>kvbench report</h1>\n<p class=\"meta\">" << escape_xml(db.path()) << " · "
      << runs.size() << (runs.size() == 1 ? " run" : " runs") << " · kvdrive "
      << escape_xml(version()) << "</p>\n";
  if (runs.empty()) out << "<p>This file holds no runs yet.</p>\n";
  std::vector<std::vector<ReportTable>> tables;
  std::vector<Headline> headlines;
  for (int64_t id : runs) {
    tables.push_back(run_tables(db, id, percentiles));
    headlines.push_back(run_headline(db, id, tables.back()));
  }
  if (runs.size() > 1) {  // every run's answer on the first screen, each run's evidence after
    out << "<div class=\"answer\"><b>The answers</b><ul>\n";
    for (size_t i = 0; i < runs.size(); ++i)
      for (const auto& a : headlines[i].answers)
        out << "<li>run " << runs[i] << ": " << escape_xml(a)
            << (headlines[i].valid ? "" : " (see its validity)") << "</li>\n";
    out << "</ul></div>\n";
  }
  for (size_t i = 0; i < runs.size(); ++i)
    run_section(db, runs[i], tables[i], headlines[i], percentiles, out);
  if (run_ids.size() >= 2) {
    out << "<h2>Comparison</h2>\n";
    write_comparison_charts(db, run_ids, out);
    for (const auto& t : comparison_tables(db, run_ids)) html_table(t, out);
  }
  out << "</body></html>\n";
}

}  // namespace kv::drive
