#include "kernels/cpu/gelu_table.h"

#include <cmath>
#include <vector>

#include "core/fp16.h"

namespace ridge::cpu {
namespace {

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

const float* gelu_f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = round_to_f16(gelu_tanh(f16_to_f32(uint16_t(h))));
    return t;
  }();
  return table.data();
}

}  // namespace

void geglu_table(float* gate, const float* up, int64_t n) {
  const float* table = gelu_f16_table();
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    const float g = x <= -10.0f ? 0.0f : x >= 10.0f ? x : table[f32_to_f16(x)];
    gate[i] = g * up[i];
  }
}

}  // namespace ridge::cpu
