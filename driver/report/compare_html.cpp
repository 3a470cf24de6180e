// The overlay of several runs' per-second curves: see compare_html.hpp.
#include "report/compare_html.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "report/html_parts.hpp"
#include "report/svg_chart.hpp"
#include "view/charts.hpp"

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
  for (size_t i = 0; i < run_ids.size(); ++i) {
    std::map<std::pair<int64_t, std::string>, size_t> index;
    for (const auto& d : overlay_seconds(db, run_ids[i])) {
      auto [it, fresh] = index.try_emplace({d.target_ordinal, d.op}, rate.series.size());
      if (fresh)
        for (svg::Chart* c : {&rate, &p50, &p99}) {
          svg::Series s;
          s.name = "run " + std::to_string(run_ids[i]) + " " + d.uri + " " + d.op;
          s.color = static_cast<int>(i);
          s.dashed = d.op == "get";
          c->series.push_back(std::move(s));
        }
      const double iv = static_cast<double>(d.interval_us);
      // A phase's last, partial second beside full ones is noise as a rate: left out.
      if (iv < 5e5 && d.phase_max_interval_us >= 1'000'000) continue;
      const double x = (static_cast<double>(d.offset_us) + iv / 2) / 1e6;
      const size_t series = it->second;  // (clang 14 cannot capture a structured binding)
      auto add = [&](svg::Chart& c, double y) {
        auto& pts = c.series[series].points;
        if (!pts.empty() && x - pts.back().first > 1.6) pts.emplace_back(x, kNaN);
        pts.emplace_back(x, y);
      };
      add(rate, static_cast<double>(d.ok) * 1e6 / iv);
      add(p50, d.p50_us ? *d.p50_us / 1000 : kNaN);
      add(p99, d.p99_us ? *d.p99_us / 1000 : kNaN);
    }
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
  if (target_count(db, run_id) < 2) return;
  auto add_point = [&](svg::Series& se, double x, double y) {  // a gap after a missing second
    if (!se.points.empty() && x - se.points.back().first > 1.5) se.points.emplace_back(x, kNaN);
    se.points.emplace_back(x, y);
  };
  std::vector<std::string> phases;
  std::map<std::string, std::pair<svg::Chart, svg::Chart>> charts;  // phase -> (req/s, p99)
  std::map<std::string, size_t> rows;
  std::string last;
  for (const auto& s : side_by_side_seconds(db, run_id)) {
    const std::string& phase = s.phase;
    const std::string series = s.uri + " " + s.op;
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
    const bool dashed = s.op == "get";
    const int color = s.target_ordinal;
    if (rate.series.empty() || phase + "\n" + series != last) {
      rate.series.push_back(chart_series(series, color, dashed, true));
      p99.series.push_back(chart_series(series, color, dashed, true));
      last = phase + "\n" + series;
    }
    add_point(rate.series.back(), s.seconds, s.ok_per_s);
    add_point(p99.series.back(), s.seconds, s.p99_ms ? *s.p99_ms : kNaN);
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
