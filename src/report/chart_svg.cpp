// Line, scatter and grouped-bar charts written directly as SVG text. Same chart in, same bytes out:
// coordinates use a fixed precision, nothing depends on the locale, the clock or the platform.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/report/page.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::report {

namespace {

constexpr double kWidth = 720.0;
constexpr double kPlotLeft = 76.0;
constexpr double kPlotRight = kWidth - 24.0;
constexpr double kPlotTop = 48.0;
constexpr double kPlotBottom = kPlotTop + 300.0;
constexpr double kRowHeight = 18.0;
constexpr double kDataInset = 8.0;
constexpr int kMaxTicks = 7;

struct PlotPoint {
  double x = 0.0;  // data space (Bar: category index)
  double y = 0.0;
  bool has_interval = false;
  double low = 0.0;
  double high = 0.0;
};

struct PlotSeries {
  std::vector<std::vector<PlotPoint>> runs;  // consecutive drawable points; a skipped point splits runs
  std::size_t points = 0;
};

struct SkipCounts {
  std::size_t not_finite = 0;
  std::size_t non_positive = 0;
  std::size_t interval_not_drawable = 0;
};

std::string num(double value) { return format_fixed(value, 2); }

std::string chart_name(const Chart& chart) {
  return chart.id.empty() ? std::string("chart") : "chart '" + chart.id + "'";
}

void check_shapes(const Chart& chart) {
  const std::string who = chart_name(chart);
  if (chart.kind == Chart::Kind::Bar && chart.log_x) {
    throw std::invalid_argument(who + ": log_x does not apply to a bar chart (its x axis is categories); unset log_x");
  }
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const Series& series = chart.series[s];
    const std::string which = who + " series " + std::to_string(s) + " ('" + series.label + "')";
    if (chart.kind == Chart::Kind::Bar) {
      if (series.y.size() != chart.categories.size()) {
        throw std::invalid_argument(which + " has " + std::to_string(series.y.size()) + " y values but the chart has " +
                                    std::to_string(chart.categories.size()) +
                                    " categories; a bar chart needs one y per category");
      }
      if (!series.x.empty() && series.x.size() != series.y.size()) {
        throw std::invalid_argument(which + ": x must be empty or match y in a bar chart (bars are placed by category)");
      }
    } else if (series.x.size() != series.y.size()) {
      throw std::invalid_argument(which + " has " + std::to_string(series.x.size()) + " x values and " +
                                  std::to_string(series.y.size()) + " y values; they must pair up");
    }
    if (series.y_low.empty() != series.y_high.empty()) {
      throw std::invalid_argument(which + ": give both y_low and y_high for an interval, or neither");
    }
    if (!series.y_low.empty() && (series.y_low.size() != series.y.size() || series.y_high.size() != series.y.size())) {
      throw std::invalid_argument(which + ": y_low and y_high must have one value per y (" +
                                  std::to_string(series.y.size()) + ")");
    }
  }
}

bool drawable(double value, bool log) { return std::isfinite(value) && (!log || value > 0.0); }

PlotSeries collect(const Chart& chart, const Series& series, SkipCounts& skipped) {
  PlotSeries out;
  std::vector<PlotPoint> run;
  const bool bar = chart.kind == Chart::Kind::Bar;
  for (std::size_t i = 0; i < series.y.size(); ++i) {
    const double x = bar ? static_cast<double>(i) : series.x[i];
    const double y = series.y[i];
    const bool x_ok = bar || drawable(x, chart.log_x);
    const bool y_ok = drawable(y, chart.log_y);
    if (!x_ok || !y_ok) {
      const bool finite = (bar || std::isfinite(x)) && std::isfinite(y);
      ++(finite ? skipped.non_positive : skipped.not_finite);
      if (!run.empty()) out.runs.push_back(std::move(run));
      run.clear();
      continue;
    }
    PlotPoint point{x, y, false, 0.0, 0.0};
    if (!series.y_low.empty()) {
      const double a = series.y_low[i];
      const double b = series.y_high[i];
      if (drawable(a, chart.log_y) && drawable(b, chart.log_y)) {
        point.has_interval = true;
        point.low = std::min(a, b);
        point.high = std::max(a, b);
      } else {
        ++skipped.interval_not_drawable;
      }
    }
    run.push_back(point);
    ++out.points;
  }
  if (!run.empty()) out.runs.push_back(std::move(run));
  return out;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

Axis make_axis(const Range& range, bool log) {
  if (range.empty()) return log ? log_axis(1.0, 10.0) : linear_axis(0.0, 1.0, kMaxTicks);
  return log ? log_axis(range.lo, range.hi) : linear_axis(range.lo, range.hi, kMaxTicks);
}

// Maps data onto the frame. Line and scatter data sit `inset` pixels inside the frame so points on
// the axis ends are not drawn on top of it; bars keep no inset so they stand on the frame.
class Canvas {
 public:
  Canvas(const Axis& x_axis, const Axis& y_axis, double inset) : x_axis_(x_axis), y_axis_(y_axis), inset_(inset) {}
  double px(double x) const {
    return kPlotLeft + inset_ + axis_fraction(x, x_axis_) * (kPlotRight - kPlotLeft - 2 * inset_);
  }
  double py(double y) const {
    return kPlotBottom - inset_ - axis_fraction(y, y_axis_) * (kPlotBottom - kPlotTop - 2 * inset_);
  }

 private:
  Axis x_axis_;
  Axis y_axis_;
  double inset_;
};

// Every series differs from the others in colour, dash and marker shape, so a series drawn exactly on
// top of another (equal values) still shows as a dashed line and a different marker over it.
constexpr const char* kDashes[] = {"", "7 3", "2 3", "9 3 2 3", "1 3", "14 4"};
constexpr std::size_t kMarkerShapes = 6;

std::string dash_for(std::size_t series_index) {
  const char* dash = kDashes[series_index % std::size(kDashes)];
  return *dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : std::string();
}

// The series' marker at (cx, cy) with radius r: circle, square, triangle, diamond, inverted triangle,
// ring.
std::string marker_for(std::size_t series_index, double cx, double cy, double r, const std::string& colour,
                       const std::string& css_class) {
  const std::string cls = css_class.empty() ? std::string() : " class=\"" + css_class + "\"";
  auto polygon = [&](std::initializer_list<std::pair<double, double>> offsets) {
    std::string d;
    for (const auto& [dx, dy] : offsets) d += (d.empty() ? "M" : "L") + num(cx + dx * r) + " " + num(cy + dy * r);
    return "<path" + cls + " d=\"" + d + "Z\" fill=\"" + colour + "\"/>\n";
  };
  switch (series_index % kMarkerShapes) {
    case 0: return "<circle" + cls + " cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" + colour + "\"/>\n";
    case 1: return polygon({{-0.9, -0.9}, {0.9, -0.9}, {0.9, 0.9}, {-0.9, 0.9}});
    case 2: return polygon({{0.0, -1.25}, {1.15, 0.85}, {-1.15, 0.85}});
    case 3: return polygon({{0.0, -1.3}, {1.3, 0.0}, {0.0, 1.3}, {-1.3, 0.0}});
    case 4: return polygon({{0.0, 1.25}, {1.15, -0.85}, {-1.15, -0.85}});
    default:
      return "<circle" + cls + " cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) +
             "\" fill=\"#ffffff\" stroke=\"" + colour + "\" stroke-width=\"1.5\"/>\n";
  }
}

// The first earlier series with exactly the same points, or -1: named in the legend, since the later
// one is drawn over it.
int same_points_as_earlier(const std::vector<Series>& series, std::size_t s) {
  for (std::size_t e = 0; e < s; ++e) {
    if (!series[s].y.empty() && series[e].x == series[s].x && series[e].y == series[s].y) return static_cast<int>(e);
  }
  return -1;
}

std::string colour_for(std::size_t series_index) {
  return chart_palette()[series_index % chart_palette().size()];
}

void draw_grid_and_axes(std::string& svg, const Chart& chart, const Axis& x_axis, const Axis& y_axis,
                        const Canvas& canvas) {
  svg += "<g class=\"grid\" stroke=\"#e6e6e6\" stroke-width=\"1\">\n";
  for (double t : y_axis.ticks) {
    const std::string y = num(canvas.py(t));
    svg += "<line x1=\"" + num(kPlotLeft) + "\" y1=\"" + y + "\" x2=\"" + num(kPlotRight) + "\" y2=\"" + y + "\"/>\n";
  }
  if (chart.kind != Chart::Kind::Bar) {
    for (double t : x_axis.ticks) {
      const std::string x = num(canvas.px(t));
      svg += "<line x1=\"" + x + "\" y1=\"" + num(kPlotTop) + "\" x2=\"" + x + "\" y2=\"" + num(kPlotBottom) + "\"/>\n";
    }
  }
  svg += "</g>\n";
  svg += "<rect class=\"frame\" x=\"" + num(kPlotLeft) + "\" y=\"" + num(kPlotTop) + "\" width=\"" +
         num(kPlotRight - kPlotLeft) + "\" height=\"" + num(kPlotBottom - kPlotTop) +
         "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";

  svg += "<g class=\"y-ticks\" text-anchor=\"end\">\n";
  for (double t : y_axis.ticks) {
    const std::string y = num(canvas.py(t));
    svg += "<line x1=\"" + num(kPlotLeft - 5) + "\" y1=\"" + y + "\" x2=\"" + num(kPlotLeft) + "\" y2=\"" + y +
           "\" stroke=\"#333333\"/>\n";
    svg += "<text x=\"" + num(kPlotLeft - 8) + "\" y=\"" + y + "\" dy=\"0.32em\">" +
           xml_escape(tick_label(t, y_axis)) + "</text>\n";
  }
  svg += "</g>\n";

  svg += "<g class=\"x-ticks\" text-anchor=\"middle\">\n";
  if (chart.kind == Chart::Kind::Bar) {
    const double group = (kPlotRight - kPlotLeft) / static_cast<double>(std::max<std::size_t>(1, chart.categories.size()));
    for (std::size_t c = 0; c < chart.categories.size(); ++c) {
      const std::string x = num(kPlotLeft + group * (static_cast<double>(c) + 0.5));
      svg += "<text x=\"" + x + "\" y=\"" + num(kPlotBottom + 18) + "\">" + xml_escape(chart.categories[c]) +
             "</text>\n";
    }
  } else {
    for (double t : x_axis.ticks) {
      const std::string x = num(canvas.px(t));
      svg += "<line x1=\"" + x + "\" y1=\"" + num(kPlotBottom) + "\" x2=\"" + x + "\" y2=\"" +
             num(kPlotBottom + 5) + "\" stroke=\"#333333\"/>\n";
      svg += "<text x=\"" + x + "\" y=\"" + num(kPlotBottom + 18) + "\">" + xml_escape(tick_label(t, x_axis)) +
             "</text>\n";
    }
  }
  svg += "</g>\n";

  const double middle_x = (kPlotLeft + kPlotRight) / 2;
  const double middle_y = (kPlotTop + kPlotBottom) / 2;
  svg += "<text class=\"x-label\" x=\"" + num(middle_x) + "\" y=\"" + num(kPlotBottom + 40) +
         "\" text-anchor=\"middle\">" + xml_escape(chart.x_label + (chart.log_x ? " (log scale)" : "")) + "</text>\n";
  svg += "<text class=\"y-label\" transform=\"translate(18 " + num(middle_y) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(chart.y_label + (chart.log_y ? " (log scale)" : "")) +
         "</text>\n";
}

std::string interval_bar(double x, double low, double high, double cap) {
  return "M" + num(x) + " " + num(low) + "V" + num(high) + "M" + num(x - cap) + " " + num(low) + "H" +
         num(x + cap) + "M" + num(x - cap) + " " + num(high) + "H" + num(x + cap);
}

void draw_line_or_scatter(std::string& svg, const Chart& chart, const std::vector<PlotSeries>& plotted,
                          const Canvas& canvas) {
  const bool line = chart.kind == Chart::Kind::Line;
  for (std::size_t s = 0; s < plotted.size(); ++s) {
    const std::string colour = colour_for(s);
    svg += "<g class=\"series\" data-series=\"" + std::to_string(s) + "\">\n";
    for (const auto& run : plotted[s].runs) {
      if (line) {
        // Bands over consecutive points that all carry an interval.
        std::size_t i = 0;
        while (i < run.size()) {
          if (!run[i].has_interval) {
            ++i;
            continue;
          }
          std::size_t j = i;
          while (j < run.size() && run[j].has_interval) ++j;
          if (j - i == 1) {
            svg += "<path class=\"interval\" d=\"" +
                   interval_bar(canvas.px(run[i].x), canvas.py(run[i].low), canvas.py(run[i].high), 3.0) +
                   "\" stroke=\"" + colour + "\" fill=\"none\"/>\n";
          } else {
            std::string d;
            for (std::size_t k = i; k < j; ++k) {
              d += (k == i ? "M" : "L") + num(canvas.px(run[k].x)) + " " + num(canvas.py(run[k].low));
            }
            for (std::size_t k = j; k-- > i;) d += "L" + num(canvas.px(run[k].x)) + " " + num(canvas.py(run[k].high));
            svg += "<path class=\"band\" d=\"" + d + "Z\" fill=\"" + colour + "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
          }
          i = j;
        }
        if (run.size() > 1) {
          std::string d;
          for (std::size_t k = 0; k < run.size(); ++k) {
            d += (k == 0 ? "M" : "L") + num(canvas.px(run[k].x)) + " " + num(canvas.py(run[k].y));
          }
          svg += "<path class=\"line\" d=\"" + d + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
                 dash_for(s) + "/>\n";
        }
      } else {
        for (const PlotPoint& p : run) {
          if (!p.has_interval) continue;
          svg += "<path class=\"interval\" d=\"" + interval_bar(canvas.px(p.x), canvas.py(p.low), canvas.py(p.high), 3.0) +
                 "\" stroke=\"" + colour + "\" fill=\"none\"/>\n";
        }
      }
      for (const PlotPoint& p : run) {
        svg += marker_for(s, canvas.px(p.x), canvas.py(p.y), line ? 3.0 : 3.5, colour, "point");
      }
    }
    svg += "</g>\n";
  }
}

void draw_bars(std::string& svg, const Chart& chart, const std::vector<PlotSeries>& plotted, const Axis& y_axis,
               const Canvas& canvas) {
  const std::size_t groups = std::max<std::size_t>(1, chart.categories.size());
  const double group_width = (kPlotRight - kPlotLeft) / static_cast<double>(groups);
  const double bar_width = group_width * 0.8 / static_cast<double>(std::max<std::size_t>(1, plotted.size()));
  // Bars grow from zero when zero is on the axis, otherwise from the axis floor (always so on log axes).
  const double base_value = (!y_axis.log && y_axis.lo <= 0.0 && y_axis.hi >= 0.0) ? 0.0 : y_axis.lo;
  const double base = canvas.py(base_value);
  for (std::size_t s = 0; s < plotted.size(); ++s) {
    const std::string colour = colour_for(s);
    svg += "<g class=\"series\" data-series=\"" + std::to_string(s) + "\">\n";
    for (const auto& run : plotted[s].runs) {
      for (const PlotPoint& p : run) {
        const double left = kPlotLeft + group_width * (p.x + 0.1) + bar_width * static_cast<double>(s);
        const double top = canvas.py(p.y);
        svg += "<rect class=\"bar\" x=\"" + num(left) + "\" y=\"" + num(std::min(top, base)) + "\" width=\"" +
               num(bar_width) + "\" height=\"" + num(std::fabs(base - top)) + "\" fill=\"" + colour + "\"/>\n";
        if (p.has_interval) {
          const double cap = std::min(4.0, bar_width / 3.0);
          svg += "<path class=\"interval\" d=\"" +
                 interval_bar(left + bar_width / 2, canvas.py(p.low), canvas.py(p.high), cap) +
                 "\" stroke=\"#333333\" fill=\"none\"/>\n";
        }
      }
    }
    svg += "</g>\n";
  }
}

std::string skip_note(const SkipCounts& skipped) {
  std::vector<std::string> parts;
  const std::size_t points = skipped.not_finite + skipped.non_positive;
  if (points > 0) {
    std::string text = std::to_string(points) + (points == 1 ? " point" : " points") + " not drawn (";
    std::vector<std::string> why;
    if (skipped.not_finite > 0) why.push_back(std::to_string(skipped.not_finite) + " NaN or infinite");
    if (skipped.non_positive > 0) why.push_back(std::to_string(skipped.non_positive) + " not positive on a log axis");
    text += why[0] + (why.size() > 1 ? ", " + why[1] : "") + ")";
    parts.push_back(text);
  }
  if (skipped.interval_not_drawable > 0) {
    parts.push_back(std::to_string(skipped.interval_not_drawable) +
                    (skipped.interval_not_drawable == 1 ? " interval" : " intervals") +
                    " not drawn (NaN, infinite or not positive on a log axis)");
  }
  std::string note;
  for (std::size_t i = 0; i < parts.size(); ++i) note += (i ? "; " : "") + parts[i];
  return note;
}

void draw_legend(std::string& svg, const Chart& chart, const std::vector<PlotSeries>& plotted, double top) {
  svg += "<g class=\"legend\">\n";
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const double y = top + kRowHeight * static_cast<double>(s);
    const std::string colour = colour_for(s);
    const double swatch_x = kPlotLeft;
    switch (chart.kind) {
      case Chart::Kind::Line:
        svg += "<path d=\"M" + num(swatch_x) + " " + num(y) + "H" + num(swatch_x + 20) + "\" stroke=\"" + colour +
               "\" stroke-width=\"2\"" + dash_for(s) + "/>\n";
        svg += marker_for(s, swatch_x + 10, y, 3.0, colour, "");
        break;
      case Chart::Kind::Scatter:
        svg += marker_for(s, swatch_x + 10, y, 3.5, colour, "");
        break;
      case Chart::Kind::Bar:
        svg += "<rect x=\"" + num(swatch_x + 4) + "\" y=\"" + num(y - 6) + "\" width=\"12\" height=\"12\" fill=\"" +
               colour + "\"/>\n";
        break;
    }
    std::string label = chart.series[s].label.empty() ? "series " + std::to_string(s + 1) : chart.series[s].label;
    if (plotted[s].points == 0) label += " (no points)";
    if (const int same = same_points_as_earlier(chart.series, s); same >= 0 && chart.kind != Chart::Kind::Bar) {
      const auto& other = chart.series[static_cast<std::size_t>(same)].label;
      label += " (same values as " + (other.empty() ? "series " + std::to_string(same + 1) : other) + ", drawn over it)";
    }
    svg += "<text x=\"" + num(swatch_x + 28) + "\" y=\"" + num(y) + "\" dy=\"0.32em\">" + xml_escape(label) +
           "</text>\n";
  }
  svg += "</g>\n";
}

}  // namespace

std::string chart_svg(const Chart& chart) {
  check_shapes(chart);

  SkipCounts skipped;
  std::vector<PlotSeries> plotted;
  Range x_range;
  Range y_range;
  std::size_t total_points = 0;
  for (const Series& series : chart.series) {
    plotted.push_back(collect(chart, series, skipped));
    total_points += plotted.back().points;
    for (const auto& run : plotted.back().runs) {
      for (const PlotPoint& p : run) {
        x_range.add(p.x);
        y_range.add(p.y);
        if (p.has_interval) {
          y_range.add(p.low);
          y_range.add(p.high);
        }
      }
    }
  }
  if (chart.kind == Chart::Kind::Bar && !chart.log_y && !y_range.empty()) y_range.add(0.0);

  const Axis x_axis = chart.kind == Chart::Kind::Bar ? linear_axis(0.0, 1.0, kMaxTicks) : make_axis(x_range, chart.log_x);
  const Axis y_axis = make_axis(y_range, chart.log_y);
  const Canvas canvas(x_axis, y_axis, chart.kind == Chart::Kind::Bar ? 0.0 : kDataInset);

  std::vector<std::string> notes;
  if (total_points == 0) notes.push_back("no data to plot");
  const std::string skipped_text = skip_note(skipped);
  if (!skipped_text.empty()) notes.push_back(skipped_text);

  const double notes_top = kPlotBottom + 60;
  const double legend_top = notes_top + kRowHeight * static_cast<double>(notes.size());
  const double height = legend_top + kRowHeight * static_cast<double>(chart.series.size()) + 6;

  const std::string title = chart.title.empty() ? chart.id : chart.title;
  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\" fill=\"#222222\">\n";
  svg += "<title>" + xml_escape(title) + "</title>\n";
  svg += "<rect width=\"" + num(kWidth) + "\" height=\"" + num(height) + "\" fill=\"#ffffff\"/>\n";
  svg += "<text class=\"title\" x=\"" + num(kWidth / 2) + "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" "
         "font-weight=\"bold\">" + xml_escape(title) + "</text>\n";
  draw_grid_and_axes(svg, chart, x_axis, y_axis, canvas);
  if (chart.kind == Chart::Kind::Bar) {
    draw_bars(svg, chart, plotted, y_axis, canvas);
  } else {
    draw_line_or_scatter(svg, chart, plotted, canvas);
  }
  for (std::size_t i = 0; i < notes.size(); ++i) {
    svg += "<text class=\"note\" x=\"" + num(kPlotLeft) + "\" y=\"" + num(notes_top + kRowHeight * static_cast<double>(i)) +
           "\" dy=\"0.32em\" font-style=\"italic\" fill=\"#666666\">" + xml_escape(notes[i]) + "</text>\n";
  }
  draw_legend(svg, chart, plotted, legend_top);
  svg += "</svg>\n";
  return svg;
}

}  // namespace k3lab::report
