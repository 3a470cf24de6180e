// The HTML report's timeline: one set of panels over a run's wall time (throughput, latency
// percentiles per second, the store's memory and CPU from kvmon, the host), with the hints and
// kvmon's events as markers. The SVG of html_report.cpp's largest section; view/timeline.hpp
// reads what it draws.
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
#include "view/timeline.hpp"

namespace kv::drive {
namespace {

using svg::escape_xml;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The x of a time: seconds since the run started.
struct Window {
  TimelineWindow span;
  double x(int64_t ts) const { return static_cast<double>(ts - span.start_us) / 1e6; }
  double seconds() const { return std::max(1.0, x(span.end_us)); }
};

// Adds (x, y) to a series, first a gap (NaN) if x is more than `gap` after the last point.
void add_point(svg::Series& s, double x, double y, double gap) {
  if (!s.points.empty() && x - s.points.back().first > gap) s.points.emplace_back(x, kNaN);
  s.points.emplace_back(x, y);
}

// kvmon's events of the stores' processes as markers on every panel (#20): cgroup memory events,
// OOM kills, exits and restarts, at most kMaxEventMarkers of them (the first ones), labelled
// by what happened.
void add_kvmon_markers(const std::vector<StoreEvent>& events, const Window& w,
                       const std::vector<svg::Chart*>& charts) {
  constexpr size_t kMaxEventMarkers = 12;
  for (size_t n = 0; n < events.size() && n < kMaxEventMarkers; ++n) {
    const std::string& kind = events[n].kind;
    std::string label = kind == "target_exited"        ? "store exited"
                        : kind == "target_restarted"   ? "store restarted"
                        : kind == "cgroup_oom_kill"    ? "OOM kill"
                        : kind == "cgroup_failcnt"     ? "memory limit hit"
                        : kind == "cgroup_psi_trigger" ? "pressure stall"
                                                       : "memory." + kind.substr(7);
    if (kind == "target_exited" && events[n].message.find("OOM killer") != std::string::npos)
      label = "store OOM-killed";
    for (auto* c : charts) c->markers.push_back({w.x(events[n].ts_us), label});
  }
}

// The store's cgroup memory and its limit (when it has one) on the memory panel (#20). A limit
// far above everything else drawn (over 4x) would flatten the store's memory into the axis: it
// is named in the cgroup line's legend instead.
void add_cgroup_memory(const std::vector<CgroupMemorySample>& samples, const TimelineTarget& t,
                       const Window& w, svg::Chart& memory) {
  svg::Series used = chart_series(t.uri + " cgroup memory", t.ordinal, false);
  svg::Series limit = chart_series(t.uri + " cgroup memory limit", t.ordinal, true);
  used.css_color = limit.css_color = "#7a0177";
  used.width = 1.2;
  bool any_limit = false;
  for (const auto& s : samples) {
    const double x = w.x(s.ts_us);
    add_point(used, x, s.memory_bytes ? *s.memory_bytes / 1048576.0 : kNaN, 5);
    any_limit = any_limit || s.limit_bytes.has_value();
    add_point(limit, x, s.limit_bytes ? *s.limit_bytes / 1048576.0 : kNaN, 5);
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

// The timeline's panels, all on the run's time axis.
struct Panels {
  svg::Chart rate;
  std::map<int64_t, svg::Chart> latency;  // per target
  svg::Chart memory, cpu, hit, load;
  std::vector<svg::Chart*> all() {
    std::vector<svg::Chart*> out{&rate};
    for (auto& [id, c] : latency) out.push_back(&c);
    for (auto* c : {&memory, &cpu, &hit, &load}) out.push_back(c);
    return out;
  }
};

// The percentiles asked for as a list ("p50, p99, p99.9") and with their colours ("p50 green,
// p99 orange ...").
std::pair<std::string, std::string> percentile_legend(const PercentileList& percentiles) {
  std::string listed, colors;
  for (size_t k = 0; k < percentiles.values.size(); ++k) {
    const std::string label = percentile_label(percentiles.values[k]);
    listed += (k ? ", " : "") + label;
    colors +=
        (k ? ", " : "") + label + " " + second_percentile_color(percentiles.values[k], k).second;
  }
  return {listed, colors};
}

Panels make_panels(const Window& w, const std::vector<TimelineTarget>& targets,
                   const std::string& listed) {
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
  Panels p;
  p.rate = panel("Throughput per second", "req/s", svg::Scale::linear);
  for (const auto& t : targets)
    p.latency[t.target_id] =
        panel("Latency per second: " + listed + " on " + t.uri + " (log scale)", "latency (ms)",
              svg::Scale::log);
  p.memory = panel("Store memory: RSS, swap and the store's own used memory (one scale)", "MiB",
                   svg::Scale::linear);
  p.cpu = panel("Store process CPU", "CPU (% of one core)", svg::Scale::linear);
  p.hit = panel("Hit ratio of reads per second", "hits (% of gets)", svg::Scale::linear);
  p.hit.y.min = 0.0;
  p.hit.y.max = 100.0;
  p.load = panel("Host load average (1 min)", "load1 (runnable tasks)", svg::Scale::linear);
  return p;
}

// Shaded bands: which store (and phase, outside scenarios) ran when; scenario steps as
// boundary lines with the step's name. True for a run of scenario steps.
bool add_phase_bands(const std::vector<TimelinePhase>& phases, const Window& w,
                     const std::vector<svg::Chart*>& charts) {
  bool steps = false;
  std::vector<svg::Band> bands;
  std::vector<svg::Marker> boundaries;
  std::map<int64_t, svg::Band> per_target;
  std::string last_step;
  int64_t last_target = -1;
  for (const auto& p : phases) {
    steps = steps || p.step.has_value();
    bands.push_back({w.x(p.started_us), w.x(p.ended_us), p.protocol + " " + p.name});
    auto [it, fresh] = per_target.try_emplace(
        p.target_ordinal, svg::Band{bands.back().x0, bands.back().x1, p.protocol});
    if (!fresh) it->second.x1 = bands.back().x1;
    std::string step = p.step.value_or("");
    if (!step.empty() && (step != last_step || p.target_ordinal != last_target))
      boundaries.push_back({bands.back().x0, step});
    last_step = step;
    last_target = p.target_ordinal;
  }
  if (steps) {
    bands.clear();
    for (auto& [ord, b] : per_target) bands.push_back(b);
  }
  for (auto* c : charts) {
    c->bands = bands;
    c->boundaries = boundaries;
  }
  return steps;
}

// Driver seconds: req/s, the percentiles asked for (from each second's histogram), and the
// hit ratio of gets.
void add_driver_seconds(const std::vector<TimelineSecond>& seconds, const RunSecondPercentiles& pct,
                        const PercentileList& percentiles, const Window& w, Panels& p) {
  std::map<std::pair<int64_t, std::string>, size_t> index;
  std::map<std::tuple<int64_t, std::string, size_t>, size_t> lat_index;
  std::map<int64_t, size_t> hit_index;
  for (const auto& d : seconds) {
    const int64_t target = d.target_id;
    const std::string& op = d.op;
    auto key = std::pair{target, op};
    auto [it, fresh] = index.try_emplace(key, p.rate.series.size());
    // Sets solid, gets dashed, every other op (--mix, --cache-aside) dotted.
    const bool dotted = op != "set" && op != "get";
    if (fresh) {
      p.rate.series.push_back(chart_series(d.uri + " " + op, d.target_ordinal, op == "get"));
      p.rate.series.back().dotted = dotted;
    }
    double iv = static_cast<double>(d.interval_us);
    // A phase's last, partial second (under 0.5 s, beside full ones) is noise as a rate: left out.
    if (iv < 5e5 && d.phase_max_interval_us >= 1'000'000) continue;
    double x = w.x(d.ts_us) + iv / 2e6;
    add_point(p.rate.series[it->second], x, static_cast<double>(d.ops) * 1e6 / iv, 1.6);
    svg::Chart& lc = p.latency[target];
    const auto sp = pct.find({d.phase_id, d.ts_us, op});
    for (size_t k = 0; k < percentiles.values.size(); ++k) {
      auto [li, lfresh] = lat_index.try_emplace(std::tuple{target, op, k}, lc.series.size());
      if (lfresh) {
        lc.series.push_back(chart_series(op + " " + percentile_label(percentiles.values[k]),
                                         second_percentile_color(percentiles.values[k], k).first,
                                         op == "get"));
        lc.series.back().dotted = dotted;
      }
      const std::optional<double> v = sp == pct.end() ? std::nullopt : sp->second.values[k];
      add_point(lc.series[li->second], x, v ? *v / 1000 : kNaN, 1.6);
    }
    if ((op == "get" || op == "mget") && d.hits && d.misses) {
      const double hits = *d.hits, misses = *d.misses;
      auto [hi, hfresh] = hit_index.try_emplace(target, p.hit.series.size());
      if (hfresh) p.hit.series.push_back(chart_series(d.uri, d.target_ordinal, false));
      add_point(p.hit.series[hi->second], x,
                hits + misses > 0 ? 100.0 * hits / (hits + misses) : kNaN, 1.6);
    }
  }
}

// kvmon's samples of one store's process: its RSS and swap (memory panel) and CPU.
void add_process_samples(const std::vector<StoreProcessSample>& samples, const TimelineTarget& t,
                         const Window& w, Panels& p) {
  const std::string server = t.protocol == "redis" ? "redis-server" : "memcached";
  svg::Series r = chart_series(t.uri, t.ordinal, false), sw = chart_series(t.uri, t.ordinal, true),
              c = chart_series(t.uri, t.ordinal, false);
  int64_t prev_ts = -1, prev_cpu = 0;  // the last sample with CPU; -1: none
  for (const auto& s : samples) {
    std::string who = " (" + server + " pid " + std::to_string(s.pid) + ")";
    r.name = t.uri + " RSS" + who;
    sw.name = t.uri + " swap";
    c.name = t.uri + who;
    double x = w.x(s.ts_us);
    add_point(r, x, s.rss_kib ? static_cast<double>(*s.rss_kib) / 1024 : kNaN, 5);
    add_point(sw, x, s.swap_kib ? static_cast<double>(*s.swap_kib) / 1024 : kNaN, 5);
    if (!s.cpu_us) {
      prev_ts = -1;
      continue;
    }
    const int64_t ts = s.ts_us, used = *s.cpu_us;
    if (prev_ts >= 0 && ts > prev_ts)
      add_point(c, x,
                100.0 * static_cast<double>(used - prev_cpu) / static_cast<double>(ts - prev_ts),
                5);
    prev_ts = ts;
    prev_cpu = used;
  }
  p.memory.series.push_back(std::move(r));
  p.memory.series.push_back(std::move(sw));
  p.cpu.series.push_back(std::move(c));
}

// The store's own figure of its memory, dotted on the memory panel.
void add_store_memory(const StoreOwnMemory& m, const TimelineTarget& t, const Window& w,
                      svg::Chart& memory) {
  svg::Series u = chart_series(t.uri + " " + m.stat + " (the store's own)", t.ordinal, false);
  u.dotted = true;
  u.width = 2.4;
  for (const auto& [ts, bytes] : m.bytes)
    add_point(u, w.x(ts), bytes ? *bytes / 1048576.0 : kNaN, 5);
  if (!u.points.empty()) memory.series.push_back(std::move(u));
}

// Each watched host's load1, a line per kvmon session.
void add_host_load(const std::vector<HostLoad>& hosts, const Window& w, svg::Chart& load) {
  for (const auto& h : hosts) {
    load.series.push_back(chart_series("load1 on " + h.host, 8, false));
    for (const auto& [ts, load1] : h.load1)
      add_point(load.series.back(), w.x(ts), load1 ? *load1 : kNaN, 5);
  }
}

void write_panels(Panels& p, bool steps, const std::string& colors, int64_t stored_seconds,
                  std::ostream& out) {
  out << "<h3>Timeline</h3>\n<p class=\"note\">One time axis for all panels; shaded bands show "
         "which store"
      << (steps ? " ran when, grey lines where each scenario step began" : " and phase ran when")
      << ". Writes (set) solid, reads (get) dashed, other operations dotted; in the latency panels "
      << colors
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
  emit(p.rate, "no driver seconds", out);
  for (auto& [id, c] : p.latency) emit(c, "no request completed", out);
  emit(p.memory, no_kvmon + ", and the store reported no memory figure", out);
  emit(p.cpu, no_kvmon, out);
  emit(p.hit, "no reads in this run", out);
  emit(p.load, "kvmon did not sample the host during this run", out);
}

}  // namespace

void html_timeline(Database& db, int64_t run_id, const std::vector<Hint>& hints,
                   const PercentileList& percentiles, std::ostream& out) {
  const TimelineWindow span = timeline_window(db, run_id);
  const Window w{span};
  const auto targets = timeline_targets(db, run_id);
  const auto [listed, colors] = percentile_legend(percentiles);
  Panels panels = make_panels(w, targets, listed);
  const std::vector<svg::Chart*> all = panels.all();
  const bool steps = add_phase_bands(timeline_phases(db, run_id), w, all);
  for (const auto& h : hints)
    if (h.ts_us && (h.kind == "swap_onset" || h.kind == "store_failed"))
      for (auto* c : all)
        c->markers.push_back({w.x(*h.ts_us), h.kind == "swap_onset" ? "swap onset" : "failures"});
  std::vector<std::optional<int64_t>> instance;  // of each target's store process
  for (const auto& t : targets) instance.push_back(store_instance(db, t.target_id));
  std::set<int64_t> watched;  // in id order, as kvmon's events are marked
  for (const auto& inst : instance)
    if (inst) watched.insert(*inst);
  std::vector<StoreEvent> events;
  for (int64_t inst : watched) {
    auto e = store_events(db, inst, span);
    events.insert(events.end(), e.begin(), e.end());
  }
  add_kvmon_markers(events, w, all);
  const RunSecondPercentiles pct = second_percentiles(db, run_id, percentiles);
  int64_t stored_seconds = 0;  // seconds older than second_latency_buckets: the stored columns
  for (const auto& [key, sp] : pct) stored_seconds += sp.from_histogram ? 0 : 1;
  add_driver_seconds(timeline_seconds(db, run_id), pct, percentiles, w, panels);
  // kvmon's samples of each store's process, and the store's own figure of its memory.
  std::set<int64_t> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const TimelineTarget& t = targets[i];
    if (instance[i] && seen.insert(*instance[i]).second) {
      add_process_samples(store_process_samples(db, *instance[i], span), t, w, panels);
      add_cgroup_memory(store_cgroup_memory(db, *instance[i], span), t, w, panels.memory);
    }
    add_store_memory(store_own_memory(db, t.target_id, t.protocol, span), t, w, panels.memory);
  }
  add_host_load(host_load(db, run_id, span), w, panels.load);
  write_panels(panels, steps, colors, stored_seconds, out);
}

}  // namespace kv::drive
