// The low-rank (LoRA) addend on every ISA this CPU has, against dense double arithmetic, over
// awkward shapes (ranks 1..64, odd widths); a row's bits do not depend on its group or the
// column ranges it is computed in.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/low_rank.h"

namespace ridge::cpu {
namespace {

using Down = void (*)(const LowRank&, const float* const*, int64_t, float*);
using Up = void (*)(const LowRank&, const float*, int64_t, float* const*, int64_t, int64_t);

struct Version {
  const char* name;
  Isa isa;
  Down down;
  Up up;
};

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(LowRank, EveryIsaMatchesDenseArithmeticAndIgnoresGrouping) {
  const Version versions[] = {{"scalar", Isa::Scalar, low_rank_isa::down_scalar, low_rank_isa::up_scalar},
                              {"avx2", Isa::Avx2, low_rank_isa::down_avx2, low_rank_isa::up_avx2},
                              {"avx512", Isa::Avx512Vnni, low_rank_isa::down_avx512, low_rank_isa::up_avx512}};
  const std::tuple<int64_t, int64_t, int64_t> shapes[] = {{1, 1, 1}, {1, 7, 5}, {3, 33, 17}, {8, 64, 63}, {16, 129, 200}, {64, 576, 1536}};
  constexpr int64_t kRows = 5;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<float>> scalar_bits;  // every version gives these
  for (const bool half : {false, true})
  for (const Version& v : versions) {
    if (!isa_supported(v.isa)) continue;
    for (const auto& [rank, d_in, d_out] : shapes) {
      std::vector<float> a_t = random_values(size_t(d_in * rank), 1), b_t = random_values(size_t(rank * d_out), 2);
      const std::vector<float> x = random_values(size_t(kRows * d_in), 3);
      // f16 weights: the reference uses the rounded values.
      std::vector<uint16_t> a16(a_t.size()), b16(b_t.size());
      for (size_t i = 0; i < a_t.size(); ++i) a16[i] = f32_to_f16(a_t[i]), a_t[i] = half ? f16_to_f32(a16[i]) : a_t[i];
      for (size_t i = 0; i < b_t.size(); ++i) b16[i] = f32_to_f16(b_t[i]), b_t[i] = half ? f16_to_f32(b16[i]) : b_t[i];
      LowRank m{rank, d_in, d_out, a_t.data(), b_t.data(), 0.625f};
      if (half) m.a_t16 = a16.data(), m.b_t16 = b16.data();
      // All five rows as one group, the output in two column ranges.
      std::vector<float> y(static_cast<size_t>(kRows * d_out), 0.25f), t(static_cast<size_t>(kRows * rank));
      std::vector<const float*> xs;
      std::vector<float*> ys;
      for (int64_t k = 0; k < kRows; ++k) xs.push_back(x.data() + k * d_in), ys.push_back(y.data() + k * d_out);
      v.down(m, xs.data(), kRows, t.data());
      v.up(m, t.data(), kRows, ys.data(), 0, d_out / 2);
      v.up(m, t.data(), kRows, ys.data(), d_out / 2, d_out);
      auto [bits, first] = scalar_bits.try_emplace({rank, d_in * (half ? -1 : 1), d_out}, y);
      EXPECT_TRUE(first || bits->second == y) << v.name << " differs from the scalar version, rank " << rank;
      for (int64_t k = 0; k < kRows; ++k) {
        for (int64_t o = 0; o < d_out; ++o) {
          double want = 0.25;
          for (int64_t j = 0; j < rank; ++j) {
            double ax = 0;
            for (int64_t i = 0; i < d_in; ++i) ax += double(a_t[size_t(i * rank + j)]) * x[size_t(k * d_in + i)];
            want += 0.625 * ax * b_t[size_t(j * d_out + o)];
          }
          ASSERT_NEAR(y[size_t(k * d_out + o)], want, 1e-5 * double(d_in) * (1 + std::fabs(want)))
              << v.name << " rank " << rank << " " << d_in << "x" << d_out << " row " << k << " col " << o;
        }
        // The row alone, in one range: the same bits.
        std::vector<float> alone(static_cast<size_t>(d_out), 0.25f), t1(static_cast<size_t>(rank));
        const float* x1 = xs[size_t(k)];
        float* y1 = alone.data();
        v.down(m, &x1, 1, t1.data());
        v.up(m, t1.data(), 1, &y1, 0, d_out);
        EXPECT_TRUE(std::equal(alone.begin(), alone.end(), y.begin() + k * d_out)) << v.name << " row " << k << " rank " << rank << " " << d_in << "x" << d_out;
      }
    }
  }
}

}  // namespace
}  // namespace ridge::cpu
