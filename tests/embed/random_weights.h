#pragma once
// Random f32 weight views for the encoder tests' tiny models, kept alive by the holder.
#include <random>
#include <vector>

#include "model/weights.h"

namespace ridge::testing {

struct RandomWeights {
  std::vector<std::vector<float>> buffers;

  // (rows, cols) of offset + N(0, scale).
  WeightRef tensor(int64_t rows, int64_t cols, std::mt19937& rng, float scale, float offset = 0.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    auto& b = buffers.emplace_back(static_cast<size_t>(rows * cols));
    for (float& v : b) v = offset + normal(rng);
    return WeightRef{DType::F32, b.data(), rows, cols};
  }
};

}  // namespace ridge::testing
