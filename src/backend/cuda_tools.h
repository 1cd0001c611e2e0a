#pragma once
// `ridge bench run --device cuda` and `ridge probe --device cuda`. The probe measures the GPU's copy
// and read bandwidth and its BF16 / FP8 matmul rates (cuBLASLt) and saves them to
// $RIDGE_HOME/cuda_device.json; the benchmark runs prefill (pp N), decode at several batch sizes
// (tg N x B sequences in lockstep, CUDA graphs) and a per-kernel profile of one decode step, and
// reports achieved GB/s and TFLOP/s from the kernels' byte and FLOP ledger against the probe's
// and the datasheet's figures. Both fail with a clear message in a build without CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kv/kv_dtype.h"

namespace ridge {

struct CudaBenchOptions {
  std::vector<std::string> models = {"default"};
  std::vector<int64_t> n_prompt = {512};
  std::vector<int64_t> n_gen = {128};
  std::vector<int64_t> batch = {1};  // decode batch sizes
  int repetitions = 3;
  uint32_t seed = 1;
  KvDtype kv_dtype = KvDtype::F16;
  bool profile = true;               // per-kernel times of decode steps at batch 1
};

nlohmann::json run_cuda_bench(const CudaBenchOptions& options);
void print_cuda_bench(const nlohmann::json& results);

nlohmann::json run_cuda_probe(int repetitions);
void print_cuda_probe(const nlohmann::json& profile);
std::string cuda_profile_path();  // $RIDGE_HOME/cuda_device.json

}  // namespace ridge
