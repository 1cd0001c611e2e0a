// Skinny GEMM for decode (1..8 tokens): one warp per output row, each lane one 32-value block at a
// time, 16-byte loads from the split layout of weight_layout.h. 4- and 8-bit weights are dotted as
// int8 against activations quantized once per call (dp4a), with the CPU kernels' arithmetic per
// block: int32 block sums, then float(isum) · (d · d_act) (+ m · s_act for Q4_1); Q6_K in 16-value
// halves times their scales. Float weights (F32, F16, BF16) are dotted in f32.
#include "kernels/cuda/device_common.cuh"

#include "core/error.h"

namespace ridge::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

// ---- activation quantization: one warp per block of 32 ----

__global__ void quantize_kernel(const float* __restrict__ x, int64_t n_blocks, int8_t* __restrict__ q,
                                float4* __restrict__ meta) {
  const int64_t b = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (b >= n_blocks) return;  // uniform per warp
  const float v = x[b * 32 + lane];
  const float amax = warp_max(fabsf(v));
  const float d = amax / 127.0f;
  const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
  const int qi = __float2int_rn(v * inv);  // round half to even, as nearbyint
  q[b * 32 + lane] = int8_t(qi);
  const int sum = warp_sum_int(qi);
  if (lane == 0) meta[b] = make_float4(round_f16(d), round_f16(d * float(sum)), float(sum), 0.0f);
}

// ---- the GEMV ----

struct GemvMat {
  const uint8_t* data;
  WeightSections sections;
  int64_t rows;
  float* y;
};

struct GemvLaunch {
  GemvMat m[3];
  int64_t row_end[3];  // cumulative rows
  int n_out;
  int64_t cols;
  const float* x;
  const int8_t* act_q;
  const float4* act_meta;
  int n_tokens;
  bool accumulate;
};

__device__ __forceinline__ int dp4a(int a, int b, int c) { return __dp4a(a, b, c); }

template <int NT>
__device__ __forceinline__ void store_row(const GemvLaunch& a, const GemvMat& m, int64_t r, float (&acc)[NT]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const float v = warp_sum(acc[t]);
    if (lane == t && t < a.n_tokens) {
      float* y = m.y + int64_t(t) * m.rows + r;
      *y = a.accumulate ? *y + v : v;
    }
  }
}

// The matrix and row of this warp; false when the warp has no row. The matrix is picked by
// comparisons: a dynamic index into the kernel parameters would copy them to local memory.
__device__ __forceinline__ bool warp_row(const GemvLaunch& a, GemvMat& m, int64_t& r) {
  const int64_t g = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (g >= a.row_end[a.n_out - 1]) return false;
  const int mi = g < a.row_end[0] ? 0 : g < a.row_end[1] ? 1 : 2;
  r = g - (mi == 0 ? 0 : a.row_end[mi - 1]);
  m = mi == 0 ? a.m[0] : mi == 1 ? a.m[1] : a.m[2];
  return true;
}

template <DType T, int NT>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) gemv_quant_kernel(const GemvLaunch a) {
  GemvMat m;
  int64_t r;
  if (!warp_row(a, m, r)) return;
  const int lane = threadIdx.x % 32;
  const int64_t cols = a.cols, nb = cols / 32;
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.0f;

  for (int64_t b = lane; b < nb; b += 32) {
    if constexpr (T == DType::Q4_0 || T == DType::Q4_1) {
      const uint4 wq = *reinterpret_cast<const uint4*>(m.data + r * (cols / 2) + b * 16);
      const float2 dm = __half22float2(reinterpret_cast<const __half2*>(m.data + m.sections.scales)[r * nb + b]);
      const int lo[4] = {int(wq.x & 0x0f0f0f0fu), int(wq.y & 0x0f0f0f0fu), int(wq.z & 0x0f0f0f0fu), int(wq.w & 0x0f0f0f0fu)};
      const int hi[4] = {int((wq.x >> 4) & 0x0f0f0f0fu), int((wq.y >> 4) & 0x0f0f0f0fu), int((wq.z >> 4) & 0x0f0f0f0fu),
                         int((wq.w >> 4) & 0x0f0f0f0fu)};
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t >= a.n_tokens) break;
        const int4* aq = reinterpret_cast<const int4*>(a.act_q + int64_t(t) * cols + b * 32);
        const int4 a0 = aq[0], a1 = aq[1];  // values 0..15, 16..31
        int isum = 0;
        isum = dp4a(lo[0], a0.x, isum);
        isum = dp4a(lo[1], a0.y, isum);
        isum = dp4a(lo[2], a0.z, isum);
        isum = dp4a(lo[3], a0.w, isum);
        isum = dp4a(hi[0], a1.x, isum);
        isum = dp4a(hi[1], a1.y, isum);
        isum = dp4a(hi[2], a1.z, isum);
        isum = dp4a(hi[3], a1.w, isum);
        const float4 meta = a.act_meta[int64_t(t) * nb + b];
        if constexpr (T == DType::Q4_0) isum -= 8 * int(meta.z);  // Q4_0 stores q + 8
        float term = __fmul_rn(float(isum), __fmul_rn(dm.x, meta.x));
        if constexpr (T == DType::Q4_1) term = __fadd_rn(term, __fmul_rn(dm.y, meta.y));
        acc[t] += term;
      }
    } else if constexpr (T == DType::Q8_0) {
      const uint4* wp = reinterpret_cast<const uint4*>(m.data + r * cols + b * 32);
      const uint4 w0 = wp[0], w1 = wp[1];
      const float d = __half2float(reinterpret_cast<const __half*>(m.data + m.sections.scales)[r * nb + b]);
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t >= a.n_tokens) break;
        const int4* aq = reinterpret_cast<const int4*>(a.act_q + int64_t(t) * cols + b * 32);
        const int4 a0 = aq[0], a1 = aq[1];
        int isum = 0;
        isum = dp4a(int(w0.x), a0.x, isum);
        isum = dp4a(int(w0.y), a0.y, isum);
        isum = dp4a(int(w0.z), a0.z, isum);
        isum = dp4a(int(w0.w), a0.w, isum);
        isum = dp4a(int(w1.x), a1.x, isum);
        isum = dp4a(int(w1.y), a1.y, isum);
        isum = dp4a(int(w1.z), a1.z, isum);
        isum = dp4a(int(w1.w), a1.w, isum);
        const float4 meta = a.act_meta[int64_t(t) * nb + b];
        acc[t] += __fmul_rn(float(isum), __fmul_rn(d, meta.x));
      }
    } else {  // Q6_K: block b is group g of half h of super-block sb
      const int64_t sb = b / 8;
      const int j = int(b % 8), h = j / 4, g = j % 4;
      const uint4* qlp = reinterpret_cast<const uint4*>(m.data + r * (cols / 2) + sb * 128 + h * 64 + (g % 2) * 32);
      const uint4* qhp = reinterpret_cast<const uint4*>(m.data + m.sections.qh + r * (cols / 4) + sb * 64 + h * 32);
      const uint4 l0 = qlp[0], l1 = qlp[1], h0 = qhp[0], h1 = qhp[1];
      const uint32_t ql[8] = {l0.x, l0.y, l0.z, l0.w, l1.x, l1.y, l1.z, l1.w};
      const uint32_t qh[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
      int q6[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const uint32_t low = (g >= 2 ? ql[k] >> 4 : ql[k]) & 0x0f0f0f0fu;
        const uint32_t high = ((qh[k] >> (2 * g)) & 0x03030303u) << 4;
        q6[k] = int(low | high);  // 0..63 per byte
      }
      const int8_t* sc = reinterpret_cast<const int8_t*>(m.data + m.sections.sub_scales + r * (cols / 16) + sb * 16 + h * 8);
      const int sc0 = sc[2 * g], sc1 = sc[2 * g + 1];
      const float d = __half2float(reinterpret_cast<const __half*>(m.data + m.sections.scales)[r * (cols / 256) + sb]);
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t >= a.n_tokens) break;
        const int4* aq = reinterpret_cast<const int4*>(a.act_q + int64_t(t) * cols + b * 32);
        const int4 a0 = aq[0], a1 = aq[1];
        const int av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        int part[2] = {0, 0};
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          part[k / 4] = dp4a(q6[k], av[k], part[k / 4]);
          part[k / 4] -= 32 * dp4a(0x01010101, av[k], 0);
        }
        const float4 meta = a.act_meta[int64_t(t) * nb + b];
        acc[t] += __fmul_rn(__fmul_rn(d, meta.x), float(part[0] * sc0 + part[1] * sc1));
      }
    }
  }
  store_row<NT>(a, m, r, acc);
}

template <DType T>
__device__ __forceinline__ void load8(const uint8_t* p, float (&w)[8]) {
  if constexpr (T == DType::F32) {
    const float4 u = reinterpret_cast<const float4*>(p)[0], v = reinterpret_cast<const float4*>(p)[1];
    w[0] = u.x, w[1] = u.y, w[2] = u.z, w[3] = u.w, w[4] = v.x, w[5] = v.y, w[6] = v.z, w[7] = v.w;
  } else {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const auto lo = uint16_t(words[k] & 0xffffu), hi = uint16_t(words[k] >> 16);
      w[2 * k] = T == DType::F16 ? f16_bits(lo) : bf16_bits(lo);
      w[2 * k + 1] = T == DType::F16 ? f16_bits(hi) : bf16_bits(hi);
    }
  }
}

template <DType T, int NT>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) gemv_float_kernel(const GemvLaunch a) {
  GemvMat m;
  int64_t r;
  if (!warp_row(a, m, r)) return;
  const int lane = threadIdx.x % 32;
  const int64_t cols = a.cols;
  constexpr int64_t kBytes = T == DType::F32 ? 4 : 2;
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
  for (int64_t c = int64_t(lane) * 8; c < cols; c += 256) {
    float w[8];
    load8<T>(m.data + (r * cols + c) * kBytes, w);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t >= a.n_tokens) break;
      const float4* xp = reinterpret_cast<const float4*>(a.x + int64_t(t) * cols + c);
      const float4 x0 = xp[0], x1 = xp[1];
      acc[t] += w[0] * x0.x + w[1] * x0.y + w[2] * x0.z + w[3] * x0.w + w[4] * x1.x + w[5] * x1.y + w[6] * x1.z +
                w[7] * x1.w;
    }
  }
  store_row<NT>(a, m, r, acc);
}

template <DType T>
void launch_gemv(const GemvLaunch& a, unsigned grid, cudaStream_t s) {
  constexpr bool kQuant = T == DType::Q4_0 || T == DType::Q4_1 || T == DType::Q8_0 || T == DType::Q6_K;
  const int nt = a.n_tokens <= 1 ? 1 : a.n_tokens <= 2 ? 2 : a.n_tokens <= 4 ? 4 : 8;
  const unsigned threads = kWarpsPerBlock * 32;
  if constexpr (kQuant) {
    switch (nt) {
      case 1: gemv_quant_kernel<T, 1><<<grid, threads, 0, s>>>(a); break;
      case 2: gemv_quant_kernel<T, 2><<<grid, threads, 0, s>>>(a); break;
      case 4: gemv_quant_kernel<T, 4><<<grid, threads, 0, s>>>(a); break;
      default: gemv_quant_kernel<T, 8><<<grid, threads, 0, s>>>(a); break;
    }
  } else {
    switch (nt) {
      case 1: gemv_float_kernel<T, 1><<<grid, threads, 0, s>>>(a); break;
      case 2: gemv_float_kernel<T, 2><<<grid, threads, 0, s>>>(a); break;
      case 4: gemv_float_kernel<T, 4><<<grid, threads, 0, s>>>(a); break;
      default: gemv_float_kernel<T, 8><<<grid, threads, 0, s>>>(a); break;
    }
  }
}

}  // namespace

void quantize_activations(const float* x, int64_t n_tokens, int64_t cols, ActBlocks out, Stream s) {
  if (cols % 32 != 0) fail("CUDA quantize_activations: {} columns is not a multiple of 32", cols);
  const int64_t n_blocks = n_tokens * cols / 32;
  if (n_blocks == 0) return;
  quantize_kernel<<<grid_for(n_blocks * 32, 256), 256, 0, as_stream(s)>>>(x, n_blocks, out.q,
                                                                           reinterpret_cast<float4*>(out.meta));
  check_launch("quantize_activations");
}

bool gemv_quantized(DType type) {
  return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0 || type == DType::Q6_K;
}

void gemv(const GemvArgs& args, Stream s) {
  if (args.n_out < 1 || args.n_out > 3) fail("CUDA gemv: {} matrices in one launch (1..3)", args.n_out);
  if (args.n_tokens < 1 || args.n_tokens > kGemvMaxTokens)
    fail("CUDA gemv: {} tokens (1..{}); larger batches go through the GEMM", args.n_tokens, kGemvMaxTokens);
  const DType type = args.out[0].w.type;
  const int64_t cols = args.out[0].w.cols;
  GemvLaunch a{};
  int64_t rows = 0;
  for (int i = 0; i < args.n_out; ++i) {
    const DeviceMatrix& w = args.out[i].w;
    if (w.type != type || w.cols != cols) fail("CUDA gemv: matrices of one launch must share type and width");
    a.m[i] = {w.data, weight_sections(w.type, w.rows, w.cols), w.rows, args.out[i].y};
    rows += w.rows;
    a.row_end[i] = rows;
  }
  a.n_out = args.n_out;
  a.cols = cols;
  a.x = args.x;
  a.act_q = args.acts.q;
  a.act_meta = reinterpret_cast<const float4*>(args.acts.meta);
  a.n_tokens = int(args.n_tokens);
  a.accumulate = args.accumulate;
  const bool quant = gemv_quantized(type);
  if (quant && (!a.act_q || !a.act_meta)) fail("CUDA gemv: {} weights need quantized activations", dtype_name(type));
  if (!quant && !a.x) fail("CUDA gemv: {} weights need f32 activations", dtype_name(type));
  const int64_t block = type == DType::Q6_K ? 256 : quant ? 32 : 8;
  if (cols % block != 0) fail("CUDA gemv: {} columns is not a multiple of {} for {}", cols, block, dtype_name(type));
  const unsigned grid = grid_for(rows, kWarpsPerBlock);
  const cudaStream_t st = as_stream(s);
  switch (type) {
    case DType::Q4_0: launch_gemv<DType::Q4_0>(a, grid, st); break;
    case DType::Q4_1: launch_gemv<DType::Q4_1>(a, grid, st); break;
    case DType::Q8_0: launch_gemv<DType::Q8_0>(a, grid, st); break;
    case DType::Q6_K: launch_gemv<DType::Q6_K>(a, grid, st); break;
    case DType::F32: launch_gemv<DType::F32>(a, grid, st); break;
    case DType::F16: launch_gemv<DType::F16>(a, grid, st); break;
    case DType::BF16: launch_gemv<DType::BF16>(a, grid, st); break;
    default: fail("CUDA gemv: no kernel for {} weights", dtype_name(type));
  }
  check_launch("gemv");
}

}  // namespace ridge::cuda
