#pragma once
// Aligned text tables for people: a header, rows of cells, numbers right-aligned.
#include <string>
#include <vector>

namespace ridge::plan {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render(const std::string& indent = "  ") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Human-scale numbers: "70.6 GB", "3.35 TB/s", "989 TFLOP/s", "21.3 ms", "47.3".
std::string format_bytes(double bytes);
std::string format_rate(double per_second, const char* unit);  // format_rate(3.35e12, "B/s") -> "3.35 TB/s"
std::string format_seconds(double seconds);
std::string format_count(double n);  // 70.6e9 -> "70.6B"
std::string format_number(double x, int significant = 3);

}  // namespace ridge::plan
