#include "kernels/cpu/latent_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/kv_decode_tables.h"

namespace ridge::cpu {
namespace {

// The tile's positions begin..begin+n-1 as f32 (FP8/INT8 times their row's scale), twice: as rows
// (n, width) for P·V over the latent, and transposed (width, n) for the scores of many positions
// at once (each still one running sum over d, so the bits are those of a row-by-row dot).
void decode_tile(const KvLayerView& kv, std::span<const BlockId> table, int64_t begin, int64_t n, int64_t width,
                 float* rows, float* keys) {
  const float* f16 = kv.dtype == KvDtype::F16 ? table16<f16_to_f32>() : nullptr;
  const float* bf16 = kv.dtype == KvDtype::BF16 ? table16<bf16_to_f32>() : nullptr;
  for (int64_t j = 0; j < n; ++j) {
    const BlockId block = table[size_t((begin + j) / kv.block_size)];
    const int64_t slot = (begin + j) % kv.block_size, stride = kv.block_size * kv.elem_bytes;
    const uint8_t* key = kv.key_head(block, 0) + slot * kv.elem_bytes;
    const bool scaled = kv.dtype == KvDtype::FP8_E4M3 || kv.dtype == KvDtype::INT8;
    const float scale = scaled ? kv.key_scales(block, slot)[0] : 1.0f;
    float* row = rows + j * width;
    for (int64_t d = 0; d < width; ++d) {
      const uint8_t* at = key + d * stride;
      switch (kv.dtype) {
        case KvDtype::F16: row[d] = f16[*reinterpret_cast<const uint16_t*>(at)]; break;
        case KvDtype::BF16: row[d] = bf16[*reinterpret_cast<const uint16_t*>(at)]; break;
        case KvDtype::FP8_E4M3: row[d] = fp8_e4m3_to_f32(*at) * scale; break;
        case KvDtype::INT8: row[d] = float(int8_t(*at)) * scale; break;
      }
      keys[d * n + j] = row[d];
    }
  }
}

}  // namespace

void latent_attention_tile(const ref::LatentAttentionArgs& args, const float* q, int32_t position, int64_t tile,
                           const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partial) {
  const int64_t width = args.width(), latent = args.latent_dim;
  const int64_t begin = tile * kAttentionTile, end = std::min<int64_t>(int64_t(position) + 1, begin + kAttentionTile);
  const int64_t n = end - begin;
  const bool round_q = kv.dtype == KvDtype::F16;
  const bool round_p = kv.dtype == KvDtype::F16 || kv.dtype == KvDtype::BF16;  // an f16/bf16 kernel's P @ V
  float* rows = scratch;                                  // (n, width)
  float* keys = rows + kAttentionTile * width;            // (width, n)
  float* scores = keys + kAttentionTile * width;          // (n_heads, n)
  float* q_head = scores + kAttentionTile * args.n_heads;  // (width)
  decode_tile(kv, table, begin, n, width, rows, keys);
  for (int64_t h = 0; h < args.n_heads; ++h, partial += latent + 2) {
    for (int64_t d = 0; d < width; ++d) q_head[d] = round_q ? round_to_f16(q[h * width + d]) : q[h * width + d];
    float* s = scores + h * n;
    std::fill(s, s + n, 0.0f);
    for (int64_t d = 0; d < width; ++d) {
      const float qd = q_head[d];
      const float* kd = keys + d * n;
      for (int64_t j = 0; j < n; ++j) s[j] += qd * kd[j];
    }
    float max_score = -INFINITY;
    for (int64_t j = 0; j < n; ++j) max_score = std::max(max_score, s[j] *= args.scale);
    double sum = 0.0;  // in double, as the ordinary attention tiles
    for (int64_t j = 0; j < n; ++j) sum += double(s[j] = std::exp(s[j] - max_score));
    float* out = partial + 2;
    std::fill(out, out + latent, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float p = round_p ? round_to_f16(s[j]) : s[j];
      const float* row = rows + j * width;
      for (int64_t d = 0; d < latent; ++d) out[d] += p * row[d];
    }
    partial[0] = max_score;
    partial[1] = float(sum);
  }
}

void latent_attention_merge(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles, float* out) {
  // The ordinary merge over one group of every head, whose "head" is the latent.
  const ref::AttentionArgs merged{args.n_heads, 1, args.latent_dim, args.scale};
  attention_merge(merged, args.n_heads, partials, n_tiles, out);
}

void latent_attention_merge_partial(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles,
                                    float* out_partial) {
  const ref::AttentionArgs merged{args.n_heads, 1, args.latent_dim, args.scale};
  attention_merge_partial(merged, args.n_heads, partials, n_tiles, out_partial);
}

void latent_attention_paged(const ref::LatentAttentionArgs& args, const float* q, int32_t position,
                            const KvLayerView& kv, std::span<const BlockId> table, float* out) {
  const int64_t n_tiles = attention_tiles(position), part = latent_attention_partial_floats(args);
  std::vector<float> scratch(size_t(latent_attention_scratch_floats(args))), partials(size_t(n_tiles * part));
  for (int64_t c = 0; c < n_tiles; ++c)
    latent_attention_tile(args, q, position, c, kv, table, scratch.data(), partials.data() + c * part);
  latent_attention_merge(args, partials.data(), n_tiles, out);
}

}  // namespace ridge::cpu
