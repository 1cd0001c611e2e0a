// The element-wise kernels of a layer, one thread, on an L2-resident row block: SwiGLU as the
// reference writes it (std::exp and a divide per value), the scalar exp_nonpositive form and
// its AVX-512 kernel (kernels/cpu/swiglu.h); the softmax exponential likewise.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/activation.h"

namespace ridge::microbench {
namespace {

constexpr int64_t kValues = 1536 * 32;  // 32 tokens of a 1536-wide FFN: 192 KiB per operand

std::vector<float> normal_values(float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(kValues);
  for (auto& x : v) x = normal(rng);
  return v;
}

template <void (*Swiglu)(float*, const float*, int64_t)>
void swiglu_case(benchmark::State& state) {
  const std::vector<float> gate = normal_values(3.0f, 1), up = normal_values(1.0f, 2);
  std::vector<float> work(gate.size());
  for (auto _ : state) {
    state.PauseTiming();
    work = gate;
    state.ResumeTiming();
    Swiglu(work.data(), up.data(), kValues);
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(state.iterations() * kValues);
}

void exp_std(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void exp_scalar(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = cpu::exp_nonpositive(x[i]);
}

template <void (*Exp)(const float*, int64_t, float*)>
void exp_case(benchmark::State& state) {
  std::vector<float> x = normal_values(4.0f, 3), y(x.size());
  for (auto& v : x) v = -std::fabs(v);
  for (auto _ : state) {
    Exp(x.data(), kValues, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kValues);
}

BENCHMARK(swiglu_case<ref::swiglu>)->Name("swiglu/ref_std_exp");
BENCHMARK(swiglu_case<cpu::swiglu_scalar>)->Name("swiglu/scalar");
BENCHMARK(swiglu_case<cpu::swiglu>)->Name("swiglu/dispatched");
BENCHMARK(exp_case<exp_std>)->Name("softmax_exp/std_exp");
BENCHMARK(exp_case<exp_scalar>)->Name("softmax_exp/scalar");

void exp_avx512(benchmark::State& state) {
  if (cpu::active_isa() != cpu::Isa::Avx512Vnni) return state.SkipWithError("no AVX-512 on this CPU");
  exp_case<cpu::exp_nonpositive_avx512>(state);
}
BENCHMARK(exp_avx512)->Name("softmax_exp/avx512");

}  // namespace
}  // namespace ridge::microbench
