#include "plan/svg_roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "plan/serving.h"
#include "plan/table.h"

namespace ridge::plan {
namespace {

constexpr double kWidth = 820, kHeight = 560;
constexpr double kLeft = 80, kRight = 190, kTop = 50, kBottom = 60;  // margins; legend on the right
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// Maps log10 of a value onto a pixel range.
struct LogAxis {
  double lo, hi;        // decades, log10
  double p0, p1;        // pixels
  double operator()(double v) const { return p0 + (std::log10(v) - lo) / (hi - lo) * (p1 - p0); }
};

}  // namespace

std::string roofline_svg(const HardwareSpec& hw, const std::vector<RooflinePoint>& points, const std::string& title) {
  const std::vector<Balance> roofs = machine_balance(hw);
  double top_peak = 0, min_x = 1e300, max_x = 0, min_y = 1e300;
  for (const auto& r : roofs) top_peak = std::max(top_peak, r.peak);
  for (const auto& r : roofs) max_x = std::max(max_x, r.flops_per_byte);
  for (const auto& p : points) {
    if (p.intensity <= 0 || p.flops_per_s <= 0) continue;
    min_x = std::min(min_x, p.intensity), max_x = std::max(max_x, p.intensity), min_y = std::min(min_y, p.flops_per_s);
  }
  if (min_x > max_x) min_x = 1;
  const LogAxis x{std::floor(std::log10(std::min(min_x, 1.0))), std::ceil(std::log10(max_x * 4)), kLeft, kWidth - kRight};
  const double y_lo = std::floor(std::log10(std::min(min_y, hw.memory_bw * std::pow(10.0, x.lo))));
  const LogAxis y{y_lo, std::ceil(std::log10(top_peak * 2)), kHeight - kBottom, kTop};

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" font-size=\"16\">{3}</text>\n",
      kWidth, kHeight, kLeft, escape(title));
  // Grid and decade labels.
  for (double d = x.lo; d <= x.hi + 1e-9; d += 1) {
    const double px = x(std::pow(10.0, d));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       px, kTop, kHeight - kBottom, kHeight - kBottom + 18, format_number(std::pow(10.0, d)));
  }
  for (double d = y.lo; d <= y.hi + 1e-9; d += 1) {
    const double py = y(std::pow(10.0, d));
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       kLeft, py, kWidth - kRight, kLeft - 6, py + 4, format_rate(std::pow(10.0, d), "FLOP/s"));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOPs / byte)</text>\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 14);
  // The memory slope up to the highest roof, then one flat roof per precision.
  const double x_start = std::pow(10.0, x.lo), x_end = std::pow(10.0, x.hi);
  svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\" stroke-width=\"2\"/>\n",
                     x(x_start), y(hw.memory_bw * x_start), x(top_peak / hw.memory_bw), y(top_peak));
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" transform=\"rotate(-30 {:.1f} {:.1f})\">{}</text>\n", x(x_start) + 8,
                     y(hw.memory_bw * x_start) - 8, x(x_start) + 8, y(hw.memory_bw * x_start) - 8,
                     format_rate(hw.memory_bw, "B/s"));
  for (const auto& r : roofs) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\" stroke-width=\"2\"/>\n"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\">{} {} (balance {})</text>\n",
                       x(r.flops_per_byte), y(r.peak), x(x_end), y(r.peak), x(r.flops_per_byte) + 4, y(r.peak) - 5,
                       compute_class_name(r.compute), format_rate(r.peak, "FLOP/s"), format_number(r.flops_per_byte));
  }
  // The ops, one colour per series, with a legend.
  std::map<std::string, size_t> colour_of;
  for (const auto& p : points) colour_of.emplace(p.series, colour_of.size() % std::size(kColours));
  for (const auto& p : points) {
    if (p.intensity <= 0 || p.flops_per_s <= 0) continue;
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} ({}): {} FLOPs/B, {}</title></circle>\n",
                       x(p.intensity), y(p.flops_per_s), kColours[colour_of[p.series]], escape(p.label), escape(p.series),
                       format_number(p.intensity), format_rate(p.flops_per_s, "FLOP/s"));
  }
  double legend_y = kTop + 10;
  for (const auto& [series, colour] : colour_of) {
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       kWidth - kRight + 20, legend_y, kColours[colour], kWidth - kRight + 30, legend_y + 4, escape(series));
    legend_y += 20;
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">{}</text>\n", kWidth - kRight + 14,
                     legend_y + 10, escape(hw.name));
  return svg + "</svg>\n";
}

}  // namespace ridge::plan
