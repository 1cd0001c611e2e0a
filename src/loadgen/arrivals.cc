#include "loadgen/arrivals.h"

#include <cmath>
#include <random>

#include "core/error.h"

namespace ridge::loadgen {

Arrival parse_arrival(std::string_view name) {
  if (name == "poisson") return Arrival::Poisson;
  if (name == "constant") return Arrival::Constant;
  fail("unknown arrival process '{}' (want poisson or constant)", name);
}

std::vector<double> arrival_times(int count, double rate, Arrival arrival, uint64_t seed) {
  if (!(rate > 0)) fail("the request rate must be positive (or inf), not {}", rate);
  std::vector<double> out(size_t(std::max(count, 0)), 0.0);
  if (std::isinf(rate)) return out;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  for (size_t i = 1; i < out.size(); ++i) out[i] = out[i - 1] + (arrival == Arrival::Poisson ? gap(rng) : 1.0 / rate);
  return out;
}

}  // namespace ridge::loadgen
