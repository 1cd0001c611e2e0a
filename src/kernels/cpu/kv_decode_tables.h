#pragma once
// Lookup tables that turn cached K/V elements into f32 one element at a time: every 16-bit value
// (f16, bf16) and every FP8-E4M3 byte, computed once per process.
#include <cstdint>
#include <vector>

#include "core/fp8.h"

namespace ridge::cpu {

template <float (*Convert)(uint16_t)>
const float* table16() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = Convert(uint16_t(h));
    return t;
  }();
  return table.data();
}

inline const float* fp8_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(256);
    for (uint32_t v = 0; v < 256; ++v) t[v] = fp8_e4m3_to_f32(uint8_t(v));
    return t;
  }();
  return table.data();
}

}  // namespace ridge::cpu
