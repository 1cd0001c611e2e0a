// Paged attention over the device KV store, and the K/V write into its blocks.
//
// One thread block per (split, kv head, query token) serves the whole GQA group of query heads that
// share the kv head, so each K/V row is read once per group. It walks its positions in tiles of 64
// through the sequence's block table: scores for the tile (8 lanes per K row, 16-byte loads), an
// online-softmax update of the running max and sum per head, then P·V (2 dims per thread). Decode
// splits a long history over several blocks (flash-decoding) and a second kernel merges the
// splits' (max, sum, unnormalised output); prefill tokens are one block each with no split.
// Arithmetic as kernels/cpu/attention: an f16 cache dots K against q rounded to f16; FP8/INT8 rows
// are dotted raw and multiplied by their per-(position, head) scale.
#include <cuda_fp8.h>

#include <climits>

#include "kernels/cuda/device_common.cuh"

#include "core/error.h"

namespace ridge::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kLanesPerRow = 8;
constexpr int kRowsPerPass = kThreads / kLanesPerRow;
static_assert(kAttentionTile == 64, "the softmax step reads two scores per lane");

template <KvDtype D>
constexpr int64_t kv_elem_bytes() {
  return D == KvDtype::F16 || D == KvDtype::BF16 ? 2 : 1;
}

__device__ __forceinline__ float fp8_to_f32(uint32_t byte) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(byte), __NV_E4M3);
  return __half2float(__half(h));
}

template <KvDtype D>
__device__ __forceinline__ float decode(uint32_t bits) {
  if constexpr (D == KvDtype::F16) return f16_bits(uint16_t(bits));
  else if constexpr (D == KvDtype::BF16) return bf16_bits(uint16_t(bits));
  else if constexpr (D == KvDtype::FP8_E4M3) return fp8_to_f32(bits);
  else return float(int8_t(uint8_t(bits)));
}

// N consecutive elements (N a multiple of 8) of a row, 16-byte (16-bit types) or 8-byte loads.
template <KvDtype D, int N>
__device__ __forceinline__ void load_elems(const uint8_t* p, float (&out)[N]) {
  if constexpr (kv_elem_bytes<D>() == 2) {
#pragma unroll
    for (int c = 0; c < N / 8; ++c) {
      const uint4 u = reinterpret_cast<const uint4*>(p)[c];
      const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        out[c * 8 + 2 * k] = decode<D>(w[k] & 0xffffu);
        out[c * 8 + 2 * k + 1] = decode<D>(w[k] >> 16);
      }
    }
  } else {
#pragma unroll
    for (int c = 0; c < N / 8; ++c) {
      const uint2 u = reinterpret_cast<const uint2*>(p)[c];
      const uint32_t w[2] = {u.x, u.y};
#pragma unroll
      for (int k = 0; k < 8; ++k) out[c * 8 + k] = decode<D>((w[k / 4] >> (8 * (k % 4))) & 0xffu);
    }
  }
}

template <KvDtype D>
__device__ __forceinline__ void load_pair(const uint8_t* p, float& v0, float& v1) {
  if constexpr (kv_elem_bytes<D>() == 2) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    v0 = decode<D>(w & 0xffffu), v1 = decode<D>(w >> 16);
  } else {
    const uint32_t w = *reinterpret_cast<const uint16_t*>(p);
    v0 = decode<D>(w & 0xffu), v1 = decode<D>(w >> 8);
  }
}

struct AttnLaunch {
  int64_t n_tokens, n_heads;
  int group;
  float scale;
  const int32_t* positions;
  const int32_t* table_offsets;
  const int32_t* tables;
  int n_splits, split_size;
  float* partials;
  const float* q;
  float* out;
  KvLayerDevice kv;
};

template <KvDtype D, int HD>
__global__ void __launch_bounds__(kThreads) attention_kernel(const AttnLaunch a) {
  constexpr int kEpl = HD / kLanesPerRow;  // K elements per lane
  constexpr int kTpr = HD / 2;             // threads per V row, two dims each
  constexpr int kRp = kThreads / kTpr;     // V rows in parallel
  constexpr bool kScaled = D == KvDtype::FP8_E4M3 || D == KvDtype::INT8;
  constexpr int64_t kElem = kv_elem_bytes<D>();
  constexpr int kG = kAttentionMaxGroup;

  __shared__ float q_s[kG][HD];
  __shared__ float p_s[kG][kAttentionTile];
  __shared__ float m_s[kG], l_s[kG], alpha_s[kG];
  __shared__ float red_s[kRp][kG][HD];

  const int split = blockIdx.x, kvh = blockIdx.y;
  const int64_t t = blockIdx.z;
  const int tid = threadIdx.x, G = a.group;
  const KvLayerDevice& kv = a.kv;
  const int n_seen = a.positions[t] + 1;
  const int begin = split * a.split_size;
  const int end = begin >= n_seen ? begin : min(n_seen, begin + a.split_size);
  const int32_t* table = a.tables + a.table_offsets[t];
  const int64_t head_bytes = int64_t(kvh) * HD * kElem;
  const int64_t v_scale_offset = int64_t(kv.block_size) * kv.n_kv_heads;

  for (int i = tid; i < G * HD; i += kThreads) {
    const int g = i / HD, d = i % HD;
    const float v = a.q[(t * a.n_heads + int64_t(kvh) * G + g) * HD + d];
    q_s[g][d] = D == KvDtype::F16 ? round_f16(v) : v;
  }
  if (tid < kG) m_s[tid] = -INFINITY, l_s[tid] = 0.0f;
  __syncthreads();

  const int lane8 = tid % kLanesPerRow, prow = tid / kLanesPerRow;
  const int vrow = tid / kTpr, vd = (tid % kTpr) * 2;
  float acc[kG][2];
#pragma unroll
  for (int g = 0; g < kG; ++g) acc[g][0] = acc[g][1] = 0.0f;

  for (int tile0 = begin; tile0 < end; tile0 += kAttentionTile) {
    const int n_tile = min(kAttentionTile, end - tile0);
    // Scores of the tile: 8 lanes per K row, reduced within the 8.
    for (int r0 = 0; r0 < kAttentionTile; r0 += kRowsPerPass) {
      const int r = r0 + prow;
      const bool valid = r < n_tile;
      float part[kG];
#pragma unroll
      for (int g = 0; g < kG; ++g) part[g] = 0.0f;
      float kscale = 1.0f;
      if (valid) {
        const int j = tile0 + r;
        const int64_t blk = table[j / kv.block_size], slot = j % kv.block_size;
        const uint8_t* row = kv.data + blk * kv.block_bytes + slot * kv.row_bytes + head_bytes + lane8 * kEpl * kElem;
        float kf[kEpl];
        load_elems<D, kEpl>(row, kf);
        if constexpr (kScaled) kscale = kv.scales[blk * kv.block_scales + slot * kv.n_kv_heads + kvh];
#pragma unroll
        for (int g = 0; g < kG; ++g) {
          if (g >= G) break;
#pragma unroll
          for (int e = 0; e < kEpl; ++e) part[g] += q_s[g][lane8 * kEpl + e] * kf[e];
        }
      }
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        if (g >= G) break;
        part[g] += __shfl_xor_sync(0xffffffffu, part[g], 4);
        part[g] += __shfl_xor_sync(0xffffffffu, part[g], 2);
        part[g] += __shfl_xor_sync(0xffffffffu, part[g], 1);
      }
      if (lane8 == 0) {
#pragma unroll
        for (int g = 0; g < kG; ++g) {
          if (g >= G) break;
          p_s[g][r] = valid ? part[g] * kscale * a.scale : -INFINITY;
        }
      }
    }
    __syncthreads();
    // Online softmax: one warp per head.
    const int warp = tid / 32, lane = tid % 32;
    for (int g = warp; g < G; g += kThreads / 32) {
      const float s0 = p_s[g][lane], s1 = p_s[g][lane + 32];
      const float m_old = m_s[g];
      const float m_new = fmaxf(m_old, warp_max(fmaxf(s0, s1)));
      const float e0 = expf(s0 - m_new), e1 = expf(s1 - m_new);
      p_s[g][lane] = e0;
      p_s[g][lane + 32] = e1;
      const float sum = warp_sum(e0 + e1);
      if (lane == 0) {
        const float alpha = expf(m_old - m_new);
        alpha_s[g] = alpha;
        l_s[g] = l_s[g] * alpha + sum;
        m_s[g] = m_new;
      }
    }
    __syncthreads();
    // P·V: kRp rows at a time, two dims per thread.
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      if (g >= G) break;
      acc[g][0] *= alpha_s[g];
      acc[g][1] *= alpha_s[g];
    }
    for (int r = vrow; r < n_tile; r += kRp) {
      const int j = tile0 + r;
      const int64_t blk = table[j / kv.block_size], slot = j % kv.block_size;
      const uint8_t* row = kv.data + blk * kv.block_bytes + kv.value_offset + slot * kv.row_bytes + head_bytes + vd * kElem;
      float v0, v1;
      load_pair<D>(row, v0, v1);
      float vscale = 1.0f;
      if constexpr (kScaled) vscale = kv.scales[blk * kv.block_scales + v_scale_offset + slot * kv.n_kv_heads + kvh];
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        if (g >= G) break;
        const float p = p_s[g][r] * vscale;
        acc[g][0] += p * v0;
        acc[g][1] += p * v1;
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int g = 0; g < kG; ++g) {
    if (g >= G) break;
    red_s[vrow][g][vd] = acc[g][0];
    red_s[vrow][g][vd + 1] = acc[g][1];
  }
  __syncthreads();
  for (int i = tid; i < G * HD; i += kThreads) {
    const int g = i / HD, d = i % HD;
    float o = 0.0f;
#pragma unroll
    for (int rp = 0; rp < kRp; ++rp) o += red_s[rp][g][d];
    const int64_t h = int64_t(kvh) * G + g;
    if (a.n_splits == 1) a.out[(t * a.n_heads + h) * HD + d] = o / l_s[g];
    else a.partials[((t * a.n_heads + h) * a.n_splits + split) * HD + d] = o;
  }
  if (a.n_splits > 1 && tid < G) {
    float* ml = a.partials + a.n_tokens * a.n_heads * a.n_splits * HD +
                ((t * a.n_heads + int64_t(kvh) * G + tid) * a.n_splits + split) * 2;
    ml[0] = m_s[tid];
    ml[1] = l_s[tid];
  }
}

// Merges the splits of one (token, head): weights exp(m_s - max), divided by the merged sum.
__global__ void combine_kernel(const float* __restrict__ partials, int64_t n_rows, int n_splits, int head_dim,
                               float* __restrict__ out) {
  const int64_t row = blockIdx.x;
  const float* ml = partials + n_rows * n_splits * head_dim + row * n_splits * 2;
  float m = -INFINITY;
  for (int s = 0; s < n_splits; ++s) m = fmaxf(m, ml[2 * s]);
  float total = 0.0f;
  for (int s = 0; s < n_splits; ++s)
    if (ml[2 * s + 1] > 0.0f) total += ml[2 * s + 1] * expf(ml[2 * s] - m);
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float o = 0.0f;
    for (int s = 0; s < n_splits; ++s)
      if (ml[2 * s + 1] > 0.0f) o += partials[(row * n_splits + s) * head_dim + d] * expf(ml[2 * s] - m);
    out[row * head_dim + d] = o / total;
  }
}

template <KvDtype D>
__global__ void kv_write_kernel(const KvLayerDevice kv, const float* __restrict__ k, const float* __restrict__ v,
                                const int32_t* __restrict__ slots) {
  const int64_t t = blockIdx.x;
  const int h = blockIdx.y, which = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t slot_id = slots[t];
  if (slot_id < 0) return;
  const int64_t blk = slot_id / kv.block_size, slot = slot_id % kv.block_size, hd = kv.head_dim;
  const float* src = (which ? v : k) + t * kv.n_kv_heads * hd + h * hd;
  uint8_t* row = kv.data + blk * kv.block_bytes + (which ? kv.value_offset : 0) + slot * kv.row_bytes;
  if constexpr (D == KvDtype::F16 || D == KvDtype::BF16) {
    auto* dst = reinterpret_cast<uint16_t*>(row) + h * hd;
    for (int64_t d = lane; d < hd; d += 32)
      dst[d] = D == KvDtype::F16 ? __half_as_ushort(__float2half_rn(src[d])) : to_bf16_bits(src[d]);
  } else {
    // One scale per head: the largest magnitude maps to the type's largest value (kv_store.cc).
    float amax = 0.0f;
    for (int64_t d = lane; d < hd; d += 32) amax = fmaxf(amax, fabsf(src[d]));
    amax = warp_max(amax);
    const float top = D == KvDtype::INT8 ? 127.0f : 448.0f;
    const float scale = amax > 0.0f ? amax / top : 1.0f;
    const float inv = 1.0f / scale;
    uint8_t* dst = row + h * hd;
    for (int64_t d = lane; d < hd; d += 32) {
      const float x = src[d] * inv;
      if constexpr (D == KvDtype::INT8) dst[d] = uint8_t(int8_t(fminf(fmaxf(rintf(x), -127.0f), 127.0f)));
      else dst[d] = uint8_t(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
    }
    if (lane == 0)
      kv.scales[blk * kv.block_scales + (which ? int64_t(kv.block_size) * kv.n_kv_heads : 0) + slot * kv.n_kv_heads + h] =
          scale;
  }
}

template <KvDtype D>
void launch_attention(const AttnLaunch& a, int64_t head_dim, dim3 grid, cudaStream_t s) {
  switch (head_dim) {
    case 64: attention_kernel<D, 64><<<grid, kThreads, 0, s>>>(a); break;
    case 128: attention_kernel<D, 128><<<grid, kThreads, 0, s>>>(a); break;
    default: attention_kernel<D, 256><<<grid, kThreads, 0, s>>>(a); break;
  }
}

}  // namespace

bool attention_head_dim_supported(int64_t head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 256; }

int64_t attention_partial_floats(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int n_splits) {
  return n_splits > 1 ? n_tokens * n_heads * n_splits * (head_dim + 2) : 0;
}

void kv_write(const KvLayerDevice& kv, const float* k, const float* v, const int32_t* slots, int64_t n_tokens, Stream s) {
  if (n_tokens <= 0) return;
  if (n_tokens > INT_MAX || kv.n_kv_heads > 65535) fail("CUDA kv_write: {} tokens x {} kv heads", n_tokens, kv.n_kv_heads);
  const dim3 grid(unsigned(n_tokens), unsigned(kv.n_kv_heads));
  const cudaStream_t st = as_stream(s);
  switch (kv.dtype) {
    case KvDtype::F16: kv_write_kernel<KvDtype::F16><<<grid, 64, 0, st>>>(kv, k, v, slots); break;
    case KvDtype::BF16: kv_write_kernel<KvDtype::BF16><<<grid, 64, 0, st>>>(kv, k, v, slots); break;
    case KvDtype::FP8_E4M3: kv_write_kernel<KvDtype::FP8_E4M3><<<grid, 64, 0, st>>>(kv, k, v, slots); break;
    case KvDtype::INT8: kv_write_kernel<KvDtype::INT8><<<grid, 64, 0, st>>>(kv, k, v, slots); break;
  }
  check_launch("kv_write");
}

void attention(const AttentionArgs& args, const KvLayerDevice& kv, const float* q, float* out, Stream s) {
  if (args.n_tokens <= 0) return;
  if (!attention_head_dim_supported(args.head_dim))
    fail("CUDA attention: head dim {} (kernels for 64, 128, 256)", args.head_dim);
  if (args.n_kv_heads <= 0 || args.n_heads % args.n_kv_heads != 0 || args.n_heads / args.n_kv_heads > kAttentionMaxGroup)
    fail("CUDA attention: {} query heads over {} kv heads (groups of at most {})", args.n_heads, args.n_kv_heads,
         kAttentionMaxGroup);
  if (kv.head_dim != args.head_dim || kv.n_kv_heads != args.n_kv_heads) fail("CUDA attention: KV layout mismatch");
  if (args.n_splits < 1 || args.n_splits > kAttentionMaxSplits) fail("CUDA attention: {} splits", args.n_splits);
  if (args.n_splits > 1 && (args.split_size % kAttentionTile != 0 || !args.partials))
    fail("CUDA attention: splits need a split size that is a multiple of {} and a partials buffer", kAttentionTile);
  if (args.n_tokens > 65535) fail("CUDA attention: {} tokens in one launch (at most 65535)", args.n_tokens);
  AttnLaunch a{args.n_tokens, args.n_heads, int(args.n_heads / args.n_kv_heads), args.scale, args.positions,
               args.table_offsets, args.tables, args.n_splits, args.split_size, args.partials, q, out, kv};
  const dim3 grid(unsigned(args.n_splits), unsigned(args.n_kv_heads), unsigned(args.n_tokens));
  const cudaStream_t st = as_stream(s);
  switch (kv.dtype) {
    case KvDtype::F16: launch_attention<KvDtype::F16>(a, args.head_dim, grid, st); break;
    case KvDtype::BF16: launch_attention<KvDtype::BF16>(a, args.head_dim, grid, st); break;
    case KvDtype::FP8_E4M3: launch_attention<KvDtype::FP8_E4M3>(a, args.head_dim, grid, st); break;
    case KvDtype::INT8: launch_attention<KvDtype::INT8>(a, args.head_dim, grid, st); break;
  }
  check_launch("attention");
  if (args.n_splits > 1) {
    const int64_t rows = args.n_tokens * args.n_heads;
    combine_kernel<<<unsigned(rows), unsigned(std::min<int64_t>(args.head_dim, 256)), 0, st>>>(
        args.partials, rows, args.n_splits, int(args.head_dim), out);
    check_launch("attention combine");
  }
}

}  // namespace ridge::cuda
