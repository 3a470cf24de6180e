// The HTML report: page layout and its charts; view/ reads what they draw. See html_report.hpp.
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "kvbench/clock.hpp"
#include "kvbench/version.hpp"
#include "report/compare_html.hpp"
#include "report/headline.hpp"
#include "report/html_parts.hpp"
#include "report/report.hpp"
#include "report/report_tables.hpp"
#include "report/search_report.hpp"
#include "report/svg_chart.hpp"
#include "report/text_table.hpp"
#include "view/charts.hpp"
#include "view/hints.hpp"
#include "view/run_header.hpp"

namespace kv::drive {
namespace {

using svg::escape_xml;

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

}  // namespace

void html_page_head(const std::string& title, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kvbench "
         "report: "
      << escape_xml(title) << "</title>\n<style>" << kStyle << "</style></head><body>\n";
}

svg::Series chart_series(std::string name, int color, bool dashed, bool markers) {
  svg::Series s;
  s.name = std::move(name);
  s.color = color;
  s.dashed = dashed;
  s.markers = markers;
  return s;
}

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

// Per step and store, writes and reads: req/s (`mib` false) or MiB/s.
void step_chart(const std::vector<StepThroughput>& rows, const std::string& scenario, bool mib,
                std::ostream& out) {
  svg::Chart c;
  c.title = (mib ? "MiB/s per step" : "Throughput per step") +
            (scenario.empty() ? "" : " (" + scenario + ")");
  c.height = 300;
  c.x.label = "scenario step";
  c.y.label = mib ? "MiB/s (values sent or received)" : "req/s";
  std::map<std::pair<int64_t, int>, size_t> index;
  double lo = INFINITY, hi = 0;
  for (const auto& r : rows) {
    auto& cats = c.x.categories;
    auto pos = std::find(cats.begin(), cats.end(), r.step);
    if (pos == cats.end()) pos = cats.insert(cats.end(), r.step);
    double x = static_cast<double>(pos - cats.begin());
    for (int op = 0; op < 2; ++op) {
      const std::optional<double>& v = mib ? (op ? r.read_mib_per_s : r.write_mib_per_s)
                                           : (op ? r.read_req_per_s : r.write_req_per_s);
      if (!v) continue;
      auto [it, fresh] = index.try_emplace(std::pair{r.target_id, op}, c.series.size());
      if (fresh)
        c.series.push_back(
            chart_series(r.store + (op ? " reads" : " writes"), r.target_ordinal, op == 1, true));
      c.series[it->second].points.emplace_back(x, *v);
      if (*v > 0) lo = std::min(lo, *v);
      hi = std::max(hi, *v);
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

// One curve of the latency charts: a store and op's histogram (`steps`: one step's).
struct Curve {
  std::string chart, name;
  int color;
  bool dashed;
  std::map<double, int64_t> buckets;  // upper_us → count
};

// The curves of `rows` in the order they first appear; `step_count`: how many steps there are.
std::vector<Curve> latency_curves(const std::vector<LatencyBucket>& rows, bool steps,
                                  size_t& step_count) {
  std::vector<Curve> curves;
  std::map<std::string, size_t> index;
  std::map<std::string, int> step_color;
  for (const auto& r : rows) {
    std::string chart = steps ? r.uri + " " + r.op : r.op, name = steps ? r.step : r.uri;
    auto [it, fresh] = index.try_emplace(chart + "\n" + name, curves.size());
    if (fresh) {
      int color =
          steps ? step_color.try_emplace(r.step, static_cast<int>(step_color.size())).first->second
                : r.target_ordinal;
      curves.push_back({chart, name, color, false, {}});
    }
    curves[it->second].buckets[r.upper_us] += r.count;
  }
  step_count = step_color.size();
  return curves;
}

// Percentile curves: x is the number of nines of the percentile (0 → p0, 1 → p90, 2 → p99 ...).
void latency_charts(const std::vector<LatencyBucket>& rows, bool steps, std::ostream& out) {
  size_t step_count = 0;
  const std::vector<Curve> curves = latency_curves(rows, steps, step_count);
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
    svg::Series se = chart_series(c.name, c.color, c.dashed);
    if (steps && step_count > 1)  // ordered steps: a sequential scale, small → large
      se.css_color = svg::sequential(0.9 * c.color / static_cast<double>(step_count - 1));
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

// A run's heading: its name, status, times, host, scenario, command line and any error.
void run_head(int64_t run_id, const RunHeader& h, std::ostream& out) {
  out << "<h2>Run " << run_id << (h.name ? " “" + escape_xml(*h.name) + "”" : "") << "</h2>\n"
      << "<p class=\"meta\">" << escape_xml(h.status) << ", started "
      << escape_xml(format_ts_us(h.started_us));
  if (h.ended_us)
    out << ", " << fmt_fixed(static_cast<double>(*h.ended_us - h.started_us) / 1e6, 1) << " s";
  out << " on " << escape_xml(h.client_host);
  if (h.repeat_group)
    out << "; round " << h.round << " of " << h.rounds << " (" << escape_xml(*h.repeat_group)
        << ")";
  if (h.scenario && !h.scenario->empty()) {
    out << "; scenario " << escape_xml(*h.scenario);
    if (h.scale) out << " at scale " << *h.scale;
  }
  out << "<br><code>" << escape_xml(h.command_line) << "</code></p>\n";
  if (h.error) out << "<p class=\"meta\">error: " << escape_xml(*h.error) << "</p>\n";
}

// One run's section; `tables` (run_tables) and `headline` (run_headline) made once by the caller.
void run_section(Database& db, const RunView& view, const std::vector<ReportTable>& tables,
                 const Headline& headline, const PercentileList& percentiles, std::ostream& out) {
  const int64_t run_id = view.run_id;
  const RunHeader& head = view.header;
  const std::string scenario = head.scenario.value_or("");
  run_head(run_id, head, out);

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

  const std::vector<Hint>& hints = view.hints;
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
  html_timeline(db, run_id, hints, percentiles, out);
  if (steps) {
    const auto rows = step_throughput(db, run_id);
    step_chart(rows, scenario, false, out);
    step_chart(rows, scenario, true, out);
  }
  if (!steps && !headline.searched) write_stores_side_by_side(db, run_id, out);
  latency_charts(latency_buckets(db, run_id), steps, out);
  html_trace_curves(view.trace_curves, out);
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
  html_page_head(db.path(), out);
  out << "<h1>kvbench report</h1>\n<p class=\"meta\">" << escape_xml(db.path()) << " · "
      << runs.size() << (runs.size() == 1 ? " run" : " runs") << " · kvdrive "
      << escape_xml(version()) << "</p>\n";
  if (runs.empty()) out << "<p>This file holds no runs yet.</p>\n";
  std::vector<RunView> views;
  std::vector<std::vector<ReportTable>> tables;
  std::vector<Headline> headlines;
  for (int64_t id : runs) {
    views.push_back(load_run_view(db, id, percentiles));
    tables.push_back(run_tables(views.back(), percentiles));
    headlines.push_back(run_headline(db, views.back(), tables.back()));
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
    run_section(db, views[i], tables[i], headlines[i], percentiles, out);
  if (run_ids.size() >= 2) {
    out << "<h2>Comparison</h2>\n";
    write_comparison_charts(db, run_ids, out);
    for (const auto& t : comparison_tables(db, run_ids)) html_table(t, out);
  }
  out << "</body></html>\n";
}

}  // namespace kv::drive
