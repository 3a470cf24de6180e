// SVG line charts for the HTML report: see svg_chart.hpp.
#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace kv::drive::svg {
namespace {

constexpr double kLeft = 74, kRight = 30, kTop = 30, kBottom = 44;
constexpr double kLegendRow = 18, kCharWidth = 6.6;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

bool usable(double v, Scale s) { return std::isfinite(v) && (s == Scale::linear || v > 0); }

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// The axis range and its ticks, from the data range and the axis settings.
struct Mapped {
  double lo, hi;
  Scale scale;
  std::vector<std::pair<double, std::string>> ticks;
  double frac(double v) const {
    if (scale == Scale::log)
      return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

Mapped map_axis(const Axis& a, Range data) {
  Mapped m{0, 1, a.scale, {}};
  if (!a.categories.empty()) {
    m.scale = Scale::linear;
    m.lo = -0.5;
    m.hi = static_cast<double>(a.categories.size()) - 0.5;
    for (size_t i = 0; i < a.categories.size(); ++i)
      m.ticks.emplace_back(static_cast<double>(i), a.categories[i]);
    return m;
  }
  for (const auto& t : a.ticks) data.add(t.first);
  if (a.min) data.lo = *a.min;
  if (a.max) data.hi = *a.max;
  if (data.empty()) data = a.scale == Scale::log ? Range{1, 10} : Range{0, 1};
  if (a.scale == Scale::log) {
    if (data.lo == data.hi) data = {data.lo / 2, data.hi * 2};
    m.lo = a.min ? *a.min : std::pow(10.0, std::floor(std::log10(data.lo)));
    m.hi = a.max ? *a.max : std::pow(10.0, std::ceil(std::log10(data.hi)));
    if (m.hi <= m.lo) m.hi = m.lo * 10;
    for (double t : log_ticks(m.lo, m.hi)) m.ticks.emplace_back(t, tick_label(t));
  } else {
    if (a.zero_based && !a.min && data.lo > 0) data.lo = 0;
    if (data.lo == data.hi) data.hi = data.lo + (data.lo == 0 ? 1 : std::fabs(data.lo));
    auto t = nice_ticks(data.lo, data.hi);
    double step = t.size() > 1 ? t[1] - t[0] : 1;
    m.lo = a.min ? *a.min : std::min(data.lo, std::floor(data.lo / step) * step);
    m.hi = a.max ? *a.max : std::max(data.hi, std::ceil(data.hi / step - 1e-9) * step);
    for (double v : nice_ticks(m.lo, m.hi))
      if (v >= m.lo - 1e-9 * step && v <= m.hi + 1e-9 * step)
        m.ticks.emplace_back(v, tick_label(v));
  }
  if (!a.ticks.empty()) m.ticks = a.ticks;
  return m;
}

}  // namespace

const char* palette(int i) {
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  int n = static_cast<int>(sizeof colors / sizeof colors[0]);
  return colors[((i % n) + n) % n];
}

std::string sequential(double f) {
  // A few stops of viridis, interpolated linearly.
  static const double stops[][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {220, 200, 30}};
  f = std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * 4;
  int i = std::min(3, static_cast<int>(f));
  double t = f - static_cast<double>(i);
  char buf[16];
  int rgb[3];
  for (int k = 0; k < 3; ++k)
    rgb[k] = static_cast<int>(std::lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * t));
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buf;
}

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) return {lo};
  double raw = (hi - lo) / std::max(1, target);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> out;
  double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9 && out.size() < 100; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return out;
  int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  bool fine = b - a < 3;
  for (int e = a; e <= b && out.size() < 60; ++e) {
    double p = std::pow(10.0, e);
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      double v = m * p;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  }
  return out;
}

std::string tick_label(double v) {
  if (!std::isfinite(v)) return "";
  if (v == 0) return "0";
  double a = std::fabs(v);
  const char* suffix = "";
  if (a >= 1e9) {
    v /= 1e9;
    suffix = "G";
  } else if (a >= 1e6) {
    v /= 1e6;
    suffix = "M";
  } else if (a >= 1e3) {
    v /= 1e3;
    suffix = "k";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, suffix);
  return buf;
}

bool has_data(const Chart& c) {
  for (const auto& s : c.series)
    for (auto [x, y] : s.points)
      if (usable(x, c.x.scale) && usable(y, c.y.scale)) return true;
  return false;
}

namespace {

// Where the legend's entries go: per series (x, row), (-1, -1) for one left out; and how many
// rows it takes, which sets the SVG's height.
struct Legend {
  std::vector<std::pair<double, double>> pos;
  double rows = 0;
};

Legend legend_layout(const Chart& c) {
  Legend l;
  if (!c.legend) return l;
  double lx = kLeft;
  for (const auto& s : c.series) {
    if (!s.in_legend) {
      l.pos.emplace_back(-1, -1);
      continue;
    }
    double w = 34 + kCharWidth * static_cast<double>(s.name.size()) + 16;
    if (lx + w > c.width - kRight && lx > kLeft) {
      lx = kLeft;
      l.rows += 1;
    }
    l.pos.emplace_back(lx, l.rows);
    lx += w;
  }
  if (std::any_of(c.series.begin(), c.series.end(), [](const Series& s) { return s.in_legend; }))
    l.rows += 1;
  return l;
}

// The plot area (px0..px1, py0..py1) and the axes mapped onto it.
struct Frame {
  double px0, px1, py0, py1;
  Mapped mx, my;
  bool any = false;  // a drawable point
  double X(double v) const { return px0 + std::clamp(mx.frac(v), 0.0, 1.0) * (px1 - px0); }
  double Y(double v) const { return py1 - std::clamp(my.frac(v), 0.0, 1.0) * (py1 - py0); }
};

Frame frame_of(const Chart& c) {
  Range xr, yr;
  bool any = false;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) {
      if (!usable(x, c.x.scale) || !usable(y, c.y.scale)) continue;
      xr.add(x);
      yr.add(y);
      any = true;
    }
  for (const auto& b : c.bands) {
    xr.add(b.x0);
    xr.add(b.x1);
  }
  return Frame{
      kLeft, c.width - kRight, kTop, c.height - kBottom, map_axis(c.x, xr), map_axis(c.y, yr), any};
}

void draw_bands(const Chart& c, const Frame& f, std::ostream& o) {
  for (size_t i = 0; i < c.bands.size(); ++i) {
    const auto& b = c.bands[i];
    double x0 = f.X(b.x0), x1 = f.X(b.x1);
    o << "<rect x=\"" << num(x0) << "\" y=\"" << num(f.py0) << "\" width=\""
      << num(std::max(0.0, x1 - x0)) << "\" height=\"" << num(f.py1 - f.py0) << "\" fill=\""
      << (i % 2 ? "#eef1f6" : "#f6f7fa") << "\"/>\n";
    if (x1 - x0 > kCharWidth * 0.9 * static_cast<double>(b.label.size()) + 4)
      o << "<text x=\"" << num(x0 + 3) << "\" y=\"" << num(f.py0 + 11)
        << "\" font-size=\"10\" fill=\"#667\">" << escape_xml(b.label) << "</text>\n";
  }
}

// The grid, the ticks, the frame and the axes' labels.
void draw_axes(const Chart& c, const Frame& f, std::ostream& o) {
  for (const auto& [v, label] : f.my.ticks) {
    if (!usable(v, f.my.scale)) continue;
    double y = f.Y(v);
    o << "<line x1=\"" << num(f.px0) << "\" x2=\"" << num(f.px1) << "\" y1=\"" << num(y)
      << "\" y2=\"" << num(y) << "\" stroke=\"#dde\" stroke-width=\"1\"/>\n";
    o << "<text x=\"" << num(f.px0 - 6) << "\" y=\"" << num(y + 4)
      << "\" text-anchor=\"end\" fill=\"#333\">" << escape_xml(label) << "</text>\n";
  }
  for (const auto& [v, label] : f.mx.ticks) {
    if (!usable(v, f.mx.scale)) continue;
    double x = f.X(v);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.py1) << "\" y2=\""
      << num(f.py1 + 5) << "\" stroke=\"#555\"/>\n";
    o << "<text x=\"" << num(x) << "\" y=\"" << num(f.py1 + 18)
      << "\" text-anchor=\"middle\" fill=\"#333\">" << escape_xml(label) << "</text>\n";
  }
  o << "<rect x=\"" << num(f.px0) << "\" y=\"" << num(f.py0) << "\" width=\"" << num(f.px1 - f.px0)
    << "\" height=\"" << num(f.py1 - f.py0) << "\" fill=\"none\" stroke=\"#888\"/>\n";
  o << "<text x=\"" << num((f.px0 + f.px1) / 2) << "\" y=\"" << num(f.py1 + 36)
    << "\" text-anchor=\"middle\" fill=\"#222\">" << escape_xml(c.x.label) << "</text>\n";
  const double ym = (f.py0 + f.py1) / 2;
  o << "<text x=\"14\" y=\"" << num(ym)
    << "\" text-anchor=\"middle\" fill=\"#222\" transform=\"rotate(-90 14 " << num(ym) << ")\">"
    << escape_xml(c.y.label) << "</text>\n";
}

// Phase boundaries (labels that would overlap left out), marked moments, "no data".
void draw_marks(const Chart& c, const Frame& f, std::ostream& o) {
  double last_label_end = -1e9;
  for (const auto& m : c.boundaries) {
    if (!usable(m.x, f.mx.scale)) continue;
    double x = f.X(m.x);
    o << "<line class=\"boundary\" x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\""
      << num(f.py0) << "\" y2=\"" << num(f.py1) << "\" stroke=\"#99a\" stroke-width=\"0.8\"/>\n";
    double label_w = 5.5 * static_cast<double>(m.label.size());
    if (x + 2 > last_label_end && x + 2 + label_w < f.px1) {
      o << "<text x=\"" << num(x + 2) << "\" y=\"" << num(f.py1 - 4)
        << "\" font-size=\"9\" fill=\"#556\">" << escape_xml(m.label) << "</text>\n";
      last_label_end = x + 2 + label_w + 4;
    }
  }
  for (const auto& m : c.markers) {
    if (!usable(m.x, f.mx.scale)) continue;
    double x = f.X(m.x);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.py0) << "\" y2=\""
      << num(f.py1) << "\" stroke=\"#c00\" stroke-dasharray=\"3 3\"/>\n";
    o << "<text x=\"" << num(x + 3) << "\" y=\"" << num(f.py0 + 24)
      << "\" font-size=\"10\" fill=\"#c00\">" << escape_xml(m.label) << "</text>\n";
  }
  if (!f.any) {
    o << "<text class=\"nodata\" x=\"" << num((f.px0 + f.px1) / 2) << "\" y=\""
      << num((f.py0 + f.py1) / 2)
      << "\" text-anchor=\"middle\" fill=\"#999\" font-size=\"14\">no data</text>\n";
  }
}

// Series `si`: its polylines (a gap where a point is unusable), its dots, its legend entry.
void draw_series(const Chart& c, size_t si, const Frame& f, const Legend& legend, std::ostream& o) {
  const auto& s = c.series[si];
  std::string color =
      !s.css_color.empty() ? s.css_color : palette(s.color >= 0 ? s.color : static_cast<int>(si));
  std::string dash = s.dotted   ? " stroke-dasharray=\"1.5 3\""
                     : s.dashed ? " stroke-dasharray=\"6 4\""
                                : "";
  std::vector<std::pair<double, double>> segment, dots;
  auto flush = [&] {
    if (segment.size() > 1) {
      o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"" << num(s.width)
        << "\"" << dash << " stroke-linejoin=\"round\" points=\"";
      for (size_t i = 0; i < segment.size(); ++i)
        o << (i ? " " : "") << num(segment[i].first) << "," << num(segment[i].second);
      o << "\"/>\n";
    }
    if (segment.size() == 1 || s.markers) dots.insert(dots.end(), segment.begin(), segment.end());
    segment.clear();
  };
  for (const auto& [x, y] : s.points) {
    if (usable(x, f.mx.scale) && usable(y, f.my.scale))
      segment.emplace_back(f.X(x), f.Y(y));
    else
      flush();  // a gap
  }
  flush();
  for (auto [x, y] : dots)
    o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"2.8\" fill=\"" << color
      << "\"/>\n";
  if (c.legend && s.in_legend) {
    auto [lx0, row] = legend.pos[si];
    double ly = c.height + 10 + row * kLegendRow;
    o << "<line x1=\"" << num(lx0) << "\" x2=\"" << num(lx0 + 26) << "\" y1=\"" << num(ly - 4)
      << "\" y2=\"" << num(ly - 4) << "\" stroke=\"" << color << "\" stroke-width=\"2.5\"" << dash
      << "/>\n";
    o << "<text x=\"" << num(lx0 + 32) << "\" y=\"" << num(ly) << "\" fill=\"#222\">"
      << escape_xml(s.name) << "</text>\n";
  }
}

}  // namespace

std::string render(const Chart& c) {
  // Legend layout first: it sets the SVG's height.
  const Legend legend = legend_layout(c);
  const double W = c.width;
  const double H = c.height + legend.rows * kLegendRow + (legend.rows > 0 ? 6 : 0);
  const Frame f = frame_of(c);
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << num(W) << " "
    << num(H) << "\" width=\"" << num(W) << "\" height=\"" << num(H)
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << num(W) << "\" height=\"" << num(H)
    << "\" fill=\"#fff\"/>\n";
  o << "<text x=\"" << num(f.px0)
    << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">" << escape_xml(c.title)
    << "</text>\n";
  // Bands, then grid, then axes, then data on top.
  draw_bands(c, f, o);
  draw_axes(c, f, o);
  draw_marks(c, f, o);
  for (size_t si = 0; si < c.series.size(); ++si) draw_series(c, si, f, legend, o);
  o << "</svg>\n";
  return o.str();
}

}  // namespace kv::drive::svg
