#pragma once
// RoPE as a table of (cos, sin) per position and pair, built exactly as ref::rope builds its angles
// (theta *= theta_scale pair by pair in f32, freq factors and position scale applied the same way),
// so a device that rotates by this table rotates as the CPU does, bit for bit.
#include <cstdint>
#include <vector>

#include "kernels/ref/rope.h"

namespace ridge {

// (n_positions, rope_dim / 2, 2): cos then sin.
std::vector<float> rope_cos_sin_table(const ref::RopeArgs& args, int64_t n_positions);

// x (n_tokens, n_heads, head_dim) rotated in place by the table (the host twin of the CUDA kernel).
void rope_from_table(const std::vector<float>& table, const ref::RopeArgs& args, const int32_t* positions,
                     int64_t n_tokens, float* x);

}  // namespace ridge
