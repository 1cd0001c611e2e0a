#pragma once
// A distribution of token counts for prompts and outputs: "fixed:N", "uniform:A:B" or
// "normal:MEAN:STD" (a bare "N" is fixed). Samples are whole numbers of at least 1.
#include <random>
#include <string>
#include <string_view>

namespace ridge::loadgen {

struct LengthDist {
  enum class Kind { Fixed, Uniform, Normal };
  Kind kind = Kind::Fixed;
  double a = 128;  // fixed: the length; uniform: the low end; normal: the mean
  double b = 0;    // uniform: the high end (inclusive); normal: the standard deviation

  static LengthDist parse(std::string_view text);  // Error on a malformed spec
  static LengthDist fixed(int n) { return {Kind::Fixed, double(n), 0}; }

  int sample(std::mt19937_64& rng) const;
  double mean() const;
  std::string describe() const;  // the spec again, normalised
};

}  // namespace ridge::loadgen
