#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/kv_decode_tables.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {
namespace {

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
void tile_reference(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile, const KvLayerView& kv,
                    std::span<const BlockId> table, float* scores, float* partial) {
  constexpr int64_t kMaxHeadDim = 512;
  constexpr bool kScaled = D == KvDtype::FP8_E4M3 || D == KvDtype::INT8;
  constexpr bool kRoundProbs = D == KvDtype::F16 || D == KvDtype::BF16;  // an f16/bf16 kernel's P @ V
  const int64_t dim = args.head_dim, group = args.n_heads / args.n_kv_heads;
  const int64_t begin = std::max<int64_t>(tile * kAttentionTile, query.first_position);
  const int64_t end = std::min<int64_t>(int64_t(query.position) + 1, tile * kAttentionTile + kAttentionTile);
  const RowReader<D> reader;
  for (int64_t i = 0; i < query.n_heads; ++i, partial += dim + 2) {
    const int64_t kv_head = (query.first_head + i) / group;
    const int64_t head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);  // bytes into a value row
    const float* q_head = query.q + i * dim;
    float q[kMaxHeadDim];
    for (int64_t d = 0; d < dim; ++d) q[d] = D == KvDtype::F16 ? round_to_f16(q_head[d]) : q_head[d];

    float max_score = -INFINITY;
    for (int64_t j = begin; j < end; ++j) {
      const BlockId block = table[size_t(j / kv.block_size)];
      const int64_t slot = j % kv.block_size;
      const float scale = kScaled ? kv.key_scales(block, slot)[kv_head] : 1.0f;
      scores[j - begin] =
          reader.dot(q, kv.key_head(block, kv_head) + slot * kv.elem_bytes, kv.block_size * kv.elem_bytes, scale, dim) *
          args.scale;
      max_score = std::max(max_score, scores[j - begin]);
    }
    double sum = 0.0;  // summed in double, as llama.cpp's softmax does
    for (int64_t j = begin; j < end; ++j) sum += double(scores[j - begin] = std::exp(scores[j - begin] - max_score));
    float* out = partial + 2;
    std::fill(out, out + dim, 0.0f);
    for (int64_t j = begin; j < end; ++j) {
      const BlockId block = table[size_t(j / kv.block_size)];
      const int64_t slot = j % kv.block_size;
      float p = scores[j - begin];
      if constexpr (kRoundProbs) p = round_to_f16(p);
      const float scale = kScaled ? kv.value_scales(block, slot)[kv_head] : 1.0f;
      reader.axpy(p, kv.value_row(block, slot) + head_offset, scale, dim, out);
    }
    partial[0] = max_score;
    partial[1] = float(sum);
  }
}

// The f16 arithmetic of attention.h, one (token, head) row at a time.
void tile_f16_scalar(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                     const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* partials,
                     int64_t partial_stride) {
  constexpr int64_t kMaxHeadDim = 512;
  const int64_t dim = args.head_dim, group = args.n_heads / args.n_kv_heads;
  const int64_t kv_head = queries.first_head / group, bs = kv.block_size, tile_begin = tile * kAttentionTile;
  const int64_t head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);
  const float* f16 = table16<f16_to_f32>();
  for (int64_t i = 0; i < queries.n_tokens; ++i) {
    const TileRange range = tile_range(queries, i, tile);
    for (int64_t h = 0; h < queries.n_heads; ++h) {
      float q[kMaxHeadDim];
      const float* q_head = queries.q + i * queries.q_stride + h * dim;
      for (int64_t d = 0; d < dim; ++d) q[d] = round_to_f16(q_head[d]);
      float max_score = -INFINITY;
      for (int64_t j = range.lo; j < range.hi; ++j) {
        const int64_t pos = tile_begin + j;
        const auto* key = reinterpret_cast<const uint16_t*>(kv.key_head(table[size_t(pos / bs)], kv_head)) + pos % bs;
        float acc = 0.0f;
        for (int64_t d = 0; d < dim; ++d) acc += q[d] * f16[key[d * bs]];
        scores[j] = acc * args.scale;
        max_score = std::max(max_score, scores[j]);
      }
      max_score = max_score + 0.0f;
      float lanes[16] = {};
      for (int64_t j = range.lo; j < range.hi; ++j) {
        const float p = exp_nonpositive(scores[j] - max_score);
        lanes[j % 16] += p;
        scores[j] = round_to_f16(p);
      }
      float* part = partials + i * partial_stride + h * (dim + 2);
      part[0] = max_score;
      part[1] = sum_lanes16(lanes);
      float* out = part + 2;
      std::fill(out, out + dim, 0.0f);
      for (int64_t j = range.lo; j < range.hi; ++j) {
        const int64_t pos = tile_begin + j;
        const auto* v = reinterpret_cast<const uint16_t*>(kv.value_row(table[size_t(pos / bs)], pos % bs) + head_offset);
        for (int64_t d = 0; d < dim; ++d) out[d] += scores[j] * f16[v[d]];
      }
    }
  }
}

// The vector tile for an f16 cache where the CPU has one (AVX-512, else AVX2), else null.
using TileF16Fn = void (*)(const ref::AttentionArgs&, const AttentionQueries&, int64_t, const KvLayerView&,
                           std::span<const BlockId>, float*, float*, int64_t);
TileF16Fn wide_f16(const ref::AttentionArgs& args, const KvLayerView& kv) {
  static const Isa isa = active_isa();
  if (kv.dtype != KvDtype::F16 || isa == Isa::Scalar || !attention_tile_f16_simd_fits(args, kv)) return nullptr;
  return isa == Isa::Avx512Vnni ? attention_tile_f16_avx512 : attention_tile_f16_avx2;
}

}  // namespace

void store_f16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void attention_tile_f16_scalar(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                               int64_t partial_stride) {
  tile_f16_scalar(args, queries, tile, kv, table, scratch, partials, partial_stride);
}

void attention_tile_queries(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                            const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                            int64_t partial_stride) {
  if (queries.n_tokens < 1 || queries.n_tokens > kAttentionQueryBlock)
    fail("attention: {} tokens in one call (1..{})", queries.n_tokens, kAttentionQueryBlock);
  if (const TileF16Fn wide = wide_f16(args, kv)) return wide(args, queries, tile, kv, table, scratch, partials, partial_stride);
  if (kv.dtype == KvDtype::F16)
    return tile_f16_scalar(args, queries, tile, kv, table, scratch, partials, partial_stride);
  for (int64_t i = 0; i < queries.n_tokens; ++i)
    attention_tile(args,
                   {queries.q + i * queries.q_stride, queries.first_head, queries.n_heads, queries.positions[i],
                    queries.first_positions[i]},
                   tile, kv, table, scratch, partials + i * partial_stride);
}

void attention_tile(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile, const KvLayerView& kv,
                    std::span<const BlockId> table, float* scratch, float* partial) {
  if (kv.dtype == KvDtype::F16) {
    const AttentionQueries one{query.q, 0, query.first_head, query.n_heads, &query.position, &query.first_position, 1};
    if (const TileF16Fn wide = wide_f16(args, kv)) return wide(args, one, tile, kv, table, scratch, partial, 0);
    return tile_f16_scalar(args, one, tile, kv, table, scratch, partial, 0);
  }
  switch (kv.dtype) {
    case KvDtype::F16: break;
    case KvDtype::BF16: return tile_reference<KvDtype::BF16>(args, query, tile, kv, table, scratch, partial);
    case KvDtype::FP8_E4M3: return tile_reference<KvDtype::FP8_E4M3>(args, query, tile, kv, table, scratch, partial);
    case KvDtype::INT8: return tile_reference<KvDtype::INT8>(args, query, tile, kv, table, scratch, partial);
  }
}

namespace {

// One head's tiles (at first, first + stride, ...) rescaled to their common maximum and summed:
// out = Σ exp(m_c - m) o_c; returns m, and Σ exp(m_c - m) s_c in sum.
float merge_head_tiles(const float* first, int64_t stride, int64_t n_tiles, int64_t dim, float* out, double& sum) {
  float max_score = -INFINITY;
  for (int64_t c = 0; c < n_tiles; ++c) max_score = std::max(max_score, first[c * stride]);
  sum = 0.0;
  std::fill(out, out + dim, 0.0f);
  for (int64_t c = 0; c < n_tiles; ++c) {
    const float* part = first + c * stride;
    const float weight = std::exp(part[0] - max_score);
    sum += double(weight) * double(part[1]);
    for (int64_t d = 0; d < dim; ++d) out[d] = out[d] + weight * part[2 + d];
  }
  return max_score;
}

}  // namespace

void attention_merge(const ref::AttentionArgs& args, int64_t n_heads, const float* partials, int64_t n_tiles, float* out) {
  const int64_t dim = args.head_dim, stride = attention_partial_floats(args, n_heads);
  for (int64_t i = 0; i < n_heads; ++i, out += dim) {
    double sum = 0.0;
    merge_head_tiles(partials + i * (dim + 2), stride, n_tiles, dim, out, sum);
    const float inv_sum = float(1.0 / sum);
    for (int64_t d = 0; d < dim; ++d) out[d] = out[d] * inv_sum;
  }
}

void attention_merge_partial(const ref::AttentionArgs& args, int64_t n_heads, const float* partials, int64_t n_tiles,
                             float* out_partial) {
  const int64_t dim = args.head_dim, stride = attention_partial_floats(args, n_heads);
  for (int64_t i = 0; i < n_heads; ++i) {
    float* part = out_partial + i * (dim + 2);
    double sum = 0.0;
    part[0] = merge_head_tiles(partials + i * (dim + 2), stride, n_tiles, dim, part + 2, sum);
    part[1] = float(sum);
  }
}

void attention_head_paged(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                          const KvLayerView& kv, std::span<const BlockId> table, float* out_head, int32_t first_position) {
  const int64_t first_tile = first_attention_tile(first_position);
  const int64_t n_tiles = attention_tiles(position) - first_tile;
  thread_local std::vector<float> scores, partials;
  scores.resize(size_t(attention_scratch_floats(args, 1)));
  partials.resize(size_t(n_tiles * attention_partial_floats(args, 1)));
  const AttentionQuery query{q_head, head, 1, position, first_position};
  for (int64_t c = 0; c < n_tiles; ++c)
    attention_tile(args, query, first_tile + c, kv, table, scores.data(),
                   partials.data() + c * attention_partial_floats(args, 1));
  attention_merge(args, 1, partials.data(), n_tiles, out_head);
}

}  // namespace ridge::cpu
