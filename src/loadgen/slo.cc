#include "loadgen/slo.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace ridge::loadgen {

double parse_duration_s(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string_view unit(end);
  double scale = 0;
  if (unit.empty() || unit == "ms")
    scale = 1e-3;
  else if (unit == "s")
    scale = 1;
  else if (unit == "us")
    scale = 1e-6;
  if (end == s.c_str() || scale == 0 || !std::isfinite(v) || v <= 0)
    fail("bad duration '{}' (want a positive number with ms, s or us; bare numbers are ms)", text);
  return v * scale;
}

Slo parse_slo(std::string_view spec) {
  Slo slo;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find_first_of("=:");
    if (eq == std::string_view::npos) fail("bad SLO '{}' (want metric=duration, e.g. ttft=1s)", item);
    const std::string_view metric = item.substr(0, eq);
    const double bound = parse_duration_s(item.substr(eq + 1));
    if (metric == "ttft")
      slo.ttft_s = bound;
    else if (metric == "tpot")
      slo.tpot_s = bound;
    else if (metric == "itl")
      slo.itl_s = bound;
    else if (metric == "e2e" || metric == "e2el")
      slo.e2e_s = bound;
    else
      fail("unknown SLO metric '{}' (want ttft, tpot, itl or e2e)", metric);
  }
  if (slo.empty()) fail("empty SLO '{}'", spec);
  return slo;
}

bool meets_slo(const RequestResult& r, const Slo& slo) {
  if (!r.ok) return false;
  const double longest_gap = r.itl_s.empty() ? 0 : *std::max_element(r.itl_s.begin(), r.itl_s.end());
  return (!slo.ttft_s || r.ttft_s <= *slo.ttft_s) && (!slo.tpot_s || r.tpot_s() <= *slo.tpot_s) &&
         (!slo.itl_s || longest_gap <= *slo.itl_s) && (!slo.e2e_s || r.e2e_s <= *slo.e2e_s);
}

std::string Slo::describe() const {
  std::string out;
  auto add = [&](const char* name, const std::optional<double>& bound) {
    if (!bound) return;
    out += fmt::format("{}{} <= {:g} ms", out.empty() ? "" : ", ", name, *bound * 1e3);
  };
  add("ttft", ttft_s);
  add("tpot", tpot_s);
  add("itl", itl_s);
  add("e2e", e2e_s);
  return out;
}

}  // namespace ridge::loadgen
