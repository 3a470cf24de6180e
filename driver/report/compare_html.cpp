// The overlay of several runs' per-second curves: see compare_html.hpp.
#include "report/compare_html.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "report/html_parts.hpp"
#include "report/svg_chart.hpp"

namespace kv::drive {

void write_comparison_charts(Database& db, const std::vector<int64_t>& run_ids, std::ostream& out) {
  if (run_ids.size() < 2) return;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  auto chart = [](std::string title, std::string ylabel, svg::Scale scale) {
    svg::Chart c;
    c.title = std::move(title);
    c.height = 240;
    c.x.label = "time since each run started (s)";
    c.y.label = std::move(ylabel);
    c.y.scale = scale;
    return c;
  };
  svg::Chart rate = chart("Throughput per second, runs overlaid", "req/s", svg::Scale::linear);
  svg::Chart p50 =
      chart("Latency p50 per second, runs overlaid (log scale)", "ms", svg::Scale::log);
  svg::Chart p99 =
      chart("Latency p99 per second, runs overlaid (log scale)", "ms", svg::Scale::log);
  auto d = db.prepare(
      "SELECT t.ordinal, t.uri, d.op, d.ts_us - r.started_ts_us, d.interval_us, "
      "COALESCE(d.ok, d.ops - d.errors - d.timeouts), "
      "d.lat_p50_us, d.lat_p99_us, "
      "(SELECT MAX(x.interval_us) FROM driver_seconds x WHERE x.phase_id = d.phase_id) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "JOIN runs r ON r.run_id = p.run_id WHERE p.run_id = ? ORDER BY t.ordinal, d.op DESC, "
      "d.ts_us");
  for (size_t i = 0; i < run_ids.size(); ++i) {
    std::map<std::pair<int64_t, std::string>, size_t> index;
    d.bind(1, run_ids[i]);
    while (d.step()) {
      const std::string op = d.column_text(2);
      auto [it, fresh] = index.try_emplace({d.column_int(0), op}, rate.series.size());
      if (fresh)
        for (svg::Chart* c : {&rate, &p50, &p99}) {
          svg::Series s;
          s.name = "run " + std::to_string(run_ids[i]) + " " + d.column_text(1) + " " + op;
          s.color = static_cast<int>(i);
          s.dashed = op == "get";
          c->series.push_back(std::move(s));
        }
      const double iv = static_cast<double>(d.column_int(4));
      // A phase's last, partial second beside full ones is noise as a rate: left out.
      if (iv < 5e5 && d.column_int(8) >= 1'000'000) continue;
      const double x = (static_cast<double>(d.column_int(3)) + iv / 2) / 1e6;
      const size_t series = it->second;  // (clang 14 cannot capture a structured binding)
      auto add = [&](svg::Chart& c, double y) {
        auto& pts = c.series[series].points;
        if (!pts.empty() && x - pts.back().first > 1.6) pts.emplace_back(x, kNaN);
        pts.emplace_back(x, y);
      };
      add(rate, static_cast<double>(d.column_int(5)) * 1e6 / iv);
      add(p50, d.is_null(6) ? kNaN : d.column_double(6) / 1000);
      add(p99, d.is_null(7) ? kNaN : d.column_double(7) / 1000);
    }
    d.reset();
  }
  out << "<h3>Per second, runs overlaid</h3>\n<p class=\"note\">Each run on its own clock (0 = "
         "its start), a colour per run; writes (set) solid, reads (get) dashed.</p>\n";
  html_chart(rate, "no driver seconds in these runs", out);
  html_chart(p50, "no request completed", out);
  html_chart(p99, "no request completed", out);
}

// Seconds under 0.5 s are left out, as on the timeline.
void write_stores_side_by_side(Database& db, int64_t run_id, std::ostream& out) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  auto t = db.prepare("SELECT COUNT(*) FROM targets WHERE run_id = ?");
  t.bind(1, run_id);
  if (!t.step() || t.column_int(0) < 2) return;
  auto add_point = [&](svg::Series& se, double x, double y) {  // a gap after a missing second
    if (!se.points.empty() && x - se.points.back().first > 1.5) se.points.emplace_back(x, kNaN);
    se.points.emplace_back(x, y);
  };
  auto s = db.prepare(
      "SELECT p.name, t.uri, t.ordinal, d.op, (d.ts_us - p.started_ts_us) / 1e6, "
      "(d.ops - d.errors - d.timeouts) * 1e6 / d.interval_us, d.lat_p99_us / 1e3 "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND d.warmup = 0 AND d.interval_us >= 500000 "
      "ORDER BY MIN(p.ordinal) OVER (PARTITION BY p.name), t.ordinal, d.op DESC, d.ts_us");
  s.bind(1, run_id);
  std::vector<std::string> phases;
  std::map<std::string, std::pair<svg::Chart, svg::Chart>> charts;  // phase -> (req/s, p99)
  std::map<std::string, size_t> rows;
  std::string last;
  while (s.step()) {
    const std::string phase = s.column_text(0), series = s.column_text(1) + " " + s.column_text(3);
    auto [it, fresh] = charts.try_emplace(phase);
    auto& [rate, p99] = it->second;
    if (fresh) {
      phases.push_back(phase);
      rate.title = "Throughput per second, " + phase + " phase: the stores side by side";
      rate.x.label = "time since the store's " + phase + " phase began (s)";
      rate.y.label = "req/s";
      rate.height = 220;
      p99 = rate;
      p99.title = "p99 per second, " + phase + " phase: the stores side by side (log scale)";
      p99.y.label = "p99 (ms)";
      p99.y.scale = svg::Scale::log;
    }
    ++rows[phase];
    const bool dashed = s.column_text(3) == "get";
    const int color = static_cast<int>(s.column_int(2));
    if (rate.series.empty() || phase + "\n" + series != last) {
      rate.series.push_back(chart_series(series, color, dashed, true));
      p99.series.push_back(chart_series(series, color, dashed, true));
      last = phase + "\n" + series;
    }
    const double x = s.column_double(4);
    add_point(rate.series.back(), x, s.column_double(5));
    add_point(p99.series.back(), x, s.is_null(6) ? kNaN : s.column_double(6));
  }
  bool any = false;
  for (const auto& phase : phases) {
    auto& [rate, p99] = charts[phase];
    if (rows[phase] < 4 || rate.series.size() < 2) continue;  // a load of a second or two
    if (!any)
      out << "<h3>The stores side by side</h3>\n<p class=\"note\">Each phase on time since that "
             "store's phase began, so stores run one after the other overlay. Writes (set) "
             "solid, reads (get) dashed.</p>\n";
    any = true;
    out << svg::render(rate) << svg::render(p99);
  }
}

}  // namespace kv::drive
