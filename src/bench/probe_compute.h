#pragma once
// Peak arithmetic throughput: independent chains of the instructions the matmul kernels use,
// with no memory traffic. FP32: fused multiply-add. INT8: the u8×s8 dot product of the quantized
// kernels (AVX-512-VNNI vpdpbusd, AVX-VNNI, or AVX2 vpmaddubsw + vpmaddwd + vpaddd).
// Matrix engines: AMX tile multiplies (INT8 tdpbssd, BF16 tdpbf16ps) on tiles held in registers.
// An operation is a multiply or an add, so one multiply-accumulate counts as two.
#include <cstdint>
#include <vector>

namespace ridge::bench {

struct ComputeKernel {
  const char* name;  // "avx512-fma", "avx512-vnni", ...
  // Runs `iterations` loop trips; returns an opaque value that keeps the work observable.
  double (*run)(int64_t iterations);
  double ops_per_iteration;
};

// The kernels this CPU supports for each kind, widest first (the first is the peak).
std::vector<const ComputeKernel*> f32_kernels();
std::vector<const ComputeKernel*> int8_kernels();
// Empty where the CPU has no AMX or the OS refused this process the tile state.
std::vector<const ComputeKernel*> amx_int8_kernels();
std::vector<const ComputeKernel*> amx_bf16_kernels();

// Giga-operations per second with `threads` pinned threads each running `kernel` for about
// `seconds`.
double peak_gops(const ComputeKernel& kernel, int threads, double seconds);

}  // namespace ridge::bench
