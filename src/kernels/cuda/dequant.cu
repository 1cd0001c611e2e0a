// Weights of the device layout (weight_layout.h) back to values: rows to f32 (the embedding lookup)
// and whole matrices to BF16 (the GEMM copies). Each element is decoded with ref::dequantize_row's
// arithmetic (separate f32 roundings, no fused multiply-add), so an embedding row is the CPU's exactly.
#include "kernels/cuda/device_common.cuh"

#include "core/error.h"

namespace ridge::cuda {
namespace {

template <DType T>
__device__ __forceinline__ float element(const uint8_t* __restrict__ w, const WeightSections& sec, int64_t r,
                                         int64_t cols, int64_t i) {
  if constexpr (T == DType::Q4_0 || T == DType::Q4_1) {
    const int64_t b = i / 32, j = i % 32;
    const uint8_t byte = w[r * (cols / 2) + b * 16 + (j % 16)];
    const int q = j < 16 ? byte & 0x0f : byte >> 4;
    const float2 dm = __half22float2(reinterpret_cast<const __half2*>(w + sec.scales)[r * (cols / 32) + b]);
    if constexpr (T == DType::Q4_0) return __fmul_rn(dm.x, float(q - 8));
    else return __fadd_rn(__fmul_rn(dm.x, float(q)), dm.y);
  } else if constexpr (T == DType::Q8_0) {
    const float d = __half2float(reinterpret_cast<const __half*>(w + sec.scales)[r * (cols / 32) + i / 32]);
    return __fmul_rn(d, float(int8_t(w[r * cols + i])));
  } else if constexpr (T == DType::Q6_K) {
    const int64_t sb = i / 256;
    const int ii = int(i % 256), half = ii / 128, group = (ii % 128) / 32, l = ii % 32;
    const uint8_t low_byte = w[r * (cols / 2) + sb * 128 + half * 64 + (group % 2) * 32 + l];
    const int low = group < 2 ? low_byte & 0x0f : low_byte >> 4;
    const int high = (w[sec.qh + r * (cols / 4) + sb * 64 + half * 32 + l] >> (2 * group)) & 3;
    const float d = __half2float(reinterpret_cast<const __half*>(w + sec.scales)[r * (cols / 256) + sb]);
    const float dl = __fmul_rn(d, float(int8_t(w[sec.sub_scales + r * (cols / 16) + sb * 16 + ii / 16])));
    return __fmul_rn(dl, float((low | high << 4) - 32));
  } else if constexpr (T == DType::F32) {
    return reinterpret_cast<const float*>(w)[r * cols + i];
  } else if constexpr (T == DType::F16) {
    return f16_bits(reinterpret_cast<const uint16_t*>(w)[r * cols + i]);
  } else {
    return bf16_bits(reinterpret_cast<const uint16_t*>(w)[r * cols + i]);
  }
}

// One block per output row.
template <DType T, bool kBf16Out>
__global__ void dequant_kernel(const uint8_t* __restrict__ w, WeightSections sec, int64_t cols,
                               const int32_t* __restrict__ row_ids, void* __restrict__ out) {
  const int64_t i = blockIdx.x;
  const int64_t r = row_ids ? row_ids[i] : i;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = element<T>(w, sec, r, cols, c);
    if constexpr (kBf16Out) static_cast<uint16_t*>(out)[i * cols + c] = to_bf16_bits(v);
    else static_cast<float*>(out)[i * cols + c] = v;
  }
}

template <bool kBf16Out>
void launch_dequant(const DeviceMatrix& w, const int32_t* row_ids, int64_t n_rows, void* out, cudaStream_t s) {
  if (!device_weight_type(w.type)) fail("CUDA dequantize: no device layout for {}", dtype_name(w.type));
  if (n_rows <= 0) return;
  if (n_rows > 0x7fffffff) fail("CUDA dequantize: {} rows in one launch", n_rows);
  const WeightSections sec = weight_sections(w.type, w.rows, w.cols);
  const dim3 grid{unsigned(n_rows)};
  const int threads = 256;
  switch (w.type) {
    case DType::Q4_0: dequant_kernel<DType::Q4_0, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    case DType::Q4_1: dequant_kernel<DType::Q4_1, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    case DType::Q8_0: dequant_kernel<DType::Q8_0, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    case DType::Q6_K: dequant_kernel<DType::Q6_K, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    case DType::F32: dequant_kernel<DType::F32, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    case DType::F16: dequant_kernel<DType::F16, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
    default: dequant_kernel<DType::BF16, kBf16Out><<<grid, threads, 0, s>>>(w.data, sec, w.cols, row_ids, out); break;
  }
  check_launch("dequantize");
}

__global__ void to_bf16_kernel(const float* __restrict__ x, int64_t n, uint16_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = to_bf16_bits(x[i]);
}

}  // namespace

void dequantize_rows(const DeviceMatrix& w, const int32_t* row_ids, int64_t n_rows, float* out, Stream s) {
  launch_dequant<false>(w, row_ids, n_rows, out, as_stream(s));
}

void dequantize_to_bf16(const DeviceMatrix& w, uint16_t* out, Stream s) {
  launch_dequant<true>(w, nullptr, w.rows, out, as_stream(s));
}

void round_to_bf16(const float* x, int64_t n, uint16_t* out, Stream s) {
  if (n <= 0) return;
  to_bf16_kernel<<<grid_for(n, 256), 256, 0, as_stream(s)>>>(x, n, out);
  check_launch("round_to_bf16");
}

}  // namespace ridge::cuda
