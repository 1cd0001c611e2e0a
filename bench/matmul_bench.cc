// Matmul microbenchmarks: y = x · Wᵀ for every weight type, as GEMV (1 token: decode) and GEMM
// (64 and 512 tokens: prefill), on a matrix that fits in L2 and one several times the last-level
// cache. Counters: weight GB/s and its fraction of the probe's read bandwidth (what decode is
// bound by), GFLOP/s and its fraction of the probe's FP32 / INT8 peaks (what prefill is bound by).
//
//   ridge_microbench [--ridge_threads=1,2] [--ridge_dram_gemm] [google benchmark flags]
//
// GEMM on the DRAM matrix is off by default: with the reference kernel one call takes minutes.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/engine_threads.h"
#include "bench/machine_profile.h"
#include "bench/pinned_team.h"
#include "bench_matrices.h"
#include <omp.h>

#include <map>
#include <memory>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/matmul.h"

namespace ridge::microbench {
namespace {

using MatmulFn = void (*)(const ref::WeightMatrix&, const float*, int64_t, float*);

struct MatmulVariant {
  const char* name;
  MatmulFn matmul;
};

// The CPU kernels on a pool of the benchmark's thread count (set_engine_threads sets it).
void cpu_matmul_as(const ref::WeightMatrix& w, const float* x, int64_t n_tokens, float* y, bool prefill) {
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  static cpu::MatmulScratch scratch;
  auto& pool = pools[omp_get_max_threads()];
  if (!pool) pool = std::make_unique<ThreadPool>(omp_get_max_threads());
  const cpu::MatmulJob job{w, y};
  cpu::matmul(std::span(&job, 1), x, n_tokens, *pool, scratch, cpu::active_isa(), {}, prefill);
}
void cpu_matmul(const ref::WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  cpu_matmul_as(w, x, n_tokens, y, false);
}

// The same kernels on the packed layout the loader makes (a packed copy of the matrix is made once;
// types without a packed layout on this ISA run as "cpu").
void packed_matmul_as(const ref::WeightMatrix& w, const float* x, int64_t n_tokens, float* y, bool prefill) {
  static std::map<const void*, std::vector<uint8_t>> copies;
  if (!cpu::packed_on(cpu::active_isa(), w.type)) return cpu_matmul_as(w, x, n_tokens, y, prefill);
  auto& copy = copies[w.data];
  if (copy.empty()) {
    const auto* bytes = static_cast<const uint8_t*>(w.data);
    copy.assign(bytes, bytes + w.rows * dtype_row_bytes(w.type, w.cols));
    cpu::pack_rows(w.type, copy.data(), w.rows, w.cols);
  }
  cpu_matmul_as({w.type, copy.data(), w.rows, w.cols, true}, x, n_tokens, y, prefill);
}
void packed_matmul(const ref::WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  packed_matmul_as(w, x, n_tokens, y, false);
}
// The same packed matrices as prompt positions: the AMX BF16 tile GEMM where the CPU has it.
void prefill_matmul(const ref::WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  packed_matmul_as(w, x, n_tokens, y, true);
}

// Every kernel family measured side by side: add a fast kernel with one line.
const MatmulVariant kVariants[] = {
    {"ref", ref::matmul},
    {"cpu", cpu_matmul},
    {"packed", packed_matmul},
    {"prefill", prefill_matmul},
};

const DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                        DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q6_K, DType::MXFP4, DType::NVFP4, DType::F8_E4M3,
                        DType::Q3_K, DType::IQ4_XS, DType::TQ2_0, DType::TQ1_0, DType::IQ2_XXS, DType::IQ2_XS,
                        DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M};
const int64_t kTokenCounts[] = {1, 8, 64, 512};  // 8: a decode step verifying drafts

struct Case {
  MatmulVariant variant;
  DType type;
  Footprint footprint;
  int64_t n_tokens;
  int threads;
};

void set_fraction(benchmark::State& state, const char* counter, const char* profile_key, double value, int threads) {
  static const auto profile = bench::load_machine_profile();
  if (!profile) return;
  if (const auto limit = bench::profile_value_at_threads(*profile, profile_key, threads); limit && *limit > 0)
    state.counters[counter] = value / *limit;
}

void run_case(benchmark::State& state, const Case& c) {
  bench::set_engine_threads(c.threads);
  const BenchMatrix& m = bench_matrix(c.type, c.footprint);
  std::vector<float> x(size_t(c.n_tokens * m.view.cols)), y(size_t(c.n_tokens * m.view.rows));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);

  // The packed variant makes its packed copy on the first call: keep that out of the timing.
  if (std::string_view(c.variant.name) != "ref") c.variant.matmul(m.view, x.data(), 1, y.data());
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    c.variant.matmul(m.view, x.data(), c.n_tokens, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double calls = double(state.iterations());
  const double gbs = double(m.size_bytes) * calls / seconds / 1e9;
  const double gflops = 2.0 * double(m.view.rows * m.view.cols * c.n_tokens) * calls / seconds / 1e9;
  state.counters["GB/s"] = gbs;
  state.counters["GFLOP/s"] = gflops;
  state.counters["MiB"] = double(m.size_bytes) / double(1 << 20);
  set_fraction(state, "of_bw", "read_bandwidth_gbs", gbs, c.threads);
  set_fraction(state, "of_f32", "peak_f32_gflops", gflops, c.threads);
  set_fraction(state, "of_int8", "peak_int8_gops", gflops, c.threads);
  set_fraction(state, "of_amx_int8", "peak_amx_int8_gops", gflops, c.threads);
  set_fraction(state, "of_amx_bf16", "peak_amx_bf16_gflops", gflops, c.threads);
}

struct Flags {
  std::vector<int> threads;
  bool dram_gemm = false;
};

// Takes ridge's own flags out of argv before Google Benchmark sees it.
Flags take_flags(int& argc, char** argv) {
  Flags f;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--ridge_threads=", 0) == 0) {
      for (size_t at = 16; at < arg.size();) {
        const size_t comma = arg.find(',', at);
        f.threads.push_back(std::stoi(arg.substr(at, comma - at)));
        at = comma == std::string::npos ? arg.size() : comma + 1;
      }
    } else if (arg == "--ridge_dram_gemm") {
      f.dram_gemm = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (f.threads.empty()) f.threads.push_back(int(bench::allowed_cpus().size()));
  return f;
}

void register_cases(const Flags& flags) {
  for (const MatmulVariant& variant : kVariants)
    for (DType type : kTypes)
      for (Footprint footprint : {Footprint::L2, Footprint::Dram})
        for (int64_t n_tokens : kTokenCounts)
          for (int threads : flags.threads) {
            if (footprint == Footprint::Dram && n_tokens > 1 && !flags.dram_gemm) continue;
            const Case c{variant, type, footprint, n_tokens, threads};
            const std::string shape = n_tokens == 1 ? "gemv" : "gemm" + std::to_string(n_tokens);
            const std::string name = "matmul/" + std::string(variant.name) + "/" + std::string(dtype_name(type)) + "/" +
                                     shape + "/" + footprint_name(footprint) + "/t" + std::to_string(threads);
            benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& state) { run_case(state, c); })
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
          }
}

}  // namespace
}  // namespace ridge::microbench

int main(int argc, char** argv) {
  const auto flags = ridge::microbench::take_flags(argc, argv);
  ridge::microbench::register_cases(flags);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
