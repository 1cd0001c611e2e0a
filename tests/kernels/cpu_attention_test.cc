// The paged attention kernel against the f32 reference fed the same (type-rounded) K/V, for every
// KV cache type, over awkward lengths and block sizes, with scattered block tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {
namespace {

struct Case {
  int heads, kv_heads, dim, n_kv, block_size;
};

// Each position's K/V as the store holds it, decoded back to f32 (what the reference sees).
std::vector<float> decoded(const KvStore& store, const std::vector<BlockId>& table, int n_kv, bool value) {
  const KvLayerView kv = store.layer(0);
  const int64_t dim = kv.head_dim, heads = kv.n_kv_heads;
  std::vector<float> out(size_t(n_kv * heads * dim));
  for (int j = 0; j < n_kv; ++j) {
    const BlockId b = table[size_t(j / kv.block_size)];
    const int slot = j % kv.block_size;
    const float* scales = value ? kv.value_scales(b, slot) : kv.key_scales(b, slot);
    for (int64_t i = 0; i < heads * dim; ++i) {
      // Values are rows; keys are transposed within the block per head: (head, d, slot).
      const uint8_t* at = value ? kv.value_row(b, slot) + i * kv.elem_bytes
                                : kv.key_head(b, i / dim) + ((i % dim) * kv.block_size + slot) * kv.elem_bytes;
      float x = 0;
      switch (kv.dtype) {
        case KvDtype::F16: x = f16_to_f32(*reinterpret_cast<const uint16_t*>(at)); break;
        case KvDtype::BF16: x = bf16_to_f32(*reinterpret_cast<const uint16_t*>(at)); break;
        case KvDtype::FP8_E4M3: x = fp8_e4m3_to_f32(*at) * scales[i / dim]; break;
        case KvDtype::INT8: x = float(int8_t(*at)) * scales[i / dim]; break;
      }
      out[size_t(j * heads * dim + i)] = x;
    }
  }
  return out;
}

TEST(CpuAttention, PagedMatchesReferenceForEveryKvTypeOverAwkwardShapes) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    for (const Case& c : {Case{1, 1, 8, 1, 1}, {6, 2, 16, 37, 16}, {9, 3, 64, 300, 7}, {4, 4, 32, 1025, 256}, {4, 1, 256, 300, 16}}) {
      const int n_blocks = (c.n_kv + c.block_size - 1) / c.block_size;
      KvStore store({1, c.kv_heads, c.dim, c.block_size, n_blocks + 3, dtype});
      std::vector<BlockId> table(size_t(n_blocks + 3));
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), rng);  // blocks anywhere in the pool
      table.resize(size_t(n_blocks));
      const int kv_dim = c.kv_heads * c.dim;
      std::vector<float> k(static_cast<size_t>(kv_dim)), v(k.size());
      for (int j = 0; j < c.n_kv; ++j) {
        for (auto* buf : {&k, &v})
          for (auto& x : *buf) x = normal(rng) * 2.0f;
        store.write(0, table[size_t(j / c.block_size)], j % c.block_size, k.data(), v.data());
      }
      const std::vector<float> kr = decoded(store, table, c.n_kv, false), vr = decoded(store, table, c.n_kv, true);
      const ref::AttentionArgs args{c.heads, c.kv_heads, c.dim, 1.0f / std::sqrt(float(c.dim))};
      std::vector<float> q(size_t(c.heads * c.dim));
      for (auto& x : q) x = normal(rng);
      std::vector<float> scores(size_t(c.n_kv)), got(size_t(c.dim)), expect(size_t(c.dim));
      for (int32_t position : {0, int32_t(c.n_kv / 2), int32_t(c.n_kv - 1)}) {
        for (int h = 0; h < c.heads; ++h) {
          ref::attention_head(args, h, q.data() + h * c.dim, position, kr.data(), vr.data(), c.n_kv, scores.data(),
                              expect.data());
          attention_head_paged(args, h, q.data() + h * c.dim, position, store.layer(0), table, got.data());
          for (int d = 0; d < c.dim; ++d)
            ASSERT_NEAR(got[size_t(d)], expect[size_t(d)], 5e-3)
                << kv_dtype_name(dtype) << " head " << h << " pos " << position << " n_kv " << c.n_kv;
        }
      }
    }
  }
}

// Sliding windows: a query sees only its last `window` positions. Window starts fall inside
// tiles, inside blocks and on their edges; the vector kernel scores block-aligned groups and drops
// the positions before the start.
TEST(CpuAttention, SlidingWindowsMatchTheReferenceForEveryKvType) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    for (const Case& c : {Case{4, 1, 64, 700, 16}, {6, 2, 16, 300, 7}, {2, 2, 32, 520, 256}, {4, 1, 256, 530, 16}}) {
      const int n_blocks = (c.n_kv + c.block_size - 1) / c.block_size;
      KvStore store({1, c.kv_heads, c.dim, c.block_size, n_blocks, dtype});
      std::vector<BlockId> table(static_cast<size_t>(n_blocks));
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), rng);
      std::vector<float> k(size_t(c.kv_heads * c.dim)), v(k.size());
      for (int j = 0; j < c.n_kv; ++j) {
        for (auto* buf : {&k, &v})
          for (auto& x : *buf) x = normal(rng) * 2.0f;
        store.write(0, table[size_t(j / c.block_size)], j % c.block_size, k.data(), v.data());
      }
      const std::vector<float> kr = decoded(store, table, c.n_kv, false), vr = decoded(store, table, c.n_kv, true);
      std::vector<float> q(size_t(c.heads * c.dim));
      for (auto& x : q) x = normal(rng);
      std::vector<float> scores(size_t(c.n_kv)), got(size_t(c.dim)), expect(size_t(c.dim));
      for (int64_t window : {1, 5, 17, 256, 300, 512}) {
        ref::AttentionArgs args{c.heads, c.kv_heads, c.dim, 1.0f / std::sqrt(float(c.dim))};
        args.window = window;
        for (int32_t position : {0, 3, int32_t(c.n_kv / 2), int32_t(c.n_kv - 1)}) {
          const int32_t first = std::max<int32_t>(0, position - int32_t(window) + 1);
          for (int h = 0; h < c.heads; ++h) {
            ref::attention_head(args, h, q.data() + h * c.dim, position, kr.data(), vr.data(), c.n_kv, scores.data(),
                                expect.data());
            attention_head_paged(args, h, q.data() + h * c.dim, position, store.layer(0), table, got.data(), first);
            for (int d = 0; d < c.dim; ++d)
              ASSERT_NEAR(got[size_t(d)], expect[size_t(d)], 5e-3)
                  << kv_dtype_name(dtype) << " window " << window << " pos " << position << " head " << h;
          }
        }
      }
    }
  }
}

TEST(CpuAttention, ScaledTypesRoundTripWithinTheirPrecision) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (KvDtype dtype : {KvDtype::FP8_E4M3, KvDtype::INT8}) {
    KvStore store({1, 2, 32, 4, 1, dtype});
    std::vector<float> k(64), v(64);
    for (auto& x : k) x = normal(rng);
    for (auto& x : v) x = normal(rng);
    store.write(0, 0, 3, k.data(), v.data());
    const std::vector<BlockId> table{0};
    const std::vector<float> back = decoded(store, table, 4, false);
    for (int h = 0; h < 2; ++h) {
      float amax = 0;
      for (int d = 0; d < 32; ++d) amax = std::max(amax, std::fabs(k[size_t(h * 32 + d)]));
      for (int d = 0; d < 32; ++d) {
        const float x = k[size_t(h * 32 + d)], y = back[size_t(3 * 64 + h * 32 + d)];
        // INT8: half a step of amax/127; FP8: 3 mantissa bits (relative 1/16) or the subnormal step.
        const float tol = dtype == KvDtype::INT8 ? amax / 254.0f + 1e-6f : std::max(std::fabs(x) / 16.0f, amax / 448.0f / 512.0f) + 1e-6f;
        ASSERT_NEAR(y, x, tol) << kv_dtype_name(dtype);
      }
    }
  }
}

TEST(Fp8, E4M3EncodesExactValuesAndSaturates) {
  for (int v = 0; v < 256; ++v) {
    if ((v & 0x7f) == 0x7f) continue;  // NaN
    const float x = fp8_e4m3_to_f32(uint8_t(v));
    EXPECT_EQ(f32_to_fp8_e4m3(x), v == 0x80 ? 0x80 : v) << v;
  }
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1000.0f)), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(-1e9f)), -448.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(f32_to_fp8_e4m3(NAN))));
  // Halfway between 1.0 and 1.125 rounds to even (1.0); just above rounds up.
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1.0625f)), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1.07f)), 1.125f);
}

}  // namespace
}  // namespace ridge::cpu

namespace ridge::cpu {
namespace {

// The wide f16 tile is the scalar one, bit for bit (same roundings, same order of every sum), for
// whole and partial tiles, any number of a group's heads and blocks of 1..8 consecutive tokens
// (the causal diagonal and window starts inside the tile); and a token's partial in a block is the
// one it gets alone.
TEST(CpuAttention, WideF16TileIsBitIdenticalToTheScalarOneForBlocksOfTokens) {
  using TileFn = void (*)(const ref::AttentionArgs&, const AttentionQueries&, int64_t, const KvLayerView&,
                          std::span<const BlockId>, float*, float*, int64_t);
  std::vector<std::pair<const char*, TileFn>> kernels;
  if (isa_supported(Isa::Avx2)) kernels.push_back({"avx2", attention_tile_f16_avx2});
  if (isa_supported(Isa::Avx512Vnni)) kernels.push_back({"avx512", attention_tile_f16_avx512});
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  for (const auto& [kernel_name, kernel] : kernels) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  for (int dim : {16, 32, 64, 128, 256}) {
    const int heads = 10, kv_heads = 2, group = heads / kv_heads, n_kv = 600, block = 16;
    const int n_blocks = (n_kv + block - 1) / block;
    KvStore store({1, kv_heads, dim, block, n_blocks, KvDtype::F16});
    std::vector<BlockId> table(static_cast<size_t>(n_blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    std::vector<float> k(static_cast<size_t>(kv_heads * dim)), v(k.size());
    std::vector<float> q(static_cast<size_t>(kAttentionQueryBlock * heads * dim));
    for (int j = 0; j < n_kv; ++j) {
      for (auto* buf : {&k, &v})
        for (auto& x : *buf) x = normal(rng);
      store.write(0, table[size_t(j / block)], j % block, k.data(), v.data());
    }
    for (auto& x : q) x = normal(rng);
    const ref::AttentionArgs args{heads, kv_heads, dim, 1.0f / std::sqrt(float(dim))};
    const int64_t part = attention_partial_floats(args, group), stride = part + 3;
    std::vector<float> scratch(size_t(attention_scratch_floats(args, group, kAttentionQueryBlock)));
    std::vector<float> wide(size_t(kAttentionQueryBlock * stride)), scalar(wide.size()), alone(static_cast<size_t>(part));
    for (int kv_head = 0; kv_head < kv_heads; ++kv_head)
      for (int32_t last : {0, 15, 40, 255, 256, 262, 300, n_kv - 1})
        for (int32_t window : {0, 1, 5, 21, 258})
          for (int n_tokens : {1, 2, 3, 8})
            for (int n_heads : {1, 2, 3, 5}) {
              if (last + 1 < n_tokens) continue;
              std::vector<int32_t> positions, firsts;
              for (int i = 0; i < n_tokens; ++i) {
                positions.push_back(last - n_tokens + 1 + i);
                firsts.push_back(window > 0 ? std::max(0, positions.back() - window + 1) : 0);
              }
              // The tiles every token of the block reads.
              for (int64_t tile = first_attention_tile(firsts.back()); tile < attention_tiles(positions.front());
                   ++tile) {
                const AttentionQueries queries{q.data() + kv_head * group * dim, heads * dim, kv_head * group, n_heads,
                                               positions.data(), firsts.data(), n_tokens};
                const size_t used = size_t(attention_partial_floats(args, n_heads));
                std::fill(wide.begin(), wide.end(), 7.0f);
                std::fill(scalar.begin(), scalar.end(), 7.0f);
                kernel(args, queries, tile, store.layer(0), table, scratch.data(), wide.data(), stride);
                attention_tile_f16_scalar(args, queries, tile, store.layer(0), table, scratch.data(), scalar.data(),
                                          stride);
                for (int i = 0; i < n_tokens; ++i) {
                  const std::string at = std::string(kernel_name) + " dim " + std::to_string(dim) + " kv head " + std::to_string(kv_head) +
                                         " last " + std::to_string(last) + " window " + std::to_string(window) +
                                         " tokens " + std::to_string(n_tokens) + " token " + std::to_string(i) +
                                         " heads " + std::to_string(n_heads) + " tile " + std::to_string(tile);
                  ASSERT_EQ(0, std::memcmp(wide.data() + i * stride, scalar.data() + i * stride, used * sizeof(float)))
                      << at;
                  const AttentionQuery one{queries.q + i * queries.q_stride, kv_head * group, n_heads, positions[size_t(i)],
                                           firsts[size_t(i)]};
                  attention_tile(args, one, tile, store.layer(0), table, scratch.data(), alone.data());
                  ASSERT_EQ(0, std::memcmp(alone.data(), wide.data() + i * stride, used * sizeof(float))) << at;
                }
              }
            }
  }
  }
}

// The softmax exponential: within 2 ulp of e^x wherever the result is a normal float, 0 below
// -87.3 and for -inf, exactly 1 at 0; the sixteen-lane version gives the scalar bits.
TEST(CpuAttention, ExpNonpositiveIsAccurateAndTheVectorOneHasItsBits) {
  std::vector<float> x;
  for (float v = 0.0f; v > -90.0f; v -= 0.000731f) x.push_back(v);
  for (float v : {-0.0f, -87.3f, -87.29999f, -87.30001f, -1e-30f, -0.34657359f, -0.34657360f, -INFINITY, -1e30f})
    x.push_back(v);
  for (size_t i = 0; i < x.size(); ++i) {
    const float got = exp_nonpositive(x[i]);
    if (!(x[i] > exp_constants::kMin)) {
      ASSERT_EQ(got, 0.0f) << x[i];
      continue;
    }
    const double want = std::exp(double(x[i]));
    if (want < 1.2e-38) continue;  // subnormal results: no ulp bound
    ASSERT_LE(std::fabs(double(got) - want), 2.0 * (std::nextafter(float(want), INFINITY) - float(want))) << x[i];
  }
  EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
  x.push_back(NAN);
  std::vector<float> wide(x.size());
  if (isa_supported(Isa::Avx2)) {
    exp_nonpositive_avx2(x.data(), int64_t(x.size()), wide.data());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(exp_nonpositive(x[i]))) << "avx2 " << x[i];
  }
  if (!isa_supported(Isa::Avx512Vnni)) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  exp_nonpositive_avx512(x.data(), int64_t(x.size()), wide.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(exp_nonpositive(x[i]))) << x[i];
}

// Merged tiles equal the reference attention within f16 rounding for long histories, and the
// tiled result of one head is the same whether it is computed alone or with its group.
TEST(CpuAttention, TilesMergeToTheReferenceOverLongHistories) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int heads = 4, kv_heads = 2, dim = 64, n_kv = 1100, block = 16;
  const int n_blocks = (n_kv + block - 1) / block;
  KvStore store({1, kv_heads, dim, block, n_blocks, KvDtype::F16});
  std::vector<BlockId> table(static_cast<size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);
  std::vector<float> k(static_cast<size_t>(kv_heads * dim)), v(k.size()), q(static_cast<size_t>(heads * dim));
  for (int j = 0; j < n_kv; ++j) {
    for (auto* buf : {&k, &v})
      for (auto& x : *buf) x = normal(rng);
    store.write(0, table[size_t(j / block)], j % block, k.data(), v.data());
  }
  for (auto& x : q) x = normal(rng) * 3.0f;
  const std::vector<float> kr = decoded(store, table, n_kv, false), vr = decoded(store, table, n_kv, true);
  const ref::AttentionArgs args{heads, kv_heads, dim, 1.0f / std::sqrt(float(dim))};
  std::vector<float> scores(static_cast<size_t>(n_kv)), expect(static_cast<size_t>(dim)), alone(expect.size());
  const int group = heads / kv_heads;
  std::vector<float> tile_scores(static_cast<size_t>(attention_scratch_floats(args, group))), together(static_cast<size_t>(group * dim));
  for (int32_t position : {255, 256, 700, n_kv - 1}) {
    const int64_t n_tiles = attention_tiles(position);
    std::vector<float> partials(static_cast<size_t>(n_tiles * attention_partial_floats(args, group)));
    const AttentionQuery query{q.data(), 0, group, position};  // kv head 0's group
    for (int64_t c = 0; c < n_tiles; ++c)
      attention_tile(args, query, c, store.layer(0), table, tile_scores.data(),
                     partials.data() + c * attention_partial_floats(args, group));
    attention_merge(args, group, partials.data(), n_tiles, together.data());
    for (int h = 0; h < group; ++h) {
      ref::attention_head(args, h, q.data() + h * dim, position, kr.data(), vr.data(), n_kv, scores.data(), expect.data());
      attention_head_paged(args, h, q.data() + h * dim, position, store.layer(0), table, alone.data());
      for (int d = 0; d < dim; ++d) ASSERT_NEAR(alone[size_t(d)], expect[size_t(d)], 2e-3) << "position " << position;
      ASSERT_EQ(0, std::memcmp(alone.data(), together.data() + h * dim, size_t(dim) * sizeof(float))) << "position " << position;
    }
  }
}


// A KV-parallel rank's merged partial (attention_merge_partial), merged again with other ranks'
// (attention_merge over the partials in order), equals merging every tile at once within rounding;
// a rank with no tiles contributes nothing.
TEST(CpuAttention, MergedPartialsMergeLikeTheirTiles) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int heads = 3, dim = 20, n_tiles = 7;
  const ref::AttentionArgs args{heads, 1, dim, 0.1f};
  const int64_t part = attention_partial_floats(args, heads);
  std::vector<float> tiles(static_cast<size_t>(n_tiles * part));
  for (int64_t c = 0; c < n_tiles; ++c)
    for (int h = 0; h < heads; ++h) {
      float* p = tiles.data() + c * part + h * (dim + 2);
      p[0] = normal(rng);
      p[1] = 1.0f + std::abs(normal(rng));
      for (int d = 0; d < dim; ++d) p[2 + d] = normal(rng);
    }
  std::vector<float> want(static_cast<size_t>(heads * dim)), got(want.size());
  attention_merge(args, heads, tiles.data(), n_tiles, want.data());
  // Ranks holding tiles {0, 1, 2}, {3, 4, 5, 6} and none.
  std::vector<float> ranks(static_cast<size_t>(3 * part));
  attention_merge_partial(args, heads, tiles.data(), 3, ranks.data());
  attention_merge_partial(args, heads, tiles.data() + 3 * part, 4, ranks.data() + part);
  attention_merge_partial(args, heads, tiles.data(), 0, ranks.data() + 2 * part);
  for (int h = 0; h < heads; ++h) {
    EXPECT_EQ(ranks[size_t(2 * part + h * (dim + 2))], -INFINITY);
    EXPECT_EQ(ranks[size_t(2 * part + h * (dim + 2) + 1)], 0.0f);
  }
  attention_merge(args, heads, ranks.data(), 3, got.data());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::abs(want[i]))) << i;
}

}  // namespace
}  // namespace ridge::cpu
