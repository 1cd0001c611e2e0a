// Row and element kernels of the forward pass: RMSNorm, RoPE, SwiGLU, adds, argmax. Each mirrors
// its CPU reference's arithmetic (kernels/ref): products rounded separately where the reference
// does not fuse them, RMSNorm's sum of squares in double, RoPE's angles from the host's table.
#include <cuda_fp8.h>

#include <climits>

#include "kernels/cuda/device_common.cuh"

#include "core/error.h"

namespace ridge::cuda {
namespace {

constexpr int kRowThreads = 256;

__global__ void rms_norm_kernel(const float* __restrict__ x, const int32_t* __restrict__ rows,
                                const float* __restrict__ weight, int64_t n, float eps, float* out) {
  const int64_t i = blockIdx.x;
  const int64_t r = rows ? rows[i] : i;
  const float* xr = x + r * n;
  float* yr = out + i * n;
  double sum = 0.0;  // f32 squares summed in double, as ref::rms_norm
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) sum += double(__fmul_rn(xr[c], xr[c]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  __shared__ double partial[kRowThreads / 32];
  __shared__ float scale_s;
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kRowThreads / 32; ++w) total += partial[w];
    const float mean = float(total / double(n));
    scale_s = 1.0f / sqrtf(mean + eps);
  }
  __syncthreads();
  const float scale = scale_s;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) yr[c] = __fmul_rn(__fmul_rn(xr[c], scale), weight[c]);
}

__global__ void rope_kernel(const float* __restrict__ cos_sin, int64_t n_positions, int64_t head_dim, int64_t half,
                            bool neox, const int32_t* __restrict__ positions, int64_t n_heads, int64_t n_pairs,
                            float* __restrict__ x) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n_pairs) return;
  const int64_t i = idx % half, th = idx / half;
  const int64_t t = th / n_heads, h = th % n_heads;
  const int64_t pos = positions[t];
  if (pos < 0 || pos >= n_positions) return;  // the host checks positions against the table
  const float c = cos_sin[(pos * half + i) * 2], s = cos_sin[(pos * half + i) * 2 + 1];
  float* head = x + (t * n_heads + h) * head_dim;
  float* a = neox ? head + i : head + 2 * i;
  float* b = neox ? head + i + half : head + 2 * i + 1;
  const float x0 = *a, x1 = *b;
  *a = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
  *b = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
}

__global__ void swiglu_kernel(float* __restrict__ gate, const float* __restrict__ up, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  gate[i] = __fmul_rn(g / (1.0f + expf(-g)), up[i]);
}

__global__ void add_kernel(float* __restrict__ x, const float* __restrict__ y, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void add_bias_kernel(float* __restrict__ x, const float* __restrict__ bias, int64_t total, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < total) x[i] += bias[i % n];
}

// (value, index) of a larger value, or the same value at a smaller index; index < 0 is "none".
__device__ __forceinline__ void take_better(float& v, int& i, float ov, int oi) {
  if (oi < 0) return;
  if (i < 0 || ov > v || (ov == v && oi < i)) v = ov, i = oi;
}

__global__ void argmax_kernel(const float* __restrict__ x, int64_t n, int32_t* __restrict__ out) {
  const float* row = x + int64_t(blockIdx.x) * n;
  float best = -INFINITY;
  int idx = -1;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x)
    if (row[c] > best) best = row[c], idx = int(c);  // NaN and -inf never win, as the CPU sampler
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) take_better(best, idx, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, idx, o));
  __shared__ float vs[kRowThreads / 32];
  __shared__ int is[kRowThreads / 32];
  if (threadIdx.x % 32 == 0) vs[threadIdx.x / 32] = best, is[threadIdx.x / 32] = idx;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kRowThreads / 32; ++w) take_better(best, idx, vs[w], is[w]);
    out[blockIdx.x] = idx;
  }
}

constexpr int kProbeBlocks = 1024;

__global__ void read_probe_kernel(const uint4* __restrict__ data, int64_t n, float* __restrict__ sink) {
  uint32_t acc = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint4 u = data[i];
    acc ^= u.x ^ u.y ^ u.z ^ u.w;
  }
  acc = __reduce_xor_sync(0xffffffffu, acc);
  if (threadIdx.x % 32 == 0) atomicXor(reinterpret_cast<unsigned*>(sink) + blockIdx.x, acc);
}

__device__ __forceinline__ float hash_uniform(uint64_t i, uint32_t seed) {  // in [-1, 1)
  uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return float(uint32_t(z >> 40)) / float(1 << 23) - 1.0f;
}

__global__ void fill_bf16_kernel(uint16_t* out, int64_t n, uint32_t seed, float scale) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = to_bf16_bits(scale * hash_uniform(uint64_t(i), seed));
}

__global__ void fill_fp8_kernel(uint8_t* out, int64_t n, uint32_t seed, float scale) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = uint8_t(__nv_cvt_float_to_fp8(scale * hash_uniform(uint64_t(i), seed), __NV_SATFINITE, __NV_E4M3));
}

}  // namespace

int read_probe_blocks() { return kProbeBlocks; }

void read_probe(const void* data, int64_t bytes, float* sink, Stream s) {
  if (bytes % 16 != 0) fail("CUDA read probe: {} bytes is not a multiple of 16", bytes);
  read_probe_kernel<<<kProbeBlocks, 512, 0, as_stream(s)>>>(static_cast<const uint4*>(data), bytes / 16, sink);
  check_launch("read_probe");
}

void fill_random_bf16(uint16_t* out, int64_t n, uint32_t seed, float scale, Stream s) {
  if (n <= 0) return;
  fill_bf16_kernel<<<grid_for(n, 256), 256, 0, as_stream(s)>>>(out, n, seed, scale);
  check_launch("fill_random_bf16");
}

void fill_random_fp8(uint8_t* out, int64_t n, uint32_t seed, float scale, Stream s) {
  if (n <= 0) return;
  fill_fp8_kernel<<<grid_for(n, 256), 256, 0, as_stream(s)>>>(out, n, seed, scale);
  check_launch("fill_random_fp8");
}

void rms_norm(const float* x, const int32_t* rows, const float* weight, int64_t n_rows, int64_t n, float eps, float* out,
              Stream s) {
  if (n_rows <= 0) return;
  if (n_rows > INT_MAX) fail("CUDA rms_norm: {} rows", n_rows);
  rms_norm_kernel<<<unsigned(n_rows), kRowThreads, 0, as_stream(s)>>>(x, rows, weight, n, eps, out);
  check_launch("rms_norm");
}

void rope(const RopeTable& table, const int32_t* positions, int64_t n_tokens, int64_t n_heads, float* x, Stream s) {
  if (table.rope_dim % 2 != 0 || table.rope_dim > table.head_dim)
    fail("CUDA rope: rotated dims {} of a head of {}", table.rope_dim, table.head_dim);
  const int64_t half = table.rope_dim / 2, n_pairs = n_tokens * n_heads * half;
  if (n_pairs <= 0) return;
  rope_kernel<<<grid_for(n_pairs, 256), 256, 0, as_stream(s)>>>(table.cos_sin, table.n_positions, table.head_dim, half,
                                                                table.neox, positions, n_heads, n_pairs, x);
  check_launch("rope");
}

void swiglu(float* gate, const float* up, int64_t n, Stream s) {
  if (n <= 0) return;
  swiglu_kernel<<<grid_for(n, 256), 256, 0, as_stream(s)>>>(gate, up, n);
  check_launch("swiglu");
}

void add(float* x, const float* y, int64_t n, Stream s) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n, 256), 256, 0, as_stream(s)>>>(x, y, n);
  check_launch("add");
}

void add_bias(float* x, const float* bias, int64_t n_rows, int64_t n, Stream s) {
  const int64_t total = n_rows * n;
  if (total <= 0) return;
  add_bias_kernel<<<grid_for(total, 256), 256, 0, as_stream(s)>>>(x, bias, total, n);
  check_launch("add_bias");
}

void argmax_rows(const float* x, int64_t n_rows, int64_t n, int32_t* out, Stream s) {
  if (n_rows <= 0) return;
  if (n_rows > INT_MAX || n > INT_MAX) fail("CUDA argmax: {} rows of {}", n_rows, n);
  argmax_kernel<<<unsigned(n_rows), kRowThreads, 0, as_stream(s)>>>(x, n, out);
  check_launch("argmax");
}

}  // namespace ridge::cuda
