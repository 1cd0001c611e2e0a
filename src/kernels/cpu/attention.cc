#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {
namespace {

// Every 16-bit value's f32, computed once: the attention loops convert K and V element by element.
template <float (*Convert)(uint16_t)>
const float* table16() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = Convert(uint16_t(h));
    return t;
  }();
  return table.data();
}

const float* fp8_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(256);
    for (uint32_t v = 0; v < 256; ++v) t[v] = fp8_e4m3_to_f32(uint8_t(v));
    return t;
  }();
  return table.data();
}

// Reads one kv head's row of head_dim elements as f32 (the scale folded in for FP8/INT8).
template <KvDtype D>
struct RowReader {
  const float* table;
  RowReader() {
    if constexpr (D == KvDtype::F16) table = table16<f16_to_f32>();
    else if constexpr (D == KvDtype::BF16) table = table16<bf16_to_f32>();
    else if constexpr (D == KvDtype::FP8_E4M3) table = fp8_table();
    else table = nullptr;
  }
  // Σ q[d] · key[d], the key's elements `stride` bytes apart (the block's transposed key layout).
  float dot(const float* q, const uint8_t* key, int64_t stride, float scale, int64_t n) const {
    float sum = 0.0f;
    if constexpr (D == KvDtype::F16 || D == KvDtype::BF16) {
      for (int64_t d = 0; d < n; ++d) sum += q[d] * table[*reinterpret_cast<const uint16_t*>(key + d * stride)];
      return sum;
    } else if constexpr (D == KvDtype::FP8_E4M3) {
      for (int64_t d = 0; d < n; ++d) sum += q[d] * table[key[d * stride]];
    } else {
      for (int64_t d = 0; d < n; ++d) sum += q[d] * float(int8_t(key[d * stride]));
    }
    return sum * scale;
  }
  void axpy(float p, const uint8_t* row, float scale, int64_t n, float* out) const {
    if constexpr (D == KvDtype::F16 || D == KvDtype::BF16) {
      const auto* r = reinterpret_cast<const uint16_t*>(row);
      for (int64_t d = 0; d < n; ++d) out[d] += p * table[r[d]];
    } else if constexpr (D == KvDtype::FP8_E4M3) {
      const float ps = p * scale;
      for (int64_t d = 0; d < n; ++d) out[d] += ps * table[row[d]];
    } else {
      const float ps = p * scale;
      const auto* r = reinterpret_cast<const int8_t*>(row);
      for (int64_t d = 0; d < n; ++d) out[d] += ps * float(r[d]);
    }
  }
};

template <KvDtype D>
void attend(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position, const KvLayerView& kv,
            std::span<const BlockId> table, float* scores, float* out_head) {
  constexpr int64_t kMaxHeadDim = 512;
  constexpr bool kScaled = D == KvDtype::FP8_E4M3 || D == KvDtype::INT8;
  constexpr bool kRoundProbs = D == KvDtype::F16 || D == KvDtype::BF16;  // an f16/bf16 kernel's P @ V
  const int64_t kv_head = head / (args.n_heads / args.n_kv_heads);
  const int64_t dim = args.head_dim, head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);  // bytes into a row
  const int64_t n_seen = int64_t(position) + 1;
  const RowReader<D> reader;
  float q[kMaxHeadDim];
  for (int64_t d = 0; d < dim; ++d) q[d] = D == KvDtype::F16 ? f16_to_f32(f32_to_f16(q_head[d])) : q_head[d];

  float max_score = -INFINITY;
  for (int64_t j = 0; j < n_seen; ++j) {
    const BlockId block = table[size_t(j / kv.block_size)];
    const int64_t slot = j % kv.block_size;
    const float scale = kScaled ? kv.key_scales(block, slot)[kv_head] : 1.0f;
    scores[j] = reader.dot(q, kv.key_head(block, kv_head) + slot * kv.elem_bytes, kv.block_size * kv.elem_bytes, scale, dim) *
                args.scale;
    max_score = std::max(max_score, scores[j]);
  }
  double denom = 0.0;  // summed in double and applied as one reciprocal, as llama.cpp's softmax does
  for (int64_t j = 0; j < n_seen; ++j) denom += double(scores[j] = std::exp(scores[j] - max_score));
  const float inv_denom = float(1.0 / denom);
  std::fill(out_head, out_head + dim, 0.0f);
  for (int64_t j = 0; j < n_seen; ++j) {
    const BlockId block = table[size_t(j / kv.block_size)];
    const int64_t slot = j % kv.block_size;
    float p = scores[j] * inv_denom;
    if constexpr (kRoundProbs) p = f16_to_f32(f32_to_f16(p));
    const float scale = kScaled ? kv.value_scales(block, slot)[kv_head] : 1.0f;
    reader.axpy(p, kv.value_row(block, slot) + head_offset, scale, dim, out_head);
  }
}

}  // namespace

void store_f16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void attention_head_reference_order(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                                    const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head) {
  attend<KvDtype::F16>(args, head, q_head, position, kv, table, scores, out_head);
}

void attention_head_paged(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                          const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head) {
  static const bool wide = active_isa() == Isa::Avx512Vnni;
  if (kv.dtype == KvDtype::F16 && wide && args.head_dim % 16 == 0 && kv.block_size % 16 == 0)
    return attend_f16_avx512(args, head, q_head, position, kv, table, scores, out_head);
  switch (kv.dtype) {
    case KvDtype::F16: return attend<KvDtype::F16>(args, head, q_head, position, kv, table, scores, out_head);
    case KvDtype::BF16: return attend<KvDtype::BF16>(args, head, q_head, position, kv, table, scores, out_head);
    case KvDtype::FP8_E4M3: return attend<KvDtype::FP8_E4M3>(args, head, q_head, position, kv, table, scores, out_head);
    case KvDtype::INT8: return attend<KvDtype::INT8>(args, head, q_head, position, kv, table, scores, out_head);
  }
}

}  // namespace ridge::cpu
