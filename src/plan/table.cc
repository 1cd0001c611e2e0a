#include "plan/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ridge::plan {
namespace {

// A number, maybe with a unit ("21.2 ms", "$0.31", "4.5%"): right-aligned. Prose is not.
bool looks_numeric(const std::string& s) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '$')) return false;
  return std::count(s.begin(), s.end(), ' ') <= 1;
}

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count UTF-8 code points, not bytes
  return n;
}

std::string scaled(double x, const char* const prefixes[], int n_prefixes, double step, const char* unit) {
  int i = 0;
  double v = x;
  while (i + 1 < n_prefixes && std::fabs(v) >= step) v /= step, ++i;
  return fmt::format("{} {}{}", format_number(v), prefixes[i], unit);
}

}  // namespace

std::string TextTable::render(const std::string& indent) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t c = 0; c < header_.size(); ++c) width[c] = display_width(header_[c]);
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out = indent;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - display_width(cell), ' ');
      const bool right = !header && c > 0 && looks_numeric(cell);
      out += right ? pad + cell : cell + pad;
      if (c + 1 < width.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_, true);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += indent + std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string format_number(double x, int significant) {
  if (x == 0 || !std::isfinite(x)) return fmt::format("{}", x);
  const int digits = int(std::floor(std::log10(std::fabs(x)))) + 1;
  const int decimals = std::max(0, significant - digits);
  return fmt::format("{:.{}f}", x, decimals);
}

std::string format_bytes(double bytes) {
  static const char* const p[] = {"", "K", "M", "G", "T", "P"};
  return scaled(bytes, p, 6, 1000.0, "B");
}

std::string format_rate(double per_second, const char* unit) {
  static const char* const p[] = {"", "K", "M", "G", "T", "P", "E"};
  return scaled(per_second, p, 7, 1000.0, unit);
}

std::string format_seconds(double s) {
  if (s >= 1) return format_number(s) + " s";
  if (s >= 1e-3) return format_number(s * 1e3) + " ms";
  if (s >= 1e-6) return format_number(s * 1e6) + " µs";
  return format_number(s * 1e9) + " ns";
}

std::string format_count(double n) {
  static const char* const p[] = {"", "K", "M", "B", "T"};
  int i = 0;
  while (i < 4 && std::fabs(n) >= 1000) n /= 1000, ++i;
  return format_number(n) + p[i];
}

}  // namespace ridge::plan
