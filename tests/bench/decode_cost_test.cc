// Bytes and FLOPs per token, counted by hand for a two-layer model with mixed weight types.
#include <gtest/gtest.h>

#include "bench/decode_cost.h"

namespace ridge::bench {
namespace {

Model two_layer_model(bool tied) {
  static const uint8_t dummy = 0;  // views only need to be present; nothing is read
  Model m;
  ModelSpec& s = m.spec;
  s.n_vocab = 100, s.n_embd = 64, s.n_layer = 2, s.n_head = 4, s.n_head_kv = 2, s.head_dim = 16, s.n_ff = 128;
  s.tied_embeddings = tied;
  auto w = [](DType t, int64_t rows, int64_t cols) { return WeightRef{t, &dummy, rows, cols}; };
  m.weights.token_embd = w(DType::Q8_0, 100, 64);  // 2 blocks of 34 bytes per row
  m.weights.output_norm = w(DType::F32, 1, 64);
  m.weights.output = tied ? m.weights.token_embd : w(DType::Q6_K, 100, 256);
  for (int i = 0; i < 2; ++i) {
    LayerWeights l;
    l.attn_norm = l.ffn_norm = w(DType::F32, 1, 64);
    l.wq = w(DType::Q4_0, 64, 64);  // 2 blocks of 18 bytes per row
    l.wk = l.wv = w(DType::Q4_0, 32, 64);
    l.wo = w(DType::Q4_0, 64, 64);
    l.w_gate = l.w_up = w(DType::Q4_0, 128, 64);
    l.w_down = w(DType::Q4_0, 64, 128);
    m.weights.layers.push_back(l);
  }
  return m;
}

TEST(DecodeCost, CountsEveryMatrixOnceAndOneEmbeddingRow) {
  const ModelCost c = model_cost(two_layer_model(/*tied=*/true));
  const int64_t layer = (64 + 32 + 32 + 64 + 128 + 128) * 36 + 64 * 72 + 2 * 64 * 4;  // matrices + norms
  const int64_t output = 100 * 68 + 64 * 4;                                            // tied: token_embd + norm
  EXPECT_EQ(c.weight_bytes_per_token, 2 * layer + output + 68);
  EXPECT_EQ(c.file_weight_bytes, 2 * layer + output);
  EXPECT_EQ(c.kv_bytes_per_position, 2 * 2 * 32 * 2);  // K and V, 2 layers, kv_dim 32, f16
  EXPECT_EQ(c.matmul_params, 2 * (64 * 64 * 2 + 32 * 64 * 2 + 128 * 64 * 3) + 100 * 64);
}

TEST(DecodeCost, UntiedOutputIsReadWhileTheEmbeddingCountsOneRowPerToken) {
  const ModelCost tied = model_cost(two_layer_model(true));
  const ModelCost untied = model_cost(two_layer_model(false));
  const int64_t q6k_output = 100 * 210;  // 256 columns: one 210-byte super-block per row
  EXPECT_EQ(untied.weight_bytes_per_token - tied.weight_bytes_per_token, q6k_output - 100 * 68);
  EXPECT_EQ(untied.file_weight_bytes - tied.file_weight_bytes, q6k_output);
}

TEST(DecodeCost, GenerationAveragesTheGrowingContext) {
  const ModelCost c = model_cost(two_layer_model(true));
  // Steps attend 1, 2, 3, 4 positions: 2.5 on average.
  EXPECT_DOUBLE_EQ(generation_bytes_per_token(c, 0, 4), double(c.weight_bytes_per_token) + 2.5 * double(c.kv_bytes_per_position));
  EXPECT_DOUBLE_EQ(prefill_flops(c, 2), 2.0 * double(c.matmul_params) * 2 + double(c.attention_flops_per_position) * 3);
}

}  // namespace
}  // namespace ridge::bench
