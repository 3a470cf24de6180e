// A small SVG chart writer for kvdrive's HTML report: line charts with linear or log axes,
// "nice" ticks, category axes (scenario steps), shaded x bands (phases), polyline series with
// optional markers, a legend, and XML escaping of every text. Output is one <svg> element with
// inline styling only, so the page needs no script, font or stylesheet from outside.
//
// Data never crashes the writer: NaN / infinite points (and non-positive ones on a log axis)
// break a line into pieces; a chart without any drawable point shows a "no data" note.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kv::drive::svg {

enum class Scale { linear, log };

struct Axis {
  std::string label;  // with its unit, e.g. "throughput (req/s)"
  Scale scale = Scale::linear;
  std::optional<double> min, max;  // fixed range; otherwise from the data
  bool zero_based = true;          // linear axes start at 0 unless data goes below
  // Explicit ticks (value, label): replace the computed ones (e.g. the "nines" axis).
  std::vector<std::pair<double, std::string>> ticks;
  // A category axis: point x values are indices 0..n-1, labelled with these names.
  std::vector<std::string> categories;
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); a NaN y breaks the line
  int color = -1;                                 // palette index; -1: the series' position
  bool dashed = false;                            // e.g. reads dashed, writes solid
  bool markers = false;   // a dot on every point (always on for single points)
  std::string css_color;  // overrides `color` when set, e.g. "#3b528b"
  bool dotted = false;    // a third line style (overrides dashed)
  bool in_legend = true;  // false: drawn but not named (e.g. grey context curves)
  double width = 1.8;     // stroke width in px
};

// A shaded range of x with a label at the top (e.g. which store / phase ran then).
struct Band {
  double x0, x1;
  std::string label;
};

// A vertical line at x with a label (e.g. swap onset).
struct Marker {
  double x;
  std::string label;
};

struct Chart {
  std::string title;
  int width = 1100, height = 240;  // of the whole SVG, in px
  Axis x, y;
  std::vector<Series> series;
  std::vector<Band> bands;
  std::vector<Marker> markers;
  // Thin grey vertical lines with a label at the bottom of the plot (e.g. scenario step
  // boundaries); a label that would overlap the previous one is left out.
  std::vector<Marker> boundaries;
  bool legend = true;
};

// The chart as one <svg> element.
std::string render(const Chart& chart);
// Whether the chart has at least one point it can draw (finite, and positive on a log axis).
bool has_data(const Chart& chart);

// Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// Ticks of a log axis over [lo, hi] (both > 0): powers of ten, plus 2× and 5× when the range
// spans fewer than three decades.
std::vector<double> log_ticks(double lo, double hi);
// A short tick label: 0, 0.25, 12, 1.5k, 20k, 3M, 1.2G.
std::string tick_label(double v);
// Text safe inside XML/HTML text and attribute values (& < > " ').
std::string escape_xml(std::string_view s);
// The palette colour of series i (cycles), as #rrggbb.
const char* palette(int i);
// A colour on a sequential scale (dark blue → green → yellow) for position f in [0, 1], for
// ordered series such as value-size steps.
std::string sequential(double f);

}  // namespace kv::drive::svg
