// Multi-head latent attention: the absorbed reference equals ordinary attention over each head's
// materialised K = [W_kb c | k_rope] and V = W_vb c; the paged CPU kernel over a keys-only store
// equals the reference fed the rows the store holds, for every KV cache type, over awkward shapes,
// block sizes and histories of several tiles; the store keeps one row per position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/latent_attention.h"
#include "kv/kv_store.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/latent_attention.h"
#include "random_vector.h"

namespace ridge {
namespace {

using testing::random_vector;

struct Shape {
  int heads, latent, rope, nope, v, n_kv;
};

// Head h's (latent, nope) absorbed key matrix and (v, latent) value matrix, as GGUF's attn_k_b /
// attn_v_b store them.
struct HeadWeights {
  std::vector<float> k_b, v_b;
};

TEST(LatentAttention, AbsorbedFormEqualsAttentionOverMaterialisedHeads) {
  uint32_t seed = 1;
  for (const Shape& c : {Shape{1, 4, 2, 3, 5, 1}, Shape{3, 20, 6, 5, 7, 37}, Shape{4, 64, 16, 32, 32, 70},
                         Shape{2, 9, 4, 30, 2, 12}}) {
    const int width = c.latent + c.rope, dim = std::max(c.nope + c.rope, c.v);  // padded head for ref::attention
    const std::vector<float> latent = random_vector(size_t(c.n_kv * c.latent), seed++);
    const std::vector<float> k_rope = random_vector(size_t(c.n_kv * c.rope), seed++);
    std::vector<HeadWeights> w(size_t(c.heads));
    for (auto& h : w) {
      h.k_b = random_vector(size_t(c.latent * c.nope), seed++, 0.3f);
      h.v_b = random_vector(size_t(c.v * c.latent), seed++, 0.3f);
    }
    const int n_tokens = std::min(c.n_kv, 4);
    std::vector<int32_t> positions(static_cast<size_t>(n_tokens));
    for (int t = 0; t < n_tokens; ++t) positions[size_t(t)] = c.n_kv - 1 - t * (c.n_kv / 4);
    const std::vector<float> q_nope = random_vector(size_t(n_tokens * c.heads * c.nope), seed++);
    const std::vector<float> q_rope = random_vector(size_t(n_tokens * c.heads * c.rope), seed++);
    const float scale = 1.0f / std::sqrt(float(c.nope + c.rope));

    // Materialised: every head its own K and V (zero-padded to a common width).
    std::vector<float> k(size_t(c.n_kv * c.heads * dim), 0.0f), v(k.size(), 0.0f), q(size_t(n_tokens * c.heads * dim), 0.0f);
    for (int j = 0; j < c.n_kv; ++j)
      for (int h = 0; h < c.heads; ++h) {
        float* kj = k.data() + (j * c.heads + h) * dim;
        float* vj = v.data() + (j * c.heads + h) * dim;
        for (int d = 0; d < c.nope; ++d)
          for (int r = 0; r < c.latent; ++r) kj[d] += w[size_t(h)].k_b[size_t(r * c.nope + d)] * latent[size_t(j * c.latent + r)];
        for (int d = 0; d < c.rope; ++d) kj[c.nope + d] = k_rope[size_t(j * c.rope + d)];
        for (int i = 0; i < c.v; ++i)
          for (int r = 0; r < c.latent; ++r) vj[i] += w[size_t(h)].v_b[size_t(i * c.latent + r)] * latent[size_t(j * c.latent + r)];
      }
    for (int t = 0; t < n_tokens; ++t)
      for (int h = 0; h < c.heads; ++h) {
        float* qt = q.data() + (t * c.heads + h) * dim;
        std::copy_n(q_nope.data() + (t * c.heads + h) * c.nope, c.nope, qt);
        std::copy_n(q_rope.data() + (t * c.heads + h) * c.rope, c.rope, qt + c.nope);
      }
    std::vector<float> expect(q.size());
    ref::attention({c.heads, c.heads, dim, scale}, q.data(), positions.data(), n_tokens, k.data(), v.data(), c.n_kv,
                   expect.data());

    // Absorbed: q' = [W_kbᵀ q_nope | q_rope] over rows [c | k_rope], then W_vb per head.
    std::vector<float> kv(size_t(c.n_kv * width)), q_abs(size_t(n_tokens * c.heads * width), 0.0f);
    for (int j = 0; j < c.n_kv; ++j) {
      std::copy_n(latent.data() + j * c.latent, c.latent, kv.data() + j * width);
      std::copy_n(k_rope.data() + j * c.rope, c.rope, kv.data() + j * width + c.latent);
    }
    for (int t = 0; t < n_tokens; ++t)
      for (int h = 0; h < c.heads; ++h) {
        float* qa = q_abs.data() + (t * c.heads + h) * width;
        const float* qn = q_nope.data() + (t * c.heads + h) * c.nope;
        for (int r = 0; r < c.latent; ++r)
          for (int d = 0; d < c.nope; ++d) qa[r] += w[size_t(h)].k_b[size_t(r * c.nope + d)] * qn[d];
        std::copy_n(q_rope.data() + (t * c.heads + h) * c.rope, c.rope, qa + c.latent);
      }
    std::vector<float> out_latent(size_t(n_tokens * c.heads * c.latent));
    ref::latent_attention({c.heads, c.latent, c.rope, scale}, q_abs.data(), positions.data(), n_tokens, kv.data(),
                          c.n_kv, out_latent.data());
    for (int t = 0; t < n_tokens; ++t)
      for (int h = 0; h < c.heads; ++h)
        for (int i = 0; i < c.v; ++i) {
          float got = 0.0f;
          for (int r = 0; r < c.latent; ++r)
            got += w[size_t(h)].v_b[size_t(i * c.latent + r)] * out_latent[size_t((t * c.heads + h) * c.latent + r)];
          const float want = expect[size_t((t * c.heads + h) * dim + i)];
          ASSERT_NEAR(got, want, 1e-4f * (1.0f + std::fabs(want))) << "heads " << c.heads << " latent " << c.latent
                                                                   << " token " << t << " head " << h << " dim " << i;
        }
  }
}

// Position j's row as a keys-only store holds it (transposed within its block), decoded to f32.
std::vector<float> stored_rows(const KvStore& store, const std::vector<BlockId>& table, int n_kv) {
  const KvLayerView kv = store.layer(0);
  const int64_t width = kv.head_dim;
  std::vector<float> out(size_t(n_kv * width));
  for (int j = 0; j < n_kv; ++j) {
    const BlockId b = table[size_t(j / kv.block_size)];
    const int slot = j % kv.block_size;
    for (int64_t d = 0; d < width; ++d) {
      const uint8_t* at = kv.key_head(b, 0) + (d * kv.block_size + slot) * kv.elem_bytes;
      float x = 0;
      switch (kv.dtype) {
        case KvDtype::F16: x = f16_to_f32(*reinterpret_cast<const uint16_t*>(at)); break;
        case KvDtype::BF16: x = bf16_to_f32(*reinterpret_cast<const uint16_t*>(at)); break;
        case KvDtype::FP8_E4M3: x = fp8_e4m3_to_f32(*at) * kv.key_scales(b, slot)[0]; break;
        case KvDtype::INT8: x = float(int8_t(*at)) * kv.key_scales(b, slot)[0]; break;
      }
      out[size_t(j * width + d)] = x;
    }
  }
  return out;
}

TEST(LatentAttention, PagedKernelMatchesReferenceForEveryKvTypeOverAwkwardShapes) {
  std::mt19937 rng(11);
  uint32_t seed = 100;
  struct Case {
    int heads, latent, rope, n_kv, block_size;
  };
  for (KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    for (const Case& c : {Case{1, 4, 2, 1, 1}, Case{3, 20, 6, 37, 16}, Case{5, 64, 16, 300, 7}, Case{2, 32, 8, 600, 256}}) {
      const int width = c.latent + c.rope, n_blocks = (c.n_kv + c.block_size - 1) / c.block_size;
      KvStore store({1, 1, width, c.block_size, n_blocks + 3, dtype, /*keys_only=*/true});
      std::vector<BlockId> table(size_t(n_blocks + 3));
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), rng);  // blocks anywhere in the pool
      table.resize(size_t(n_blocks));
      for (int j = 0; j < c.n_kv; ++j) {
        const std::vector<float> row = random_vector(size_t(width), seed++);
        store.write(0, table[size_t(j / c.block_size)], j % c.block_size, row.data(), nullptr);
      }
      const std::vector<float> rows = stored_rows(store, table, c.n_kv);
      const ref::LatentAttentionArgs args{c.heads, c.latent, c.rope, 1.0f / std::sqrt(float(width))};
      std::vector<float> q = random_vector(size_t(c.heads * width), seed++);
      // An f16 kernel dots the f16-rounded query; the reference gets that query too.
      std::vector<float> q_ref = q;
      if (dtype == KvDtype::F16)
        for (float& x : q_ref) x = round_to_f16(x);
      std::vector<float> got(size_t(c.heads * c.latent)), expect(got.size());
      for (int32_t position : {0, int32_t(c.n_kv / 2), int32_t(c.n_kv - 1)}) {
        ref::latent_attention(args, q_ref.data(), &position, 1, rows.data(), c.n_kv, expect.data());
        cpu::latent_attention_paged(args, q.data(), position, store.layer(0), table, got.data());
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], expect[i], 5e-3) << kv_dtype_name(dtype) << " heads " << c.heads << " latent "
                                               << c.latent << " n_kv " << c.n_kv << " position " << position;
      }
    }
  }
}

TEST(LatentAttention, KeysOnlyStoreHoldsOneRowPerPosition) {
  const KvLayout latent{2, 1, 80, 16, 4, KvDtype::F16, /*keys_only=*/true};
  EXPECT_EQ(latent.bytes_per_token_per_layer(), 80 * 2);
  const KvLayout int8{2, 1, 80, 16, 4, KvDtype::INT8, true};
  EXPECT_EQ(int8.bytes_per_token_per_layer(), 80 + 4);  // one scale per row
  KvStore store(latent);
  EXPECT_EQ(store.bytes(), 2 * 4 * 16 * 80 * 2);
  const std::vector<float> row = random_vector(80, 3);
  EXPECT_THROW(store.write(0, 0, 0, row.data(), row.data()), Error);  // no values to write
  store.write(1, 2, 5, row.data(), nullptr);
  store.copy_block(2, 3);
  const KvLayerView kv = store.layer(1);
  for (int d = 0; d < 80; ++d) {
    const auto at = [&](BlockId b) { return *reinterpret_cast<const uint16_t*>(kv.key_head(b, 0) + (d * 16 + 5) * 2); };
    EXPECT_EQ(f16_to_f32(at(3)), round_to_f16(row[size_t(d)]));
    EXPECT_EQ(at(2), at(3));
  }
  KvStore ordinary({1, 1, 8, 4, 1, KvDtype::F16});
  EXPECT_THROW(ordinary.write(0, 0, 0, row.data(), nullptr), Error);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// Several consecutive tokens over one decode of a tile (prefill) get the bits each gets alone, for
// every KV type and on every ISA this CPU runs, and the AVX-512 build gives the portable one's bits.
TEST(LatentAttention, TokensTogetherGetTheirBitsAlone) {
  const ref::LatentAttentionArgs args{3, 40, 8, 0.2f};
  const int64_t width = args.width(), n_kv = 700, block = 16;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    const int n_blocks = int((n_kv + block - 1) / block);
    KvStore store({1, 1, width, int32_t(block), n_blocks, dtype, /*keys_only=*/true});
    std::vector<BlockId> table(static_cast<size_t>(n_blocks));
    std::iota(table.rbegin(), table.rend(), 0);  // blocks out of order
    std::vector<float> row(static_cast<size_t>(width));
    for (int64_t j = 0; j < n_kv; ++j) {
      for (float& x : row) x = normal(rng);
      store.write(0, table[size_t(j / block)], j % block, row.data(), nullptr);
    }
    const int64_t n = cpu::kAttentionQueryBlock, part = cpu::latent_attention_partial_floats(args);
    std::vector<float> q(static_cast<size_t>(n * args.n_heads * width));
    for (float& x : q) x = normal(rng);
    std::vector<float> scratch(static_cast<size_t>(cpu::latent_attention_scratch_floats(args)));
    for (const int32_t first : {300, 509, 690}) {  // tile 1 (whole or cut by the tokens), tile 2
      std::vector<int32_t> positions(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) positions[size_t(i)] = std::min<int32_t>(first + int32_t(i), int32_t(n_kv - 1));
      const int64_t tile = (first) / cpu::kAttentionTile;
      std::vector<float> together(static_cast<size_t>(n * part)), wide(together.size()), alone(static_cast<size_t>(part));
      cpu::latent_attention_tile_queries(args, q.data(), args.n_heads * width, positions.data(), n, tile,
                                         store.layer(0), table, scratch.data(), together.data(), part);
      if (cpu::isa_supported(cpu::Isa::Avx512Vnni)) {
        cpu::latent_attention_tile_queries_avx512(args, q.data(), args.n_heads * width, positions.data(), n, tile,
                                                  store.layer(0), table, scratch.data(), wide.data(), part);
        EXPECT_EQ(wide, together) << kv_dtype_name(dtype) << " from " << first;
      }
      for (int64_t i = 0; i < n; ++i) {
        cpu::latent_attention_tile(args, q.data() + i * args.n_heads * width, positions[size_t(i)], tile,
                                   store.layer(0), table, scratch.data(), alone.data());
        EXPECT_EQ(0, std::memcmp(alone.data(), together.data() + i * part, alone.size() * sizeof(float)))
            << kv_dtype_name(dtype) << " token " << i << " from " << first;
      }
    }
  }
}

}  // namespace
}  // namespace ridge
