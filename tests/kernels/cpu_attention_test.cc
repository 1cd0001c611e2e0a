// The f16-K/V attention kernel against the f32 reference fed the same (f16-rounded) K/V.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/attention.h"

namespace ridge::cpu {
namespace {

TEST(CpuAttention, F16KvMatchesReferenceOverAwkwardLengths) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto [heads, kv_heads, dim, n_kv] : {std::tuple{1, 1, 8, 1}, {6, 2, 16, 37}, {9, 3, 64, 300}, {4, 4, 32, 1025}}) {
    const ref::AttentionArgs args{heads, kv_heads, dim, 1.0f / std::sqrt(float(dim))};
    std::vector<float> k(size_t(n_kv * kv_heads * dim)), v(k.size()), q(size_t(heads * dim));
    for (auto* buf : {&k, &v, &q})
      for (auto& x : *buf) x = normal(rng) * 2.0f;
    std::vector<uint16_t> k16(k.size()), v16(v.size());
    store_f16(k.data(), int64_t(k.size()), k16.data());
    store_f16(v.data(), int64_t(v.size()), v16.data());
    std::vector<float> k_rounded(k.size()), v_rounded(v.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k_rounded[i] = f16_to_f32(k16[i]);
      v_rounded[i] = f16_to_f32(v16[i]);
    }
    std::vector<float> scores(static_cast<size_t>(n_kv)), got(static_cast<size_t>(dim)), expect(q.size());
    for (int32_t position : {0, int32_t(n_kv / 2), int32_t(n_kv - 1)}) {
      const std::vector<int32_t> positions(1, position);
      for (int h = 0; h < heads; ++h) {
        ref::attention_head(args, h, q.data() + h * dim, position, k_rounded.data(), v_rounded.data(), n_kv, scores.data(),
                            expect.data() + h * dim);
        attention_head_f16(args, h, q.data() + h * dim, position, k16.data(), v16.data(), n_kv, scores.data(), got.data());
        for (int d = 0; d < dim; ++d)
          ASSERT_NEAR(got[size_t(d)], expect[size_t(h * dim + d)], 5e-3) << "head " << h << " pos " << position << " n_kv " << n_kv;
      }
    }
  }
}

}  // namespace
}  // namespace ridge::cpu
