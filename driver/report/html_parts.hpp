// Pieces of the HTML report shared by its sections (html_report.cpp, search_report.cpp,
// compare_html.cpp): a table and a chart in the page's style.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/report_tables.hpp"
#include "report/svg_chart.hpp"
#include "view/hints.hpp"
#include "view/percentiles.hpp"
#include "view/trace_curve.hpp"

namespace kv::drive {

// A page's start, up to and with <body>: its title ("kvbench report: " + `title`, which
// output_file.hpp takes for one of kvbench's own pages) and the report's style.
void html_page_head(const std::string& title, std::ostream& out);
// A report table as an HTML table (numbers right-aligned, wide tables dense and scrolling), with
// its notes before and after.
void html_table(const ReportTable& t, std::ostream& out);
// A chart's series: its legend name, colour (svg_chart.hpp's palette index), dashed or solid,
// with point markers or not.
svg::Series chart_series(std::string name, int color, bool dashed, bool markers = false);
// The chart as inline SVG, or where it has nothing to draw a "no data" line naming why_empty.
void html_chart(const svg::Chart& c, const std::string& why_empty, std::ostream& out);
// A run's timeline section: its panels over the run's wall time (html_timeline.cpp).
void html_timeline(Database& db, int64_t run_id, const std::vector<Hint>& hints,
                   const PercentileList& percentiles, std::ostream& out);
// A replay's trace sized: its miss-ratio curve with each store's measured miss ratio across it
// (html_trace.cpp); nothing for a run that replayed no trace.
void html_trace_curves(const std::vector<TraceCurveView>& curves, std::ostream& out);

}  // namespace kv::drive
