// RoPE from the (cos, sin) table the CUDA pass uploads rotates bit for bit as ref::rope does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/rope_table.h"

namespace ridge {
namespace {

TEST(CudaRopeTable, TableRotationIsTheReferenceBitForBit) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> factors(32);
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + float(i % 5);
  struct Case {
    int64_t heads, dim, rope_dim;
    bool neox;
    const float* ff;
    float position_scale;
  };
  for (const Case& c : {Case{4, 64, 64, false, nullptr, 1.0f}, Case{3, 64, 64, true, nullptr, 1.0f},
                        Case{2, 128, 64, false, factors.data(), 1.0f}, Case{2, 64, 32, true, nullptr, 0.25f}}) {
    const ref::RopeArgs args{c.heads, c.dim, c.rope_dim, c.neox, std::pow(10000.0f, -2.0f / float(c.rope_dim)), c.ff,
                             c.position_scale};
    const std::vector<float> table = rope_cos_sin_table(args, 5000);
    const std::vector<int32_t> positions = {0, 1, 7, 100, 4095, 4999};
    std::vector<float> a(positions.size() * size_t(c.heads * c.dim));
    for (auto& x : a) x = normal(rng);
    std::vector<float> b = a;
    ref::rope(args, positions.data(), int64_t(positions.size()), a.data());
    rope_from_table(table, args, positions.data(), int64_t(positions.size()), b.data());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 4)) << c.dim << " " << c.neox;
  }
}

}  // namespace
}  // namespace ridge
