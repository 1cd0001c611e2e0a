#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16.h"

namespace ridge::cpu {
namespace {

// Every f16 value's f32, computed once: the attention loops convert K and V element by element.
const float* f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = f16_to_f32(uint16_t(h));
    return t;
  }();
  return table.data();
}

}  // namespace

void store_f16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void attention_head_f16(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                        const uint16_t* k, const uint16_t* v, int64_t n_kv, float* scores, float* out_head) {
  constexpr int64_t kMaxHeadDim = 512;
  const int64_t kv_head = head / (args.n_heads / args.n_kv_heads);
  const int64_t kv_stride = args.n_kv_heads * args.head_dim;
  const int64_t n_seen = std::min<int64_t>(n_kv, int64_t(position) + 1);
  const float* to_f32 = f16_table();
  float q[kMaxHeadDim];
  for (int64_t d = 0; d < args.head_dim; ++d) q[d] = f16_to_f32(f32_to_f16(q_head[d]));
  float max_score = -INFINITY;
  for (int64_t j = 0; j < n_seen; ++j) {
    const uint16_t* kj = k + j * kv_stride + kv_head * args.head_dim;
    float dot = 0.0f;
    for (int64_t d = 0; d < args.head_dim; ++d) dot += q[d] * to_f32[kj[d]];
    scores[j] = dot * args.scale;
    max_score = std::max(max_score, scores[j]);
  }
  double denom = 0.0;  // summed in double and applied as one reciprocal, as llama.cpp's softmax does
  for (int64_t j = 0; j < n_seen; ++j) denom += double(scores[j] = std::exp(scores[j] - max_score));
  const float inv_denom = float(1.0 / denom);
  std::fill(out_head, out_head + args.head_dim, 0.0f);
  for (int64_t j = 0; j < n_seen; ++j) {
    const float p = f16_to_f32(f32_to_f16(scores[j] * inv_denom));
    const uint16_t* vj = v + j * kv_stride + kv_head * args.head_dim;
    for (int64_t d = 0; d < args.head_dim; ++d) out_head[d] += p * to_f32[vj[d]];
  }
}

}  // namespace ridge::cpu
