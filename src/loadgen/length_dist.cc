#include "loadgen/length_dist.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace ridge::loadgen {
namespace {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

double parse_number(const std::string& s, std::string_view spec) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    fail("bad length distribution '{}': '{}' is not a non-negative number", spec, s);
  return v;
}

}  // namespace

LengthDist LengthDist::parse(std::string_view text) {
  const auto parts = split(text, ':');
  auto number = [&](size_t i) { return parse_number(parts[i], text); };
  LengthDist d;
  if (parts.size() == 1) {
    d = {Kind::Fixed, number(0), 0};
  } else if (parts[0] == "fixed" && parts.size() == 2) {
    d = {Kind::Fixed, number(1), 0};
  } else if (parts[0] == "uniform" && parts.size() == 3) {
    d = {Kind::Uniform, number(1), number(2)};
    if (d.b < d.a) fail("bad length distribution '{}': the high end is below the low end", text);
  } else if (parts[0] == "normal" && parts.size() == 3) {
    d = {Kind::Normal, number(1), number(2)};
  } else {
    fail("bad length distribution '{}' (want fixed:N, uniform:A:B or normal:MEAN:STD)", text);
  }
  if (d.kind != Kind::Normal && std::max(d.a, d.b) < 1) fail("bad length distribution '{}': lengths are at least 1", text);
  return d;
}

int LengthDist::sample(std::mt19937_64& rng) const {
  double v = a;
  if (kind == Kind::Uniform) {
    const auto lo = int64_t(std::round(a));
    v = double(std::uniform_int_distribution<int64_t>(lo, std::max(lo, int64_t(std::round(b))))(rng));
  } else if (kind == Kind::Normal && b > 0) {
    v = std::round(std::normal_distribution<double>(a, b)(rng));
  }
  return int(std::clamp(std::round(v), 1.0, 1e8));  // a request asks for at least one token
}

double LengthDist::mean() const { return kind == Kind::Uniform ? (a + b) / 2 : a; }

std::string LengthDist::describe() const {
  switch (kind) {
    case Kind::Fixed:
      return fmt::format("fixed:{}", a);
    case Kind::Uniform:
      return fmt::format("uniform:{}:{}", a, b);
    case Kind::Normal:
      return fmt::format("normal:{}:{}", a, b);
  }
  return {};
}

}  // namespace ridge::loadgen
