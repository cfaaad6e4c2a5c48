// SVG charts: well-formed, one marker per drawable point, hand-checked coordinates, skipped points noted.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "k3lab/report/page.hpp"
#include "xml_check.hpp"

namespace k3lab::report {
namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

const double kNaN = std::nan("");
const double kInf = std::numeric_limits<double>::infinity();

Chart line_chart() {
  Chart chart;
  chart.id = "loss";
  chart.title = "Validation loss <by step> & \"arm\"";
  chart.x_label = "tokens";
  chart.y_label = "loss";
  chart.kind = Chart::Kind::Line;
  chart.series.push_back({"baseline", {0, 2, 4, 6, 8, 10}, {5, 4, 3.5, kNaN, 3, 2.9}, {}, {}});
  chart.series.push_back({"attn-res 'AR'", {0, 2, 4, 6, 8, 10}, {5.1, 3.9, 3.4, 3.2, kInf, 2.8},
                          {4.9, 3.7, 3.2, 3.0, 2.9, 2.6}, {5.3, 4.1, 3.6, 3.4, 3.1, 3.0}});
  return chart;
}

TEST(ChartSvg, LineChartIsWellFormedWithOneMarkerPerFinitePoint) {
  const std::string svg = chart_svg(line_chart());
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_EQ(count(svg, "class=\"point\""), 10u);  // 12 points, one NaN and one inf
  EXPECT_NE(svg.find("2 points not drawn (2 NaN or infinite)"), std::string::npos);
  EXPECT_NE(svg.find("Validation loss &lt;by step&gt; &amp; &quot;arm&quot;"), std::string::npos);
  EXPECT_NE(svg.find("attn-res &apos;AR&apos;"), std::string::npos);
  // A skipped point breaks the line: baseline is two runs of 3 and 2 points, the second series a run
  // of 4 (one line, one band) and a lone point (no line, an interval bar).
  EXPECT_EQ(count(svg, "class=\"line\""), 3u);
  EXPECT_EQ(count(svg, "class=\"interval\""), 1u);
  EXPECT_EQ(count(svg, "class=\"band\""), 1u);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(ChartSvg, SameChartSameBytes) { EXPECT_EQ(chart_svg(line_chart()), chart_svg(line_chart())); }

TEST(ChartSvg, PointPositionsByHand) {
  // x and y in [0, 10] give axes 0..10 (step 2). The frame spans x 76..696 and y 348..48 and the
  // data sit 8 px inside it (84..688, 340..56), so (5, 5) lands at (386, 198), (10, 0) at (688, 340)
  // and (0, 10) at (84, 56).
  Chart chart;
  chart.id = "hand";
  chart.kind = Chart::Kind::Scatter;
  chart.series.push_back({"s", {0, 5, 10}, {10, 5, 0}, {}, {}});
  const std::string svg = chart_svg(chart);
  EXPECT_NE(svg.find("cx=\"386\" cy=\"198\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("cx=\"688\" cy=\"340\""), std::string::npos);
  EXPECT_NE(svg.find("cx=\"84\" cy=\"56\""), std::string::npos);
  EXPECT_NE(svg.find(">10</text>"), std::string::npos);  // step 2: whole-number tick labels
}

TEST(ChartSvg, ScatterIntervalsAndLogAxes) {
  Chart chart;
  chart.id = "ctx";
  chart.kind = Chart::Kind::Scatter;
  chart.log_x = true;
  chart.log_y = true;
  chart.series.push_back({"accuracy", {1e3, 1e4, 1e5, 0.0, -5.0, 1e6}, {0.9, 0.8, 0.5, 0.7, 0.6, kNaN},
                          {0.85, 0.7, kNaN, 0.6, 0.5, 0.1}, {0.95, 0.9, 0.6, 0.8, 0.7, 0.2}});
  const std::string svg = chart_svg(chart);
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_EQ(count(svg, "class=\"point\""), 3u);
  EXPECT_EQ(count(svg, "class=\"interval\""), 2u);
  EXPECT_NE(svg.find("3 points not drawn (1 NaN or infinite, 2 not positive on a log axis)"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1 interval not drawn"), std::string::npos);
  EXPECT_NE(svg.find(">1000<"), std::string::npos);
  EXPECT_NE(svg.find(">100000<"), std::string::npos);
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);
}

TEST(ChartSvg, GroupedBarsByHand) {
  Chart chart;
  chart.id = "bars";
  chart.kind = Chart::Kind::Bar;
  chart.categories = {"short <ctx>", "long"};
  chart.series.push_back({"A", {}, {5, 10}, {4, 9}, {6, 11}});
  chart.series.push_back({"B", {}, {kNaN, 2.5}, {}, {}});
  const std::string svg = chart_svg(chart);
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_EQ(count(svg, "class=\"bar\""), 3u);
  EXPECT_EQ(count(svg, "class=\"interval\""), 2u);
  EXPECT_NE(svg.find("short &lt;ctx&gt;"), std::string::npos);
  // y axis 0..12 (step 2, intervals reach 11): value 5 is 5/12 of 300 px = 125 px tall from y 348.
  // Group width 310, bars 0.8 * 310 / 2 = 124 wide, the first starting at 76 + 31 = 107.
  EXPECT_NE(svg.find("x=\"107\" y=\"223\" width=\"124\" height=\"125\""), std::string::npos) << svg;
}

TEST(ChartSvg, EmptyChartsStillRender) {
  Chart none;
  none.id = "empty";
  std::string svg = chart_svg(none);
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_NE(svg.find("no data to plot"), std::string::npos);

  Chart empty_series;
  empty_series.id = "empty-series";
  empty_series.log_y = true;
  empty_series.series.push_back({"nothing yet", {}, {}, {}, {}});
  empty_series.series.push_back({"all NaN", {1, 2}, {kNaN, kNaN}, {}, {}});
  svg = chart_svg(empty_series);
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_NE(svg.find("nothing yet (no points)"), std::string::npos);
  EXPECT_NE(svg.find("all NaN (no points)"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"point\""), 0u);

  Chart bars;
  bars.id = "no-categories";
  bars.kind = Chart::Kind::Bar;
  EXPECT_EQ(testing::xml_error(chart_svg(bars)), "");
}

TEST(ChartSvg, ManySeriesCycleThePalette) {
  Chart chart;
  chart.id = "many";
  for (int s = 0; s < 10; ++s) chart.series.push_back({"s" + std::to_string(s), {0, 1}, {double(s), double(s + 1)}, {}, {}});
  const std::string svg = chart_svg(chart);
  EXPECT_EQ(testing::xml_error(svg), "");
  EXPECT_EQ(count(svg, "class=\"point\""), 20u);
  EXPECT_GE(count(svg, "stroke-dasharray"), 2u);  // only the first series is solid
}

// A series drawn exactly over another (the memory-pool charts' unified and padded-single-page arms)
// must stay visible: its own dash and marker shape, and the legend says which series it covers.
TEST(ChartSvg, SeriesDifferInDashAndMarkerAndAnOverlapIsNamed) {
  Chart chart;
  chart.id = "overlap";
  chart.kind = Chart::Kind::Line;
  chart.series.push_back({"padded-single-page", {0, 1, 2}, {3, 4, 5}, {}, {}});
  chart.series.push_back({"fixed-split", {0, 1, 2}, {1, 2, 2}, {}, {}});
  chart.series.push_back({"unified", {0, 1, 2}, {3, 4, 5}, {}, {}});
  const std::string svg = chart_svg(chart);
  EXPECT_EQ(testing::xml_error(svg), "") << svg;
  EXPECT_NE(svg.find("unified (same values as padded-single-page, drawn over it)"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("fixed-split (same values"), std::string::npos);
  // Series 0 is solid with circles, 1 and 2 dashed with other patterns; markers: 3 circles (series 0)
  // and 3 + 3 polygon paths (square, triangle), plus one of each in the legend.
  EXPECT_EQ(count(svg, "stroke-dasharray=\"7 3\""), 2u);  // series 1: line and legend swatch
  EXPECT_EQ(count(svg, "stroke-dasharray=\"2 3\""), 2u);  // series 2
  EXPECT_EQ(count(svg, "<circle class=\"point\""), 3u);
  EXPECT_EQ(count(svg, "<path class=\"point\""), 6u);
  EXPECT_EQ(count(svg, "class=\"point\""), 9u);
}

TEST(ChartSvg, RejectsMismatchedShapes) {
  Chart chart;
  chart.id = "bad";
  chart.series.push_back({"s", {1, 2, 3}, {1, 2}, {}, {}});
  EXPECT_THROW(chart_svg(chart), std::invalid_argument);
  chart.series[0] = {"s", {1, 2}, {1, 2}, {0, 1}, {}};
  EXPECT_THROW(chart_svg(chart), std::invalid_argument);
  chart.series[0] = {"s", {1, 2}, {1, 2}, {0}, {3}};
  EXPECT_THROW(chart_svg(chart), std::invalid_argument);
  Chart bars;
  bars.kind = Chart::Kind::Bar;
  bars.categories = {"a", "b"};
  bars.series.push_back({"s", {}, {1, 2, 3}, {}, {}});
  EXPECT_THROW(chart_svg(bars), std::invalid_argument);
  bars.series[0].y = {1, 2};
  bars.log_x = true;
  EXPECT_THROW(chart_svg(bars), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::report
