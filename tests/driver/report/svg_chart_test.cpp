// The SVG chart writer: ticks, labels, escaping, gaps, log axes and charts without data.
#include "report/svg_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {
using namespace kv::drive::svg;

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(SvgChart, NiceTicksAreRoundSteps) {
  EXPECT_EQ(nice_ticks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 1, 5).size(), 6u);
  auto t = nice_ticks(0, 47000, 5);
  ASSERT_GE(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 10000);
  EXPECT_EQ(nice_ticks(3, 3).size(), 1u);
  EXPECT_TRUE(nice_ticks(NAN, 1).empty());
}

TEST(SvgChart, LogTicksArePowersOfTenWithTwoAndFiveInShortRanges) {
  EXPECT_EQ(log_ticks(0.01, 100), (std::vector<double>{0.01, 0.1, 1, 10, 100}));
  EXPECT_EQ(log_ticks(1, 100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_TRUE(log_ticks(0, 10).empty());
}

TEST(SvgChart, TickLabelsAreShort) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(12), "12");
  EXPECT_EQ(tick_label(1000), "1k");
  EXPECT_EQ(tick_label(1500), "1.5k");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(3e6), "3M");
  EXPECT_EQ(tick_label(1.2e9), "1.2G");
}

TEST(SvgChart, EscapesEveryText) {
  EXPECT_EQ(escape_xml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  Chart c;
  c.title = "<script>alert(1)</script>";
  c.x.label = "x & y";
  c.series.push_back({"redis://a:b@\"host\"", {{0, 1}, {1, 2}}, -1, false, false, ""});
  std::string svg = render(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("x &amp; y"), std::string::npos);
  EXPECT_NE(svg.find("&quot;host&quot;"), std::string::npos);
}

TEST(SvgChart, EmptyChartSaysNoDataInsteadOfCrashing) {
  Chart c;
  c.title = "nothing";
  std::string svg = render(c);
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 0);
  // Series without usable points, and log axes with only zeros, are empty too.
  c.series.push_back({"nan", {{0, NAN}, {1, INFINITY}}, -1, false, false, ""});
  c.y.scale = Scale::log;
  c.series.push_back({"zeros", {{0, 0}, {1, 0}}, -1, false, false, ""});
  svg = render(c);
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_EQ(svg.find("nan,"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChart, NanBreaksALineAndLonePointsGetADot) {
  Chart c;
  c.series.push_back(
      {"s", {{0, 1}, {1, 2}, {2, NAN}, {3, 4}, {4, 5}, {5, NAN}, {6, 1}}, -1, true, false, ""});
  std::string svg = render(c);
  EXPECT_EQ(count(svg, "<polyline"), 2);
  EXPECT_EQ(count(svg, "<circle"), 1);
  EXPECT_NE(svg.find("stroke-dasharray=\"6 4\""), std::string::npos);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(SvgChart, CategoryAxisLabelsEveryStepAndMarkersDotEveryPoint) {
  Chart c;
  c.x.categories = {"20B", "1K", "1M"};
  c.y.scale = Scale::log;
  c.series.push_back({"w", {{0, 50000}, {1, 40000}, {2, 300}}, -1, false, true, ""});
  std::string svg = render(c);
  for (const char* step : {">20B<", ">1K<", ">1M<"})
    EXPECT_NE(svg.find(step), std::string::npos) << step;
  EXPECT_EQ(count(svg, "<circle"), 3);
  EXPECT_NE(svg.find(">100<"), std::string::npos);  // log ticks span 100 .. 100k
  EXPECT_NE(svg.find(">100k<"), std::string::npos);
}

TEST(SvgChart, LegendNamesEverySeriesAndGrowsTheHeight) {
  Chart c;
  c.width = 400;
  for (int i = 0; i < 6; ++i)
    c.series.push_back(
        {"memcached://127.0.0.1:1121" + std::to_string(i), {{0, 1}, {1, 2}}, -1, false, false, ""});
  std::string svg = render(c);
  for (int i = 0; i < 6; ++i)
    EXPECT_NE(svg.find(":1121" + std::to_string(i) + "<"), std::string::npos);
  EXPECT_EQ(svg.find("height=\"240.0\""), std::string::npos);  // rows of legend added
}

TEST(SvgChart, SequentialColoursRunFromDarkToLight) {
  EXPECT_EQ(sequential(0), "#440154");
  EXPECT_EQ(sequential(1), "#dcc81e");
  EXPECT_EQ(sequential(NAN), "#440154");
  EXPECT_EQ(sequential(0.5).size(), 7u);
}

TEST(SvgChart, BoundariesContextSeriesAndLineStyles) {
  Chart c;
  c.x.min = 0.0;
  c.x.max = 10.0;
  Series own{"own", {{0, 1}, {10, 2}}, 0, false, false, ""};
  own.dotted = true;
  Series grey{"grey context", {{0, 2}, {10, 3}}, 1, false, false, "#d4d6dc"};
  grey.in_legend = false;
  c.series = {grey, own};
  // Two boundaries 0.1 apart: both lines drawn, the second label left out (it would overlap).
  c.boundaries = {{2.0, "step-one"}, {2.1, "step-two"}, {7.0, "step-three"}};
  std::string svg = render(c);
  EXPECT_EQ(count(svg, "class=\"boundary\""), 3);
  EXPECT_EQ(count(svg, ">step-one<"), 1);
  EXPECT_EQ(count(svg, ">step-two<"), 0);
  EXPECT_EQ(count(svg, ">step-three<"), 1);
  EXPECT_EQ(count(svg, "grey context"), 0);  // drawn, not in the legend
  EXPECT_EQ(count(svg, ">own<"), 1);
  EXPECT_EQ(count(svg, "stroke-dasharray=\"1.5 3\""), 2);  // the line and its legend swatch
  EXPECT_EQ(count(svg, "<polyline"), 2);
  EXPECT_TRUE(has_data(c));
}

TEST(SvgChart, HasDataIsFalseWithoutADrawablePoint) {
  Chart c;
  c.y.scale = Scale::log;
  c.series = {Series{"s", {{0, 0}, {1, NAN}, {2, -1}}, 0, false, false, ""}};
  EXPECT_FALSE(has_data(c));  // zero and negative have no place on a log axis
  c.series[0].points.emplace_back(3, 0.5);
  EXPECT_TRUE(has_data(c));
  EXPECT_FALSE(has_data(Chart{}));
}

}  // namespace
