#include "loadgen/sweep_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace ridge::loadgen {
namespace {

constexpr double kWidth = 760, kPanelHeight = 260;
constexpr double kLeft = 80, kRight = 130, kTop = 50, kGap = 60, kBottom = 50;  // legend on the right
constexpr const char* kP50Colour = "#1f77b4";
constexpr const char* kP99Colour = "#d62728";

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten giving about five intervals up to `top`.
double tick_step(double top) {
  const double raw = top / 5;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

// A linear axis from 0 to a rounded-up maximum, with room above the highest point, onto pixels.
struct Axis {
  double top, step, p0, p1;
  Axis(double max_value, double pixel0, double pixel1) : p0(pixel0), p1(pixel1) {
    const double room = max_value > 0 ? max_value * 1.05 : 1;
    step = tick_step(room);
    top = std::ceil(room / step) * step;
  }
  double operator()(double v) const { return p0 + v / top * (p1 - p0); }
};

struct Series {
  const char* name;
  const char* colour;
  std::function<double(const ServeSummary&)> value;  // seconds
};

std::string panel(const std::vector<SweepPoint>& points, const Axis& x, double y0, const char* metric,
                  const Series (&series)[2]) {
  double max_ms = 0;
  for (const auto& p : points)
    for (const auto& s : series) max_ms = std::max(max_ms, s.value(p.summary) * 1e3);
  const Axis y(max_ms, y0 + kPanelHeight, y0);
  std::string svg;
  for (double v = 0; v <= y.top + y.step / 2; v += y.step)
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        kLeft, y(v), kWidth - kRight, kLeft - 6, y(v) + 4, v);
  svg += fmt::format("<text x=\"20\" y=\"{0:.1f}\" transform=\"rotate(-90 20 {0:.1f})\" text-anchor=\"middle\">{1} (ms)</text>\n",
                     y0 + kPanelHeight / 2, metric);
  for (const auto& s : series) {
    std::string path;
    for (const auto& p : points)
      path += fmt::format("{:.1f},{:.1f} ", x(p.summary.output_throughput), y(s.value(p.summary) * 1e3));
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, s.colour);
    for (const auto& p : points) {
      const double px = x(p.summary.output_throughput), py = y(s.value(p.summary) * 1e3);
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} {}: {} {} {:.2f} ms, {:.1f} "
          "tok/s</title></circle>\n",
          px, py, s.colour, p.parameter, format_load_value(p.value), metric, s.name, s.value(p.summary) * 1e3,
          p.summary.output_throughput);
    }
  }
  for (const auto& p : points)  // label the p99 points, the upper curve
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#555\">{}</text>\n",
                       x(p.summary.output_throughput) + 5, y(series[1].value(p.summary) * 1e3) - 6, format_load_value(p.value));
  return svg;
}

}  // namespace

std::string sweep_svg(const std::vector<SweepPoint>& points, const std::string& title) {
  const double height = kTop + 2 * kPanelHeight + kGap + kBottom;
  double max_tps = 0;
  for (const auto& p : points) max_tps = std::max(max_tps, p.summary.output_throughput);
  const Axis x(max_tps, kLeft, kWidth - kRight);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" font-size=\"16\">{3}</text>\n",
      kWidth, height, kLeft, xml_escape(title));
  const double ttft_top = kTop, itl_top = kTop + kPanelHeight + kGap;
  for (double y0 : {ttft_top, itl_top})
    for (double v = 0; v <= x.top + x.step / 2; v += x.step)
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
          "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
          x(v), y0, y0 + kPanelHeight, y0 + kPanelHeight + 16, v);
  const Series ttft[2] = {{"p50", kP50Colour, [](const ServeSummary& s) { return s.ttft.p50; }},
                          {"p99", kP99Colour, [](const ServeSummary& s) { return s.ttft.p99; }}};
  const Series itl[2] = {{"p50", kP50Colour, [](const ServeSummary& s) { return s.itl.p50; }},
                         {"p99", kP99Colour, [](const ServeSummary& s) { return s.itl.p99; }}};
  svg += panel(points, x, ttft_top, "TTFT", ttft);
  svg += panel(points, x, itl_top, "ITL", itl);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">output throughput (tokens/s)</text>\n",
                     (kLeft + kWidth - kRight) / 2, height - 12);
  double legend_y = kTop + 10;
  for (const auto& s : ttft) {
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       kWidth - kRight + 20, legend_y, s.colour, kWidth - kRight + 30, legend_y + 4, s.name);
    legend_y += 20;
  }
  if (!points.empty())
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">labels: {}</text>\n", kWidth - kRight + 14,
                       legend_y + 10, points.front().parameter);
  return svg + "</svg>\n";
}

}  // namespace ridge::loadgen
