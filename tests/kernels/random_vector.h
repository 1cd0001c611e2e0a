#pragma once
// Normally distributed test inputs, reproducible from a seed.
#include <cstdint>
#include <random>
#include <vector>

namespace ridge::testing {

inline std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace ridge::testing
