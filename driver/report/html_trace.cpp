// The HTML report's trace section (html_parts.hpp): a replayed trace's miss-ratio curve, with
// each store's measured miss ratio across it.
#include <ostream>
#include <string>

#include "report/html_parts.hpp"
#include "view/trace_curve.hpp"

namespace kv::drive {

void html_trace_curves(const std::vector<TraceCurveView>& curves, std::ostream& out) {
  for (const TraceCurveView& v : curves) {
    svg::Chart c;
    c.title = "Miss ratio by cache size: " + v.trace +
              " (LRU, filled on a miss; a store's line is the share of its gets that missed)";
    c.height = 280;
    c.x.label = "cache size (% of the trace's working set)";
    c.x.min = 0.0;
    c.x.max = 100.0;
    c.y.label = "miss ratio";
    c.y.min = 0.0;
    c.y.max = 1.0;
    svg::Series objects = chart_series("LRU, a cache of N objects", 0, false, true);
    svg::Series bytes = chart_series("LRU, a cache of N bytes", 1, true, true);
    for (const TraceCurvePoint& p : v.points) {
      objects.points.emplace_back(p.fraction * 100, p.objects_miss_ratio);
      bytes.points.emplace_back(p.fraction * 100, p.bytes_miss_ratio);
    }
    c.series = {objects, bytes};
    for (const auto& m : v.measured) {
      svg::Series s = chart_series(m.store + " measured", m.target_ordinal + 2, false);
      s.dotted = true;
      s.points = {{0, m.miss_ratio}, {100, m.miss_ratio}};
      c.series.push_back(std::move(s));
    }
    html_chart(c, "no curve", out);
  }
}

}  // namespace kv::drive
